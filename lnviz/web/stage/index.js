// The stage (lnviz issues 12 and 22): x, LayerNorm's and BatchNorm's outputs on one screen.
//
// Python (ui/stage/stage.py) sends torch's numbers for one window of x; the contract is
// lnviz/labs/explorer/stage.py. This module is the component's entry: it keeps one stage per
// element across reruns and wires what the user does. model.js holds the numbers (decoding, the
// preview while γ, β or ε is dragged, the deltas, Play's steps) with no DOM; view/ draws them.
// On release the values go to Python, torch recomputes, and the badge says how far the
// browser's preview was from torch's numbers. As the page's own γ and β sliders move, the stage asks the server
// for torch's numbers at their values, ahead of the rerun (view/follow.js). The browser loads these files as
// they are, as ES modules from the component's asset_dir: no bundler, no build step.

import {
  decode, deltaText, maxDelta, moveIn, outputs, same, shapeOf, steps, torchControls, torchLabel,
} from "./model.js";
import { useTheme } from "./view/colour.js";
import { applyControls, controlNamed, fromRange, setRanges } from "./view/controls.js";
import { put } from "./view/dom.js";
import { build, create, layout } from "./view/layout.js";
import { follow, released, unfollow } from "./view/follow.js";
import { wireNarrow } from "./view/narrow.js";
import { paint } from "./view/paint.js";
import { applyStep, arrive, go, stop, wirePlay } from "./view/play.js";
import { showFormula } from "./view/formula.js";
import { showSizes } from "./view/steppers.js";
import { hover, where } from "./view/tooltip.js";

const stages = new WeakMap(); // parentElement -> the stage, kept across reruns

// The stage's state (view/state.js) in the element Streamlit mounts it in; tests/js/state.test.mjs reads it.
export const stageOf = (parentElement) => stages.get(parentElement);

export default function (component) {
  const { parentElement, data, setTriggerValue } = component;
  let s = stages.get(parentElement);
  if (!s) {
    s = create(parentElement);
    wire(s);
    stages.set(parentElement, s);
  }
  s.send = setTriggerValue;
  try {
    receive(s, data);
  } finally {
    tellDrawn(s, data?.waiting); // a stage that failed to draw must not keep the rest of a new visitor's page away
  }
  // Streamlit calls this before every new payload too: keep the DOM, let go only when unmounted.
  return () =>
    setTimeout(() => {
      if (s.root.isConnected) return;
      stop(s);
      unfollow(s);
      s.resized.disconnect();
      s.seen.disconnect();
      document.removeEventListener("keydown", s.clicker);
      stages.delete(parentElement);
    }, 0);
}

function receive(s, raw) {
  const d = decode(raw);
  const shape = shapeOf(d);
  s.d = d;
  s.badge.title = d.caveat_note || "";
  const chosen = s.cell;
  s.cell = d.cell || [d.r0, d.c0];
  s.steps = steps(d);
  // Driven (the Walkthrough page): the page's step, moved by its own Back, Next and keys.
  const was = s.step;
  s.driven = Number.isInteger(d.walk);
  s.root.classList.toggle("driven", s.driven);
  if (s.driven) stop(s);
  s.step = Math.min(s.driven ? d.walk : s.step, s.steps.length - 1);
  s.root.classList.toggle("present", !!d.present);
  useTheme(s.root, d.colors);
  applyControls(s, d.controls);
  showSizes(s); // before the layout: the title's height is the grid's
  const torchCtl = torchControls(d);
  if (!s.dragging) s.ctl = torchCtl;
  // The rerun after the route's answer (view/follow.js) brings the numbers on the stage again: the badge that
  // speaks of them stays.
  const had = shape === s.shape ? s.torch : null;
  s.torch = { ln: d.ln, bn: d.bn, ctl: torchCtl };
  const again = !!had && same(had.ctl, torchCtl) && maxDelta(had, s.torch) === 0;
  if (shape !== s.shape) {
    s.shape = shape;
    s.pending = null; // another window: the preview was of other cells
    build(s);
  } else if (!holds(s, chosen)) layout(s); // the rows and columns drawn hold the chosen cell
  if (s.pending && same(s.pending.ctl, torchCtl)) {
    badge(s, torchLabel(d, `torch: max |Δ| ${deltaText(maxDelta(s.pending.shown, s.torch))}`));
    s.pending = null;
  } else if (!s.pending && !s.dragging && !again) {
    badge(s, torchLabel(d, `torch · ${d.dtype}`));
  }
  setRanges(s);
  paint(s);
  applyStep(s);
  if (s.driven && s.step === was + 1) arrive(s);
  showResized(s, d.resized);
  showFormula(s, s.driven ? d.formula : ""); // fitted under the words, the note of what B or H kept among them
  follow(s, d.stage_at, (data) => receive(s, data));
}

// Whether the rows and columns drawn still hold the chosen cell, which was `chosen` before: all of them do, and so
// do the same ones where it stayed in its row or column.
function holds(s, chosen) {
  const all = (n, drawn) => !drawn || drawn.shown >= n;
  return (all(s.d.C, s.cols) || s.cell[1] === chosen?.[1]) && (all(s.d.R, s.rows) || s.cell[0] === chosen?.[0]);
}

// A new visitor's first run sends the stage alone (the explorer), or a page without what waits for KaTeX and the
// code highlighter (issue 32): the rest comes once the stage is on the screen. Once its cells are painted, say so,
// once. The root's data-report says when nothing is left to report ("sent": handed to Streamlit, which sends the
// request from a timer of its own; "none" for a page that waits for nothing): a test's settle waits for it and for
// that request (harness/settle.py), as a key pressed before the report's rerun could be undone by it.
function tellDrawn(s, waiting) {
  if (!waiting || s.told) {
    if (!s.root.dataset.report) s.root.dataset.report = "none";
    return;
  }
  s.told = true;
  requestAnimationFrame(() =>
    setTimeout(() => {
      s.send("drawn", true);
      s.root.dataset.report = "sent";
    }, 0),
  );
}

// After a change of B or H, what stayed: the page compared the grid with the one before (issue 27).
function showResized(s, text) {
  put(s.kept, text || "");
  s.kept.hidden = !text;
}

// What the numbers on the stage are: torch's, the browser's preview, or torch's after a
// release with how far the preview was from them.
function badge(s, text) {
  put(s.badge, text);
  s.badge.classList.toggle("preview", text.startsWith("preview"));
}

function wire(s) {
  // The scrubbed controls' ranges (view/controls.js builds them from the payload), by their names.
  s.scrubs.addEventListener("input", (e) => {
    const c = controlNamed(s.d, e.target.name);
    if (!c) return;
    s.dragging = true;
    s.ctl = { ...s.ctl, [c.name]: fromRange(c, e.target.value) };
    badge(s, same(s.ctl, s.torch.ctl) ? torchLabel(s.d, `torch · ${s.d.dtype}`) : "preview (browser)");
    paint(s);
  });
  s.scrubs.addEventListener("change", (e) => {
    if (!controlNamed(s.d, e.target.name)) return;
    s.dragging = false;
    if (same(s.ctl, s.torch.ctl)) return; // back where torch is: nothing to ask
    s.pending = { ctl: { ...s.ctl }, shown: outputs(s.d, s.torch, s.ctl) };
    badge(s, "torch: computing…");
    s.send("scrub", { ...s.ctl });
    released(s, s.ctl); // γ and β: torch's numbers from the server's route, ahead of the rerun
  });
  s.input.fixed.addEventListener("change", () => paint(s));
  wirePlay(s); // Play, and its speed beside it
  s.controls.querySelector("[name=back]").addEventListener("click", () => go(s, -1));
  s.controls.querySelector("[name=next]").addEventListener("click", () => go(s, +1));
  wireNarrow(s, () => layout(s));

  s.grid.addEventListener("pointerover", (e) => hover(s, e.target.closest(".cell, .stat")));
  s.grid.addEventListener("pointerleave", () => hover(s, null));
  s.grid.addEventListener("click", (e) => {
    const c = e.target.closest(".cell");
    if (!c) return;
    const [i, j] = where(s, c);
    s.send("pick", { row: i, col: j });
  });
  s.grid.addEventListener("focusin", (e) => e.target.classList.contains("cell") && hover(s, e.target));
  s.grid.addEventListener("focusout", () => hover(s, null));
  s.root.addEventListener("keydown", (e) => keys(s, e));
  // A presenter's clicker sends PageDown/PageUp (or the arrows) to whatever has the focus, often
  // the page itself: while the stage is on screen, they step Play from anywhere on the page.
  s.onScreen = false;
  s.seen = new IntersectionObserver((entries) => (s.onScreen = entries.at(-1).isIntersecting));
  s.seen.observe(s.root);
  s.clicker = (e) => clicker(s, e);
  document.addEventListener("keydown", s.clicker);
}

const STEP = { PageDown: 1, ArrowRight: 1, PageUp: -1, ArrowLeft: -1 };
// Controls that keep these keys for themselves (Streamlit's sliders are role="slider").
const TYPING = 'input, textarea, select, [role="slider"], [role="tab"], [role="radio"], [role="listbox"], [contenteditable="true"]';

// A key from outside the stage (keys() has those inside it). One that another listener took (a
// page's own steps, ui/kit/keys.py) is left to it; at either end of Play, PageDown/PageUp scroll the page.
function clicker(s, e) {
  const by = STEP[e.key];
  if (!by || s.driven || !s.onScreen || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
  const t = e.composedPath()[0];
  if (t instanceof Element && (s.root.contains(t) || t.closest(TYPING))) return;
  if (go(s, by) || e.key.startsWith("Arrow")) e.preventDefault();
}

function keys(s, e) {
  const t = e.target;
  if (t.matches("input[type=range]")) return; // ranges keep their own arrows
  if (t.classList.contains("cell") && t.dataset.block === "x") {
    const n = moveIn(s.d, +t.dataset.k, e.key);
    if (n !== undefined) {
      if (n !== null) {
        t.tabIndex = -1;
        s.cells.x[n].tabIndex = 0;
        if (s.cells.x[n].classList.contains("off")) layout(s, n); // a row or column not drawn: draw it
        s.cells.x[n].focus();
      }
      e.preventDefault();
      return;
    }
    if (e.key === "Enter" || e.key === " ") {
      const [i, j] = where(s, t);
      s.send("pick", { row: i, col: j });
      e.preventDefault();
      return;
    }
  }
  if (s.driven) return; // the page's own keys step it (ui/kit/keys.py)
  if (STEP[e.key] && !(e.altKey || e.ctrlKey || e.metaKey || e.shiftKey)) {
    if (go(s, STEP[e.key]) || e.key.startsWith("Arrow")) e.preventDefault();
  } else if (e.key === "Escape") {
    stop(s);
    s.step = 0;
    applyStep(s);
  }
}
