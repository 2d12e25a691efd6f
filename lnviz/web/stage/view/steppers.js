// B's and H's steppers, in x's title (issue 46): "x  B [−] 8 [+] × H [−] 12 [+]". A press moves B
// or H one stop of the page's scale (every size 1–16, then about 1.25× apart: lnviz.views.scales.size_options),
// so a demo never needs the sidebar. Python sends, for each, the stops either side of its value (null at an end)
// and why the stage can't move it ("" when it can: a link that hides it, or your own data, whose shape it is),
// as the payload's `sizes` (ui/stage/stage.py steppers); a press sends the stop to Python, which puts it into the
// widget and the URL before the rerun (ui/stage/stage.py _on_size). The title is made once and kept, so a pressed
// button keeps the focus while the grid is built again around it. The pure parts (stepText) run under Node.

import { count } from "../model.js";
import { el, put } from "./dom.js";

// Each size by its key: its symbol and its unit's words.
export const SIZES = {
  batch: { symbol: "B", one: "sample", many: "samples", value: (d) => d.B },
  features: { symbol: "H", one: "feature", many: "features", value: (d) => d.H },
};

// What a stepper's button says to a screen reader and in its tooltip: where it goes, or why it goes nowhere.
export function stepText(name, dir, to, value) {
  const { symbol, many } = SIZES[name];
  const more = dir === "up";
  if (to === null || to === undefined) return `${more ? "More" : "Fewer"} ${many}: ${symbol} = ${value} is the ${more ? "most" : "least"}`;
  return `${more ? "More" : "Fewer"} ${many}: ${symbol} = ${to}`;
}

// x's title, built once in `title`: "x", B's stepper, "×", H's, then what the stage leaves out and why a size
// is fixed (titles() and showSizes fill them in). Short, so that at a projector's 20 px it fits one line over x.
export function sizesIn(title) {
  el("b", "", title, "x");
  const stepper = (name) => {
    const group = el("span", "size", title);
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", name === "batch" ? "Batch size B" : "Features H");
    el("span", "sym", group, SIZES[name].symbol);
    const button = (dir, text) => {
      const b = el("button", "", group, text);
      b.type = "button";
      b.name = name;
      b.value = dir;
      return b;
    };
    const down = button("down", "\u2212");
    const value = el("output", "", group);
    const up = button("up", "+");
    return { group, down, value, up };
  };
  const batch = stepper("batch");
  el("span", "times", title, "×");
  const features = stepper("features");
  return { batch, features, part: el("span", "part", title), why: el("span", "why", title) };
}

// The sizes as the payload has them: each value, its buttons' stops and names, disabled at an end, hidden
// where the stage can't move it, with the word why.
export function showSizes(s) {
  const { d } = s;
  const whys = [];
  for (const [name, size] of Object.entries(SIZES)) {
    const at = s.sizes[name];
    const value = size.value(d);
    const stops = d.sizes?.[name] ?? { down: null, up: null, why: "" };
    put(at.value, String(value));
    at.group.title = count(value, size.one, size.many);
    for (const dir of ["down", "up"]) {
      const b = at[dir];
      const to = stops[dir];
      b.hidden = !d.sizes || !!stops.why;
      b.disabled = to === null || to === undefined;
      b.dataset.to = b.disabled ? "" : String(to);
      const text = stepText(name, dir, to, value);
      b.setAttribute("aria-label", text);
      b.title = text;
    }
    if (stops.why && !whys.includes(stops.why)) whys.push(stops.why);
  }
  put(s.sizes.why, whys.length ? ` · ${whys.join(", ")}` : "");
}

// A press: the stop it goes to, to Python.
export function wireSteppers(s, title) {
  title.addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (!b || b.disabled || !b.dataset.to) return;
    s.send("size", { name: b.name, value: +b.dataset.to });
  });
}
