// The narrow stage's pure parts (lnviz/web/stage/view/narrow.js) under Node's own runner.

import assert from "node:assert/strict";
import { test } from "node:test";

import { steps } from "../../lnviz/web/stage/model.js";
import { FINE_SPAN, fineValue, normOf } from "../../lnviz/web/stage/view/narrow.js";

const GAIN = { min: -5, max: 5, step: 0.05 };

test("a fine drag across the whole track moves γ by FINE_SPAN, to the step, within the range", () => {
  assert.equal(fineValue(1, 220, 220, GAIN), 1 + FINE_SPAN);
  assert.equal(fineValue(1, -110, 220, GAIN), 1 - FINE_SPAN / 2);
  // A finger's 70 px on a 220 px track: about 0.6, not the 3 of the track's own span.
  const moved = fineValue(1, 70, 220, GAIN) - 1;
  assert.ok(moved > 0.5 && moved < 0.7, moved);
  assert.equal(fineValue(1, 1, 220, GAIN), 1); // less than half a step: no change
  assert.equal(fineValue(1, 3, 220, GAIN), 1.05);
  assert.equal(fineValue(4.5, 500, 220, GAIN), 5);
  assert.equal(fineValue(-4.5, -500, 220, GAIN), -5);
  assert.equal(fineValue(0, 0, 0, GAIN), 0); // a track not laid out yet
});

test("Play's steps say which norm a narrow stage shows: LN's steps LN, BN's BN, at rest either", () => {
  const d = { r0: 0, c0: 0, R: 8, C: 12, B: 8, H: 12, bn: {} };
  const norms = steps(d).map(normOf);
  assert.equal(norms[0], null); // at rest: the toggle stays where the user put it
  const first = norms.indexOf("bn");
  assert.ok(first > 0 && norms.slice(1, first).every((n) => n === "ln"), norms.join());
  assert.ok(norms.slice(first, -1).every((n) => n === "bn"), norms.join());
  assert.equal(norms.at(-1), null); // the end: every column, after every row
  // With B = 1 there is no BN to show.
  assert.ok(!steps({ ...d, B: 1, bn: null }).map(normOf).includes("bn"));
});
