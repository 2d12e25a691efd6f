// Play at reading speed (issue 46): each step stays at least as long as its caption takes to read at about 200
// words a minute, and the speed beside Play scales that. The stage runs on the stand-in DOM (fake_dom.mjs) with
// Node's mock timers: what is measured is when Play moves on, in the timers' time, never the machine's.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mock, test } from "node:test";

import { fire, installDom } from "./fake_dom.mjs";

const STAGE = new URL("../../lnviz/web/stage/", import.meta.url);
const { cases } = JSON.parse(readFileSync(new URL("fixtures/preview.json", import.meta.url), "utf8"));
installDom(1000);
const stored = new Map();
window.sessionStorage = { getItem: (k) => stored.get(k) ?? null, setItem: (k, v) => stored.set(k, String(v)) };
const { default: mount, stageOf } = await import(new URL("index.js", STAGE));

const READ_MS = 60_000 / 200; // a word at 200 words a minute
const TICK = 10;

function stage(k) {
  const parent = document.body.appendChild(document.createElement("div"));
  const data = { ...cases[k].payload, walk: null, present: false, formula: "" };
  mount({ parentElement: parent, data, setTriggerValue: () => {} });
  return stageOf(parent);
}

const choose = (s, value) => {
  const speed = s.controls.querySelector("select[name=speed]");
  speed.value = value;
  fire(speed, "change");
};

// Play from the start to its end: each step's caption as shown, and how long it stayed (to TICK ms).
function playThrough(s) {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    fire(s.play, "click");
    mock.timers.tick(0); // Play moves to the first step at once
    const stays = [];
    while (s.timer) {
      const [step, words] = [s.step, s.caption.textContent];
      let ms = 0;
      while (s.step === step && s.timer) {
        mock.timers.tick(TICK);
        ms += TICK;
      }
      stays.push({ step, words, ms });
    }
    return stays;
  } finally {
    mock.timers.reset();
  }
}

for (const k of [0, 4]) {
  test(`at 1× every step stays at least its words' reading time at 200 a minute: ${cases[k].name}`, () => {
    const s = stage(k);
    choose(s, "1");
    const stays = playThrough(s);
    assert.equal(stays.length, s.steps.length - 1); // every step after the first, the last one included
    for (const { step, words, ms } of stays) {
      const reading = words.trim().split(/\s+/).length * READ_MS;
      assert.ok(reading > 10 * READ_MS, `step ${step}: "${words}"`); // a caption, not an empty box
      assert.ok(ms >= reading, `step ${step} stayed ${ms} ms, its ${reading / READ_MS} words take ${reading} ms`);
    }
  });
}

test("the speed beside Play scales every step's stay: 2× halves it, ½× doubles it", () => {
  const s = stage(0);
  const at = {};
  for (const v of ["1", "2", "0.5"]) {
    choose(s, v);
    s.step = 0;
    at[v] = playThrough(s).map(({ ms }) => ms);
  }
  at["1"].forEach((ms, k) => {
    assert.ok(Math.abs(at["2"][k] - ms / 2) <= TICK, `step ${k + 1} at 2×: ${at["2"][k]} ms against ${ms} at 1×`);
    assert.ok(Math.abs(at["0.5"][k] - ms * 2) <= TICK, `step ${k + 1} at ½×: ${at["0.5"][k]} ms against ${ms} at 1×`);
  });
});

test("the speed is a named control beside Play, and the tab's session keeps it for the next stage", () => {
  const s = stage(0);
  const speed = s.controls.querySelector("select[name=speed]");
  assert.equal(speed.parentElement, s.play.parentElement); // in Play's group
  assert.match(speed.getAttribute("aria-label"), /speed/i);
  assert.deepEqual(speed.children.map((o) => o.textContent), ["½×", "1×", "2×"]);
  choose(s, "2");
  const next = stage(1); // a reload, or another page with a stage
  assert.equal(next.controls.querySelector("select[name=speed]").value, "2");
  assert.equal(next.speed, 2);
  stored.set([...stored.keys()][0], "7"); // not a speed the control has: 1×
  assert.equal(stage(0).speed, 1);
});
