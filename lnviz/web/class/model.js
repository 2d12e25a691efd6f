// The class poll's element, without a DOM (issue 31): the room's state from the stream's events, this
// phone's own answer, and what to draw, as plain objects that index.js turns into elements.
//
// The stream's contract is docs' "class stream" (GET {base}/api/class/{code}/events): `event: room` with
// the room's public state as JSON, `event: gone` for a room that is no more. The page sends the rest at each
// of its runs (ui/poll/phone.py): the room's questions as the server renders them (lnviz/labs/classroom/render.py:
// text as spans, never HTML), this voter's stored answer, and the page's words.

import * as cells from "./cells.js";
import { checkScreen } from "./check_model.js";

const MINUS = "\u2212";
const RIGHT = "✓ right";
const PHASES = new Set(["ask", "reveal", "answer", "done"]);

// One event off the stream: { room } for a valid state, { gone: true }, or null for anything else.
export function readEvent(type, text) {
  if (type === "gone") return { gone: true };
  if (type !== "room") return null;
  let room;
  try {
    room = JSON.parse(text);
  } catch {
    return null;
  }
  const ok =
    room &&
    typeof room.code === "string" &&
    Number.isInteger(room.version) &&
    Number.isInteger(room.index) &&
    Number.isInteger(room.answers) &&
    (room.round === 1 || room.round === 2) &&
    PHASES.has(room.phase);
  return ok ? { room } : null;
}

// Whether `next` may replace `shown`: the stream never goes back, but a page run's state (the element's
// first picture, drawn before the stream connects) may be older or newer than the stream's first event.
export function newer(shown, next) {
  if (!shown) return true;
  if (next.version !== shown.version) return next.version > shown.version;
  const checked = (room) => (room.check ? `${room.check.voters}.${room.check.answers}` : "");
  return (
    next.answers !== shown.answers ||
    next.closed !== shown.closed ||
    next.rounds !== shown.rounds ||
    checked(next) !== checked(shown)
  );
}

// The same round of the same question: an answer counts only there.
const sameRound = (a, room) => !!a && a.index === room.index && a.round === room.round;

// This phone's answer to the round on screen: the one it just sent (until the page run after it brings the
// stored one), else the stored one the page gave; null if none for this round.
export function ownAnswer(room, stored, sent) {
  if (sent && sameRound(sent, room) && !(stored && stored.n === sent.n))
    return { answer: sent.answer, sending: true };
  if (stored && sameRound(stored, room) && stored.answer !== null && stored.answer !== undefined)
    return { answer: stored.answer, sending: false };
  return null;
}

// Python's f"{x:.4g}" with a real minus sign (lnviz.labs.classroom.question.written).
export function written(x) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const exp = Math.floor(Math.log10(Math.abs(Number(x.toPrecision(4)))));
  let out;
  if (exp < -4 || exp >= 4) {
    const [m, e] = x.toExponential(3).split("e");
    const n = Number(e);
    out = `${m.replace(/\.?0+$/, "")}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  } else out = String(Number(x.toPrecision(4)));
  return out.replace(/-/g, MINUS);
}

// Python's f"{x:g}" for a tolerance (0.05, 0.005, 0).
export const plainNumber = (x) => String(Number(x.toPrecision(6))).replace(/-/g, MINUS);

export const votes = (n) => (n === 1 ? "1 vote" : `${n} votes`);

// torch's answer for `q`, once the presenter has shown it (phase "answer"; null before): the page's (known once
// the bank was built), else the stream's, which carries it then (a question whose answer a model computes only
// then). Before it, no phone says who is right: peer instruction's second round would measure nothing.
function torchAnswer(q, room) {
  if (room.phase !== "answer") return null;
  if (q.answer !== null && q.answer !== undefined) return q.answer;
  if (room.answer === null || room.answer === undefined) return null;
  if (q.kind === "cells") return cells.decode(room.answer, cellCount(q)); // the stream's is the stored mask
  return q.kind === "choice" ? Number.parseInt(room.answer, 10) : Number(room.answer);
}

// A cells question's number of cells (render.entry's grid).
export const cellCount = (q) => q.grid.rows * q.grid.cols;

// Whether stored vote `key` is right (lnviz.labs.classroom.question.Question.right): for cells, `answer` is torch's
// cells and `key` the mask.
export function isRight(q, key, answer) {
  if (answer === null) return false;
  if (q.kind === "choice") return key === String(answer);
  if (q.kind === "cells") return cells.isRight(key, answer, cellCount(q));
  return Math.abs(Number(key) - answer) <= q.tolerance + 1e-9;
}

const letter = (i) => String.fromCharCode(65 + i);

// The class's answers, as results_markdown (lnviz/labs/classroom/figures.py) writes them for a phone: a head,
// one line per choice (or guess) with its count in each round; once torch's answer is shown, the right one
// marked, torch's answer and what the class got (`outcome`: the share right, and the shift between rounds).
export function results(q, room) {
  const rounds = Array.isArray(room.rounds) ? room.rounds : [];
  if (!rounds.length) return { empty: true, hidden: !!room.hidden && room.phase === "reveal" };
  const answer = torchAnswer(q, room);
  const shown = room.phase === "answer";
  if (q.kind === "cells") return cellResults(q, room, rounds, answer, shown);
  const entries =
    q.kind === "choice"
      ? q.choices.map((spans, i) => ({ key: String(i), label: [["", `${letter(i)}. `], ...spans] }))
      : [...new Set(rounds.flatMap((t) => Object.keys(t)))]
          .sort((a, b) => Number(a) - Number(b))
          .map((v) => ({ key: v, label: [["", v]] }));
  const lines = entries.map(({ key, label }) => ({
    label,
    counts: rounds.map((t) => votes(Number(t[key] || 0))).join(" → "),
    right: isRight(q, key, answer),
  }));
  const torch = !shown
    ? null
    : q.kind === "choice"
      ? answer === null
        ? [["", "?"]]
        : q.choices[answer] || [["", "?"]]
      : [["", q.answer_text || (answer === null ? "?" : written(answer))]];
  return {
    empty: false,
    head: rounds.length > 1 ? "Round 1 → round 2:" : "The class:",
    lines,
    right: RIGHT,
    torch,
    note: shown && q.kind === "number" ? ` (guesses within ${plainNumber(q.tolerance)} count as right)` : "",
    outcome: shown && typeof room.outcome === "string" ? room.outcome : "",
  };
}

// A cells question's results: a line per round with its votes (and, once torch's answer is shown, how many were
// exactly torch's cells), and the grid the phone draws: the last round's share per cell and torch's cells (null
// before they are shown).
function cellResults(q, room, rounds, answer, shown) {
  const n = cellCount(q);
  const counted = rounds.map((t) => cells.shares(t, n));
  const lines = counted.map((c, k) => ({
    label: [["", rounds.length > 1 ? `Round ${k + 1}` : "Answers"]],
    counts: votes(c.votes) + (shown ? `, ${c.right} exactly torch's cells` : ""),
    right: false,
  }));
  return {
    empty: false,
    head: rounds.length > 1 ? "Round 1 → round 2:" : "The class:",
    lines,
    right: RIGHT,
    grid: { shares: counted.at(-1).shares, taps: counted.at(-1).taps, answer: shown ? answer : null },
    torch: shown ? [["", q.answer_text || "?"]] : null,
    note: "",
    outcome: shown && typeof room.outcome === "string" ? room.outcome : "",
  };
}

// This phone's answer as the results show it: the option's text or the guess, and whether it is right (null
// until torch's answer is shown). An option that ends in a full stop is shown without it: the line closes with
// the verdict's own, "… only (right)."
export function mineShown(q, room, own) {
  if (!own) return null;
  const answer = torchAnswer(q, room);
  if (q.kind === "cells") {
    const tapped = cells.decode(String(own.answer), cellCount(q)) || [];
    const said = tapped.length === 1 ? "1 cell" : `${tapped.length} cells`;
    return { shown: [["", said]], tapped, right: answer === null ? null : isRight(q, String(own.answer), answer) };
  }
  const i = Number.parseInt(own.answer, 10);
  const option = q.kind === "choice" ? q.choices[i] : null;
  const shown = option ? unstopped(option) : [["", String(own.answer)]];
  return { shown, right: answer === null ? null : isRight(q, String(own.answer), answer) };
}

// `parts` ([tag, text] spans) without a full stop at the very end.
function unstopped(parts) {
  const [tag, text] = parts.at(-1);
  return text.endsWith(".") ? [...parts.slice(0, -1), [tag, text.slice(0, -1)]] : parts;
}

// What the element draws for `room` (null before any state): one of
//   { kind: "gone" | "closed" | "done" | "missing" },
//   { kind: "ask" | "reveal" | "answer", key, caption, q, own, ... }: "reveal" is a round that is over, torch's
//   answer not shown yet; "answer" is torch's, with its reasons; or
//   { kind: "check", ... } while a phase of the concept check is open (check_model.js; `checkSent` its answers)
// `key` changes exactly when the controls must be built again (another question, round or phase).
export function screen(room, data, sent, checkSent) {
  if (!room) return null;
  if (room.gone) return { kind: "gone", key: "gone" };
  if (room.closed) return { kind: "closed", key: "closed" };
  const check = checkScreen(room, data, checkSent);
  if (check) return check;
  if (room.phase === "done" || room.question === null) return { kind: "done", key: "done" };
  const q = (data.questions || {})[room.question];
  if (!q) return { kind: "missing", key: `missing.${room.question}` };
  const phases = (data.text && data.text.phases) || {};
  const own = ownAnswer(room, data.mine, sent);
  const said = data.said && sameRound(data.said, room) && data.said.phase === room.phase ? data.said : null;
  const base = {
    // Drawn again when the presenter hides or shows the class's answers, and once torch's reasons arrive.
    key: `${room.index}.${room.round}.${room.phase}${room.hidden ? ".hidden" : ""}${
      room.phase === "answer" && !q.why ? ".waiting" : ""
    }`,
    caption: `Question ${room.index + 1} of ${room.questions} · round ${room.round}: ${phases[room.round] || ""}`,
    q,
    own,
    said,
  };
  if (room.phase === "ask") return { ...base, kind: "ask" };
  return { ...base, kind: room.phase, mine: mineShown(q, room, own), results: results(q, room) };
}

// The projector's count: how many have answered the round on screen, or null when it shows none.
export function count(room) {
  if (!room || room.gone || room.closed || room.phase === "done" || room.question === null) return null;
  return room.answers;
}

// Seconds before reconnecting a stream the browser gave up on (a replica gone, a refusal): 1, 2, 4 … up to
// 15, each with up to a third more at random so that a class does not come back all at once.
export function retryDelay(attempt, random = Math.random) {
  const base = Math.min(15, 2 ** Math.max(0, attempt));
  return base * (1 + random() / 3);
}
