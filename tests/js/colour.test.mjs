// x's colours under a change of B or H (issue 46): lnviz/web/stage/view/paint.js `ranges` and colour.js `shade`,
// under Node's own runner. The payloads are Python's (tests/js/fixtures/colours.json, harness/stage_fixtures.py):
// for every input kind, the stable draw at the default 8 × 12 grid and at grids with another B alone or another H
// alone. A cell two grids share has the same x (lnviz.maths.data: a sample stays itself), so it must be painted
// the same colour.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { nums } from "../../lnviz/web/stage/model.js";
import { shade, useTheme } from "../../lnviz/web/stage/view/colour.js";
import { ranges } from "../../lnviz/web/stage/view/paint.js";

const { colors, cases } = JSON.parse(readFileSync(new URL("fixtures/colours.json", import.meta.url), "utf8"));
useTheme({ style: { setProperty() {} } }, colors);

// Each painted cell of x by its place in the full grid, "i,j": its value and its fill, as paint() draws it.
function painted(p) {
  const x = nums(p.x);
  const { x: range } = ranges(p, { ln: { y: [] }, bn: null }, true);
  const cells = new Map();
  for (let k = 0; k < x.length; k++) {
    cells.set(`${p.r0 + Math.floor(k / p.C)},${p.c0 + (k % p.C)}`, { v: x[k], fill: shade(x[k], range).fill });
  }
  return cells;
}

for (const dist of new Set(cases.map((c) => c.dist))) {
  test(`${dist}: a change of B alone or of H alone paints every cell the grids share as before`, () => {
    const [first, ...others] = cases.filter((c) => c.dist === dist).map((c) => c.payload);
    const before = painted(first);
    assert.deepEqual([first.B, first.H], [8, 12]); // the default grid
    for (const p of others) {
      assert.ok(p.B === first.B || p.H === first.H, `${p.B} × ${p.H} changes one of B and H`);
      let shared = 0;
      for (const [at, now] of painted(p)) {
        const was = before.get(at);
        if (!was) continue;
        shared++;
        assert.equal(now.v, was.v, `${p.B} × ${p.H}, cell ${at}: the stable draw keeps x`);
        assert.equal(now.fill, was.fill, `${p.B} × ${p.H}, cell ${at}: x = ${now.v} painted ${now.fill}, not ${was.fill}`);
      }
      assert.ok(shared > 0, `${p.B} × ${p.H} shares cells with 8 × 12`);
    }
  });
}
