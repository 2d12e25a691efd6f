// The stage's model (lnviz/web/stage/model.js) under Node's own runner: `node --test tests/js/`.
//
// The fixtures are torch's numbers in float64 and lnviz's Python texts, written by
// `python -m harness.stage_fixtures` (tests/test_stage_fixtures.py keeps them current).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  cellAt, controlText, decode, deltaText, emphasis, exact, formatNumber, lit, maxDelta, MINUS, moveIn, nearest, num,
  outputs, places, preview, same, short, shownX, stepCount, steps, term, torchControls, torchLabel,
} from "../../lnviz/web/stage/model.js";

const fixture = (name) => JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8"));
const { cases } = fixture("preview.json");
const numbers = fixture("numbers.json");

// |a − b| ≤ 1e-12 |b| (and a floor of 1e-15 for values at 0); NaN only where torch has NaN.
function close(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let k = 0; k < want.length; k++) {
    const a = got[k], b = num(want[k]);
    if (Number.isNaN(b)) {
      assert.ok(Number.isNaN(a), `${what}[${k}]: torch has NaN, the preview ${a}`);
      continue;
    }
    assert.ok(Math.abs(a - b) <= 1e-12 * Math.abs(b) + 1e-15, `${what}[${k}]: ${a} against torch's ${b}`);
  }
}

for (const c of cases) {
  test(`the preview is torch's x̂ and y within 1e-12: ${c.name}`, () => {
    const d = decode(c.payload);
    const shown = preview(d, c.at);
    assert.equal(shown.preview, true);
    for (const key of ["ln", "bn"]) {
      if (c.torch[key] === null) {
        assert.equal(shown[key], null, `${key}: no BN with one sample`);
        continue;
      }
      close(shown[key].x_hat, c.torch[key].x_hat, `${key}.x_hat`);
      close(shown[key].y, c.torch[key].y, `${key}.y`);
      // The statistics stay torch's: only the elementwise steps are redone.
      assert.deepEqual(shown[key].mean, d[key].mean);
    }
  });

  test(`after the release the badge's delta is at most 1e-12: ${c.name}`, () => {
    const d = decode(c.payload);
    const shown = preview(d, c.at);
    const released = decode({ ...c.payload, ln: { ...c.payload.ln, ...c.released.ln }, bn: c.released.bn && { ...c.payload.bn, ...c.released.bn } });
    const m = maxDelta(shown, released);
    assert.ok(m <= 1e-12, `max |Δ| ${m}`);
    assert.match(deltaText(m), /^(0|\de-1[2-9])$/);
  });
}

test("at torch's own controls the stage shows torch's numbers, not a preview", () => {
  const d = decode(cases[0].payload);
  const torch = { ln: d.ln, bn: d.bn, ctl: torchControls(d) };
  assert.equal(outputs(d, torch, { ...torch.ctl }), torch);
  assert.equal(outputs(d, torch, { ...torch.ctl, gain: torch.ctl.gain + 0.05 }).preview, true);
  assert.ok(same({ gain: 1, bias: 0, eps: 1e-5 }, { eps: 1e-5, bias: 0, gain: 1 }));
});

test("the delta: NaN against NaN counts as equal, NaN against a number as ∞", () => {
  const a = { ln: { x_hat: Float64Array.of(NaN, 1), y: Float64Array.of(NaN, 2) }, bn: null };
  assert.equal(maxDelta(a, { ln: { x_hat: Float64Array.of(NaN, 1), y: Float64Array.of(NaN, 2.5) } }), 0.5);
  assert.equal(maxDelta(a, { ln: { x_hat: Float64Array.of(0, 1), y: Float64Array.of(NaN, 2) } }), NaN);
  assert.equal(deltaText(0), "0");
  assert.equal(deltaText(3.2e-16), "3e-16");
  assert.equal(deltaText(Infinity), "∞");
  assert.equal(deltaText(NaN), "∞");
});

test("the payload's numbers: \"NaN\", \"Infinity\" and \"-Infinity\" read back as Python wrote them", () => {
  const d = decode(cases.find((c) => c.name.startsWith("a constant row")).payload);
  assert.ok(d.x instanceof Float64Array && d.ln.y instanceof Float64Array);
  assert.equal(num("NaN"), NaN);
  assert.equal(num("Infinity"), Infinity);
  assert.equal(num("-Infinity"), -Infinity);
  assert.equal(num(-0), -0);
});

test("numbers read as Python's format_number writes them (URL and slider text)", () => {
  assert.ok(numbers.format_number.length > 200);
  for (const [value, text] of numbers.format_number) assert.equal(formatNumber(num(value)), text, `${value}`);
});

test("a cell's, a tooltip's and a control's number read as their Python twins write them (lnviz.text)", () => {
  assert.ok(numbers.short.length > 500 && numbers.exact.length > 250 && numbers.control.length > 400);
  for (const [value, places, text] of numbers.short) assert.equal(short(num(value), places), text, `short(${value}, ${places})`);
  for (const [value, text] of numbers.exact) assert.equal(exact(num(value)), text, `exact(${value})`);
  for (const [value, step, text] of numbers.control) assert.equal(controlText(num(value), step), text, `${value} by ${step}`);
  // A tie rounds away from 0 in both, as JavaScript's toFixed does (Python's format would round 1.25 to 1.2).
  assert.ok(numbers.short.some(([v, p, t]) => v === 1.25 && p === 1 && t === "1.3"));
});

test("no number text is a negative zero: a negative that rounds to zero is written as zero", () => {
  const zero = /^[-\u2212][0.]+(e[-+]\d+)?$/; // "-0", "−0.0", "−0.00", "−0e+0"
  const texts = [
    ...numbers.format_number.map(([, t]) => t), ...numbers.short.map(([, , t]) => t),
    ...numbers.exact.map(([, t]) => t), ...numbers.control.map(([, , t]) => t),
  ];
  assert.ok(texts.some((t) => t === "0.0") && !texts.some((t) => zero.test(t)), texts.filter((t) => zero.test(t)));
  for (const v of [-0, -0.04, -0.049, -0.004, -1e-9, -5e-324]) {
    for (const t of [formatNumber(v), short(v), short(v, 1), exact(v), controlText(v, 0.05), controlText(v, 1e-5)]) {
      assert.ok(!zero.test(t), `${v}: ${t}`);
    }
  }
  assert.deepEqual([short(-0.04, 1), short(-0.05, 1), formatNumber(-0)], ["0.0", `${MINUS}0.1`, "0"]);
});

test("a control's decimals are its step's", () => {
  assert.deepEqual([places(0.05), places(0.5), places(1), places(1e-5), places(2.5e-7)], [2, 1, 0, 5, 8]);
  assert.equal(controlText(-0.5, 0.05), `${MINUS}0.50`);
  assert.equal(controlText(1.35, 0.5), "1.4");
});

test("a cell's number is short and a tooltip's within 1e-6, with a true minus sign", () => {
  const values = cases.flatMap((c) => [...decode(c.payload).x, ...decode(c.payload).ln.y]).filter(Number.isFinite);
  for (const v of values) {
    const text = exact(v);
    assert.ok(!text.includes("-"), text);
    assert.ok(Math.abs(Number(text.replace(MINUS, "-")) - v) <= 1e-6 * Math.max(1, Math.abs(v)), `${v}: ${text}`);
    assert.ok(short(v).length <= 6, `${v}: ${short(v)}`);
  }
  assert.deepEqual([short(NaN), short(Infinity), short(-Infinity)], ["NaN", "∞", `${MINUS}∞`]);
  assert.deepEqual([short(-1.234), short(12.34), short(123.4), short(0)], [`${MINUS}1.23`, "12.3", "1e+2", "0.00"]);
  // Lecture mode: one decimal, none from 10 on; never a rounded "10.0" or "100".
  assert.deepEqual(
    [short(-1.234, 1), short(9.96, 1), short(12.34, 1), short(99.4, 1), short(99.6, 1), short(0, 1)],
    [`${MINUS}1.2`, "10", "12", "99", "1e+2", "0.0"],
  );
  for (const v of [123.4, -55.55, -9.951, -0.05, 0.04, 9.94, 99.49]) assert.ok(short(v, 1).length <= 4, `${v}: ${short(v, 1)}`);
  assert.equal(term(-1.2), `(${MINUS}1.200000)`);
  assert.equal(term(1.2), "1.200000");
  assert.equal(exact(2e-5), "2.0000e-5");
});

// The chosen line of x at a step, as the walkthrough's table names it (lnviz.labs.walkthrough.LIGHTS).
const line = (values, d, focus, cell) => {
  const [i, j] = [cell[0] - d.r0, cell[1] - d.c0];
  return focus === "ln" ? values.slice(i * d.C, (i + 1) * d.C) : Array.from({ length: d.R }, (_, r) => values[r * d.C + j]);
};

for (const c of cases) {
  test(`a step's line of x is torch's x − μ, (x − μ)² and x̂ within 1e-12: ${c.name}`, () => {
    const d = decode(c.payload);
    const shown = preview(d, c.at); // x̂ follows a drag of ε
    for (const focus of ["ln", "bn"]) {
      if (c.centred[focus] === null) {
        assert.equal(shownX(d, { focus, shows: "x − μ" }, shown, d.cell), d.x, "no BN: x as it is");
        continue;
      }
      const at = (shows) => line(shownX(d, { focus, shows }, shown, d.cell), d, focus, d.cell);
      close(at("x − μ"), c.centred[focus], `${focus} x − μ`);
      close(at("(x − μ)²"), c.centred[focus].map((v) => num(v) ** 2), `${focus} (x − μ)²`);
      close(at("x̂"), line(c.torch[focus].x_hat, d, focus, d.cell), `${focus} x̂ at the dragged ε`);
      // Only that line changes: every other cell is x.
      const other = shownX(d, { focus, shows: "x − μ" }, shown, d.cell).filter((v, k) => v !== d.x[k]);
      assert.ok(other.length <= (focus === "ln" ? d.C : d.R));
    }
    assert.equal(shownX(d, { focus: "ln", shows: "" }, shown, d.cell), d.x, "a step that shows x leaves it");
  });
}

test("a step's words keep Markdown's bold as runs", () => {
  assert.deepEqual(emphasis("LN works on **one sample at a time**: row 3."), [
    ["LN works on ", false], ["one sample at a time", true], [": row 3.", false],
  ]);
  assert.deepEqual(emphasis("plain"), [["plain", false]]);
});

test("a step lights the chosen row's statistics, then its outputs; level 4 everything", () => {
  const C = 5, i = 1, j = 3;
  const at = (ln, bn) => ({ ln, bn });
  assert.ok(!lit(at(0, 0), "lnMu", i, i, j, C));
  assert.ok(lit(at(1, 0), "lnMu", i, i, j, C) && !lit(at(1, 0), "lnMu", 0, i, j, C));
  assert.ok(!lit(at(1, 0), "lnSd", i, i, j, C) && lit(at(2, 0), "lnSd", i, i, j, C));
  assert.ok(lit(at(3, 0), "ln", i * C + 4, i, j, C) && !lit(at(3, 0), "ln", 0, i, j, C));
  assert.ok(lit(at(4, 3), "bn", 2 * C + j, i, j, C) && !lit(at(4, 3), "bn", 2 * C + 1, i, j, C));
  assert.ok(lit(at(0, 4), "bnSd", 0, i, j, C) && !lit(at(0, 4), "lnSd", 0, i, j, C));
});

test("where a cell is, where the arrows move, the nearest ε", () => {
  const d = { R: 3, C: 4, r0: 10, c0: 20 };
  assert.deepEqual(cellAt(d, "x", 6), [11, 22]);
  assert.deepEqual(cellAt(d, "ln-mu", 2), [12, null]);
  assert.deepEqual(cellAt(d, "bn-sd", 1), [null, 21]);
  assert.equal(moveIn(d, 5, "ArrowRight"), 6);
  assert.equal(moveIn(d, 7, "ArrowRight"), null); // the row's end
  assert.equal(moveIn(d, 1, "ArrowUp"), null);
  assert.equal(moveIn(d, 1, "ArrowDown"), 5);
  assert.equal(moveIn(d, 1, "Enter"), undefined);
  assert.equal(nearest([0, 1e-5, 1e-3, 1], 2e-5), 1);
  assert.equal(nearest([0, 1e-5, 1e-3, 1], 0), 0);
});

test("torch's label carries the payload's caveat", () => {
  assert.equal(torchLabel({ caveat: "" }, "torch · float64"), "torch · float64");
  assert.equal(torchLabel({ caveat: "BN: formula (ε = 0)" }, "torch · float64"), "torch · float64 · BN: formula (ε = 0)");
});

// Play's steps are Python's stage_steps: the table's words filled in for the grid and the chosen cell.
for (const c of fixture("steps.json").cases) {
  test(`Play's steps are Python's for a ${c.B} × ${c.H} grid, cell (${c.cell})`, () => {
    assert.deepEqual(steps({ B: c.B, H: c.H, cell: c.cell, r0: 0, c0: 0 }), c.steps);
  });
}

// The counter counts the table's steps, as the intro's words do ("in twelve steps"): never "0 / 13".
test("Play's counter counts the twelve steps the words speak of", () => {
  const all = steps({ B: 8, H: 12, cell: [0, 0], r0: 0, c0: 0 });
  const texts = all.map((_, k) => stepCount(k, all.length));
  assert.ok(all[0].text.includes("twelve steps"));
  assert.deepEqual([texts[0], texts[1], texts[12], texts.at(-1)], ["0 / 12", "1 / 12", "12 / 12", "12 / 12, done"]);
  assert.ok(texts.every((t) => t.includes("/ 12")));
});
