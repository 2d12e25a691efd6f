// The narrow stage's pure parts (lnviz/web/stage/view/narrow.js) under Node's own runner.

import assert from "node:assert/strict";
import { test } from "node:test";

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
  // Steps as the stage gets them: how much of each norm is lit (0–4) and the norm a step focuses.
  const rest = { ln: 4, bn: 4, focus: "" };
  assert.equal(normOf(rest), null); // at rest and at the end: the toggle stays where the user put it
  assert.equal(normOf({ ln: 0, bn: 0, focus: "ln" }), "ln");
  assert.equal(normOf({ ln: 2, bn: 0, focus: "ln" }), "ln");
  assert.equal(normOf({ ln: 4, bn: 0 }), "ln"); // every row done, BN not begun: still LN's
  assert.equal(normOf({ ln: 4, bn: 0, focus: "bn" }), "bn"); // BN's first: its column, nothing lit yet
  assert.equal(normOf({ ln: 4, bn: 3, focus: "bn" }), "bn");
  assert.equal(normOf({ ln: 4, bn: 0, focus: "" }), "ln"); // B = 1's end: no BN to show
});
