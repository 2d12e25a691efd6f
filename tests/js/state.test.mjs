// The stage's state is declared once (lnviz/web/stage/view/state.js): after every module of the stage has
// run over it (payloads of several shapes, a drag and its release, hover, clicks, keys, Play, a narrow
// stage, the Walkthrough's steps with a formula, the unmount), it has exactly the declared fields.
// The view runs on a stand-in DOM (fake_dom.mjs), under Node's own runner.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { mock, test } from "node:test";

import { fire, installDom } from "./fake_dom.mjs";

const STAGE = new URL("../../lnviz/web/stage/", import.meta.url);
const { cases } = JSON.parse(readFileSync(new URL("fixtures/preview.json", import.meta.url), "utf8"));
const payload = (k, more = {}) => ({ ...cases[k].payload, walk: null, present: false, formula: "", ...more });
const dom = installDom(1000);
const { default: mount, stageOf } = await import(new URL("index.js", STAGE));
const { FIELDS, stageState } = await import(new URL("view/state.js", STAGE));

// Until done() (KaTeX loads as the browser loads it, by a dynamic import), for at most 5 s.
const settle = async (done) => {
  for (let k = 0; k < 500 && !done(); k++) await new Promise((r) => setTimeout(r, 10));
};

test("after a full run of the stage's modules its state has exactly the fields state.js declares", async () => {
  const parent = document.body.appendChild(document.createElement("div"));
  const sent = [];
  const run = (data) => mount({ parentElement: parent, data, setTriggerValue: (name, v) => sent.push([name, v]) });
  run(payload(0));
  const s = stageOf(parent);
  assert.ok(Object.isSealed(s));
  const [resized, seen] = dom.observers.slice(-2);
  resized.fire();
  seen.fire([{ isIntersecting: true }]);

  // A drag of γ: the preview, the release to torch, torch's numbers back.
  s.input.gain.value = "1.5";
  fire(s.input.gain, "input");
  fire(s.input.gain, "change");
  assert.equal(sent.at(-1)[0], "scrub");
  run(payload(0, { controls: cases[0].payload.controls.map((c) => (c.name === "gain" ? { ...c, value: 1.5 } : c)) }));
  fire(s.input.fixed, "change");

  // Hover, focus, a click and the keys on x's cells.
  const [first, second] = s.cells.x;
  fire(first, "pointerover");
  fire(s.stats.lnMu[0], "pointerover");
  fire(s.grid, "pointerleave");
  fire(first, "focusin");
  fire(first, "focusout");
  fire(second, "click");
  assert.equal(sent.at(-1)[0], "pick");
  for (const key of ["ArrowRight", "Enter", "PageDown", "PageUp", "Escape"]) fire(s.cells.x[0], "keydown", { key });
  fire(document.body, "keydown", { key: "PageDown" }); // a presenter's clicker, from anywhere on the page

  // Play to the end, and the step buttons.
  mock.timers.enable({ apis: ["setTimeout"] });
  fire(s.play, "click");
  const speed = s.controls.querySelector("select[name=speed]");
  speed.value = "2";
  fire(speed, "change"); // while it plays
  for (let k = 0; k <= s.steps.length + 1; k++) mock.timers.tick(60_000); // a step each dwell (under a minute), then it stops
  mock.timers.reset();
  assert.equal(s.timer, 0);
  fire(s.controls.querySelector("[name=back]"), "click");
  fire(s.controls.querySelector("[name=next]"), "click");

  // B's and H's steppers: a press sends the stop it goes to; a size the link fixes has none.
  const sizes = { batch: { down: 7, up: 9, why: "" }, features: { down: 11, up: null, why: "H set by the link" } };
  run(payload(0, { sizes }));
  fire(s.sizes.batch.up, "click");
  assert.deepEqual(sent.at(-1), ["size", { name: "batch", value: 9 }]);
  assert.ok(s.sizes.features.down.hidden && s.sizes.features.up.disabled);

  // Another shape, and one sample (no BN).
  run(payload(1, { resized: "Kept: the first rows." }));
  run(payload(4));

  // Narrow: one norm at a time, the toggle, the fine pads.
  dom.setWidth(390);
  run(payload(2));
  resized.fire();
  fire(s.toggle.querySelector("button.bn"), "click");
  const pad = s.controls.querySelector(".fine");
  fire(pad, "pointerdown", { clientX: 0, pointerId: 1 });
  fire(pad, "pointermove", { clientX: 80 });
  fire(pad, "pointerup");
  dom.setWidth(1000);

  // The Walkthrough: driven steps, lecture mode, a formula typeset by KaTeX.
  run(payload(0, { walk: 2, present: true, formula: "\\mu = \\frac{1}{n}\\sum_j x_j" }));
  run(payload(0, { walk: 3, present: true, formula: "\\sigma^2 = 1" }));
  await settle(() => s.formulaShown === "\\sigma^2 = 1");
  assert.equal(s.formulaShown, "\\sigma^2 = 1");
  fire(s.cells.x[0], "keydown", { key: "ArrowLeft" });

  // Unmounted: the stage lets go of its observers and listeners.
  const cleanup = run(payload(0));
  parent.remove();
  cleanup();
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(stageOf(parent), undefined);

  assert.deepEqual(Object.keys(s), FIELDS);
});

test("the state is sealed: a field state.js does not declare cannot be added", () => {
  const s = stageState();
  assert.throws(() => {
    "use strict";
    s.undeclared = 1;
  }, TypeError);
  assert.deepEqual(Object.keys(stageState()), FIELDS);
});

test("every field a module of the stage uses is declared in state.js", () => {
  // Also what the run above may not reach: each `s.NAME` in the stage's code, by name.
  const files = ["index.js", ...readdirSync(new URL("view/", STAGE)).map((f) => `view/${f}`)];
  const used = new Set();
  for (const f of files.filter((f) => f.endsWith(".js") && f !== "view/state.js")) {
    for (const [, name] of readFileSync(new URL(f, STAGE), "utf8").matchAll(/\bs\.([A-Za-z_$][\w$]*)/g)) used.add(name);
  }
  assert.deepEqual([...used].filter((n) => !FIELDS.includes(n)), []);
  assert.deepEqual(FIELDS.filter((n) => !used.has(n)), []); // and none is declared for nothing
});

test("a window that grows under the chosen cell is built again, with that cell chosen", () => {
  // 2 × 5 with cell (1, 1), then 8 × 5 with cell (4, 1): the old cells end before the new chosen one.
  const parent = document.body.appendChild(document.createElement("div"));
  const run = (data) => mount({ parentElement: parent, data, setTriggerValue: () => {} });
  run(payload(2));
  run(payload(0));
  const s = stageOf(parent);
  const { C, r0, c0 } = s.d;
  const k = (s.cell[0] - r0) * C + (s.cell[1] - c0);
  assert.ok(s.cells.x[k].classList.contains("chosen"));
  assert.equal(s.cells.x.filter((c) => c.classList.contains("chosen")).length, 1);
  parent.remove();
});
