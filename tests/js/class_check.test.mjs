// The concept check in the class element (issue 49): check_model.js's pure parts, then the element on the
// stand-in DOM with a fake EventSource: every item drawn while the stream says a phase is open, a tap sent as
// the trigger value `check`, the stored answers back from the page, the poll's question again once the phase
// closes, and the projector's count of phones and answers.

import assert from "node:assert/strict";
import { test } from "node:test";

import { fire, installDom } from "./fake_dom.mjs";

installDom(390);

class FakeEventSource {
  static made = [];
  constructor(url) {
    this.url = url;
    this.listeners = {};
    FakeEventSource.made.push(this);
  }
  addEventListener(type, fn) {
    (this.listeners[type] ??= []).push(fn);
  }
  close() {
    this.readyState = 2;
  }
  emit(type, data) {
    for (const fn of this.listeners[type] ?? []) fn({ data: JSON.stringify(data) });
  }
}
globalThis.EventSource = FakeEventSource;

const { checkCount, checkScreen, openPhase, ownAnswers } = await import("../../lnviz/web/class/check_model.js");
const { default: mount } = await import("../../lnviz/web/class/index.js");

const item = (id, n) => ({
  id, kind: "choice", prompt: [["", `Item ${id}?`]], choices: Array.from({ length: n }, (_, i) => [["", `option ${i}`]]),
  answer: null, why: null, link: "/?v=4",
});
const checkData = (more = {}) => ({
  items: [item("a", 3), item("b", 4)],
  mine: { phase: "pre", answers: {}, n: null },
  said: null,
  text: {
    phases: { pre: "before the lecture", post: "after the lecture" }, heading: "Concept check, {phase}",
    intro: "2 questions.", progress: "Answered {k} of {n}.", saved: "Saved.", sending: "Sending…",
  },
  ...more,
});
const state = (step, more = {}) => ({
  code: "ABCDEFGH", version: 1, phase: "ask", closed: false, index: 0, questions: 1, question: "c", round: 1,
  answers: 0, rounds: null, answer: null, check: { step, voters: 0, answers: 0 }, ...more,
});

test("a phase is open at pre and post only, and a phone's own answers are the stored ones but those on their way", () => {
  assert.equal(openPhase(state("pre")), "pre");
  assert.equal(openPhase(state("post")), "post");
  for (const step of ["", "pre-closed", "post-closed"]) assert.equal(openPhase(state(step)), null);
  assert.equal(openPhase({ ...state(""), check: undefined }), null); // a state from before the check
  const stored = { phase: "pre", answers: { a: "1", b: "0" }, n: 10 };
  const sent = { a: { phase: "pre", answer: "2", n: 9 }, b: { phase: "pre", answer: "3", n: 11 } };
  assert.deepEqual(ownAnswers("pre", stored, sent), {
    a: { answer: "1", sending: false }, // the page took number 10, after 9: the store's is the answer
    b: { answer: "3", sending: true }, // 11 is not taken yet
  });
  assert.deepEqual(ownAnswers("post", stored, sent), {}); // another phase's answers are not this one's
  assert.deepEqual(ownAnswers("pre", { phase: "pre", answers: {}, n: null }, sent).a, { answer: "2", sending: true });
});

test("the check's screen counts the items answered and says a result only for its own phase", () => {
  const data = { check: checkData({ mine: { phase: "pre", answers: { b: "2" }, n: 3 } }) };
  const v = checkScreen(state("pre"), data, {});
  assert.equal(v.kind, "check");
  assert.equal(v.key, "check.pre");
  assert.equal(v.heading, "Concept check, before the lecture");
  assert.equal(v.progress, "Answered 1 of 2.");
  assert.equal(checkScreen(state("pre-closed"), data, {}), null);
  assert.equal(checkScreen(state("pre"), { check: checkData({ items: [] }) }, {}), null);
  const said = { kind: "warning", text: "Closed.", phase: "post", item: "a" };
  assert.equal(checkScreen(state("pre"), { check: checkData({ said }) }, {}).said, null);
  assert.deepEqual(checkCount(state("post", { check: { step: "post", voters: 4, answers: 9 } })), {
    voters: 4, answers: 9,
  });
  assert.equal(checkCount(state("post-closed")), null);
  assert.equal(checkCount(state("pre", { closed: true })), null);
});

const choiceQ = {
  kind: "choice", prompt: [["", "Poll question?"]], choices: [[["", "one"]], [["", "two"]]], span: "", decimals: 2,
  tolerance: 0.05, link: "/?v=4", answer: null, answer_text: null, why: null,
};
const pageData = (room, check = checkData()) => ({
  mode: "phone", url: "/api/class/ABCDEFGH/events", room, questions: { c: choiceQ }, reveal_url: "/r",
  mine: { index: 0, round: 1, answer: null, n: null }, said: null, presenting: false,
  text: { phases: { 1: "first answers" }, sending: "Sending…", sent: "In." }, check,
});

test("a phone draws every item while a phase is open, sends each tap, and goes back to the poll when it closes", () => {
  const parent = document.body.appendChild(document.createElement("div"));
  const sent = [];
  const run = (data) => mount({ parentElement: parent, data, setTriggerValue: (name, v) => sent.push([name, v]) });
  run(pageData(state("pre")));
  assert.match(parent.textContent, /Concept check, before the lecture/);
  assert.match(parent.textContent, /Answered 0 of 2\./);
  assert.equal(parent.querySelectorAll("fieldset").length, 2);
  const radios = parent.querySelectorAll("input");
  assert.equal(radios.length, 3 + 4);
  radios[4].checked = true; // item b, option 1
  fire(radios[4], "change");
  const [name, answer] = sent.at(-1);
  assert.equal(name, "check");
  assert.deepEqual({ ...answer, n: 0 }, { phase: "pre", item: "b", answer: "1", n: 0 });
  assert.match(parent.textContent, /Sending…/);
  assert.match(parent.textContent, /Answered 1 of 2\./);
  const said = { kind: "success", text: "Saved.", phase: "pre", item: "b" };
  run(pageData(state("pre"), checkData({ mine: { phase: "pre", answers: { b: "1" }, n: answer.n }, said })));
  assert.match(parent.textContent, /Saved\./);
  assert.ok(parent.querySelectorAll("input")[4].checked);
  assert.ok(!parent.querySelectorAll("input")[0].checked);

  const source = FakeEventSource.made.at(-1);
  source.emit("room", state("pre-closed", { version: 2 })); // the presenter closed it: the poll's question
  assert.match(parent.textContent, /Poll question\?/);
  assert.equal(parent.querySelectorAll("fieldset").length, 1);
  source.emit("room", state("post", { version: 3 })); // opened again, after the lecture: nothing answered yet
  assert.match(parent.textContent, /Concept check, after the lecture/);
  assert.ok(parent.querySelectorAll("input").every((r) => !r.checked));
  assert.deepEqual(sent.map(([n]) => n), ["check"]); // the stream's changes asked the page for nothing
});

test("the projector's count of the check shows phones and answers from the stream", () => {
  const parent = document.body.appendChild(document.createElement("div"));
  const room = state("pre", { check: { step: "pre", voters: 3, answers: 11 } });
  const text = { phones: "Phones", answers: "Answers: {n}" };
  mount({ parentElement: parent, data: { mode: "count", source: "check", url: "/e", room, version: 1, text } });
  assert.match(parent.textContent, /Phones\s*3\s*Answers: 11/);
  FakeEventSource.made.at(-1).emit("room", state("pre", { check: { step: "pre", voters: 4, answers: 15 } }));
  assert.match(parent.textContent, /Phones\s*4\s*Answers: 15/);
});
