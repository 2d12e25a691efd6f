// The class poll's element, without a DOM (issue 31): the room's state from the stream's events, this
// phone's own answer, and what to draw, as plain objects that index.js turns into elements.
//
// The stream's contract is docs' "class stream" (GET {base}/api/class/{code}/events): `event: room` with
// the room's public state as JSON, `event: gone` for a room that is no more. The page sends the rest at each
// of its runs (ui/poll/phone.py): the room's questions as the server renders them (lnviz/labs/classroom/render.py:
// text as spans, never HTML), this voter's stored answer, and the page's words.

import { checkScreen } from "./check_model.js";

const MINUS = "\u2212";
const RIGHT = "✓ right";
const PHASES = new Set(["ask", "reveal", "done"]);

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

// torch's answer for `q`: the page's (known once the bank was built), else the stream's, which carries it at
// the reveal (a question whose answer a model computes only then).
function torchAnswer(q, room) {
  if (q.answer !== null && q.answer !== undefined) return q.answer;
  if (room.answer === null || room.answer === undefined) return null;
  return q.kind === "choice" ? Number.parseInt(room.answer, 10) : Number(room.answer);
}

// Whether stored vote `key` is right (lnviz.labs.classroom.question.Question.right).
export function isRight(q, key, answer) {
  if (answer === null) return false;
  if (q.kind === "choice") return key === String(answer);
  return Math.abs(Number(key) - answer) <= q.tolerance + 1e-9;
}

const letter = (i) => String.fromCharCode(65 + i);

// The class's answers, as results_markdown (lnviz/labs/classroom/figures.py) writes them for a phone: a head,
// one line per choice (or guess) with its count in each round and the right one marked, and torch's answer.
export function results(q, room) {
  const rounds = Array.isArray(room.rounds) ? room.rounds : [];
  if (!rounds.length) return { empty: true };
  const answer = torchAnswer(q, room);
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
  const torch =
    q.kind === "choice"
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
    note: q.kind === "number" ? ` (guesses within ${plainNumber(q.tolerance)} count as right)` : "",
  };
}

// This phone's answer as the results show it: the option's text or the guess, and whether it is right. An option
// that ends in a full stop is shown without it: the line closes with the verdict's own, "… only (right)."
export function mineShown(q, room, own) {
  if (!own) return null;
  const answer = torchAnswer(q, room);
  const i = Number.parseInt(own.answer, 10);
  const option = q.kind === "choice" ? q.choices[i] : null;
  const shown = option ? unstopped(option) : [["", String(own.answer)]];
  return { shown, right: isRight(q, String(own.answer), answer) };
}

// `parts` ([tag, text] spans) without a full stop at the very end.
function unstopped(parts) {
  const [tag, text] = parts.at(-1);
  return text.endsWith(".") ? [...parts.slice(0, -1), [tag, text.slice(0, -1)]] : parts;
}

// What the element draws for `room` (null before any state): one of
//   { kind: "gone" | "closed" | "done" | "missing" },
//   { kind: "ask" | "reveal", key, caption, q, own, ... }, or
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
    // A reveal is drawn again once torch's reasons arrive.
    key: `${room.index}.${room.round}.${room.phase}${room.phase === "reveal" && !q.why ? ".waiting" : ""}`,
    caption: `Question ${room.index + 1} of ${room.questions} · round ${room.round}: ${phases[room.round] || ""}`,
    q,
    own,
    said,
  };
  if (room.phase === "ask") return { ...base, kind: "ask" };
  return { ...base, kind: "reveal", mine: mineShown(q, room, own), results: results(q, room) };
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
