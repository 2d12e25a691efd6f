// Play: the steps of the model (model.js `steps`) light up parts of the stage, one at a time,
// and the chosen row (or column) flies into its statistic or across to its output. Each step stays
// long enough to read its words (model.js `dwell`), at the speed chosen beside Play.

import { captionRuns, dwell, lit, short, SPEEDS, stepCount } from "../model.js";
import { shade } from "./colour.js";
import { el } from "./dom.js";
import { follow } from "./narrow.js";
import { paintX } from "./paint.js";
import { showBands } from "./tooltip.js";

const FLY_MS = 750;
const SPEED_KEY = "lnviz.stage.speed"; // the speed chosen, kept in the tab's session: a reload or another page keeps it

const reduced = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

// The tab's session storage, where there is one that may be used (a browser that blocks it throws).
function session(use) {
  try {
    return use(window.sessionStorage);
  } catch {
    return null;
  }
}

// Play and Pause, and the speed beside them, from the session's last choice.
export function wirePlay(s) {
  s.play.addEventListener("click", () => (s.timer ? stop(s) : play(s)));
  const kept = Number(session((store) => store.getItem(SPEED_KEY)));
  s.speed = SPEEDS.includes(kept) ? kept : 1;
  const choice = el("select", "");
  choice.name = "speed";
  choice.setAttribute("aria-label", "Play's speed");
  choice.title = "How long Play stays on each step: at 1×, time to read its words at 200 a minute";
  for (const v of SPEEDS) el("option", "", choice, v === 0.5 ? "½×" : `${v}×`).value = String(v);
  choice.value = String(s.speed);
  s.count.before(choice);
  choice.addEventListener("change", () => {
    s.speed = Number(choice.value);
    session((store) => store.setItem(SPEED_KEY, choice.value));
    if (s.timer) {
      clearTimeout(s.timer); // the step shown stays its time at the new speed, from now
      wait(s);
    }
  });
}

export function play(s) {
  if (s.step === s.steps.length - 1) s.step = 0;
  s.play.textContent = "❚❚ Pause";
  s.play.setAttribute("aria-pressed", "true");
  s.timer = setTimeout(() => advance(s), 0);
}

function advance(s) {
  if (!s.root.isConnected || s.step >= s.steps.length - 1) return stop(s);
  go(s, +1);
  wait(s);
}

// The next step once this one's words are read.
function wait(s) {
  s.timer = setTimeout(() => advance(s), dwell(s.steps[s.step], s.cell, s.speed));
}

export function stop(s) {
  clearTimeout(s.timer);
  s.timer = 0;
  s.play.textContent = "▶ Play";
  s.play.setAttribute("aria-pressed", "false");
}

// One step forward or back; false at either end, where nothing moves.
export function go(s, by) {
  const to = Math.min(Math.max(s.step + by, 0), s.steps.length - 1);
  if (to === s.step) return false;
  const forward = to > s.step;
  s.step = to;
  applyStep(s);
  if (forward) arrive(s);
  return true;
}

// A step just reached going forward: what it brings flies into place.
export function arrive(s) {
  const what = s.steps[s.step].fly;
  if (what && !reduced()) fly(s, what);
}

// What the current step shows: the rest is veiled; its caption, its count, its bands.
export function applyStep(s) {
  const step = s.steps[s.step];
  const { C } = s.d;
  const i = s.cell[0] - s.d.r0, j = s.cell[1] - s.d.c0;
  const veil = (cells, part) => cells.forEach((c, k) => c.classList.toggle("veiled", !lit(step, part, k, i, j, C)));
  veil(s.stats.lnMu, "lnMu");
  veil(s.stats.lnSd, "lnSd");
  veil(s.cells.ln, "ln");
  veil(s.stats.bnMu, "bnMu");
  veil(s.stats.bnSd, "bnSd");
  veil(s.cells.bn, "bn");
  s.root.dataset.step = s.step;
  s.root.dataset.focus = step.focus || "";
  caption(s, step);
  s.count.textContent = s.driven ? `Step ${s.step} of ${s.steps.length - 2}` : stepCount(s.step, s.steps.length);
  follow(s, step); // a narrow stage shows the norm the step is about
  showBands(s);
  paintX(s);
}

// The chosen row (or column) flies into its statistic, or across to its output.
function fly(s, what) {
  const { C, R } = s.d;
  const i = s.cell[0] - s.d.r0, j = s.cell[1] - s.d.c0;
  const ln = what.startsWith("ln");
  if (!ln && !s.d.bn) return; // B = 1: no BN statistics or outputs to fly into (Play stopped there, stuck)
  const from = ln ? s.cells.x.slice(i * C, i * C + C) : Array.from({ length: R }, (_, r) => s.cells.x[r * C + j]);
  let to;
  if (what.endsWith("out")) to = ln ? s.cells.ln.slice(i * C, i * C + C) : Array.from({ length: R }, (_, r) => s.cells.bn[r * C + j]);
  else {
    const stat = ln ? (what === "ln-mu" ? s.stats.lnMu[i] : s.stats.lnSd[i]) : (what === "bn-mu" ? s.stats.bnMu[j] : s.stats.bnSd[j]);
    to = from.map(() => stat);
  }
  const root = s.root.getBoundingClientRect();
  from.forEach((c, k) => {
    if (c.classList.contains("off")) return; // a column a narrow stage does not draw
    const a = c.getBoundingClientRect();
    const b = to[k].getBoundingClientRect();
    const v = s.d.x[+c.dataset.k];
    const { fill, ink: text } = shade(v, s.ranges.x);
    const g = el("div", `ghost ${ln ? "ln" : "bn"}`, s.root, short(v, s.places));
    g.setAttribute("aria-hidden", "true");
    Object.assign(g.style, {
      left: `${a.left - root.left}px`, top: `${a.top - root.top}px`,
      width: `${a.width}px`, height: `${a.height}px`, backgroundColor: fill, color: text,
    });
    const dx = b.left + b.width / 2 - (a.left + a.width / 2);
    const dy = b.top + b.height / 2 - (a.top + a.height / 2);
    const end = what.endsWith("out") ? 1 : 0.35;
    g.animate(
      [{ transform: "translate(0, 0) scale(1)", opacity: 1 }, { transform: `translate(${dx}px, ${dy}px) scale(${end})`, opacity: 0.15 }],
      { duration: FLY_MS, delay: k * 25, easing: "cubic-bezier(.4,0,.2,1)", fill: "both" },
    ).finished.then(() => g.remove(), () => g.remove());
  });
}

// The step's title in bold, then its words (their **bold** too), and what the chosen line of x shows.
function caption(s, step) {
  s.caption.replaceChildren();
  for (const [text, kind] of captionRuns(step, s.cell, s.driven)) {
    if (kind === "b") el("b", "", s.caption, text);
    else if (kind) el("span", kind, s.caption, text);
    else s.caption.append(text);
  }
}
