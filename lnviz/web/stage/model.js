// The stage's model: its numbers and its steps, with no DOM (lnviz issue 22).
//
// Python (lnviz/labs/explorer/stage.py) sends torch's numbers for one window of x (B, H): R × C
// cells, flat and row-major. While γ, β or ε is dragged the stage redoes only the elementwise
// steps from torch's x, μ and σ²,
//
//   x̂ = (x − μ)/√(σ² + ε),  y = γ x̂ + β,  with γ_j = gain·g_j and β_j = bias + b_j,
//
// LayerNorm's μ, σ² one per row (over its H features), BatchNorm's one per column (over the B
// samples). Everything here is a plain function of plain data: tests/js/ runs it under Node
// against numbers torch wrote in float64, and the view (view/) draws what it returns.

import TABLE from "./table.js";

export const MINUS = "\u2212";

// ---- the payload in -------------------------------------------------------------------

// A number of the payload: JSON has no NaN or ±∞, so Python sends "NaN", "Infinity", "-Infinity".
export const num = (v) => (typeof v === "number" ? v : Number(v));
export const nums = (list) => Float64Array.from(list, num);

function norm(n) {
  return { mean: nums(n.mean), var: nums(n.var), x_hat: nums(n.x_hat), y: nums(n.y), count: n.count };
}

// The payload with its number lists as Float64Arrays; `bn` stays null when B = 1.
export function decode(raw) {
  return {
    ...raw,
    x: nums(raw.x),
    gamma: nums(raw.gamma), beta: nums(raw.beta), g: nums(raw.g), b: nums(raw.b),
    ln: norm(raw.ln),
    bn: raw.bn && norm(raw.bn),
  };
}

// What decides the cells the stage builds: another shape, other cells.
export const shapeOf = (d) => [d.R, d.C, d.B, d.H, d.r0, d.c0, !!d.bn].join();

// The controls torch computed the payload at, by name: { gain, bias, eps }.
export const torchControls = (d) => Object.fromEntries(d.controls.map((c) => [c.name, c.value]));

export const same = (a, b) => Object.keys(a).every((n) => a[n] === b[n]) && Object.keys(b).every((n) => n in a);

// ---- the preview: x̂ and y at other controls, from torch's x, μ and σ² -----------------

// One norm's x̂ and y (R·C,) at `ctl`; `perRow`: its statistics are one per row (LN), else per column (BN).
function previewNorm(d, n, ctl, perRow) {
  if (!n) return null;
  const { x, g, b, R, C } = d;
  const { gain, bias, eps } = ctl;
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
}

// Both norms' outputs at the controls `ctl`, computed in the browser.
export function preview(d, ctl) {
  return { ln: previewNorm(d, d.ln, ctl, true), bn: previewNorm(d, d.bn, ctl, false), ctl: { ...ctl }, preview: true };
}

// What the stage shows at `ctl`: torch's numbers when they are torch's controls, else the preview.
export function outputs(d, torch, ctl) {
  return same(ctl, torch.ctl) ? torch : preview(d, ctl);
}

// The γ and β of column j at `ctl`: torch's, or those the controls make (lnviz.maths.data.affine).
export function affineAt(d, ctl, j, previewing) {
  return previewing ? [ctl.gain * d.g[j], ctl.bias + d.b[j]] : [d.gamma[j], d.beta[j]];
}

// ---- the deltas: how far the preview was from torch's numbers --------------------------

// The largest |preview − torch| over both norms' x̂ and y; NaN where both are NaN counts as equal,
// NaN against a number as ∞.
export function maxDelta(shown, torch) {
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
  return m;
}

export const deltaText = (m) => (m === 0 ? "0" : Number.isFinite(m) ? m.toExponential(0) : "∞");

// torch's numbers, with what is not torch's among them: at ε = 0 BN's are the formula's, as
// F.batch_norm refuses ε = 0 in training (the payload's caveat; its note is the badge's title).
export function torchLabel(d, text) {
  return d.caveat ? `${text} · ${d.caveat}` : text;
}

// ---- where a cell is ------------------------------------------------------------------

// The full grid's (row, col) of the k-th element of a block; a statistic has only its row or column.
export function cellAt(d, block, k) {
  const { C, r0, c0 } = d;
  if (block === "ln-mu" || block === "ln-sd") return [r0 + k, null];
  if (block === "bn-mu" || block === "bn-sd") return [null, c0 + k];
  return [r0 + Math.floor(k / C), c0 + (k % C)];
}

// Where an arrow key moves the focus in x (R × C) from cell k, or null if it would leave the grid.
export function moveIn(d, k, key) {
  const { R, C } = d;
  const move = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -C, ArrowDown: C }[key];
  if (move === undefined) return undefined;
  const n = k + move;
  const ok = n >= 0 && n < R * C && (Math.abs(move) === C || Math.floor(n / C) === Math.floor(k / C));
  return ok ? n : null;
}

// The ε option nearest to e: the index the ε range takes.
export function nearest(options, e) {
  let best = 0;
  for (let k = 0; k < options.length; k++) if (Math.abs(options[k] - e) < Math.abs(options[best] - e)) best = k;
  return best;
}

// ---- numbers as text ------------------------------------------------------------------

// The short text a number has in a URL and on a slider, as Python's lnviz.text.format_number
// writes it (f"{v:g}", or repr(v) when that does not read back as v): "1e-05", "0.5", "0". One
// contract in both languages: tests/js/fixtures/numbers.json holds Python's texts.
export function formatNumber(v) {
  v += 0; // −0 + 0 is 0: no "-0", as in Python
  if (Number.isNaN(v)) return "nan";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  const g = pyG(v);
  return Number(g) === v ? g : pyRepr(v);
}

// Python's exponent: a sign and at least two digits ("e-05", "e+16").
const pyExp = (e) => `e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;

// f"{v:g}": 6 significant digits, fixed for exponents −4 to 5, trailing zeros dropped.
function pyG(v) {
  const [mantissa, exp] = Math.abs(v).toExponential(5).split("e");
  const e = Number(exp);
  const body = e >= -4 && e < 6 ? stripZeros(Math.abs(v).toFixed(5 - e)) : stripZeros(mantissa) + pyExp(e);
  return (v < 0 ? "-" : "") + body;
}

const stripZeros = (t) => (t.includes(".") ? t.replace(/0+$/, "").replace(/\.$/, "") : t);

// repr(v): the shortest digits that read back as v, fixed for exponents −4 to 15 (with ".0" when whole).
function pyRepr(v) {
  const [mantissa, exp] = Math.abs(v).toExponential().split("e"); // the shortest round-trip digits
  const digits = mantissa.replace(".", "");
  const e = Number(exp);
  let body;
  if (e < -4 || e >= 16) body = digits[0] + (digits.length > 1 ? `.${digits.slice(1)}` : "") + pyExp(e);
  else if (e < 0) body = `0.${"0".repeat(-e - 1)}${digits}`;
  else {
    const whole = digits.slice(0, e + 1).padEnd(e + 1, "0");
    body = `${whole}.${digits.slice(e + 1) || "0"}`;
  }
  return (v < 0 ? "-" : "") + body;
}

// A leading hyphen as a true minus sign; none before a number rounded to zero ("-0.0" is "0.0"), as
// lnviz.text._sign writes it.
export function sign(text) {
  return /^-[0.]+(e[-+]\d+)?$/.test(text) ? text.slice(1) : text.replace(/^-/, MINUS);
}

// A cell's number: short, so that it fits, with `places` decimals below 10 and one fewer up to
// 100 (lecture mode keeps one: 20 px numbers in a cell of 24 columns across a projector). Its
// Python twin is lnviz.text.short, and tests/js/fixtures/numbers.json holds its texts.
export function short(v, places = 2) {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "∞" : MINUS + "∞";
  const a = Math.abs(v);
  const half = 0.5 * 10 ** -places; // where toFixed(places) would round up to 10.0…
  const t = a >= 100 - 10 * half ? v.toExponential(0) : a >= 10 - half ? v.toFixed(places - 1) : v.toFixed(places);
  return sign(t);
}

// A tooltip's number: within 1e-6 of torch's (lnviz.text.exact).
export function exact(v) {
  if (!Number.isFinite(v)) return short(v);
  const a = Math.abs(v);
  return sign(a !== 0 && a < 1e-3 ? v.toExponential(4) : v.toFixed(6));
}

// A number after an operator: a negative one in parentheses, so "x − (−1.2)" never reads "x − −1.2".
export function term(v) {
  const t = exact(v);
  return t.startsWith(MINUS) ? `(${t})` : t;
}

// How many decimals a control's step has: 0.05 has 2, 1e-5 has 5 (lnviz.text.places).
export function places(step) {
  const [mantissa, exp] = formatNumber(step).split("e");
  return Math.max(0, (mantissa.split(".")[1] || "").length - Number(exp || 0));
}

// A scrubbed control's value with its step's decimals: "1.35", "−0.50" for γ's 0.05 (lnviz.text.control_text).
export const controlText = (v, step) => sign(v.toFixed(places(step)));

// The colour legend's end.
export const rangeText = (r) => (r >= 10 ? r.toFixed(0) : r.toFixed(1));

export const count = (n, one, many) => `${n} ${n === 1 ? one : many}`;
export const span = (a, n, one, many) => (n === 1 ? `${one} ${a}` : `${many} ${a}–${a + n - 1}`);

// ---- Play: the reduction, one step at a time ------------------------------------------
// The steps are Python's: table.js is the app's one step table (lnviz.labs.walkthrough.stage_table),
// written from it. Each step only lights up parts of the stage, as Transformer Explainer's textbook
// pages do: `ln` and `bn` say how much of each norm is shown (0 the chosen line only, 1 and its μ,
// 2 and σ, 3 and its output, 4 everything), `fly` what moves into place, `shows` what the chosen
// line of x holds.

// Play's steps for the payload's grid and chosen cell, filled in as Python's stage_steps fills them:
// everything shown, LN's six steps along row i, BN's six down column j, everything again.
export function steps(d, table = TABLE) {
  const [i, j] = d.cell || [d.r0, d.c0];
  const fill = (entry, n) => ({ ...entry, text: entry.text.replace(/\{([ijn])\}/g, (_, k) => String({ i, j, n }[k])) });
  const batch = d.B > 1;
  const ends = { norm: "", title: "", ln: table.done, bn: batch ? table.done : 0, focus: "", fly: "", shows: "" };
  return [
    { ...ends, text: table.intro },
    ...table.LN.map((e) => fill(e, d.H)),
    ...table[batch ? "BN" : "BN_ONE"].map((e) => fill(e, d.B)),
    { ...ends, text: batch ? table.outro : table.outro_one },
  ];
}

// Play's counter at step k of `all` (steps(d)): the table's steps are counted, as the words count them
// ("in twelve steps"), not the everything-shown before and after them: "0 / 12" before, "12 / 12, done" after.
export function stepCount(k, all) {
  const n = all - 2;
  return k > n ? `${n} / ${n}, done` : `${k} / ${n}`;
}

// The chosen line of x at a step that `shows` something other than x: "x − μ", "(x − μ)²" or
// "x̂", from torch's x and μ (one subtraction, as torch does it) and the shown x̂ (torch's, or the
// preview's while ε is dragged). Returns the window's x (R·C,) with that row (LN) or column (BN)
// replaced, or x itself.
export function shownX(d, step, shown, cell) {
  if (!step || !step.shows) return d.x;
  const ln = step.focus === "ln";
  const n = ln ? shown.ln : shown.bn;
  if (!n) return d.x;
  const { R, C, r0, c0 } = d;
  const i = cell[0] - r0, j = cell[1] - c0;
  if (ln ? i < 0 || i >= R : j < 0 || j >= C) return d.x;
  const out = Float64Array.from(d.x);
  const line = ln ? Array.from({ length: C }, (_, c) => i * C + c) : Array.from({ length: R }, (_, r) => r * C + j);
  for (const k of line) {
    const centred = d.x[k] - n.mean[ln ? i : j];
    out[k] = step.shows === "x − μ" ? centred : step.shows === "(x − μ)²" ? centred * centred : n.x_hat[k];
  }
  return out;
}

// Words with Markdown's **bold**, as runs: [[text, bold], ...] (the view makes <b> of the bold ones).
export function emphasis(text) {
  return text.split("**").map((t, k) => [t, k % 2 === 1]).filter(([t]) => t);
}

// A step's caption as the stage shows it, as runs [text, kind]: kind "b" bold (the title, unless the page's
// heading has it, and the words' **bold**), "" plain, "shows" what the chosen line of x shows at cell [i, j].
export function captionRuns(step, cell, driven) {
  const runs = [];
  if (step.title && !driven) runs.push([`${step.title}. `, "b"]);
  for (const [text, bold] of emphasis(step.text)) runs.push([text, bold ? "b" : ""]);
  if (step.shows) {
    const line = step.focus === "ln" ? `row ${cell[0]}` : `column ${cell[1]}`;
    runs.push([` In x, ${line} now shows ${step.shows}.`, "shows"]);
  }
  return runs;
}

// Play's pace (issue 46): each step stays while its caption is read at WPM words a minute, after PAUSE_MS to see
// what it lit up and what flew into place, divided by the speed chosen beside Play (one of SPEEDS).
const WPM = 200;
const PAUSE_MS = 1500;
export const SPEEDS = [0.5, 1, 2];

// The words of a text: what lies between spaces, a symbol such as "μ" or "−" included (it is read too).
const wordCount = (text) => (text.match(/\S+/g) || []).length;

// How long Play stays on `step` at cell [i, j] and `speed`, in ms.
export function dwell(step, cell, speed = 1) {
  const words = wordCount(captionRuns(step, cell, false).map(([text]) => text).join(""));
  return (PAUSE_MS + (words * 60_000) / WPM) / speed;
}

// Whether `step` shows the k-th element of `part` ("lnMu", "lnSd", "ln": LN's outputs, and BN's
// the same), with (i, j) the chosen cell's place in the window and C its columns.
export function lit(step, part, k, i, j, C) {
  const level = part.startsWith("ln") ? step.ln : step.bn;
  if (level >= 4) return true;
  if (part === "lnMu") return level >= 1 && k === i;
  if (part === "lnSd") return level >= 2 && k === i;
  if (part === "ln") return level >= 3 && Math.floor(k / C) === i;
  if (part === "bnMu") return level >= 1 && k === j;
  if (part === "bnSd") return level >= 2 && k === j;
  return level >= 3 && k % C === j; // "bn"
}
