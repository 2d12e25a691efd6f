// A tap-the-cells question's pure part (lnviz/web/class/cells.js): taps toggled, the vote text encoded and read
// exactly as Python's Question.parse writes and reads it, and a round's shares per cell, against Python's own
// vectors (fixtures/class/cells.json, kept current by tests/test_cells_vectors.py).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { decode, encode, isRight, shares, stored, toggle } from "../../lnviz/web/class/cells.js";

const { grids } = JSON.parse(readFileSync(new URL("./fixtures/class/cells.json", import.meta.url), "utf8"));

test("a tap adds a cell, a second tap takes it out, and the taps stay sorted", () => {
  let tapped = [];
  for (const k of [5, 2, 9]) tapped = toggle(tapped, k);
  assert.deepEqual(tapped, [2, 5, 9]);
  assert.deepEqual(toggle(tapped, 5), [2, 9]);
  assert.deepEqual(toggle(toggle(tapped, 0), 0), tapped);
});

test("the vote text is Python's for every vector: bit k is cell k, ⌈n/4⌉ digits", () => {
  assert.ok(grids.length >= 4);
  for (const { rows, cols, encoded } of grids) {
    const n = rows * cols;
    for (const [cells, text] of encoded) {
      assert.equal(encode(cells, n), text, `${rows} × ${cols}: ${cells}`);
      assert.deepEqual(decode(text, n), [...new Set(cells)].sort((a, b) => a - b));
    }
  }
  assert.equal(encode([0, 5], 8), "21");
  assert.equal(encode([63], 64), "8000000000000000"); // past 2^53: a BigInt, not a Number
  assert.throws(() => encode([8], 8), RangeError);
});

test("vote text reads as Python's parse reads it, refusals included", () => {
  for (const { rows, cols, read } of grids) {
    for (const [text, want] of read) assert.equal(stored(text, rows * cols), want, `${rows} × ${cols}: ${JSON.stringify(text)}`);
  }
  assert.equal(decode(null, 8), null);
  assert.equal(decode(17, 8), null);
});

test("only torch's exact cells are right, as Python's right says", () => {
  for (const { rows, cols, answer, right } of grids) {
    for (const [text, want] of right) assert.equal(isRight(text, answer, rows * cols), want, `${text}`);
  }
});

test("a round's shares are Python's tally over its votes", () => {
  for (const { rows, cols, answer, votes, tally } of grids) {
    const n = rows * cols;
    const got = shares(tally, n);
    const counted = votes.map((v) => decode(v, n)).filter((c) => c !== null);
    assert.equal(got.votes, counted.length);
    assert.equal(got.right, votes.filter((v) => isRight(v, answer, n)).length);
    for (let k = 0; k < n; k += 1) {
      const taps = counted.filter((c) => c.includes(k)).length;
      assert.equal(got.taps[k], taps);
      assert.equal(got.shares[k], taps / counted.length);
    }
  }
  assert.deepEqual(shares({ votes: 0 }, 2), { taps: [0, 0], shares: [0, 0], right: 0, votes: 0 });
});
