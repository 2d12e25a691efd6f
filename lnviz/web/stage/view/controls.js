// The scrubbed controls (γ, β, ε), built from the payload's `controls`: each one's range, step or
// options and whether a link locks it come from the state table (lnviz/labs/explorer/stage.py), so
// a change of range is no edit here. A number is a range over [min, max] by its step; a choice (ε's
// log-scale steps) is a range over its options' indices. The pure parts (rangeOf, fromRange,
// toRange, valueText) run under Node (tests/js/); applyControls puts them into the DOM.

import { controlText, formatNumber, nearest } from "../model.js";
import { el, put } from "./dom.js";

// The range input's min, max and step for a control.
export function rangeOf(c) {
  if (c.options) return { min: 0, max: c.options.length - 1, step: 1 };
  return { min: c.min, max: c.max, step: c.step };
}

// The control's value at the range's position `raw` (the input's value, a string).
export const fromRange = (c, raw) => (c.options ? c.options[Math.round(+raw)] : +raw);

// The range's position for the control's value `v`: itself, or the nearest option's index.
export const toRange = (c, v) => (c.options ? nearest(c.options, v) : v);

// The value as the stage writes it beside the range: to the step's decimals, or as a URL writes an option.
export const valueText = (c, v) => (c.options ? formatNumber(v) : controlText(v, c.step));

// The control named `name` in the payload, if the stage scrubs it.
export const controlNamed = (d, name) => d.controls.find((c) => c.name === name);

// One scrub: the symbol with the control's key, the range (name=gain|bias|eps), its value.
function scrub(s, c) {
  const label = el("label", "scrub", s.scrubs);
  const name = el("span", "name", label, `${c.symbol} `);
  el("small", "", name, c.name);
  const input = el("input", "", label);
  input.type = "range";
  input.name = c.name;
  input.setAttribute("aria-label", c.label.toLowerCase());
  s.input[c.name] = input;
  s.out[c.name] = el("output", "", label);
}

// The payload's controls on the stage: built once per set of names, ranges and locks on every payload.
export function applyControls(s, controls) {
  const names = controls.map((c) => c.name).join();
  if (s.controlNames !== names) {
    s.controlNames = names;
    s.scrubs.replaceChildren();
    for (const c of controls) scrub(s, c);
  }
  for (const c of controls) {
    const input = s.input[c.name];
    const r = rangeOf(c);
    input.min = r.min;
    input.max = r.max;
    input.step = r.step;
    // A control the link hides (hide=eps) cannot be moved here either: its value is the link's.
    input.closest("label").hidden = c.locked;
  }
}

// The ranges at the controls' values, unless one is being dragged.
export function setRanges(s) {
  if (s.dragging) return;
  for (const c of s.d.controls) s.input[c.name].value = toRange(c, s.ctl[c.name]);
}

// Each control's value beside its range, and as its range's spoken value.
export function showValues(s) {
  for (const c of s.d.controls) {
    const text = valueText(c, s.ctl[c.name]);
    put(s.out[c.name], text);
    s.input[c.name].setAttribute("aria-valuetext", text);
  }
}
