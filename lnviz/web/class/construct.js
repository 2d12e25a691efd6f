// The class element's constructed answers (issue 49), as a phone draws them: a tap-the-cells question's grid of
// 44 px toggles, a drag-to-predict question's slider, and a revealed cells round's shares per cell. index.js
// mounts them; `vote(s, answer)` is its, which sends the answer. cells.js holds the arithmetic, without a DOM.

import { decode, encode, toggle } from "./cells.js";
import { el } from "./dom.js";
import { cellCount } from "./model.js";

// A cells question's grid: a header row of column names, then each row's name and its cells, row-major, so that
// cell k is row k // cols, column k % cols (render.entry). `cell(k, button)` fills cell k; the marked one carries
// a star, said in its label too. The buttons' columns are never under 44 px: where they don't fit the phone's
// width (8 columns on a 360 px phone), the grid scrolls sideways under its row names (class.css, .picker).
function grid(q, tag, cell) {
  const g = q.grid;
  const picker = tag === "button";
  const box = el("div", picker ? "grid picker" : "grid");
  const [names, cells] = picker ? ["max-content", "minmax(44px, 1fr)"] : ["minmax(1.5rem, max-content)", "minmax(0, 1fr)"];
  box.style.gridTemplateColumns = `${names} repeat(${g.cols}, ${cells})`;
  box.appendChild(el("span", "corner"));
  for (const name of g.col_names) box.appendChild(el("span", "col-name", name));
  for (let r = 0; r < g.rows; r += 1) {
    box.appendChild(el("span", "row-name", g.row_names[r]));
    for (let c = 0; c < g.cols; c += 1) {
      const k = r * g.cols + c;
      const target = el(tag, k === g.marked ? "cell marked" : "cell");
      target.dataset.cell = String(k);
      const where = `${g.axes[0]} ${g.row_names[r]}, ${g.axes[1]} ${g.col_names[c]}`;
      target.setAttribute("aria-label", k === g.marked ? `${where}, the marked cell` : where);
      cell(k, target);
      box.appendChild(target);
    }
  }
  return box;
}

// What a row and a column are, above the grid: "Rows: sample · columns: feature · ★ the marked cell".
const axesLine = (g) => el("p", "axes", `Rows: ${g.axes[0]} · columns: ${g.axes[1]} · ★ the marked cell`);

// A tap-the-cells question: each cell a 44 px toggle (aria-pressed, reached by Tab), Send sends the mask.
export function cellPicker(s, v, vote) {
  const form = el("form", "cells");
  const n = cellCount(v.q);
  s.tapped = v.own ? decode(v.own.answer, n) || [] : [];
  const buttons = [];
  const paint = () => {
    for (const b of buttons) b.setAttribute("aria-pressed", String(s.tapped.includes(Number(b.dataset.cell))));
  };
  s.paintCells = (tapped) => {
    s.tapped = tapped;
    paint();
  };
  form.append(
    axesLine(v.q.grid),
    grid(v.q, "button", (k, b) => {
      b.type = "button";
      if (k === v.q.grid.marked) b.textContent = "★";
      b.addEventListener("click", () => {
        s.tapped = toggle(s.tapped, k);
        s.touched = true;
        paint();
      });
      buttons.push(b);
    }),
  );
  paint();
  const send = el("button", "send", "Send");
  send.type = "submit";
  form.appendChild(send);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    vote(s, encode(s.tapped, n));
  });
  return form;
}

// A drag-to-predict question: a slider over [lo, hi] in steps of `step`, its range and value written beside it;
// nothing can be sent until it has been moved (or a stored answer put it somewhere).
export function slider(s, v, vote) {
  const q = v.q;
  const form = el("form", "guess drag");
  const id = `class-drag-${v.key}`;
  const label = el("label", "", `Your answer, ${q.span}`);
  label.setAttribute("for", id);
  const input = el("input");
  input.id = id;
  input.type = "range";
  input.min = String(q.lo);
  input.max = String(q.hi);
  input.step = String(q.step);
  input.value = String((q.lo + q.hi) / 2);
  const value = el("output", "value", "—");
  value.setAttribute("for", id);
  const send = el("button", "send", "Send");
  send.type = "submit";
  send.disabled = true;
  const show = () => {
    value.textContent = Number(input.value).toFixed(q.decimals).replace("-", "\u2212");
    send.disabled = false;
  };
  input.addEventListener("input", () => {
    s.touched = true;
    show();
  });
  s.showDrag = (answer) => {
    input.value = answer;
    show();
  };
  form.append(label, input, value, send);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!send.disabled) vote(s, Number(input.value).toFixed(q.decimals));
  });
  return form;
}

// The class's shares per cell from the last round, this phone's taps filled and, once shown, torch's outlined.
export function resultGrid(v) {
  const r = v.results.grid;
  const mine = v.mine?.tapped || [];
  const box = el("figure", "cells-result");
  box.appendChild(axesLine(v.q.grid));
  box.appendChild(
    grid(v.q, "span", (k, cell) => {
      cell.textContent = `${k === v.q.grid.marked ? "★" : ""}${Math.round(100 * r.shares[k])}%`;
      cell.dataset.share = String(r.shares[k]);
      if (mine.includes(k)) cell.classList.add("tapped");
      if (r.answer?.includes(k)) cell.classList.add("torch");
      const said = [`${r.taps[k]} tapped it`, mine.includes(k) ? "you did" : "", r.answer?.includes(k) ? "torch's" : ""];
      cell.setAttribute("aria-label", `${cell.getAttribute("aria-label")}: ${said.filter(Boolean).join(", ")}`);
    }),
  );
  const key = r.answer ? "Filled: your taps. Outlined: torch's cells. " : "Filled: your taps. ";
  box.appendChild(el("figcaption", "", `${key}Each cell: the share of the class that tapped it.`));
  return box;
}
