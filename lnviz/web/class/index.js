// The class poll in the browser (issue 31): a phone's question, its answer, the class's answers after the
// reveal, torch's once the presenter shows it (issue 49), and the projector's count, each drawn from the room's
// stream with no script run on the server.
//
// Python (ui/poll/phone.py, ui/poll/projector.py) mounts this element at each page run with the room's questions,
// this voter's stored answer and the stream's address; the element opens one EventSource on the app's own
// origin and redraws on each event. A vote goes back as the trigger value `vote` (the page's callback
// stores it, and the run that follows brings the stored answer). model.js holds everything but the DOM.
// Text goes in as text (textContent, spans from the server), never as HTML.

import { decode } from "./cells.js";
import { buildCheck, drawCheckCount, updateCheck } from "./check.js";
import { cellPicker, resultGrid, slider } from "./construct.js";
import { el, spans, txt } from "./dom.js";
import { cellCount, count, newer, readEvent, retryDelay, screen } from "./model.js";

const MOVED_MS = 1500;
const ANSWERS_MS = 2000; // the presenter's own view: at most one page run this often while answers come in
const ROUND_KINDS = new Set(["ask", "reveal", "answer"]);
const mounts = new WeakMap(); // parentElement -> the element's state, kept across page runs

export const stateOf = (parentElement) => mounts.get(parentElement);

export default function (component) {
  const { parentElement, data, setTriggerValue } = component;
  let s = mounts.get(parentElement);
  if (!s) {
    s = create(parentElement);
    s.redraw = () => draw(s);
    mounts.set(parentElement, s);
  }
  s.send = setTriggerValue;
  s.data = data;
  if (data.room && !data.room.gone && newer(s.room, data.room)) s.room = data.room;
  connect(s);
  draw(s);
  // Streamlit calls this before every new payload too: keep the DOM and the stream, let go only when unmounted.
  return () =>
    setTimeout(() => {
      if (s.root.isConnected) return;
      disconnect(s);
      mounts.delete(parentElement);
    }, 0);
}

function create(parentElement) {
  const root = el("div", "lnviz-class");
  const status = el("p", "status");
  status.setAttribute("role", "status");
  const body = el("div", "body");
  root.append(status, body);
  parentElement.appendChild(root);
  return {
    root, status, body, send: null, data: null, room: null, sent: null, source: null, url: "", attempt: 0,
    retry: 0, shownKey: "", needed: "", moved: -1, heading: null, controls: null, input: null, note: null,
    mine: null, countValue: null, revealed: {}, answersWait: 0,
    tapped: null, touched: false, paintCells: null, showDrag: null, // a cells question's taps, and whether they (or a slider) changed since the last send
    n: Math.floor(Math.random() * 1e9), // each vote's number: the page says which one its stored answer followed
    checkSent: {}, // the concept check's answers sent, by item (check.js)
  };
}

// --- the stream -------------------------------------------------------------------------------------------

function connect(s) {
  const url = s.data.url;
  if (s.url === url && (s.source || s.retry)) return;
  disconnect(s);
  s.url = url;
  if (!url || ended(s.room) || typeof EventSource === "undefined") return;
  const source = new EventSource(url);
  s.source = source;
  source.addEventListener("open", () => {
    s.attempt = 0;
    setStatus(s, "");
  });
  for (const type of ["room", "gone"]) source.addEventListener(type, (e) => receive(s, type, e.data));
  // The store is down or loading what it held: the phone keeps its room and says so; the next state clears it.
  source.addEventListener("down", () => setStatus(s, s.data.text?.coming_back || ""));
  source.addEventListener("error", () => {
    if (s.source !== source) return;
    setStatus(s, s.data.text?.reconnecting || "");
    if (source.readyState === 2) retry(s); // the browser gave up (a refusal, a proxy's error page): try again
  });
}

function retry(s) {
  disconnect(s);
  s.retry = setTimeout(() => {
    s.retry = 0;
    s.url = "";
    connect(s);
  }, retryDelay(s.attempt++) * 1000);
}

function disconnect(s) {
  if (s.source) s.source.close();
  if (s.retry) clearTimeout(s.retry);
  s.source = null;
  s.retry = 0;
}

const ended = (room) => !!room && (room.gone || room.closed);

function receive(s, type, text) {
  const event = readEvent(type, text);
  if (!event) return;
  s.room = event.gone ? { gone: true } : event.room;
  setStatus(s, "");
  if (ended(s.room)) disconnect(s); // the stream ends with the room: no reconnecting to it
  draw(s);
}

function setStatus(s, text) {
  s.status.textContent = text;
  s.status.hidden = !text;
}

// torch's answer and reasons for the question revealed now, from the page's route, put into the page's entry;
// should that fail (an old replica, a store down), one page run brings them instead.
async function reveal(s, question, index) {
  let found = null;
  try {
    const response = await fetch(s.data.reveal_url, { credentials: "same-origin", cache: "no-store" });
    if (response.ok) found = await response.json();
  } catch {
    found = null;
  }
  if (found && found.question === question && found.index === index && found.why) {
    s.revealed[question] = { answer: found.answer, answer_text: found.answer_text, why: found.why };
    s.shownKey = ""; // drawn again, with torch's answer
    draw(s);
  } else if (s.room && s.room.index === index && s.room.phase === "answer") s.send?.("need", { why: question });
}

// --- drawing ----------------------------------------------------------------------------------------------

function draw(s) {
  const d = s.data;
  if (d.mode === "count") return drawCount(s);
  const v = screen(s.room, withRevealed(d, s.revealed), s.sent, s.checkSent);
  if (!v) return;
  // A question the page did not give (the bank changed under a long-open page): one page run brings it.
  if (v.kind === "missing" && s.needed !== v.key) {
    s.needed = v.key;
    s.send?.("need", { question: s.room.question });
  }
  // torch's answer and reasons: no phone holds them before the presenter shows them; one request brings them
  // then, no page run.
  if (v.kind === "answer" && !v.q.why && s.needed !== v.key) {
    s.needed = v.key;
    reveal(s, s.room.question, s.room.index);
  }
  const focused = s.root.contains(document.activeElement);
  if (v.key !== s.shownKey) {
    s.shownKey = v.key;
    s.body.replaceChildren();
    build(s, v);
    if (focused && s.heading) s.heading.focus(); // a new question: a screen reader reads it from its heading
  }
  update(s, v);
}

// The page's questions with the answers and reasons fetched at reveals, which a later page run doesn't carry.
function withRevealed(d, revealed) {
  const questions = { ...(d.questions || {}) };
  for (const [id, found] of Object.entries(revealed)) {
    if (questions[id] && !questions[id].why) questions[id] = { ...questions[id], ...found };
  }
  return { ...d, questions };
}

function build(s, v) {
  const t = s.data.text || {};
  s.heading = null;
  s.controls = null;
  s.input = null;
  s.note = null;
  s.mine = null;
  s.tapped = null;
  s.touched = false;
  s.paintCells = null;
  s.showDrag = null;
  if (v.kind === "check") return buildCheck(s, v);
  if (!ROUND_KINDS.has(v.kind)) {
    s.body.appendChild(el("p", `message ${v.kind}`, t[v.kind] || ""));
    return;
  }
  s.body.appendChild(el("p", "caption", v.caption));
  s.heading = spans(el("h3", "prompt"), v.q.prompt);
  s.heading.tabIndex = -1;
  s.body.appendChild(s.heading);
  if (v.kind === "ask") {
    const kind = v.q.kind === "number" && v.q.drag ? "drag" : v.q.kind;
    s.controls = { choice: choices, cells: cellPicker, drag: slider }[kind]?.(s, v, vote) || guess(s, v);
    s.body.appendChild(s.controls);
  } else if (v.kind === "reveal") {
    s.mine = el("p", "mine");
    s.body.append(el("p", "over", t.round_over || ""), s.mine, resultsBlock(v, t));
  } else {
    s.mine = el("p", "mine");
    s.body.append(s.mine, resultsBlock(v, t), whyBlock(v.q, s.data));
  }
  s.note = el("p", "note");
  s.note.setAttribute("aria-live", "polite");
  s.body.appendChild(s.note);
}

function vote(s, answer) {
  const room = s.room;
  s.touched = false;
  s.sent = { index: room.index, round: room.round, answer: String(answer), n: ++s.n };
  s.send?.("vote", s.sent);
  draw(s);
}

function choices(s, v) {
  const box = el("fieldset", "choices");
  box.appendChild(el("legend", "", "Your answer"));
  v.q.choices.forEach((parts, i) => {
    const label = el("label", "choice");
    const input = el("input");
    input.type = "radio";
    input.name = `class-${v.key}`;
    input.value = String(i);
    input.addEventListener("change", () => input.checked && vote(s, i));
    label.append(input, spans(el("span", "text", `${String.fromCharCode(65 + i)}. `), parts));
    box.appendChild(label);
  });
  return box;
}

function guess(s, v) {
  const form = el("form", "guess");
  const id = `class-guess-${v.key}`;
  const label = el("label", "", `Your guess, ${v.q.span}`);
  label.setAttribute("for", id);
  const input = el("input");
  s.input = input;
  input.id = id;
  input.type = "text";
  input.setAttribute("inputmode", "decimal");
  input.setAttribute("autocomplete", "off");
  const send = el("button", "send", "Send");
  send.type = "submit";
  form.append(label, input, send);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (input.value.trim()) vote(s, input.value.trim()); // the page checks it, and says why it is not a guess
  });
  return form;
}

function resultsBlock(v, t) {
  const r = v.results;
  const box = el("section", "results");
  box.setAttribute("aria-label", "The class's answers");
  if (r.empty) {
    box.appendChild(el("p", "", (r.hidden ? t.hidden : t.none) || ""));
    return box;
  }
  box.appendChild(el("p", "", r.head));
  const list = el("ul");
  for (const line of r.lines) {
    const item = spans(el("li"), line.label);
    item.appendChild(txt(` — ${line.counts}`));
    if (line.right) item.append(txt(" "), el("strong", "right", r.right));
    list.appendChild(item);
  }
  box.appendChild(list);
  if (r.grid) box.appendChild(resultGrid(v));
  if (!r.torch) return box; // the round is over, torch's answer not shown yet
  const tail = el("p", "torch", "torch's answer: ");
  tail.appendChild(spans(el("strong"), r.torch));
  tail.appendChild(txt(r.note));
  box.appendChild(tail);
  if (r.outcome) box.appendChild(el("p", "outcome", r.outcome));
  return box;
}

function whyBlock(q, d) {
  const box = el("div", "why");
  box.appendChild(spans(el("p"), q.why || []));
  const link = el("a", "link", "See why, live");
  link.setAttribute("href", q.link + (d.presenting ? "&present=1" : ""));
  link.setAttribute("target", "_blank");
  link.setAttribute("rel", "noopener");
  box.appendChild(link);
  return box;
}

function update(s, v) {
  if (v.kind === "check") return updateCheck(s, v);
  if (!ROUND_KINDS.has(v.kind)) return;
  const t = s.data.text || {};
  if (v.kind === "ask" && v.q.kind === "choice" && s.controls) {
    for (const input of s.controls.querySelectorAll("input")) input.checked = !!v.own && input.value === v.own.answer;
  }
  if (s.input && v.own && document.activeElement !== s.input) s.input.value = v.own.answer;
  // A stored cells vote or drag restores its taps or its place, unless this phone has changed them since.
  if (v.kind === "ask" && v.own && !s.touched) {
    if (s.paintCells) s.paintCells(decode(v.own.answer, cellCount(v.q)) || []);
    if (s.showDrag) s.showDrag(v.own.answer);
  }
  if (v.kind !== "ask" && s.mine) {
    s.mine.replaceChildren();
    if (v.mine) {
      s.mine.append(el("strong", "", "Your answer:"), txt(" "));
      spans(s.mine, v.mine.shown);
      const verdict = v.mine.right === null ? "" : ` (${v.mine.right ? "right" : "not the answer torch gives"})`;
      s.mine.appendChild(txt(`${verdict}.`));
    } else s.mine.textContent = t.not_answered || "";
  }
  if (s.note) {
    const said = v.said && !(v.own && v.own.sending);
    s.note.className = `note ${said ? v.said.kind : ""}`;
    s.note.textContent = v.own?.sending ? t.sending : said ? v.said.text : v.kind === "ask" && v.own ? t.sent : "";
  }
}

// --- the projector's count --------------------------------------------------------------------------------

function drawCount(s) {
  const d = s.data;
  // The room moved on elsewhere (another tab of the presenter's): one page run draws it as it is now.
  // Not at once: a press of the projector's own button reruns the page anyway, and its stream's event may
  // come first.
  if (s.room && !s.room.gone && s.room.version > d.version && s.moved !== s.room.version) {
    s.moved = s.room.version;
    setTimeout(() => {
      if (s.room.version > s.data.version) s.send?.("need", { version: s.room.version });
    }, MOVED_MS);
  }
  if (d.source === "check") return drawCheckCount(s);
  // The presenter's own view shows the share right as answers come in: a page run reads them (the stream
  // never carries who is right), at most one per ANSWERS_MS.
  if (d.follow_answers && s.room && !s.room.gone && s.room.answers !== d.answers && !s.answersWait) {
    s.answersWait = setTimeout(() => {
      s.answersWait = 0;
      if (s.room.answers !== s.data.answers && s.room.version === s.data.version) {
        s.send?.("need", { answers: s.room.answers });
      }
    }, ANSWERS_MS);
  }
  const n = count(s.room);
  if (!s.countValue) {
    s.body.replaceChildren();
    const box = el("div", "count");
    box.appendChild(el("p", "label", "Answered"));
    s.countValue = el("p", "value");
    s.countValue.setAttribute("aria-live", "polite");
    box.appendChild(s.countValue);
    box.title = d.text?.count_help || "";
    s.body.appendChild(box);
  }
  s.body.hidden = n === null;
  s.countValue.textContent = n === null ? "" : String(n);
}
