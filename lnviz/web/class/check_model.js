// The concept check on a phone (issue 49), without a DOM: what to draw while the stream says a phase of it is
// open, as plain objects that check.js turns into elements.
//
// The stream's state carries `check: {step, voters, answers}` (server/events.py), never an answer. The
// page gives the rest at each of its runs (ui/poll/concept_check.py): every item as the server renders it, without
// its answer; this voter's stored answers of the open phase, with the number of the last answer the page took;
// what that answer came to; and the words.

const PHASES = new Set(["pre", "post"]);

// The phase that takes answers now, "pre" or "post", or null.
export function openPhase(room) {
  const step = room && room.check && room.check.step;
  return PHASES.has(step) ? step : null;
}

// This phone's answer to each item of `phase`: the stored one the page gave, unless one it sent since (a number
// past the last the page took) is still on its way.
export function ownAnswers(phase, stored, sent) {
  const own = {};
  if (stored && stored.phase === phase) {
    for (const [id, answer] of Object.entries(stored.answers || {})) own[id] = { answer, sending: false };
  }
  const taken = stored && Number.isInteger(stored.n) ? stored.n : null;
  for (const [id, s] of Object.entries(sent || {})) {
    if (s.phase === phase && (taken === null || s.n > taken)) own[id] = { answer: s.answer, sending: true };
  }
  return own;
}

const fill = (template, values) => (template || "").replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));

// The check's screen for `room`, or null while no phase is open:
//   { kind: "check", key, phase, heading, intro, progress, items, own, said }
export function checkScreen(room, data, sent) {
  const phase = openPhase(room);
  const c = data.check;
  if (!phase || !c || !Array.isArray(c.items) || !c.items.length) return null;
  const t = c.text || {};
  const own = ownAnswers(phase, c.mine, sent);
  const answered = c.items.filter((item) => own[item.id]).length;
  return {
    kind: "check",
    key: `check.${phase}`,
    phase,
    heading: fill(t.heading, { phase: (t.phases || {})[phase] || phase }),
    intro: t.intro || "",
    progress: fill(t.progress, { k: answered, n: c.items.length }),
    items: c.items,
    own,
    said: c.said && c.said.phase === phase ? c.said : null,
  };
}

// The projector's count of the open phase: { voters, answers }, or null when no phase is open.
export function checkCount(room) {
  if (!room || room.gone || room.closed || !openPhase(room)) return null;
  return { voters: room.check.voters, answers: room.check.answers };
}
