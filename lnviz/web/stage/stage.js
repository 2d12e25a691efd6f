// The stage (lnviz issue 12): x, LayerNorm's and BatchNorm's outputs on one screen.
//
// Python (ui/stage.py) sends torch's numbers for one window of x; the contract is
// lnviz/labs/explorer/stage.py. This file draws them, and while γ, β or ε is dragged it redoes only
// the elementwise steps from torch's x, μ and σ² (x̂ = (x − μ)/√(σ² + ε), y = γ x̂ + β),
// with no round trip. On release it sends the values to Python, torch recomputes, and
// the badge says how far the browser's preview was from torch's numbers.

// Values: ColorBrewer PRGn, purple below 0, white at 0, green above. Colour-blind safe,
// and it holds neither LN's blue (#0072B2) nor BN's vermillion (#D55E00), which mean
// "LN" and "BN" everywhere on the stage (stage.css).
const PRGN = [
  "#40004b", "#762a83", "#9970ab", "#c2a5cf", "#e7d4e8", "#f7f7f7",
  "#d9f0d3", "#a6dba0", "#5aae61", "#1b7837", "#00441b",
].map((h) => [1, 3, 5].map((k) => parseInt(h.slice(k, k + 2), 16)));
const FIXED = 3; // the fixed output colour range, ±3: γ and β visibly move the outputs
const STEP_MS = 1700;
const FLY_MS = 750;
const MINUS = "\u2212";

const stages = new WeakMap(); // parentElement -> the stage, kept across reruns

export default function (component) {
  const { parentElement, data, setTriggerValue } = component;
  let s = stages.get(parentElement);
  if (!s) {
    s = create(parentElement);
    stages.set(parentElement, s);
  }
  s.send = setTriggerValue;
  receive(s, data);
  // Streamlit calls this before every new payload too: keep the DOM, let go only when unmounted.
  return () =>
    setTimeout(() => {
      if (s.root.isConnected) return;
      stop(s);
      s.resized.disconnect();
      stages.delete(parentElement);
    }, 0);
}

// ---- numbers --------------------------------------------------------------------------

const num = (v) => (typeof v === "number" ? v : Number(v)); // "NaN", "Infinity" from JSON
const nums = (list) => Float64Array.from(list, num);

function sign(text) {
  return text.replace(/^-/, MINUS);
}

// A cell's number: short, so that it fits.
function short(v) {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "∞" : MINUS + "∞";
  const a = Math.abs(v);
  const t = a >= 99.95 ? v.toExponential(0) : a >= 9.995 ? v.toFixed(1) : v.toFixed(2);
  return sign(t);
}

// A tooltip's number: within 1e-6 of torch's.
function exact(v) {
  if (!Number.isFinite(v)) return short(v);
  const a = Math.abs(v);
  return sign(a !== 0 && a < 1e-3 ? v.toExponential(4) : v.toFixed(6));
}

// A number after an operator: a negative one in parentheses, so "x − (−1.2)" never reads "x − −1.2".
function term(v) {
  const t = exact(v);
  return t.startsWith(MINUS) ? `(${t})` : t;
}

function epsText(e) {
  return e === 0 ? "0" : e.toExponential(0).replace("e-", "e\u2212").replace("e+0", "");
}

// ---- colour ---------------------------------------------------------------------------

function interpolate(t) {
  const u = t * (PRGN.length - 1);
  const k = Math.min(Math.floor(u), PRGN.length - 2);
  return PRGN[k].map((c, n) => Math.round(c + (u - k) * (PRGN[k + 1][n] - c)));
}

// Black or white text, whichever contrasts more with the cell (WCAG relative luminance).
function ink(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const u = c / 255;
    return u <= 0.03928 ? u / 12.92 : ((u + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 ? "#111" : "#fff";
}

// 256 shades of the scale with their text colours, computed once: a drag frame only looks up.
const SHADES = Array.from({ length: 256 }, (_, k) => {
  const rgb = interpolate(k / 255);
  return { fill: `rgb(${rgb})`, ink: ink(rgb) };
});

// The shade of v on a scale from −range (purple) through 0 (white) to +range (green).
function shade(v, range) {
  return SHADES[Math.round(Math.min(Math.max((v / range + 1) / 2, 0), 1) * 255)];
}

function maxAbs(...arrays) {
  let m = 0;
  for (const a of arrays) for (const v of a) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  return m > 0 ? m : 1;
}

// ---- the DOM --------------------------------------------------------------------------

// A text that did not change is not set again: each set costs the grid a layout pass.
function put(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

function el(tag, cls, parent, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

const CONTROLS = `
  <div class="scrubs" role="group" aria-label="γ, β and ε: the outputs follow while you drag">
    <label class="scrub"><span class="name">γ <small>gain</small></span>
      <input type="range" name="gain" min="-5" max="5" step="0.05" aria-label="gain γ"><output></output></label>
    <label class="scrub"><span class="name">β <small>bias</small></span>
      <input type="range" name="bias" min="-5" max="5" step="0.05" aria-label="bias β"><output></output></label>
    <label class="scrub"><span class="name">ε <small>eps</small></span>
      <input type="range" name="eps" min="0" step="1" aria-label="epsilon ε"><output></output></label>
  </div>
  <div class="play" role="group" aria-label="Animation of the reduction">
    <button type="button" name="back" aria-label="Step back" title="Step back (←)">◀</button>
    <button type="button" name="play" aria-pressed="false">▶ Play</button>
    <button type="button" name="next" aria-label="Step forward" title="Step forward (→)">▶</button>
    <span class="count"></span>
  </div>
  <p class="caption" aria-live="polite"></p>
  <div class="foot">
    <label class="switch"><input type="checkbox" role="switch" name="fixed" checked>
      <span>fixed output colours ±${FIXED}</span></label>
    <span class="badge" aria-live="polite"></span>
  </div>
  <div class="legend" aria-hidden="true"><span class="lo"></span><span class="bar"></span><span class="hi"></span>
    <span class="what"></span></div>`;

function create(parent) {
  const root = el("div", "stage", parent);
  root.setAttribute("role", "region");
  root.setAttribute("aria-label", "The stage: x, LayerNorm and BatchNorm side by side");
  const grid = el("div", "grid", root);
  const controls = el("div", "controls", grid);
  controls.innerHTML = CONTROLS;
  const tip = el("div", "tip", root);
  tip.setAttribute("role", "tooltip");
  tip.id = "stage-tip";
  tip.hidden = true;
  const s = {
    root, grid, controls, tip,
    input: Object.fromEntries(["gain", "bias", "eps", "fixed"].map((n) => [n, controls.querySelector(`[name=${n}]`)])),
    out: Object.fromEntries(["gain", "bias", "eps"].map((n) => [n, controls.querySelector(`[name=${n}] + output`)])),
    play: controls.querySelector("[name=play]"),
    caption: controls.querySelector(".caption"),
    count: controls.querySelector(".count"),
    badge: controls.querySelector(".badge"),
    legend: controls.querySelector(".legend"),
    shape: "", d: null, ctl: null, dragging: false, pending: null, geometry: {},
    step: 0, timer: 0, hover: null,
  };
  wire(s);
  // The stage fits below what is above it: lay out again when it, or the page, changes size.
  s.resized = new ResizeObserver(() => layout(s));
  s.resized.observe(root);
  s.resized.observe(document.body);
  return s;
}

// The cells of one window, rebuilt only when its shape changes.
function build(s) {
  const { R, C } = s.d;
  hover(s, null);
  for (const e of [...s.grid.children]) if (e !== s.controls) e.remove();
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
  s.titles = { x: el("div", "title", s.grid), ln: el("div", "title ln", s.grid), bn: el("div", "title bn", s.grid) };
  s.noBn = s.d.bn ? null : el("p", "nobn", s.grid, s.d.bn_error);
  s.bands = Object.fromEntries(["lnA", "lnB", "bnA", "bnB"].map((n) => [n, el("div", `band ${n.slice(0, 2)}`, s.grid)]));
  layout(s);
}

// Where everything goes: a 2 × 2 layout when wide (LN's output to the right of x, along
// its rows; BN's below, along its columns), a single column when narrow.
function layout(s) {
  if (!s.d) return;
  const { R, C } = s.d;
  const W = s.root.clientWidth;
  if (!W) return;
  const present = s.root.classList.contains("present");
  const wide = W >= 640;
  const digits = String(s.d.r0 + R - 1).length;
  const hw = 10 + 7 * Math.max(digits, 2); // row header width
  const sw = W < 640 ? 44 : present ? 60 : 50; // a statistic's width
  const gap = 10;
  const across = wide ? 2 * C : C;
  let cw = Math.floor((W - hw - 2 * sw - 2 * gap - 2 * (across + 4)) / across);
  cw = Math.max(14, Math.min(cw, 64));
  // Tall enough to read, short enough that the stage fits below what is above it.
  const top = s.root.getBoundingClientRect().top + window.scrollY;
  const room = window.innerHeight - Math.min(top, window.innerHeight * 0.45) - 16;
  const ch = wide ? Math.max(18, Math.min(cw, 44)) : Math.max(18, Math.min(cw, 40));
  s.root.style.setProperty("--cw", `${cw}px`);
  s.root.style.setProperty("--ch", `${ch}px`);
  s.root.classList.toggle("wide", wide);
  s.root.classList.toggle("numbers", cw >= 30);
  s.wide = wide;

  const cols = (n) => Array(n).fill("var(--cw)").join(" ");
  const rows = (n) => Array(n).fill("var(--ch)").join(" ");
  // Column lines: 1 row header | x: 2 .. C+1 | gap | μ, σ | (wide: gap | LN: C+6 .. 2C+5)
  const xs = 2, st = C + 3, ls = wide ? C + 6 : xs;
  s.grid.style.gridTemplateColumns = `${hw}px ${cols(C)} ${gap}px ${sw}px ${sw}px` + (wide ? ` ${gap}px ${cols(C)}` : "");
  // Row lines: title, column heads, x, gap, BN μ, σ, then the outputs with their titles.
  const x0 = 3, bst = R + 4;
  const lnTitle = wide ? 1 : R + 6, ln0 = wide ? x0 : R + 7;
  const bnTitle = wide ? R + 6 : 2 * R + 7, bn0 = bnTitle + 1;
  const ctlRow = wide ? bst : bn0 + R;
  const bnStats = s.d.bn ? "6px var(--ch) var(--ch)" : "0 0 0"; // B = 1: no BN statistics
  s.grid.style.gridTemplateRows = wide
    ? `auto auto ${rows(R)} ${bnStats} auto ${Array(R).fill("minmax(var(--ch), auto)").join(" ")}`
    : `auto auto ${rows(R)} ${bnStats} auto ${rows(R)} auto ${rows(R)} auto`;
  const at = (e, r, c, r2, c2) => {
    e.style.gridArea = `${r} / ${c} / ${r2 ?? r + 1} / ${c2 ?? c + 1}`;
  };
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
  const every = Math.ceil((7 * String(s.d.c0 + C - 1).length + 4) / cw); // label every k-th column that fits
  for (let j = 0; j < C; j++) {
    at(s.heads.colX[j], 2, xs + j);
    at(s.heads.colLn[j], 2, ls + j);
    s.heads.colLn[j].hidden = !wide;
    s.heads.colX[j].textContent = s.heads.colLn[j].textContent = (s.d.c0 + j) % every === 0 ? s.d.c0 + j : "";
    if (s.d.bn) {
      at(s.stats.bnMu[j], bst, xs + j);
      at(s.stats.bnSd[j], bst + 1, xs + j);
    }
  }
  at(s.heads.lnMu, 2, st);
  at(s.heads.lnSd, 2, st + 1);
  at(s.heads.bnMu, bst, 1);
  at(s.heads.bnSd, bst + 1, 1);
  s.heads.bnMu.hidden = s.heads.bnSd.hidden = !s.d.bn;
  at(s.titles.x, 1, 1, 2, C + 2);
  at(s.titles.ln, lnTitle, wide ? ls : 1, lnTitle + 1, wide ? ls + C : C + 5);
  at(s.titles.bn, bnTitle, 1, bnTitle + 1, C + 2);
  if (s.noBn) at(s.noBn, bn0, xs, bn0 + Math.min(R, 3), xs + C);
  at(s.paints.x, x0, xs, x0 + R, xs + C);
  at(s.paints.ln, ln0, ls, ln0 + R, ls + C);
  if (s.paints.bn) at(s.paints.bn, bn0, xs, bn0 + R, xs + C);
  if (wide) at(s.controls, bst, st, bn0 + R, ls + C);
  else at(s.controls, ctlRow, 1, ctlRow + 1, C + 5);
  s.lines = { x0, ln0, bn0, xs, ls, st, bst };
  titles(s);
  showBands(s);
  if (wide) {
    // Shorter cells until the stage fits below what is above it (a title, in lecture mode).
    const lines = 2 * R + 2;
    const over = s.grid.offsetHeight - room;
    if (over > 0) s.root.style.setProperty("--ch", `${Math.max(18, ch - Math.ceil(over / lines))}px`);
  }
  s.geometry = {};
  if (s.shown) paint(s);
}

const count = (n, one, many) => `${n} ${n === 1 ? one : many}`;
const span = (a, n, one, many) => (n === 1 ? `${one} ${a}` : `${many} ${a}–${a + n - 1}`);

function titles(s) {
  const { B, H, r0, c0, R, C } = s.d;
  const part = R < B || C < H ? ` · ${span(r0, R, "row", "rows")}, ${span(c0, C, "feature", "features")}` : "";
  s.titles.x.innerHTML = `<b>x</b> <span>${count(B, "sample", "samples")} × ${H} features${part}</span>`;
  s.titles.ln.innerHTML = `<b>LayerNorm</b> <span>each row by its own μ, σ (over its ${H} features)</span>`;
  s.titles.bn.innerHTML = s.d.bn
    ? `<b>BatchNorm</b> <span>each column by its μ, σ (over the ${B} samples)</span>`
    : "<b>BatchNorm</b> <span>needs a batch: here B = 1</span>";
}

// ---- data in, numbers out -------------------------------------------------------------

function receive(s, raw) {
  const d = {
    ...raw,
    x: nums(raw.x),
    gamma: nums(raw.gamma), beta: nums(raw.beta), g: nums(raw.g), b: nums(raw.b),
    ln: norm(raw.ln),
    bn: raw.bn && norm(raw.bn),
  };
  const shape = [d.R, d.C, d.B, d.H, d.r0, d.c0, !!d.bn].join();
  s.d = d;
  s.badge.title = d.caveat_note || "";
  s.cell = d.cell || [d.r0, d.c0];
  s.steps = steps(d);
  s.step = Math.min(s.step, s.steps.length - 1);
  s.root.classList.toggle("present", !!d.present);
  s.input.eps.max = d.eps_options.length - 1;
  // A control the link hides (hide=eps) cannot be moved here either: its value is the link's.
  for (const n of ["gain", "bias", "eps"]) s.input[n].closest("label").hidden = (d.locked || []).includes(n);
  const torchCtl = { gain: d.gain, bias: d.bias, eps: d.eps };
  if (!s.dragging) s.ctl = torchCtl;
  s.torch = { ln: d.ln, bn: d.bn, ctl: torchCtl };
  if (shape !== s.shape) {
    s.shape = shape;
    s.pending = null; // another window: the preview was of other cells
    build(s);
  }
  if (s.pending && same(s.pending.ctl, torchCtl)) {
    badge(s, torchLabel(d, `torch: max |Δ| ${deltaText(s.pending.shown, s.torch)}`));
    s.pending = null;
  } else if (!s.pending && !s.dragging) {
    badge(s, torchLabel(d, `torch · ${d.dtype}`));
  }
  syncInputs(s);
  paint(s);
  applyStep(s);
}

// What the numbers on the stage are: torch's, the browser's preview, or torch's after a
// release with how far the preview was from them.
function badge(s, text) {
  put(s.badge, text);
  s.badge.classList.toggle("preview", text.startsWith("preview"));
}

// torch's numbers, with what is not torch's among them: at ε = 0 BN's are the formula's, as
// F.batch_norm refuses ε = 0 in training (the payload's caveat; its note is the badge's title).
function torchLabel(d, text) {
  return d.caveat ? `${text} · ${d.caveat}` : text;
}

function norm(n) {
  return { mean: nums(n.mean), var: nums(n.var), x_hat: nums(n.x_hat), y: nums(n.y), count: n.count };
}

const same = (a, b) => a.gain === b.gain && a.bias === b.bias && a.eps === b.eps;

// The outputs at the controls' values: torch's when they are torch's, else the browser's
// preview from torch's x, μ and σ².
function current(s) {
  if (same(s.ctl, s.torch.ctl)) return s.torch;
  const { x, g, b, R, C } = s.d;
  const { gain, bias, eps } = s.ctl;
  const one = (n, perRow) => {
    if (!n) return null;
    const xh = new Float64Array(R * C);
    const y = new Float64Array(R * C);
    for (let i = 0; i < R; i++) {
      for (let j = 0; j < C; j++) {
        const k = i * C + j;
        const m = perRow ? i : j;
        xh[k] = (x[k] - n.mean[m]) / Math.sqrt(n.var[m] + eps);
        y[k] = gain * g[j] * xh[k] + (bias + b[j]);
      }
    }
    return { ...n, x_hat: xh, y };
  };
  return { ln: one(s.d.ln, true), bn: one(s.d.bn, false), ctl: { ...s.ctl }, preview: true };
}

function deltaText(shown, torch) {
  let m = 0;
  for (const key of ["ln", "bn"]) {
    if (!shown[key]) continue;
    for (const f of ["x_hat", "y"]) {
      const a = shown[key][f], b = torch[key][f];
      for (let k = 0; k < a.length; k++) {
        if (Number.isNaN(a[k]) && Number.isNaN(b[k])) continue;
        m = Math.max(m, Math.abs(a[k] - b[k]));
      }
    }
  }
  return m === 0 ? "0" : Number.isFinite(m) ? m.toExponential(0) : "∞";
}

function paint(s) {
  const v = current(s);
  s.shown = v;
  const fixed = s.input.fixed.checked;
  const xr = maxAbs(s.d.x);
  const outs = [v.ln.y, v.bn ? v.bn.y : []];
  const yr = fixed ? FIXED : maxAbs(...outs);
  s.ranges = { x: xr, y: yr };
  if (!s.geometry.x || s.drawnX !== s.d) draw(s, "x", s.d.x, xr); // x moves with no control
  s.drawnX = s.d;
  draw(s, "ln", v.ln.y, yr);
  if (v.bn) draw(s, "bn", v.bn.y, yr);
  const stat = (cells, arr, f) => cells.forEach((c, k) => put(c, short(f(arr[k]))));
  stat(s.stats.lnMu, v.ln.mean, (m) => m);
  stat(s.stats.lnSd, v.ln.var, Math.sqrt);
  if (v.bn) {
    stat(s.stats.bnMu, v.bn.mean, (m) => m);
    stat(s.stats.bnSd, v.bn.var, Math.sqrt);
  }
  put(s.legend.querySelector(".lo"), sign(`-${fmtRange(yr)}`));
  put(s.legend.querySelector(".hi"), `+${fmtRange(yr)}`);
  put(s.legend.querySelector(".what"), `outputs${fixed ? " (fixed)" : ""}; x: ±${fmtRange(xr)}`);
  for (const n of ["gain", "bias"]) put(s.out[n], sign(s.ctl[n].toFixed(2)));
  put(s.out.eps, epsText(s.ctl.eps));
  if (s.hover) showTip(s, s.hover);
}

const fmtRange = (r) => (r >= 10 ? r.toFixed(0) : r.toFixed(1));

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
  const [, , w, h] = rects[0];
  const size = Math.min(Math.max(Math.min(w * 0.3, h * 0.7), 10), 15);
  const font = `${size}px ${getComputedStyle(s.root).fontFamily}`;
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
  for (let k = 0; k < values.length; k++) {
    const v = values[k];
    const nan = Number.isNaN(v);
    cells[k].classList.toggle("nan", nan); // hatched by the CSS, never drawn like 0
    if (nan) continue;
    const [x, y, w, h] = g.rects[k];
    const { fill, ink: text } = shade(v, range);
    ctx.fillStyle = fill;
    ctx.fillRect(x, y, w, h);
    if (g.text) {
      ctx.fillStyle = text;
      ctx.fillText(short(v), x + w / 2, y + h / 2 + 0.5);
    }
  }
}

function syncInputs(s) {
  if (s.dragging) return;
  s.input.gain.value = s.ctl.gain;
  s.input.bias.value = s.ctl.bias;
  s.input.eps.value = nearest(s.d.eps_options, s.ctl.eps);
  s.input.eps.setAttribute("aria-valuetext", epsText(s.ctl.eps));
}

function nearest(options, e) {
  let best = 0;
  for (let k = 0; k < options.length; k++) if (Math.abs(options[k] - e) < Math.abs(options[best] - e)) best = k;
  return best;
}

// ---- what the user does ---------------------------------------------------------------

function wire(s) {
  for (const n of ["gain", "bias", "eps"]) {
    const input = s.input[n];
    input.addEventListener("input", () => {
      s.dragging = true;
      s.ctl = { ...s.ctl, [n]: n === "eps" ? s.d.eps_options[+input.value] : +input.value };
      if (n === "eps") input.setAttribute("aria-valuetext", epsText(s.ctl.eps));
      badge(s, same(s.ctl, s.torch.ctl) ? torchLabel(s.d, `torch · ${s.d.dtype}`) : "preview (browser)");
      paint(s);
    });
    input.addEventListener("change", () => {
      s.dragging = false;
      if (same(s.ctl, s.torch.ctl)) return; // back where torch is: nothing to ask
      s.pending = { ctl: { ...s.ctl }, shown: current(s) };
      badge(s, "torch: computing…");
      s.send("scrub", { ...s.ctl });
    });
  }
  s.input.fixed.addEventListener("change", () => paint(s));
  s.play.addEventListener("click", () => (s.timer ? stop(s) : play(s)));
  s.controls.querySelector("[name=back]").addEventListener("click", () => go(s, -1));
  s.controls.querySelector("[name=next]").addEventListener("click", () => go(s, +1));

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
}

function where(s, c) {
  const k = +c.dataset.k;
  const { C, r0, c0 } = s.d;
  const b = c.dataset.block;
  if (b === "ln-mu" || b === "ln-sd") return [r0 + k, null];
  if (b === "bn-mu" || b === "bn-sd") return [null, c0 + k];
  return [r0 + Math.floor(k / C), c0 + (k % C)];
}

function keys(s, e) {
  const t = e.target;
  if (t.matches("input[type=range]")) return; // ranges keep their own arrows
  if (t.classList.contains("cell") && t.dataset.block === "x") {
    const { R, C } = s.d;
    const k = +t.dataset.k;
    const move = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -C, ArrowDown: C }[e.key];
    if (move !== undefined) {
      const n = k + move;
      const ok = n >= 0 && n < R * C && (Math.abs(move) === C || Math.floor(n / C) === Math.floor(k / C));
      if (ok) {
        t.tabIndex = -1;
        s.cells.x[n].tabIndex = 0;
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
  if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    go(s, e.key === "ArrowRight" ? 1 : -1);
    e.preventDefault();
  } else if (e.key === "Escape") {
    stop(s);
    s.step = 0;
    applyStep(s);
  }
}

// ---- hover: the row in LN's colour, the column in BN's, the formula with numbers ----------

function hover(s, c) {
  s.hover = c;
  if (!c) {
    s.tip.hidden = true;
    showBands(s);
    return;
  }
  showTip(s, c);
}

function showBands(s) {
  if (!s.lines) return;
  const [hi, hj] = s.hover ? where(s, s.hover) : [null, null];
  const step = s.steps && s.steps[s.step];
  const [ci, cj] = s.cell;
  const rowI = hi ?? (step && step.focus === "ln" ? ci : null);
  const colJ = hj ?? (step && step.focus === "bn" ? cj : null);
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
  const j = k % s.d.C;
  const { gain, bias, eps } = v.ctl;
  // torch's γ and β, or those the controls make while one is dragged (lnviz.maths.data.affine).
  const gamma = v.preview ? gain * s.d.g[j] : s.d.gamma[j];
  const beta = v.preview ? bias + s.d.b[j] : s.d.beta[j];
  const mu = n.mean[m], var_ = n.var[m];
  const cls = name === "LayerNorm" ? "ln" : "bn";
  return `<div class="${cls}"><b>${name}</b> <span>${over}</span></div>
    <div>μ = <b data-v="${cls}-mu">${exact(mu)}</b> &nbsp; σ² = <b data-v="${cls}-var">${exact(var_)}</b></div>
    <div>x̂ = (${exact(s.d.x[k])} ${MINUS} ${term(mu)}) / √(${exact(var_)} + ${epsText(eps)})
      = <b data-v="${cls}-xhat">${exact(n.x_hat[k])}</b></div>
    <div>y = ${exact(gamma)} · x̂ + ${term(beta)} = <b data-v="${cls}-y">${exact(n.y[k])}</b></div>`;
}

function showTip(s, c) {
  const v = s.shown;
  const [i, j] = where(s, c);
  const { C, r0, c0, H, B } = s.d;
  let html;
  if (i === null || j === null) {
    const ln = i !== null;
    const n = ln ? v.ln : v.bn;
    const m = ln ? i - r0 : j - c0;
    const what = ln ? `row ${i}, over its ${H} features` : `column ${j}, over the ${B} samples`;
    html = `<div class="${ln ? "ln" : "bn"}"><b>${ln ? "LayerNorm" : "BatchNorm"}</b> ${what}</div>
      <div>μ = <b>${exact(n.mean[m])}</b></div><div>σ² = <b>${exact(n.var[m])}</b>, σ = ${exact(Math.sqrt(n.var[m]))}</div>`;
  } else {
    const k = (i - r0) * C + (j - c0);
    html = `<div class="tx">x[${i}, ${j}] = <b data-v="x">${exact(s.d.x[k])}</b>${v.preview ? " <i>(preview)</i>" : ""}</div>
      ${formula(s, v, "LayerNorm", v.ln, k, i - r0, `row ${i}, over its ${H} features`)}
      ${formula(s, v, "BatchNorm", v.bn, k, j - c0, `column ${j}, over the ${B} samples`)}`;
  }
  s.tip.innerHTML = html;
  s.tip.hidden = false;
  const root = s.root.getBoundingClientRect();
  const r = c.getBoundingClientRect();
  const w = s.tip.offsetWidth, h = s.tip.offsetHeight;
  let left = r.right - root.left + 8;
  if (left + w > root.width) left = Math.max(0, r.left - root.left - w - 8);
  let top = r.bottom - root.top + 6;
  if (top + h > root.height) top = Math.max(0, r.top - root.top - h - 6);
  s.tip.style.left = `${left}px`;
  s.tip.style.top = `${top}px`;
  showBands(s);
}

// ---- Play: the reduction, one step at a time ------------------------------------------
// Each step only lights up parts of the stage (as Transformer Explainer's textbook pages
// do): `ln` and `bn` say how much of each norm is shown (0 nothing, 1 the chosen line's μ,
// 2 and σ, 3 and its output, 4 everything), `fly` what moves into place.

function steps(d) {
  const [i, j] = d.cell || [d.r0, d.c0];
  const list = [
    { ln: 4, bn: 4, text: "Press Play, or step with ← →: how each norm reduces x." },
    { ln: 0, bn: 0, focus: "ln", text: `LayerNorm takes one sample: row ${i}, all its ${d.H} features.` },
    { ln: 1, bn: 0, focus: "ln", fly: "ln-mu", text: `μ: the mean of row ${i}, over its ${d.H} features.` },
    { ln: 2, bn: 0, focus: "ln", fly: "ln-sd", text: `σ: the row's spread, σ² = mean of (x − μ)² (biased).` },
    { ln: 3, bn: 0, focus: "ln", fly: "ln-out", text: "The row becomes x̂ = (x − μ)/√(σ² + ε), then y = γ x̂ + β." },
    { ln: 4, bn: 0, text: "Every row the same way, each with its own μ and σ: no other sample is involved." },
  ];
  if (!d.bn) {
    list.push({ ln: 4, bn: 0, text: "BatchNorm needs a batch: with B = 1 a column has one value, no variance." });
    return list;
  }
  list.push(
    { ln: 4, bn: 0, focus: "bn", text: `BatchNorm takes one feature: column ${j}, over the ${d.B} samples.` },
    { ln: 4, bn: 1, focus: "bn", fly: "bn-mu", text: `μ: the mean of column ${j}, over the batch.` },
    { ln: 4, bn: 2, focus: "bn", fly: "bn-sd", text: "σ: the column's spread over the batch (biased)." },
    { ln: 4, bn: 3, focus: "bn", fly: "bn-out", text: "The column becomes x̂, then y = γ x̂ + β: it depends on every sample." },
    { ln: 4, bn: 4, text: "Every column the same way: change one sample and all of BN's outputs move." },
  );
  return list;
}

const reduced = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

function play(s) {
  if (s.step === s.steps.length - 1) s.step = 0;
  s.play.textContent = "❚❚ Pause";
  s.play.setAttribute("aria-pressed", "true");
  const tick = () => {
    if (!s.root.isConnected) return stop(s);
    if (s.step >= s.steps.length - 1) return stop(s);
    go(s, +1);
    s.timer = setTimeout(tick, STEP_MS);
  };
  s.timer = setTimeout(tick, 0);
}

function stop(s) {
  clearTimeout(s.timer);
  s.timer = 0;
  s.play.textContent = "▶ Play";
  s.play.setAttribute("aria-pressed", "false");
}

function go(s, by) {
  const to = Math.min(Math.max(s.step + by, 0), s.steps.length - 1);
  if (to === s.step) return;
  const forward = to > s.step;
  s.step = to;
  applyStep(s);
  if (forward && s.steps[to].fly && !reduced()) fly(s, s.steps[to].fly);
}

function applyStep(s) {
  const step = s.steps[s.step];
  const { C } = s.d;
  const [ci, cj] = s.cell;
  const i = ci - s.d.r0, j = cj - s.d.c0;
  const veil = (cells, shown) => cells.forEach((c, k) => c.classList.toggle("veiled", !shown(k)));
  veil(s.stats.lnMu, (k) => step.ln >= 4 || (step.ln >= 1 && k === i));
  veil(s.stats.lnSd, (k) => step.ln >= 4 || (step.ln >= 2 && k === i));
  veil(s.cells.ln, (k) => step.ln >= 4 || (step.ln >= 3 && Math.floor(k / C) === i));
  veil(s.stats.bnMu, (k) => step.bn >= 4 || (step.bn >= 1 && k === j));
  veil(s.stats.bnSd, (k) => step.bn >= 4 || (step.bn >= 2 && k === j));
  veil(s.cells.bn, (k) => step.bn >= 4 || (step.bn >= 3 && k % C === j));
  s.root.dataset.step = s.step;
  s.root.dataset.focus = step.focus || "";
  s.caption.textContent = step.text;
  s.count.textContent = `${s.step} / ${s.steps.length - 1}`;
  showBands(s);
}

// The chosen row (or column) flies into its statistic, or across to its output.
function fly(s, what) {
  const { C, R } = s.d;
  const i = s.cell[0] - s.d.r0, j = s.cell[1] - s.d.c0;
  const ln = what.startsWith("ln");
  const from = ln ? s.cells.x.slice(i * C, i * C + C) : Array.from({ length: R }, (_, r) => s.cells.x[r * C + j]);
  let to;
  if (what.endsWith("out")) to = ln ? s.cells.ln.slice(i * C, i * C + C) : Array.from({ length: R }, (_, r) => s.cells.bn[r * C + j]);
  else {
    const stat = ln ? (what === "ln-mu" ? s.stats.lnMu[i] : s.stats.lnSd[i]) : (what === "bn-mu" ? s.stats.bnMu[j] : s.stats.bnSd[j]);
    to = from.map(() => stat);
  }
  const root = s.root.getBoundingClientRect();
  from.forEach((c, k) => {
    const a = c.getBoundingClientRect();
    const b = to[k].getBoundingClientRect();
    const v = s.d.x[+c.dataset.k];
    const { fill, ink: text } = shade(v, s.ranges.x);
    const g = el("div", `ghost ${ln ? "ln" : "bn"}`, s.root, short(v));
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
