// The class poll's element (lnviz/web/class/index.js) on the stand-in DOM with a fake EventSource: it draws
// the question, sends a vote as its trigger value, and redraws the reveal, Ask again, Show answer and Next
// from the stream's events alone, with no new data from the page.

import assert from "node:assert/strict";
import { mock, test } from "node:test";

import { fire, installDom } from "./fake_dom.mjs";

installDom(390);

class FakeEventSource {
  static made = [];
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.listeners = {};
    this.closed = false;
    FakeEventSource.made.push(this);
  }
  addEventListener(type, fn) {
    (this.listeners[type] ??= []).push(fn);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  emit(type, data) {
    for (const fn of this.listeners[type] ?? []) fn({ data: data === undefined ? "" : JSON.stringify(data) });
  }
}
globalThis.EventSource = FakeEventSource;

// The reveal route: torch's answer and reasons for the question revealed now (server/class_reveal.py).
const fetched = [];
let revealReply = null;
globalThis.fetch = async (url) => {
  fetched.push(url);
  return { ok: !!revealReply, json: async () => revealReply };
};
const settle = () => new Promise((r) => setImmediate(r));

const { default: mount } = await import("../../lnviz/web/class/index.js");

const choiceQ = {
  kind: "choice", prompt: [["", "Which one? "], ["code", "<b>F.x</b>"]], choices: [[["", "one"]], [["", "two"]]],
  span: "", decimals: 2, tolerance: 0.05, link: "/coupling?v=4", answer: 1, answer_text: null,
  why: [["", "Because "], ["strong", "two"], ["", "."]],
};
const numberQ = {
  kind: "number", prompt: [["", "How much?"]], choices: [], span: "from −10 to 10", decimals: 2, tolerance: 0.05,
  link: "/?v=4", answer: 0.3512, answer_text: "0.3512", why: [["", "torch: 0.3512."]],
};
const state = (more = {}) => ({
  code: "ABCDEFGH", version: 0, phase: "ask", closed: false, index: 0, questions: 2, question: "c", round: 1,
  answers: 0, rounds: null, answer: null, ...more,
});
const text = {
  phases: { 1: "first answers", 2: "second answers, after discussion" }, sent: "Your answer is in.",
  sending: "Sending…", not_answered: "You did not answer this round.", closed: "Closed.", done: "The end.",
  gone: "Gone.", reconnecting: "Reconnecting…", none: "None yet.", round_over: "This round is over.",
  hidden: "Kept hidden.",
};
const pageData = (more = {}) => ({
  mode: "phone", url: "/api/class/ABCDEFGH/events", room: state(), questions: { c: choiceQ, n: numberQ },
  reveal_url: "/api/class/ABCDEFGH/reveal", mine: { index: 0, round: 1, answer: null, n: null }, said: null,
  presenting: false, text, ...more,
});

function phone() {
  const parent = document.body.appendChild(document.createElement("div"));
  const sent = [];
  const run = (data) => mount({ parentElement: parent, data, setTriggerValue: (name, v) => sent.push([name, v]) });
  return { parent, sent, run, text: () => parent.textContent };
}

test("a phone draws the question, votes, and follows the reveal, Ask again, Show answer and Next", async () => {
  const p = phone();
  const hidden = { ...choiceQ, answer: null, why: null }; // no phone holds torch's answer before the reveal
  p.run(pageData({ questions: { c: hidden, n: numberQ } }));
  const source = FakeEventSource.made.at(-1);
  assert.equal(source.url, "/api/class/ABCDEFGH/events");
  assert.match(p.text(), /Question 1 of 2 · round 1: first answers/);
  const code = p.parent.querySelector("code");
  assert.equal(code.textContent, "<b>F.x</b>"); // text, never HTML
  assert.equal(p.parent.querySelectorAll("b").length, 0);
  const radios = p.parent.querySelectorAll("input");
  assert.equal(radios.length, 2);
  assert.equal(p.parent.querySelector("legend").textContent, "Your answer");

  radios[1].checked = true;
  fire(radios[1], "change");
  const [name, vote] = p.sent.at(-1);
  assert.equal(name, "vote");
  assert.deepEqual({ ...vote, n: 0 }, { index: 0, round: 1, answer: "1", n: 0 });
  assert.match(p.text(), /Sending…/);
  p.run(pageData({ questions: { c: hidden, n: numberQ }, mine: { index: 0, round: 1, answer: "1", n: vote.n } }));
  assert.match(p.text(), /Your answer is in\./);
  assert.ok(p.parent.querySelectorAll("input")[1].checked);
  assert.equal(FakeEventSource.made.at(-1), source); // one stream across the page's runs

  const runs = p.sent.length;
  // Round 1's reveal: the class's answers, and nothing of torch's: no verdict, no mark, no request for it.
  source.emit("room", state({ version: 1, phase: "reveal", rounds: [{ 0: 1, 1: 2 }], answers: 3 }));
  await settle();
  assert.equal(fetched.length, 0);
  assert.match(p.text(), /This round is over\./);
  assert.match(p.text(), /Your answer:\s*two\./);
  assert.match(p.text(), /B\. two — 2 votes/);
  assert.doesNotMatch(p.text(), /right|torch's answer|Because/);
  assert.equal(p.parent.querySelectorAll("input, a").length, 0);
  source.emit("room", state({ version: 2, phase: "reveal", hidden: true, answers: 3 })); // the presenter hides them
  assert.match(p.text(), /Kept hidden\./);
  assert.doesNotMatch(p.text(), /2 votes/);

  source.emit("room", state({ version: 3, round: 2 })); // Ask again: the same question, nothing chosen
  assert.match(p.text(), /round 2: second answers/);
  assert.ok(p.parent.querySelectorAll("input").every((r) => !r.checked));
  p.parent.querySelectorAll("input")[1].checked = true;
  fire(p.parent.querySelectorAll("input")[1], "change");
  const second = p.sent.at(-1)[1];
  p.run(pageData({ questions: { c: hidden, n: numberQ }, mine: { index: 0, round: 2, answer: "1", n: second.n } }));

  revealReply = { question: "c", index: 0, answer: 1, answer_text: null, why: choiceQ.why };
  const outcome = "Right in round 1: 2 of 3 (67 %); in round 2: 3 of 3 (100 %).";
  const rounds = [{ 0: 1, 1: 2 }, { 0: 0, 1: 3 }];
  source.emit("room", state({ version: 4, round: 2, phase: "answer", rounds, answer: "1", outcome, answers: 3 }));
  await settle();
  assert.deepEqual(fetched.slice(-1), ["/api/class/ABCDEFGH/reveal"]);
  assert.match(p.text(), /Your answer:\s*two \(right\)\./);
  assert.match(p.text(), /B\. two — 2 votes → 3 votes ✓ right/);
  assert.match(p.text(), /torch's answer: two/);
  assert.match(p.text(), new RegExp(outcome.replace(/[().]/g, "\\$&")));
  assert.match(p.text(), /Because two\./);
  assert.equal(p.parent.querySelector("a").getAttribute("href"), "/coupling?v=4");
  assert.equal(p.parent.querySelectorAll("input").length, 0);
  p.run(pageData({ questions: { c: hidden, n: numberQ }, mine: { index: 0, round: 2, answer: "1", n: second.n } }));
  assert.match(p.text(), /Because two\./); // a later page run, without them, keeps what the answer brought
  assert.equal(fetched.length, 1);

  source.emit("room", state({ version: 5, index: 1, question: "n" })); // Next: a number question
  assert.match(p.text(), /Question 2 of 2/);
  assert.match(p.parent.querySelector("label").textContent, /Your guess, from −10 to 10/);
  const input = p.parent.querySelector("input");
  input.value = " 0.35 ";
  fire(p.parent.querySelector("form"), "submit");
  assert.deepEqual(p.sent.at(-1)[1].answer, "0.35");
  assert.equal(p.sent.length, runs + 2); // two votes; the stream's five changes asked the page for nothing

  source.emit("room", state({ version: 4, closed: true, index: 1, question: "n" }));
  assert.match(p.text(), /Closed\./);
  assert.ok(source.closed); // a closed room's stream is not reconnected to
});

test("the page's state is not drawn over a newer one from the stream, and a vote's warning shows in its round", () => {
  const p = phone();
  p.run(pageData());
  const source = FakeEventSource.made.at(-1);
  source.emit("room", state({ version: 1, phase: "reveal", rounds: [{ 0: 0, 1: 0 }], answer: "1" }));
  p.run(pageData({ said: { kind: "warning", text: "Moved on.", index: 0, round: 1, phase: "ask" } })); // older
  assert.match(p.text(), /You did not answer this round\./);
  assert.doesNotMatch(p.text(), /Moved on\./); // said of the asking round, not of its reveal
});

test("a reveal the route can't answer asks the page for one run; a stream given up on is retried", async () => {
  const p = phone();
  p.run(pageData({ questions: { c: { ...choiceQ, answer: null, why: null } } }));
  const source = FakeEventSource.made.at(-1);
  revealReply = null;
  source.emit("room", state({ version: 1, phase: "answer", rounds: [{ 0: 0, 1: 1 }], answer: "1" }));
  source.emit("room", state({ version: 1, phase: "answer", rounds: [{ 0: 0, 1: 1 }], answer: "1", answers: 1 }));
  await settle();
  assert.deepEqual(p.sent, [["need", { why: "c" }]]); // once, not at each event
  p.run(pageData({ room: state({ version: 1, phase: "answer", rounds: [{ 0: 0, 1: 1 }], answer: "1" }) }));
  assert.match(p.text(), /Because two\./); // that run's question has them: the reveal is drawn again
  mock.timers.enable({ apis: ["setTimeout"] });
  source.readyState = 2;
  source.emit("error");
  assert.match(p.text(), /Reconnecting…/);
  mock.timers.tick(20000);
  assert.notEqual(FakeEventSource.made.at(-1), source);
  FakeEventSource.made.at(-1).emit("open");
  assert.doesNotMatch(p.text(), /Reconnecting…/);
  mock.timers.reset();
});

test("the projector's count follows the stream, and asks for a page run when the room moved on elsewhere", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const p = phone();
  const data = { mode: "count", url: "/api/class/ABCDEFGH/events", room: state({ answers: 2 }), version: 0, text: {} };
  p.run(data);
  assert.match(p.text(), /Answered\s*2/);
  const source = FakeEventSource.made.at(-1);
  source.emit("room", state({ answers: 5 }));
  assert.match(p.text(), /Answered\s*5/);
  assert.deepEqual(p.sent, []);
  source.emit("room", state({ version: 1, phase: "reveal", rounds: [{}], answer: "1", answers: 5 }));
  p.run({ ...data, version: 1 }); // the presenter's own press: its page run came in time
  mock.timers.tick(2000);
  assert.deepEqual(p.sent, []);
  source.emit("room", state({ version: 2, round: 2 })); // another tab pressed Ask again
  mock.timers.tick(2000);
  assert.deepEqual(p.sent, [["need", { version: 2 }]]);
  mock.timers.reset();
});

test("the presenter's own view asks for a page run as answers come in, at most one each 2 s", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const p = phone();
  const data = {
    mode: "count", url: "/api/class/ABCDEFGH/events", room: state({ answers: 2 }), version: 0, text: {},
    follow_answers: true, answers: 2,
  };
  p.run(data);
  const source = FakeEventSource.made.at(-1);
  for (const n of [3, 4, 5]) source.emit("room", state({ answers: n }));
  mock.timers.tick(1999);
  assert.deepEqual(p.sent, []);
  mock.timers.tick(1);
  assert.deepEqual(p.sent, [["need", { answers: 5 }]]); // one run reads the share right of all three
  p.run({ ...data, room: state({ answers: 5 }), answers: 5 });
  mock.timers.tick(5000);
  assert.equal(p.sent.length, 1); // nothing new: no run
  p.run({ ...data, follow_answers: false, answers: 5 });
  source.emit("room", state({ answers: 6 }));
  mock.timers.tick(5000);
  assert.equal(p.sent.length, 1); // the projector's count never asks for one
  mock.timers.reset();
});
