// The class poll element's pure part (lnviz/web/class/model.js): the room's state from the stream's events,
// this phone's answer, and what to draw, against the contract's event format and results_markdown's words.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  count, mineShown, newer, ownAnswer, readEvent, results, retryDelay, screen, written,
} from "../../lnviz/web/class/model.js";

const choiceQ = {
  kind: "choice", prompt: [["", "Which?"]], choices: [[["", "one"]], [["", "two "], ["code", "x"]], [["", "three"]]],
  span: "", decimals: 2, tolerance: 0.05, link: "/coupling?v=4", answer: 1, answer_text: null, why: [["", "Because."]],
};
const numberQ = {
  kind: "number", prompt: [["", "How much?"]], choices: [], span: "from −10 to 10", decimals: 2, tolerance: 0.05,
  link: "/?v=4", answer: 0.3512, answer_text: "0.3512", why: [["", "torch: 0.3512."]],
};
const liveQ = { ...choiceQ, answer: null, why: null };
const data = {
  questions: { c: choiceQ, n: numberQ, live: liveQ },
  mine: null,
  text: { phases: { 1: "first answers", 2: "second answers, after discussion" } },
};
const room = (more = {}) => ({
  code: "ABCDEFGH", version: 3, phase: "ask", closed: false, index: 0, questions: 13, question: "c", round: 1,
  answers: 0, hidden: false, rounds: null, answer: null, outcome: null, ...more,
});
const event = (more) => JSON.stringify(room(more));

test("a room event is read; a gone event, a malformed one and an unknown type are told apart", () => {
  assert.deepEqual(readEvent("room", event({ answers: 4 })).room.answers, 4);
  assert.deepEqual(readEvent("gone", ""), { gone: true });
  assert.equal(readEvent("room", "{not json"), null);
  assert.equal(readEvent("room", event({ phase: "secret" })), null);
  assert.equal(readEvent("room", event({ phase: "answer" })).room.phase, "answer");
  assert.equal(readEvent("room", event({ round: 3 })), null);
  assert.equal(readEvent("message", event()), null);
});

test("a page run's state never replaces a newer one from the stream, and any change of the same version does", () => {
  assert.ok(newer(null, room()));
  assert.ok(!newer(room({ version: 4 }), room({ version: 3 })));
  assert.ok(newer(room({ version: 3 }), room({ version: 4 })));
  assert.ok(newer(room({ answers: 1 }), room({ answers: 2 })));
  assert.ok(!newer(room(), room()));
});

test("the phone's answer: the one just sent until the page brings the stored one, and only in its own round", () => {
  const r = room();
  const sent = { index: 0, round: 1, answer: "2", n: 5 };
  assert.deepEqual(ownAnswer(r, { index: 0, round: 1, answer: "1", n: 4 }, sent), { answer: "2", sending: true });
  assert.deepEqual(ownAnswer(r, { index: 0, round: 1, answer: "1", n: 5 }, sent), { answer: "1", sending: false });
  assert.equal(ownAnswer(room({ round: 2 }), { index: 0, round: 1, answer: "1", n: 5 }, sent), null); // Ask again
  assert.equal(ownAnswer(room({ index: 1 }), null, sent), null); // Next
  assert.equal(ownAnswer(r, { index: 0, round: 1, answer: null, n: null }, null), null);
});

test("what to draw follows the stream alone: ask, reveal, Ask again, the answer, Next, the end, a closed room", () => {
  const ask = screen(room(), data, null);
  assert.equal(ask.kind, "ask");
  assert.equal(ask.caption, "Question 1 of 13 · round 1: first answers");
  const reveal = screen(room({ phase: "reveal", version: 4, rounds: [{ 0: 1, 1: 2, 2: 0 }] }), data, null);
  assert.equal(reveal.kind, "reveal");
  assert.notEqual(reveal.key, ask.key); // the controls are built again
  const hidden = screen(room({ phase: "reveal", version: 5, hidden: true }), data, null);
  assert.notEqual(hidden.key, reveal.key);
  assert.ok(hidden.results.empty && hidden.results.hidden);
  const answer = screen(room({ phase: "answer", version: 6, rounds: [{ 0: 1, 1: 2, 2: 0 }], answer: "1" }), data, null);
  assert.equal(answer.kind, "answer");
  assert.notEqual(answer.key, reveal.key);
  const again = screen(room({ round: 2, version: 5 }), data, null);
  assert.equal(again.kind, "ask");
  assert.equal(again.caption, "Question 1 of 13 · round 2: second answers, after discussion");
  const next = screen(room({ index: 1, question: "n", version: 6 }), data, null);
  assert.equal(next.q, numberQ);
  assert.equal(screen(room({ phase: "done", question: null }), data, null).kind, "done");
  assert.equal(screen(room({ closed: true }), data, null).kind, "closed");
  assert.equal(screen({ gone: true }, data, null).kind, "gone");
  assert.equal(screen(room({ question: "unheard-of" }), data, null).kind, "missing");
});

test("the results say what results_markdown says: each choice's count per round, the right one, torch's answer", () => {
  const outcome = "Right in round 1: 2 of 3 (67 %); in round 2: 3 of 4 (75 %).";
  const both = [{ 0: 1, 1: 2, 2: 0 }, { 0: 0, 1: 3, 2: 1 }];
  const r = results(choiceQ, room({ phase: "answer", rounds: both, answer: "1", outcome }));
  assert.equal(r.head, "Round 1 → round 2:");
  assert.deepEqual(r.lines.map((l) => l.counts), ["1 vote → 0 votes", "2 votes → 3 votes", "0 votes → 1 vote"]);
  assert.deepEqual(r.lines.map((l) => l.right), [false, true, false]);
  assert.deepEqual(r.lines[1].label, [["", "B. "], ["", "two "], ["code", "x"]]);
  assert.deepEqual(r.torch, choiceQ.choices[1]);
  assert.equal(r.note, "");
  assert.equal(r.outcome, outcome);
  const one = results(choiceQ, room({ phase: "answer", rounds: [{ 0: 1, 1: 0, 2: 0 }] }));
  assert.equal(one.head, "The class:");
  assert.ok(results(choiceQ, room({ phase: "answer", rounds: [] })).empty);
});

test("before torch's answer is shown, nothing says who is right, even with the answer in the page's question", () => {
  const open = results(choiceQ, room({ phase: "reveal", rounds: [{ 0: 1, 1: 2, 2: 0 }], outcome: "leaked" }));
  assert.deepEqual(open.lines.map((l) => l.right), [false, false, false]);
  assert.equal(open.torch, null);
  assert.equal(open.outcome, "");
  const guess = results(numberQ, room({ question: "n", phase: "reveal", rounds: [{ "0.35": 2 }] }));
  assert.deepEqual([guess.lines[0].right, guess.torch, guess.note], [false, null, ""]);
  assert.deepEqual(mineShown(choiceQ, room({ phase: "reveal" }), { answer: "1" }).right, null);
  assert.deepEqual(mineShown(choiceQ, room({ phase: "answer" }), { answer: "1" }).right, true);
});

test("a number question's results list each guess given, in order, right within the tolerance", () => {
  const r = results(numberQ, room({ question: "n", phase: "answer", rounds: [{ "-1.00": 1, "0.35": 2, "0.50": 1 }] }));
  assert.deepEqual(r.lines.map((l) => l.label[0][1]), ["-1.00", "0.35", "0.50"]);
  assert.deepEqual(r.lines.map((l) => l.right), [false, true, false]);
  assert.deepEqual(r.torch, [["", "0.3512"]]);
  assert.equal(r.note, " (guesses within 0.05 count as right)");
});

test("a question whose answer is computed when it is shown takes torch's answer from the stream", () => {
  const r = results(liveQ, room({ question: "live", phase: "answer", rounds: [{ 0: 0, 1: 0, 2: 2 }], answer: "2" }));
  assert.deepEqual(r.lines.map((l) => l.right), [false, false, true]);
  assert.deepEqual(r.torch, liveQ.choices[2]);
  const mine = mineShown(liveQ, room({ phase: "answer", answer: "2" }), { answer: "0" });
  assert.deepEqual(mine, { shown: liveQ.choices[0], right: false });
});

test("an option that ends in a full stop is shown without it, so that its verdict closes the line once", () => {
  const q = { ...choiceQ, choices: [[["", "BN: every sample's. LN: sample "], ["code", "2"], ["", "'s only."]]] };
  const mine = mineShown(q, room({ phase: "reveal" }), { answer: "0" });
  assert.deepEqual(mine.shown, [["", "BN: every sample's. LN: sample "], ["code", "2"], ["", "'s only"]]);
  assert.deepEqual(mineShown(q, room({ phase: "reveal" }), { answer: "7." }).shown, [["", "7."]]); // no such option
  assert.deepEqual(q.choices[0].at(-1), ["", "'s only."]); // the question itself is untouched
});

test("torch's value is written as Python's :.4g with a real minus sign", () => {
  assert.equal(written(0.35123), "0.3512");
  assert.equal(written(0.7), "0.7");
  assert.equal(written(-2.5), "−2.5");
  assert.equal(written(12345.6), "1.235e+04");
  assert.equal(written(0.0000123), "1.23e−05"); // every minus, as Python's replace
  assert.equal(written(0), "0");
});

test("the projector's count is the round's answers, and none once the room has ended", () => {
  assert.equal(count(room({ answers: 7 })), 7);
  assert.equal(count(room({ closed: true })), null);
  assert.equal(count({ gone: true }), null);
  assert.equal(count(null), null);
});

test("a stream the browser gave up on is tried again later each time, spread over a third more", () => {
  assert.equal(retryDelay(0, () => 0), 1);
  assert.equal(retryDelay(3, () => 0), 8);
  assert.equal(retryDelay(10, () => 0), 15);
  assert.equal(retryDelay(0, () => 0.999), 1 + 0.999 / 3);
});

// bn-mu-cells' shape: 4 samples by 6 features, the marked cell (2, 3); torch's cells feature 3 of every sample.
const cellsQ = {
  kind: "cells", prompt: [["", "Which cells?"]], choices: [], span: "", decimals: 2, tolerance: 0.05, link: "/?v=4",
  grid: { rows: 4, cols: 6, marked: 15, axes: ["sample", "feature"], row_names: ["0", "1", "2", "3"],
    col_names: ["0", "1", "2", "3", "4", "5"] },
  answer: [3, 9, 15, 21], answer_text: "feature 3 of every sample", why: [["", "Because."]],
};
const cellsData = { ...data, questions: { ...data.questions, g: cellsQ, glive: { ...cellsQ, answer: null, why: null } } };
// Three votes: torch's cells ("208208"), the marked cell alone ("008000"), and sample 2 whole ("03f000").
const cellsTally = {
  ...Object.fromEntries(Array.from({ length: 24 }, (_, k) => [String(k), 0])),
  3: 1, 9: 1, 12: 1, 13: 1, 14: 1, 15: 3, 16: 1, 17: 1, 21: 1, right: 1, votes: 3,
};

test("a cells question's results: each round's votes, the last round's share per cell, torch's cells once shown", () => {
  const open = results(cellsQ, room({ question: "g", phase: "reveal", rounds: [cellsTally], outcome: "leaked" }));
  assert.deepEqual(open.lines.map((l) => l.counts), ["3 votes"]);
  assert.equal(open.grid.answer, null); // before Show answer nothing says which cells are torch's
  assert.equal(open.torch, null);
  assert.equal(open.outcome, "");
  assert.deepEqual(open.grid.shares.slice(12, 18), [1 / 3, 1 / 3, 1 / 3, 1, 1 / 3, 1 / 3]);
  assert.deepEqual(open.grid.taps[15], 3);
  const shown = results(cellsQ, room({ question: "g", phase: "answer", rounds: [cellsTally, cellsTally] }));
  assert.equal(shown.head, "Round 1 → round 2:");
  assert.deepEqual(shown.lines.map((l) => l.counts), ["3 votes, 1 exactly torch's cells", "3 votes, 1 exactly torch's cells"]);
  assert.deepEqual(shown.grid.answer, [3, 9, 15, 21]);
  assert.deepEqual(shown.torch, [["", "feature 3 of every sample"]]);
});

test("a cells vote is right only as torch's exact set, and the phone's taps come back from its mask", () => {
  const answer = room({ question: "g", phase: "answer" });
  assert.deepEqual(mineShown(cellsQ, answer, { answer: "208208" }), { shown: [["", "4 cells"]], tapped: [3, 9, 15, 21], right: true });
  assert.equal(mineShown(cellsQ, answer, { answer: "008000" }).right, false); // the marked cell alone
  assert.equal(mineShown(cellsQ, answer, { answer: "208209" }).right, false); // one cell too many
  assert.deepEqual(mineShown(cellsQ, answer, { answer: "008000" }).shown, [["", "1 cell"]]);
  assert.equal(mineShown(cellsQ, room({ question: "g", phase: "reveal" }), { answer: "208208" }).right, null);
  // torch's cells from the stream, as the stored mask, where the page's question has none yet
  const live = room({ question: "glive", phase: "answer", answer: "208208", rounds: [cellsTally] });
  assert.equal(mineShown(cellsData.questions.glive, live, { answer: "208208" }).right, true);
  assert.deepEqual(results(cellsData.questions.glive, live).grid.answer, [3, 9, 15, 21]);
  const stored = { ...cellsData, mine: { index: 0, round: 1, answer: "208208", n: 1 } };
  assert.deepEqual(screen(live, stored, null).mine.tapped, [3, 9, 15, 21]);
});
