// Painting: each block's colours and numbers on its canvas, the statistics, the legend and the
// controls' values, at the controls' current values (torch's numbers or the browser's preview).

import { outputs, rangeText, short, shownX, sign } from "../model.js";
import { maxAbs, shade } from "./colour.js";
import { showValues } from "./controls.js";
import { el, put } from "./dom.js";
import { showTip } from "./tooltip.js";

export const FIXED = 3; // the fixed output colour range, ±3: γ and β visibly move the outputs

// The colour scales' ranges: x's is the payload's, fixed for the input whatever B and H (lnviz.labs.explorer.stage
// x_range), so that a cell whose value a change of B or H keeps keeps its colour too; the outputs' is ±FIXED, or
// their largest |y| with the switch off.
export function ranges(d, shown, fixed) {
  return { x: d.x_range.r, y: fixed ? FIXED : maxAbs(shown.ln.y, shown.bn ? shown.bn.y : []) };
}

export function paint(s) {
  const v = outputs(s.d, s.torch, s.ctl);
  s.shown = v;
  s.ranges = ranges(s.d, v, s.input.fixed.checked);
  const { x: xr, y: yr } = s.ranges;
  paintX(s);
  draw(s, "ln", v.ln.y, yr);
  if (v.bn) draw(s, "bn", v.bn.y, yr);
  const stat = (cells, arr, f) => cells.forEach((c, k) => put(c, short(f(arr[k]), s.places)));
  stat(s.stats.lnMu, v.ln.mean, (m) => m);
  stat(s.stats.lnSd, v.ln.var, Math.sqrt);
  if (v.bn) {
    stat(s.stats.bnMu, v.bn.mean, (m) => m);
    stat(s.stats.bnSd, v.bn.var, Math.sqrt);
  }
  // x and the outputs are on scales of their own, each with its legend; under them, what fixes x's.
  for (const [n, r] of [["x", xr], ["y", yr]]) {
    put(s.legends[n].querySelector(".lo"), sign(`-${rangeText(r)}`));
    put(s.legends[n].querySelector(".hi"), `+${rangeText(r)}`);
  }
  s.scaleNote ??= el("p", "scale-note", s.meta);
  put(s.scaleNote, s.d.x_range.says);
  showValues(s);
  if (s.hover) showTip(s, s.hover);
}

// x, with the chosen line as the current step shows it (x − μ, (x − μ)², x̂), else x itself: redrawn
// only when that changes, as x moves with no control.
export function paintX(s) {
  if (!s.shown) return;
  const x = shownX(s.d, s.steps && s.steps[s.step], s.shown, s.cell);
  if (s.geometry.x && s.drawnX === x) return;
  draw(s, "x", x, s.ranges.x);
  s.drawnX = x;
}

// Where each cell of a block lies on its canvas, measured once per layout.
function geometry(s, name) {
  const canvas = s.paints[name];
  const box = canvas.getBoundingClientRect();
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(box.width * dpr);
  canvas.height = Math.round(box.height * dpr);
  const rects = s.cells[name].map((c) => {
    const r = c.getBoundingClientRect();
    return [r.left - box.left, r.top - box.top, r.width, r.height];
  });
  // The cells' own font (stage.css): the size a test reads is the size drawn.
  const { fontSize, fontFamily } = getComputedStyle(s.cells[name][0]);
  const font = `${fontSize} ${fontFamily}`;
  return { dpr, rects, font, text: s.root.classList.contains("numbers"), w: box.width, h: box.height };
}

function draw(s, name, values, range) {
  const g = (s.geometry[name] ??= geometry(s, name));
  const ctx = s.paints[name].getContext("2d");
  ctx.setTransform(g.dpr, 0, 0, g.dpr, 0, 0);
  ctx.clearRect(0, 0, g.w, g.h);
  ctx.font = g.font;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fontVariantNumeric = "tabular-nums";
  const cells = s.cells[name];
  const texts = []; // what each cell's number reads ("" for none), as the canvas draws it
  for (let k = 0; k < values.length; k++) {
    const v = values[k];
    const nan = Number.isNaN(v);
    cells[k].classList.toggle("nan", nan); // hatched by the CSS, never drawn like 0
    texts.push("");
    if (nan) continue;
    const [x, y, w, h] = g.rects[k];
    const { fill, ink: text } = shade(v, range);
    ctx.fillStyle = fill;
    ctx.fillRect(x, y, w, h);
    if (g.text) {
      ctx.fillStyle = text;
      texts[k] = short(v, s.places);
      ctx.fillText(texts[k], x + w / 2, y + h / 2 + 0.5);
    }
  }
  // For a test to read what the canvas shows (tests/test_browser_legible.py): each cell's number, in this font.
  s.paints[name].painted = { font: g.font, texts };
}
