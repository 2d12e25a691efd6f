// The scrubbed controls' spec (lnviz/web/stage/view/controls.js) under Node: each range is built from
// the payload's `controls`, which Python writes from the state table (tests/js/fixtures/preview.json).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { torchControls } from "../../lnviz/web/stage/model.js";
import { controlNamed, fromRange, rangeOf, toRange, valueText } from "../../lnviz/web/stage/view/controls.js";

const { cases } = JSON.parse(readFileSync(new URL("fixtures/preview.json", import.meta.url), "utf8"));
const d = cases[0].payload;

test("γ and β are ranges over the state table's min and max by its step; ε a range over its options", () => {
  assert.deepEqual(d.controls.map((c) => c.name), ["gain", "bias", "eps"]);
  const gain = controlNamed(d, "gain");
  assert.deepEqual(rangeOf(gain), { min: -5, max: 5, step: 0.05 });
  const eps = controlNamed(d, "eps");
  assert.deepEqual(rangeOf(eps), { min: 0, max: eps.options.length - 1, step: 1 });
  assert.equal(controlNamed(d, "seed"), undefined);
});

test("another range in the payload is another range on the stage, with no other edit", () => {
  const gain = { ...controlNamed(d, "gain"), min: -2, max: 8, step: 0.5 };
  assert.deepEqual(rangeOf(gain), { min: -2, max: 8, step: 0.5 });
  assert.equal(valueText(gain, 1.25), "1.3"); // the step's decimals
  assert.equal(fromRange(gain, "7.5"), 7.5);
});

test("a range's position and the control's value: itself for a number, an option's index for a choice", () => {
  const gain = controlNamed(d, "gain");
  const eps = controlNamed(d, "eps");
  assert.equal(fromRange(gain, "-1.35"), -1.35);
  assert.equal(toRange(gain, -1.35), -1.35);
  const k = eps.options.indexOf(1e-5);
  assert.equal(toRange(eps, 1e-5), k);
  assert.equal(fromRange(eps, String(k)), 1e-5);
  assert.equal(toRange(eps, 1.1e-5), k); // the nearest option
  assert.equal(fromRange(eps, "0"), 0);
  assert.equal(valueText(eps, 1e-5), "1e-05");
  assert.equal(valueText(gain, -0.5), "\u22120.50");
});

test("torch's controls are the payload's values, by name", () => {
  assert.deepEqual(torchControls(d), { gain: 1, bias: 0, eps: 1e-5 });
  for (const c of cases) assert.ok(c.payload.controls.every((x) => x.locked === false));
});
