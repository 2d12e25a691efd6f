// A narrow stage (a phone, issue 22): one norm at a time, with a toggle between LN and BN, so
// that x, the norm's μ and σ with their numbers, and its output fit one screen; and a finer γ and β.
// Which norm is shown is the root's data-show; stage.css hides the other norm's parts, and
// layout.js leaves them no room. The pure parts (normOf, fineValue) run under Node's test runner.

import { sign } from "../model.js";
import { el } from "./dom.js";

export const NORMS = { ln: "LayerNorm", bn: "BatchNorm" };

// How far a drag across the whole track moves γ or β on a narrow stage: a finger's 70 px
// moves γ by about 0.6, where the track's own span (10 over some 220 px) would move it by 3.
export const FINE_SPAN = 2;

// The two-button toggle, LN pressed; the first row of a narrow stage (hidden when wide).
export function toggle(parent) {
  const group = el("div", "norms", parent);
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", "Norm shown");
  for (const [norm, name] of Object.entries(NORMS)) {
    const b = el("button", norm, group, name);
    b.type = "button";
    b.value = norm;
    b.setAttribute("aria-pressed", String(norm === "ln"));
  }
  return group;
}

// The norm a step of Play is about, so a narrow stage shows it: the one it focuses, else LN
// while BN is not lit at all; null where either will do (at rest, and at the end).
export function normOf(step) {
  if (step.focus) return step.focus;
  return step.bn === 0 ? "ln" : null;
}

// γ or β after a fine drag of dx px across a track `width` px wide, from `start`: FINE_SPAN per
// width, to the input's step, within [min, max].
export function fineValue(start, dx, width, { min, max, step }) {
  const v = start + (dx / Math.max(width, 1)) * FINE_SPAN;
  const snapped = min + Math.round((v - min) / step) * step;
  return Math.min(max, Math.max(min, +snapped.toFixed(10)));
}

// The toggle's clicks, Play's steps and the fine drags; `relayout` lays the stage out again.
export function wireNarrow(s, relayout) {
  s.showNorm = (norm) => {
    if (norm === s.norm) return;
    s.norm = norm;
    s.root.dataset.show = norm;
    for (const b of s.toggle.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.value === norm));
    relayout();
  };
  s.toggle.addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (b) s.showNorm(b.value);
  });
  s.fineNote = el("p", "fine-note");
}

// On a narrow stage, Play's step switches the toggle to the norm it is about.
export function follow(s, step) {
  const norm = normOf(step);
  if (!s.wide && norm && s.showNorm) s.showNorm(norm);
}

const FINE = { gain: "γ", bias: "β" };

// γ's and β's fine pads, for the ranges there are now (the controls may come with a payload), and
// what they do, said with their ranges (the inputs' own, from Python); nothing for a locked one.
export function fineControls(s) {
  // Under the ranges, inside their group: where a page hides the ranges (a driven stage), the note goes too.
  const scrubs = s.controls.querySelector(".scrubs");
  if (s.fineNote.parentElement !== scrubs) scrubs.append(s.fineNote);
  const shown = Object.keys(FINE).filter((n) => s.input[n] && !s.input[n].closest("label").hidden);
  for (const n of shown) if (!s.input[n].previousElementSibling?.classList.contains("fine")) fine(s.input[n]);
  const range = (n) => `${sign(s.input[n].min)} to ${s.input[n].max}`;
  const one = new Set(shown.map(range)).size === 1; // "γ, β: −5 to 5", else each its own
  const what = one ? `${shown.map((n) => FINE[n]).join(", ")}: ${range(shown[0])}` : shown.map((n) => `${FINE[n]}: ${range(n)}`).join(", ");
  const them = shown.length > 1 ? "them" : "it";
  s.fineNote.hidden = !shown.length;
  s.fineNote.textContent = shown.length ? `${what}; here a drag across the track moves ${them} by ${FINE_SPAN}` : "";
}

// A pad over the range's track, shown on a narrow stage (stage.css): a drag moves the value by
// FINE_SPAN per track width instead of jumping to the finger. It sends the range's own input and
// change events, so the preview and the release to torch are the range's. The keyboard keeps the range.
function fine(input) {
  const pad = el("span", "fine");
  pad.setAttribute("aria-hidden", "true");
  input.before(pad); // the range keeps its output next to it (input + output)
  let drag = null;
  pad.addEventListener("pointerdown", (e) => {
    e.preventDefault(); // no label click: the range would take the focus and the page would scroll
    pad.setPointerCapture(e.pointerId);
    drag = { x: e.clientX, start: +input.value, width: pad.getBoundingClientRect().width, moved: false };
  });
  pad.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const v = fineValue(drag.start, e.clientX - drag.x, drag.width, { min: +input.min, max: +input.max, step: +input.step });
    if (v === +input.value) return;
    input.value = v;
    drag.moved = true;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
  const end = () => {
    if (drag?.moved) input.dispatchEvent(new Event("change", { bubbles: true }));
    drag = null;
  };
  pad.addEventListener("pointerup", end);
  pad.addEventListener("pointercancel", end);
  pad.addEventListener("click", (e) => e.preventDefault());
}
