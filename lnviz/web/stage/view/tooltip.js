// Hover: the row in LN's colour, the column in BN's, and the formula with the numbers.

import { affineAt, cellAt, exact, formatNumber, MINUS, term } from "../model.js";

// The full grid's (row, col) of a cell or statistic of the stage.
export const where = (s, c) => cellAt(s.d, c.dataset.block, +c.dataset.k);

export function hover(s, c) {
  s.hover = c;
  if (!c) {
    s.tip.hidden = true;
    showBands(s);
    return;
  }
  showTip(s, c);
}

// The bands over the hovered row and column, else the chosen cell's (at rest both, in Play the
// norm's own), and the chosen cell's outline in each block.
export function showBands(s) {
  if (!s.lines) return;
  const [ci, cj] = s.cell;
  const focus = s.steps && s.steps[s.step].focus;
  const [rowI, colJ] = s.hover ? where(s, s.hover) : [focus === "bn" ? null : ci, focus === "ln" ? null : cj];
  const { R, C, r0, c0, bn } = s.d;
  const { x0, ln0, bn0, xs, ls, st, bst } = s.lines;
  const place = (band, on, area) => {
    band.hidden = !on;
    if (on) band.style.gridArea = area.join(" / ");
  };
  const i = rowI === null ? 0 : rowI - r0;
  const j = colJ === null ? 0 : colJ - c0;
  const rowOn = rowI !== null && i >= 0 && i < R;
  const colOn = colJ !== null && j >= 0 && j < C;
  // Wide, x's row, its μ and σ and LN's output row are one line of the grid: one band.
  place(s.bands.lnA, rowOn, [x0 + i, xs, x0 + i + 1, s.wide ? ls + C : st + 2]);
  place(s.bands.lnB, rowOn && !s.wide, [ln0 + i, ls, ln0 + i + 1, ls + C]);
  place(s.bands.bnA, colOn, [x0, xs + j, bn ? bst + 2 : x0 + R, xs + j + 1]);
  place(s.bands.bnB, colOn && !!bn, [bn0, xs + j, bn0 + R, xs + j + 1]);
  for (const b of Object.values(s.cells)) b.forEach((c) => c.classList.remove("chosen"));
  const ki = ci - r0, kj = cj - c0;
  if (ki >= 0 && ki < R && kj >= 0 && kj < C) {
    for (const b of Object.values(s.cells)) if (b.length) b[ki * C + kj].classList.add("chosen");
  }
}

// One norm's steps for cell k (its statistics: the m-th), with the numbers shown.
function formula(s, v, name, n, k, m, over) {
  if (!n) return `<div class="bn"><b>BatchNorm</b>: ${s.d.bn_error}</div>`;
  const [gamma, beta] = affineAt(s.d, v.ctl, k % s.d.C, v.preview);
  const mu = n.mean[m], var_ = n.var[m];
  const cls = name === "LayerNorm" ? "ln" : "bn";
  return `<div class="${cls}"><b>${name}</b> <span>${over}</span></div>
    <div>μ = <b data-v="${cls}-mu">${exact(mu)}</b> &nbsp; σ² = <b data-v="${cls}-var">${exact(var_)}</b></div>
    <div>x̂ = (${exact(s.d.x[k])} ${MINUS} ${term(mu)}) / √(${exact(var_)} + ${formatNumber(v.ctl.eps)})
      = <b data-v="${cls}-xhat">${exact(n.x_hat[k])}</b></div>
    <div>y = ${exact(gamma)} · x̂ + ${term(beta)} = <b data-v="${cls}-y">${exact(n.y[k])}</b></div>`;
}

// The tooltip's content for a cell (its x and both norms' steps) or a statistic.
function tipHtml(s, i, j) {
  const v = s.shown;
  const { C, r0, c0, H, B } = s.d;
  if (i === null || j === null) {
    const ln = i !== null;
    const n = ln ? v.ln : v.bn;
    const m = ln ? i - r0 : j - c0;
    const what = ln ? `row ${i}, over its ${H} features` : `column ${j}, over the ${B} samples`;
    return `<div class="${ln ? "ln" : "bn"}"><b>${ln ? "LayerNorm" : "BatchNorm"}</b> ${what}</div>
      <div>μ = <b>${exact(n.mean[m])}</b></div><div>σ² = <b>${exact(n.var[m])}</b>, σ = ${exact(Math.sqrt(n.var[m]))}</div>`;
  }
  const k = (i - r0) * C + (j - c0);
  return `<div class="tx">x[${i}, ${j}] = <b data-v="x">${exact(s.d.x[k])}</b>${v.preview ? " <i>(preview)</i>" : ""}</div>
      ${formula(s, v, "LayerNorm", v.ln, k, i - r0, `row ${i}, over its ${H} features`)}
      ${formula(s, v, "BatchNorm", v.bn, k, j - c0, `column ${j}, over the ${B} samples`)}`;
}

// Beside the cell, right and below if there is room, else left or above.
function placeTip(s, c) {
  const root = s.root.getBoundingClientRect();
  const r = c.getBoundingClientRect();
  const w = s.tip.offsetWidth, h = s.tip.offsetHeight;
  let left = r.right - root.left + 8;
  if (left + w > root.width) left = Math.max(0, r.left - root.left - w - 8);
  let top = r.bottom - root.top + 6;
  if (top + h > root.height) top = Math.max(0, r.top - root.top - h - 6);
  s.tip.style.left = `${left}px`;
  s.tip.style.top = `${top}px`;
}

export function showTip(s, c) {
  const [i, j] = where(s, c);
  s.tip.innerHTML = tipHtml(s, i, j);
  s.tip.hidden = false;
  placeTip(s, c);
  showBands(s);
}
