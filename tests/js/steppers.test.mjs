// B's and H's steppers (lnviz/web/stage/view/steppers.js): what each button says, under Node's own runner.

import assert from "node:assert/strict";
import { test } from "node:test";

import { stepText } from "../../lnviz/web/stage/view/steppers.js";

test("a stepper's button says where it goes, or at an end that the size goes no further", () => {
  assert.equal(stepText("batch", "up", 9, 8), "More samples: B = 9");
  assert.equal(stepText("batch", "down", 7, 8), "Fewer samples: B = 7");
  assert.equal(stepText("features", "up", 20, 16), "More features: H = 20");
  assert.equal(stepText("batch", "down", null, 1), "Fewer samples: B = 1 is the least");
  assert.equal(stepText("features", "up", null, 1024), "More features: H = 1024 is the most");
});
