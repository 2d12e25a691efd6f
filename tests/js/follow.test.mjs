// The stage follows the page's own γ and β sliders (lnviz/web/stage/view/follow.js, issue 32): as one moves,
// the stage asks the server's route for torch's numbers at the new values and draws what comes back, ahead of
// the rerun. Run on the stand-in DOM (fake_dom.mjs) with a stand-in fetch that the tests answer themselves.

import assert from "node:assert/strict";
import { test } from "node:test";

import { fire, installDom } from "./fake_dom.mjs";

const dom = installDom(1000);
const VIEW = new URL("../../lnviz/web/stage/view/", import.meta.url);
const { follow, question, released, slider, unfollow } = await import(new URL("follow.js", VIEW));
const { stageState } = await import(new URL("state.js", VIEW));

const OFFER = { url: "/api/stage/tok", keys: ["gain", "bias"], serial: 1 };

// The fetches the code under test made, each answered when the test calls answer(data) (or refuse(status)).
function fakeFetch() {
  const asked = [];
  globalThis.fetch = (url, init) =>
    new Promise((resolve, reject) => {
      const call = {
        url, init,
        answer: (data) => resolve({ ok: true, json: async () => data }),
        refuse: (status) => resolve({ ok: false, status, json: async () => ({}) }),
      };
      init.signal?.addEventListener("abort", () => reject(new Error("aborted")));
      asked.push(call);
    });
  return asked;
}

// A Streamlit slider as the page has it: a box with the key's class holding a range input.
function sliderBox(key, value) {
  const box = document.body.appendChild(document.createElement("div"));
  box.className = `stSlider st-key-${key}`;
  const input = box.appendChild(document.createElement("input"));
  input.setAttribute("type", "range");
  input.value = value;
  return input;
}

function stage(ctl = { gain: 1, bias: 0, eps: 1e-5 }) {
  const s = stageState();
  s.torch = { ctl };
  return s;
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const observerOf = (input) => dom.observers.findLast((o) => o.observed.includes(input));

test("a question names the sliders' values, and is empty when torch's numbers at them are shown or one is not a number", () => {
  assert.equal(question({ gain: 1.05, bias: 0 }, { gain: 1, bias: 0 }), "gain=1.05&bias=0");
  assert.equal(question({ gain: 1, bias: 0 }, { gain: 1, bias: 0 }), "");
  assert.equal(question({ gain: Number.NaN }, { gain: 1 }), "");
  assert.equal(question({}, { gain: 1 }), "");
});

test("a slider's move asks the route for its values and draws torch's answer", async () => {
  document.body.replaceChildren();
  const asked = fakeFetch();
  const gain = sliderBox("gain", "1");
  const bias = sliderBox("bias", "0");
  assert.equal(slider("gain"), gain);
  const s = stage();
  const drawn = [];
  follow(s, OFFER, (data) => drawn.push(data));
  const observer = observerOf(gain);
  assert.ok(observer && observer.observed.includes(bias), "both sliders are watched");

  gain.value = "1.05";
  observer.fire();
  assert.equal(asked.length, 1);
  assert.equal(asked[0].url, "/api/stage/tok?gain=1.05&bias=0");
  observer.fire(); // the same values again: asked already
  assert.equal(asked.length, 1);
  asked[0].answer({ torch: "at 1.05", stage_at: OFFER });
  await tick();
  assert.deepEqual(drawn, [{ torch: "at 1.05", stage_at: OFFER }]);
  unfollow(s);
});

test("a newer move drops the older question, whose late answer is not drawn", async () => {
  document.body.replaceChildren();
  const asked = fakeFetch();
  const gain = sliderBox("gain", "1");
  const s = stage();
  const drawn = [];
  follow(s, { url: "/api/stage/tok", keys: ["gain"], serial: 1 }, (data) => drawn.push(data));
  const observer = observerOf(gain);
  gain.value = "1.05";
  observer.fire();
  gain.value = "1.1";
  observer.fire();
  assert.equal(asked.length, 2);
  assert.ok(asked[0].init.signal.aborted, "the first question is aborted");
  const one = { url: "/api/stage/tok", keys: ["gain"], serial: 1 };
  asked[0].answer({ torch: "old", stage_at: one });
  asked[1].answer({ torch: "new", stage_at: one });
  await tick();
  assert.deepEqual(drawn, [{ torch: "new", stage_at: one }]);

  // A refusal (429, 404) draws nothing: the rerun brings torch's numbers.
  gain.value = "1.2";
  observer.fire();
  asked[2].refuse(429);
  await tick();
  assert.deepEqual(drawn, [{ torch: "new", stage_at: one }]);

  // An answer to an offer a rerun has replaced meanwhile is not drawn: the rerun's numbers are newer.
  gain.value = "1.25";
  observer.fire();
  follow(s, { ...one, serial: 2 }, (data) => drawn.push(data));
  asked[3].answer({ torch: "of the old offer", stage_at: one });
  await tick();
  assert.equal(drawn.length, 1);
  unfollow(s);
});

test("sliders that arrive after the stage are found at the next key press, and a drag on the stage asks nothing", async () => {
  document.body.replaceChildren();
  const asked = fakeFetch();
  const s = stage();
  follow(s, { url: "/api/stage/tok", keys: ["gain"], serial: 1 }, () => {});
  assert.equal(s.follow.observer, null, "no slider yet");
  const gain = sliderBox("gain", "1");
  fire(document.body, "keydown", { key: "ArrowRight" });
  const observer = observerOf(gain);
  assert.ok(observer, "the key press found the slider");
  s.dragging = true;
  gain.value = "1.05";
  observer.fire();
  assert.equal(asked.length, 0);
  s.dragging = false;
  observer.fire();
  assert.equal(asked.length, 1);
  unfollow(s);
});

test("a release of γ on the stage asks the route, a change of ε does not", () => {
  document.body.replaceChildren();
  const asked = fakeFetch();
  const s = stage();
  follow(s, OFFER, () => {});
  released(s, { gain: 1.5, bias: 0, eps: 1e-5 });
  assert.equal(asked.length, 1);
  assert.equal(asked[0].url, "/api/stage/tok?gain=1.5&bias=0");
  released(s, { gain: 1.6, bias: 0, eps: 1e-3 });
  assert.equal(asked.length, 1, "ε changes the statistics: the rerun computes them");
  unfollow(s);
});

test("a page that offers no route is left to its reruns, and unfollow lets go of the page", () => {
  document.body.replaceChildren();
  const asked = fakeFetch();
  const gain = sliderBox("gain", "1");
  const s = stage();
  follow(s, null, () => {});
  assert.equal(s.follow.observer, null);
  assert.equal((document.listeners.keydown ?? []).length, 0);
  released(s, { gain: 1.5, bias: 0, eps: 1e-5 });
  assert.equal(asked.length, 0);

  follow(s, OFFER, () => {});
  assert.equal(document.listeners.keydown.length, 1);
  gain.value = "2";
  observerOf(gain).fire();
  const pending = asked[0];
  unfollow(s);
  assert.ok(pending.init.signal.aborted, "the question on its way is dropped");
  assert.equal(document.listeners.keydown.length, 0);
  assert.equal(document.listeners.pointerdown.length, 0);
  assert.equal(observerOf(gain), undefined, "the slider is no longer watched");
});

test("the focused slider's values one step either side are asked ahead, and a press finds them here", async () => {
  document.body.replaceChildren();
  const asked = fakeFetch();
  const gain = sliderBox("gain", "1");
  Object.assign(gain, { min: "-5", max: "5", step: "0.05" });
  sliderBox("bias", "0");
  const s = stage();
  const drawn = [];
  follow(s, OFFER, (data) => drawn.push(data));
  await tick();
  assert.equal(asked.length, 0, "nothing is asked ahead while no slider has the focus");

  gain.focus();
  fire(gain, "focusin");
  await tick();
  assert.deepEqual(asked.map((a) => a.url), ["/api/stage/tok?gain=1.05&bias=0&ahead=1"], "one question at a time");
  asked[0].answer({ torch: "at 1.05", stage_at: OFFER });
  await tick();
  await tick();
  assert.equal(asked[1].url, "/api/stage/tok?gain=0.95&bias=0&ahead=1");
  asked[1].answer({ torch: "at 0.95", stage_at: OFFER });
  await tick();

  gain.value = String(1 + 0.05); // 1.05, as the slider's arrow key makes it
  observerOf(gain).fire();
  await tick();
  assert.equal(asked.length, 2, "the press asked nothing more");
  assert.deepEqual(drawn, [{ torch: "at 1.05", stage_at: OFFER }]);

  // A rerun's new offer drops what was asked ahead of the old one, and asks again around the value now.
  follow(s, { ...OFFER, serial: 2 }, (data) => drawn.push(data));
  assert.equal(s.follow.ahead.size, 2);
  await tick();
  assert.equal(asked[2].url, "/api/stage/tok?gain=1.1&bias=0&ahead=1");
  unfollow(s);
});

test("at a slider's end nothing is asked ahead past it", async () => {
  document.body.replaceChildren();
  const asked = fakeFetch();
  const gain = sliderBox("gain", "5");
  Object.assign(gain, { min: "-5", max: "5", step: "0.05" });
  const s = stage({ gain: 5, bias: 0, eps: 1e-5 });
  gain.focus();
  follow(s, { url: "/api/stage/tok", keys: ["gain"], serial: 1 }, () => {});
  await tick();
  assert.deepEqual(asked.map((a) => a.url), ["/api/stage/tok?gain=4.95&ahead=1"]);
  assert.equal(s.follow.ahead.size, 1);
  unfollow(s);
});

test("an arrow key on the focused slider draws what was answered ahead at its keydown, and a key it did not take is undone", async () => {
  document.body.replaceChildren();
  const asked = fakeFetch();
  const gain = sliderBox("gain", "1");
  Object.assign(gain, { min: "-5", max: "5", step: "0.05" });
  const s = stage();
  const drawn = [];
  const offer = { url: "/api/stage/tok", keys: ["gain"], serial: 1 };
  // The stage draws an answer as a payload: its γ is torch's now.
  const draw = (data) => (drawn.push(data), (s.torch = { ctl: { ...s.torch.ctl, gain: data.gain } }));
  gain.focus();
  follow(s, offer, draw);
  await tick();
  asked[0].answer({ gain: 1.05, stage_at: offer });
  await tick();
  await tick();
  asked[1].answer({ gain: 0.95, stage_at: offer });
  await tick();

  fire(gain, "keydown", { key: "ArrowRight", shiftKey: true });
  assert.equal(drawn.length, 0, "a key with a modifier is the slider's own business");
  fire(gain, "keydown", { key: "ArrowLeft" });
  assert.deepEqual(drawn, [{ gain: 0.95, stage_at: offer }], "drawn at the keydown, before the slider moved");
  gain.value = "0.95"; // the slider takes the key
  observerOf(gain).fire();
  await tick();
  assert.equal(asked.length, 2, "the slider's move asked nothing");

  // A key the slider does not take: the stage goes back to the slider's value once the check comes.
  s.follow.ahead.set("gain=1", { answer: Promise.resolve(null), data: { gain: 1, stage_at: offer } });
  fire(gain, "keydown", { key: "ArrowRight" });
  assert.equal(drawn.at(-1).gain, 1);
  await new Promise((r) => setTimeout(r, 350));
  assert.equal(drawn.at(-1).gain, 0.95, "the slider stayed at 0.95: the stage is back there");
  assert.equal(asked.length, 2, "from what was asked ahead");
  unfollow(s);
});
