// The stage's DOM and where everything goes: a 2 × 2 layout when wide (LN's output to the right
// of x, along its rows; BN's below, along its columns); when narrow, one norm at a time (view/narrow.js)
// in a single column, under the controls: x, the norm's μ and σ, its output. Either way, of the window's
// columns those that fit with their numbers (fit.js), around the chosen cell's: never bare colour; and in lecture
// mode, of its rows those that fit the screen's height, around the chosen cell's.

import { span } from "../model.js";
import { el, put } from "./dom.js";
import { around, cellLines, fontFor, GAP, headEvery, lowCell, plan, rowsFit } from "./fit.js";
import { fitFormula } from "./formula.js";
import { fineControls, toggle } from "./narrow.js";
import { FIXED, paint } from "./paint.js";
import { stageState } from "./state.js";
import { sizesIn, wireSteppers } from "./steppers.js";
import { showBands } from "./tooltip.js";

const CONTROLS = `
  <div class="scrubs" role="group" aria-label="γ, β and ε: the outputs follow while you drag"></div>
  <div class="play" role="group" aria-label="Animation of the reduction">
    <button type="button" name="back" aria-label="Step back" title="Step back (←)">◀</button>
    <button type="button" name="play" aria-pressed="false">▶ Play</button>
    <button type="button" name="next" aria-label="Step forward" title="Step forward (→)">▶</button>
    <span class="count"></span>
  </div>
  <p class="kept" aria-live="polite" hidden></p>
  <div class="words">
    <p class="caption" aria-live="polite"></p>
    <div class="formula" tabindex="0" role="region" aria-label="The step's formula, with torch's numbers" hidden></div>
  </div>
  <div class="meta">
    <div class="foot">
      <label class="switch"><input type="checkbox" role="switch" name="fixed" checked>
        <span>fixed output colours ±${FIXED}</span></label>
      <span class="badge" aria-live="polite"></span>
    </div>
    <div class="legends">
      <div class="legend x" aria-hidden="true"><span class="what">x</span><span class="lo"></span><span class="bar"></span><span class="hi"></span></div>
      <div class="legend y" aria-hidden="true"><span class="what">outputs</span><span class="lo"></span><span class="bar"></span><span class="hi"></span></div>
    </div>
  </div>`;

// The stage's lasting parts (the grid, its controls, the tooltip) in its state (state.js), kept across reruns.
export function create(parent) {
  const root = el("div", "stage", parent);
  root.setAttribute("role", "region");
  root.setAttribute("aria-label", "The stage: x, LayerNorm and BatchNorm side by side");
  root.dataset.show = "ln"; // the norm a narrow stage shows
  const grid = el("div", "grid", root);
  const norms = toggle(grid);
  const controls = el("div", "controls", grid);
  controls.innerHTML = CONTROLS;
  // The blocks' titles, kept across builds: x's holds B's and H's steppers (steppers.js), which keep the focus.
  const titles = { x: el("div", "title x", grid), ln: el("div", "title ln", grid), bn: el("div", "title bn", grid) };
  const tip = el("div", "tip", root);
  tip.setAttribute("role", "tooltip");
  tip.id = "stage-tip";
  tip.hidden = true;
  const s = stageState();
  Object.assign(s, {
    root, grid, controls, tip, toggle: norms, titles, sizes: sizesIn(titles.x),
    scrubs: controls.querySelector(".scrubs"), play: controls.querySelector("[name=play]"),
    caption: controls.querySelector(".caption"), kept: controls.querySelector(".kept"),
    formula: controls.querySelector(".formula"), count: controls.querySelector(".count"),
    meta: controls.querySelector(".meta"), words: controls.querySelector(".words"),
    badge: controls.querySelector(".badge"),
    legends: { x: controls.querySelector(".legend.x"), y: controls.querySelector(".legend.y") },
  });
  s.input.fixed = controls.querySelector("[name=fixed]"); // the scrubbed controls' ranges join it (controls.js)
  wireSteppers(s, titles.x);
  // The stage fits below what is above it: lay out again when it, or the page, changes size.
  s.resized = new ResizeObserver(() => layout(s));
  s.resized.observe(root);
  s.resized.observe(document.body);
  return s;
}

// The cells of one window, rebuilt only when its shape changes.
export function build(s) {
  const { R, C } = s.d;
  // No hover, and no bands yet: they are placed on the new cells (layout), never on the old ones, which a
  // grown window's chosen cell may lie beyond.
  s.hover = null;
  s.tip.hidden = true;
  const kept = [s.controls, s.toggle, s.meta, s.words, ...Object.values(s.titles)];
  for (const e of [...s.grid.children]) if (!kept.includes(e)) e.remove();
  const block = (name, n, cls) => Array.from({ length: n }, (_, k) => {
    const c = el("div", cls, s.grid);
    c.dataset.block = name;
    c.dataset.k = k;
    return c;
  });
  // Each block's colours and numbers are drawn on one canvas: a drag frame is one pass of
  // fills, not a style, layout and paint of every cell. The cells above it are transparent
  // and take the pointer, the focus, the hatching of NaN and the veil of Play.
  s.paints = { x: el("canvas", "paint", s.grid), ln: el("canvas", "paint", s.grid), bn: s.d.bn ? el("canvas", "paint", s.grid) : null };
  s.cells = { x: block("x", R * C, "cell"), ln: block("ln", R * C, "cell out"), bn: s.d.bn ? block("bn", R * C, "cell out") : [] };
  s.cells.x.forEach((c, k) => {
    c.tabIndex = k === 0 ? 0 : -1; // one tab stop; the arrows move within x
    c.setAttribute("role", "button");
    c.setAttribute("aria-label", `sample ${s.d.r0 + Math.floor(k / C)}, feature ${s.d.c0 + (k % C)}`);
    c.setAttribute("aria-describedby", "stage-tip");
  });
  s.stats = {
    lnMu: block("ln-mu", R, "stat ln"), lnSd: block("ln-sd", R, "stat ln"),
    bnMu: s.d.bn ? block("bn-mu", C, "stat bn") : [], bnSd: s.d.bn ? block("bn-sd", C, "stat bn") : [],
  };
  s.heads = {
    colX: block("col-x", C, "head"), colLn: block("col-ln", C, "head"),
    rowX: block("row-x", R, "head row"), rowLn: block("row-ln", R, "head row"), rowBn: s.d.bn ? block("row-bn", R, "head row") : [],
    lnMu: el("div", "head ln sym", s.grid, "μ"), lnSd: el("div", "head ln sym", s.grid, "σ"),
    bnMu: el("div", "head bn sym", s.grid, "μ"), bnSd: el("div", "head bn sym", s.grid, "σ"),
  };
  s.noBn = s.d.bn ? null : el("p", "nobn", s.grid, s.d.bn_error);
  s.bands = Object.fromEntries(["lnA", "lnB", "bnA", "bnB"].map((n) => [n, el("div", `band ${n.slice(0, 2)}`, s.grid)]));
  // What belongs to each norm: a narrow stage shows one norm's (stage.css).
  const own = (norm, ...parts) => parts.forEach((e) => e && (e.dataset.norm = norm));
  const { cells, stats, heads, titles, bands } = s;
  own("ln", s.paints.ln, ...cells.ln, ...stats.lnMu, ...stats.lnSd, ...heads.colLn, ...heads.rowLn, heads.lnMu, heads.lnSd);
  own("ln", titles.ln, bands.lnA, bands.lnB);
  own("bn", s.paints.bn, ...cells.bn, ...stats.bnMu, ...stats.bnSd, ...heads.rowBn, heads.bnMu, heads.bnSd);
  own("bn", titles.bn, bands.bnA, bands.bnB, s.noBn);
  layout(s);
}

// Lay the stage out for its width and height; `keep`: a cell of x to keep in view (measure).
export function layout(s, keep) {
  if (!s.d) return;
  const m = measure(s, keep);
  if (!m) return;
  const first = s.rows?.first;
  s.rows = { first: 0, shown: s.d.R };
  place(s, m);
  const ch = m.wide ? fit(s, m, first) : fitNarrow(s, m);
  showBands(s);
  // The numbers' font for the cells' final height: the cells, the statistics and the canvases' text (paint.js).
  s.root.style.setProperty("--fs", `${fontFor(m, ch)}px`);
  if (s.fineNote) fineControls(s);
  fitFormula(s);
  s.geometry = {};
  if (s.shown) paint(s);
}

// The layout for the stage's width (fit.js plan): the columns drawn, around the one kept in view, their width
// and the numbers' font; null while the stage has no width. `keep`: the cell of x (its index k) to keep in view,
// else the focused cell of x, else the chosen cell; its row is kept in view too where fit() draws fewer rows.
function measure(s, keep) {
  const { R, C } = s.d;
  const W = s.root.clientWidth;
  if (!W) return null;
  const present = s.root.classList.contains("present");
  const p = plan({ width: W, C, digits: String(s.d.r0 + R - 1).length, present });
  const { wide, cw } = p;
  const k = keep ?? kept(s);
  s.cols = { first: around(k % C, p.shown, C, s.cols?.first), shown: p.shown };
  // Tall enough to read, short enough that the stage fits below what is above it.
  const top = s.root.getBoundingClientRect().top + window.scrollY;
  const below = window.innerHeight - Math.min(top, window.innerHeight * 0.45) - 8;
  const low = lowCell(present);
  // Narrow: as tall as fits one screen (fitNarrow), from NARROW_CH down.
  const ch = wide ? Math.max(low, Math.min(cw, 44)) : Math.max(low, NARROW_CH);
  s.root.style.setProperty("--cw", `${cw}px`);
  s.root.style.setProperty("--ch", `${ch}px`);
  s.root.style.setProperty("--hs", `${p.head}px`);
  s.root.classList.toggle("wide", wide);
  s.toggle.hidden = wide;
  s.root.classList.toggle("numbers", p.numbers);
  s.wide = wide;
  s.places = p.places;
  return { ...p, present, gap: GAP, ch, low, room: below, row: Math.floor(k / C) };
}

// The cell of x to keep in view: the focused one (the arrows move it), else the chosen one.
function kept(s) {
  const focused = s.root.getRootNode?.().activeElement;
  if (focused?.dataset?.block === "x" && s.root.contains(focused)) return +focused.dataset.k;
  return (s.cell[0] - s.d.r0) * s.d.C + s.cell[1] - s.d.c0;
}

const NARROW_CH = 28; // a narrow stage's tallest cell

// n tracks, one a row or column of the window: those drawn (`first` to `first + shown`) `size`, the others 0 px
// (their cells are .off).
const tracks = (n, { first, shown }, size) =>
  Array.from({ length: n }, (_, k) => (k >= first && k < first + shown ? size : "0px")).join(" ");
const cols = (s) => tracks(s.d.C, s.cols, "var(--cw)");
const rows = (s) => tracks(s.d.R, s.rows, "var(--ch)");
const grow = (s) => tracks(s.d.R, s.rows, "minmax(var(--ch), auto)"); // the outputs' rows: BN's note when B = 1 fits

// Everything on the grid for the columns and rows drawn (s.cols, s.rows), and the titles that say which.
function place(s, m) {
  const lines = gridLines(s, m);
  placeBlocks(s, lines);
  placeHeads(s, lines, m);
  placeParts(s, lines);
  s.lines = lines;
  titles(s);
}

// The grid's column and row tracks, and the lines each block starts on: t0 the titles', h0 the
// column headers', x0, ln0, bn0 the blocks' first rows; xs, ls their first columns, st LN's μ's.
function gridLines(s, { wide, hw, sw, gap }) {
  if (!wide) return narrowLines(s, { hw, sw, gap });
  const { R, C } = s.d;
  // Column lines: 1 row header | x: 2 .. C+1 | gap | μ, σ | gap | LN: C+6 .. 2C+5
  const xs = 2, st = C + 3, ls = C + 6;
  s.grid.style.gridTemplateColumns = `${hw}px ${cols(s)} ${gap}px ${sw}px ${sw}px ${gap}px ${cols(s)}`;
  // Row lines: titles, column heads, x with LN's output beside it, gap, BN μ, σ, BN's title and output.
  const x0 = 3, bst = R + 4, bnTitle = R + 6;
  const bnStats = s.d.bn ? "6px var(--ch) var(--ch)" : "0 0 0"; // B = 1: no BN statistics
  // Driven, the corner right of BN's output holds the step's words and formula, and one row under BN's
  // output the colour switch, the badge and the legends (placeParts).
  s.grid.style.gridTemplateRows = `auto auto ${rows(s)} ${bnStats} auto ${grow(s)}${s.driven ? " auto" : ""}`;
  return { wide, t0: 1, h0: 2, x0, ln0: x0, bn0: bnTitle + 1, xs, ls, st, bst, lnTitle: 1, bnTitle };
}

// Narrow: one column, one norm (s.norm). Row lines: the toggle, the controls, x's title, its column
// heads, x, a gap, BN's μ and σ (no room while LN is shown), the output's title, the output: LN's
// and BN's outputs start on the same lines, and the one not shown is hidden (stage.css).
function narrowLines(s, { hw, sw, gap }) {
  const { R, C } = s.d;
  const xs = 2, st = C + 3;
  s.grid.style.gridTemplateColumns = `${hw}px ${cols(s)} ${gap}px ${sw}px ${sw}px`;
  const x0 = 5, bst = x0 + R + 1, title = bst + 2, out0 = title + 1;
  const bnStats = s.d.bn && s.norm === "bn" ? "6px var(--ch) var(--ch)" : "0 0 0";
  // The column heads' row is as tall with LN's μ and σ chips as without them: x stays put on a switch.
  const out = s.d.bn ? rows(s) : grow(s); // B = 1: rows BN's note may need
  // The step's words and formula go last, under the output: however long they grow, x and the output stay put.
  s.grid.style.gridTemplateRows = `auto auto auto minmax(20px, auto) ${rows(s)} ${bnStats} auto ${out} auto`;
  return { wide: false, t0: 3, h0: 4, x0, ln0: out0, bn0: out0, xs, ls: xs, st, bst, lnTitle: title, bnTitle: title, ctlRow: 2 };
}

function at(e, r, c, r2, c2) {
  e.style.gridArea = `${r} / ${c} / ${r2 ?? r + 1} / ${c2 ?? c + 1}`;
}

// Each row's cells in x and the outputs, LN's μ and σ beside it, and the row headers.
function placeBlocks(s, { wide, x0, ln0, bn0, xs, ls, st }) {
  const { R, C } = s.d;
  for (let i = 0; i < R; i++) {
    for (let j = 0; j < C; j++) {
      const k = i * C + j;
      at(s.cells.x[k], x0 + i, xs + j);
      at(s.cells.ln[k], ln0 + i, ls + j);
      if (s.d.bn) at(s.cells.bn[k], bn0 + i, xs + j);
    }
    at(s.stats.lnMu[i], x0 + i, st);
    at(s.stats.lnSd[i], x0 + i, st + 1);
    at(s.heads.rowX[i], x0 + i, 1);
    at(s.heads.rowLn[i], ln0 + i, 1);
    s.heads.rowLn[i].hidden = wide;
    if (s.d.bn) at(s.heads.rowBn[i], bn0 + i, 1);
  }
}

// The column headers (every k-th that fits), BN's μ and σ under x, and the symbols' headers.
function placeHeads(s, { wide, h0, xs, ls, st, bst }, { cw, head }) {
  const { C, c0 } = s.d;
  const every = headEvery(head, String(c0 + C - 1).length, cw);
  for (let j = 0; j < C; j++) {
    at(s.heads.colX[j], h0, xs + j);
    at(s.heads.colLn[j], h0, ls + j);
    s.heads.colLn[j].hidden = !wide;
    s.heads.colX[j].textContent = s.heads.colLn[j].textContent = (c0 + j) % every === 0 ? c0 + j : "";
    if (s.d.bn) {
      at(s.stats.bnMu[j], bst, xs + j);
      at(s.stats.bnSd[j], bst + 1, xs + j);
    }
  }
  at(s.heads.lnMu, h0, st);
  at(s.heads.lnSd, h0, st + 1);
  at(s.heads.bnMu, bst, 1);
  at(s.heads.bnSd, bst + 1, 1);
  s.heads.bnMu.hidden = s.heads.bnSd.hidden = !s.d.bn;
}

// The titles, the canvases under the cells, BN's note when B = 1, the toggle and the controls.
function placeParts(s, { wide, t0, x0, ln0, bn0, xs, ls, st, bst, lnTitle, bnTitle, ctlRow }) {
  const { R, C } = s.d;
  at(s.titles.x, t0, 1, t0 + 1, C + 2);
  at(s.titles.ln, lnTitle, wide ? ls : 1, lnTitle + 1, wide ? ls + C : C + 5);
  at(s.titles.bn, bnTitle, 1, bnTitle + 1, wide ? C + 2 : C + 5);
  if (s.noBn) at(s.noBn, bn0, xs, bn0 + Math.min(R, 3), wide ? xs + C : C + 5);
  at(s.paints.x, x0, xs, x0 + R, xs + C);
  at(s.paints.ln, ln0, ls, ln0 + R, ls + C);
  if (s.paints.bn) at(s.paints.bn, bn0, xs, bn0 + R, xs + C);
  // Driven and wide, the words and formula have the corner to themselves, in a box of fixed size
  // (stage.css): however long a step's words, nothing else moves between steps.
  const under = wide && s.driven;
  const home = under ? s.grid : s.controls;
  if (s.meta.parentElement !== home) home.append(s.meta);
  if (under) at(s.meta, bn0 + R, 1, bn0 + R + 1, ls + C);
  else s.meta.style.gridArea = "";
  if (wide) {
    at(s.controls, bst, st, bn0 + R, ls + C);
    if (s.words.parentElement !== s.controls) s.controls.insertBefore(s.words, s.controls.querySelector(".meta"));
    s.words.style.gridArea = "";
  } else {
    at(s.toggle, 1, 1, 2, C + 5);
    at(s.controls, ctlRow, 1, ctlRow + 1, C + 5);
    if (s.words.parentElement !== s.grid) s.grid.append(s.words);
    at(s.words, bn0 + R, 1, bn0 + R + 1, C + 5);
  }
  // The columns and rows of the window outside the drawn ones take no room (measure, fit).
  const off = ({ first, shown }) => (k) => k < first || k >= first + shown;
  const col = off(s.cols), row = off(s.rows);
  const byCell = (cells) => cells.forEach((c, k) => c.classList.toggle("off", row(Math.floor(k / C)) || col(k % C)));
  byCell(s.cells.x);
  byCell(s.cells.ln);
  byCell(s.cells.bn);
  const byLine = (off, ...parts) => parts.forEach((cells) => cells.forEach((c, k) => c.classList.toggle("off", off(k))));
  byLine(col, s.heads.colX, s.heads.colLn, s.stats.bnMu, s.stats.bnSd);
  byLine(row, s.heads.rowX, s.heads.rowLn, s.heads.rowBn, s.stats.lnMu, s.stats.lnSd);
}

// Wide: the stage fits below what is above it (a title, in lecture mode): shorter cells, down to `low`; in lecture
// mode, where all rows don't fit at that, fewer of them around the row kept in view (fit.js rowsFit), x's and BN's
// alike, and the titles say which. Each try is measured: a title that says more may take another line, and the
// controls beside BN's output may hold its rows taller than their cells. `first`: the first row drawn before,
// kept while it still holds the row kept in view. The cells' height.
function fit(s, m, first) {
  const { R } = s.d;
  const bn = !!s.d.bn;
  let ch = m.ch;
  for (let tries = 0; tries < 2 * R + 8; tries++) {
    // Driven, the switch, badge and legends under BN's output may go below the screen's foot.
    const tall = s.grid.offsetHeight - (s.meta.parentElement === s.grid ? s.meta.offsetHeight + 2 : 0);
    if (tall <= m.room) break;
    const fixed = tall - cellLines(s.rows.shown, bn) * ch;
    const least = m.present ? 1 : R;
    const next = rowsFit({ R: s.rows.shown, least, room: m.room, fixed, ch: m.ch, low: m.low, bn });
    if (next.shown === s.rows.shown && next.ch === ch) break; // as short as it goes, with as few rows
    ch = next.ch;
    s.root.style.setProperty("--ch", `${ch}px`);
    if (next.shown !== s.rows.shown) {
      s.rows = { first: around(m.row, next.shown, R, first), shown: next.shown };
      place(s, m);
    }
  }
  return ch;
}

// Cells `over` px shorter in all, over `lines` rows of them, but no shorter than `low`; their height.
function shorten(s, ch, low, over, lines) {
  if (over <= 0) return ch;
  const to = Math.max(low, ch - Math.ceil(over / lines));
  s.root.style.setProperty("--ch", `${to}px`);
  return to;
}

// Narrow: cells as tall as let the toggle, the controls, x, the norm's μ and σ and its output fit
// between Streamlit's header and the foot of the screen (a phone's 390 × 844: all of it at 8 × 12); their height.
// x keeps its size when the toggle switches: LN's view leaves out the room of BN's μ and σ, and counts it here.
function fitNarrow(s, { ch, low }) {
  const header = document.querySelector('[data-testid="stHeader"]');
  const under = header ? Math.min(Math.max(header.getBoundingClientRect().bottom, 0), window.innerHeight / 4) : 0;
  // A stage that starts on the page's first screen (a short title above it) fits that screen, from where it starts.
  const start = s.root.getBoundingClientRect().top + (document.querySelector('[data-testid="stMain"]')?.scrollTop ?? 0);
  const top = start < window.innerHeight * 0.4 ? Math.max(under, start) : under;
  const bnStats = s.d.bn && s.norm === "ln" ? 2 * ch + 6 : 0;
  const words = s.words.parentElement === s.grid ? s.words.offsetHeight + 2 : 0; // under the output, may scroll
  const over = s.grid.offsetHeight - words + bnStats - (window.innerHeight - top - 8);
  return shorten(s, ch, low, over, 2 * s.d.R + (s.d.bn ? 2 : 0));
}

function titles(s) {
  const { B, H } = s.d;
  const r0 = s.d.r0 + s.rows.first, R = s.rows.shown; // the rows drawn
  const c0 = s.d.c0 + s.cols.first, C = s.cols.shown; // the columns drawn
  const cut = [R < B && span(r0, R, "row", "rows"), C < H && span(c0, C, "feature", "features")].filter(Boolean);
  const part = cut.length ? ` · ${cut.join(", ")}` : "";
  put(s.sizes.part, part);
  // A window that leaves out cells behind a shown μ or σ says so beside them (issue 22). Short, so
  // that a projector's 20 px fits each on one line over its block.
  const over = (n, shown, per, what, the) =>
    shown < n ? `${per}: <em class="partial">μ, σ over all ${n} ${what}; ${shown} shown</em>` : `μ, σ ${per}, over ${the} ${n} ${what}`;
  s.titles.ln.innerHTML = `<b>LayerNorm</b> <span>${over(H, C, "per row", "features", "its")}</span>`;
  s.titles.bn.innerHTML = s.d.bn
    ? `<b>BatchNorm</b> <span>${over(B, R, "per column", "samples", "the")}</span>`
    : "<b>BatchNorm</b> <span>needs a batch: here B = 1</span>";
}
