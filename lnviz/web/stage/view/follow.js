// The stage follows the page's own γ and β sliders (issue 32). A press on the sidebar's γ reruns the page, and
// the stage would show torch's numbers only after the request, the server's run and the browser's render of
// every element. Instead, as one of those sliders moves, the stage asks the server for torch's numbers at the
// new values (ui/stage/stage_at.py: a route, no script run) and draws them; the rerun the slider starts brings the
// same numbers again. The payload's `stage_at` says where to ask and for which controls ({url, keys}); a page
// that offers none (the Walkthrough) leaves the stage to its reruns.
//
// The sliders are Streamlit's, found by their key's class (`st-key-gain`, as lnviz's stylesheet finds them)
// and their range input, whose value Streamlit's slider sets as it moves (watched with a MutationObserver:
// it fires no input event). A Streamlit whose slider has no range input leaves the stage to the rerun.
//
// While one of them has the keyboard's focus, the stage asks ahead for the values one step either side (an
// arrow key's move), so that a press finds torch's numbers here already and draws them at its keydown; what
// was asked ahead is kept while the offer (its `serial`) is the same: a rerun's new offer may stand for
// another grid.

// The page's slider for control `key`, or null.
export function slider(key) {
  const box = document.querySelector(`.st-key-${key}`);
  return box ? box.querySelector("input[type=range]") : null;
}

// What to ask for, as a query string, given the sliders' `values` by name: "" when torch's numbers at those
// values are on the stage already (`torchCtl`), or when a value is not a number.
export function question(values, torchCtl) {
  const names = Object.keys(values);
  if (!names.length || names.every((n) => values[n] === torchCtl[n])) return "";
  if (names.some((n) => !Number.isFinite(values[n]))) return "";
  return queryOf(values);
}

// The sliders' `values` as a query string, by name.
const queryOf = (values) =>
  new URLSearchParams(Object.fromEntries(Object.keys(values).map((n) => [n, String(values[n])]))).toString();

// Follow the sliders the payload's `offer` names; `draw(data)` takes torch's payload as a rerun's. They are
// looked for again after each payload, and at each key or pointer press anywhere on the page, before the
// page's own handlers move a slider: a new visitor's sliders may arrive after the stage (their chunks load
// lazily), and a rerun may make them anew.
export function follow(s, offer, draw) {
  const f = s.follow;
  f.url = offer ? offer.url : "";
  f.keys = offer ? offer.keys : [];
  f.draw = draw;
  if (!offer || offer.serial !== f.serial) f.ahead.clear();
  f.serial = offer ? offer.serial : null;
  watch(s);
  if (f.url && !f.wake) {
    f.wake = (e) => {
      watch(s);
      if (e.type === "focusin") ahead(s);
      if (e.type === "keydown") pressed(s, e);
    };
    for (const type of WAKE) document.addEventListener(type, f.wake, true);
  }
  ahead(s);
}

const WAKE = ["keydown", "pointerdown", "focusin"];
const STEP_KEYS = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }; // a range input's one-step keys
const CHECK_MS = 300; // after a press drawn at its keydown: if the slider is elsewhere then, ask for where it is

// The sliders' values with slider `k` one step (`dir`) on, or null past its end or without a step.
function stepped(f, k, dir) {
  const input = f.inputs[k], step = Number(input.step), now = sliders(f), name = f.keys[k];
  const v = now[name] + dir * step;
  if (!(step > 0) || !Number.isFinite(v)) return null;
  if (v < Number(input.min) - step / 2 || v > Number(input.max) + step / 2) return null;
  return { ...now, [name]: v };
}

// An arrow key on a followed slider whose next value was answered ahead: draw it at the keydown, before the
// page's own handlers move the slider (they take a render of the page); then the slider's move asks nothing.
function pressed(s, e) {
  const f = s.follow;
  const k = f.inputs.indexOf(e.target);
  const dir = STEP_KEYS[e.key];
  if (k < 0 || !dir || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || s.dragging) return;
  const values = stepped(f, k, dir);
  const known = values && f.ahead.get(keyOf(values));
  if (!known || !known.data || known.data.stage_at?.serial !== f.serial) return;
  if (f.asked) f.asked.abort();
  Object.assign(f, { asked: null, query: "" });
  f.draw(known.data);
  setTimeout(() => ask(s), CHECK_MS); // a key the slider did not take (a disabled one): back to its value
}

function watch(s) {
  const f = s.follow;
  const inputs = f.url ? f.keys.map(slider) : [];
  if (inputs.length === f.inputs.length && inputs.every((e, k) => e === f.inputs[k])) return;
  if (f.observer) f.observer.disconnect();
  f.observer = null;
  f.inputs = inputs;
  if (!inputs.some(Boolean)) return;
  f.observer = new MutationObserver(() => ask(s));
  for (const e of inputs) if (e) f.observer.observe(e, { attributes: true, attributeFilter: ["value", "aria-valuetext"] });
}

// Stop following: let go of the sliders and the page's presses, and drop a question on its way.
export function unfollow(s) {
  const f = s.follow;
  if (f.observer) f.observer.disconnect();
  if (f.asked) f.asked.abort();
  if (f.wake) for (const type of WAKE) document.removeEventListener(type, f.wake, true);
  f.ahead.clear();
  Object.assign(f, { url: "", inputs: [], observer: null, asked: null, query: "", wake: null, draw: null });
  Object.assign(f, { serial: null, chain: null });
}

// A release of γ or β on the stage itself: torch's numbers at its values from the route too, ahead of the
// rerun the release starts. Not for ε: the route recomputes y = γ x̂ + β, not the statistics.
export function released(s, ctl) {
  const f = s.follow;
  if (!f.url || !s.torch || ctl.eps !== s.torch.ctl.eps) return;
  ask(s, Object.fromEntries(f.keys.map((k) => [k, ctl[k]])));
}

// The sliders' values now, by name.
function sliders(f) {
  const values = {};
  f.keys.forEach((k, n) => f.inputs[n] && (values[k] = Number(f.inputs[n].value)));
  return values;
}

// The key under which values asked ahead are kept: each on a fine grid, so that 1.5 + 0.05 is 1.55.
const keyOf = (values) =>
  Object.keys(values)
    .map((n) => `${n}=${Number(values[n].toFixed(9))}`)
    .join("&");

// Ask ahead for the focused slider's values one step either side, one question at a time.
function ahead(s) {
  const f = s.follow;
  const k = f.inputs.indexOf(document.activeElement);
  if (!f.url || k < 0) return;
  for (const dir of [1, -1]) {
    const values = stepped(f, k, dir);
    const key = values && keyOf(values);
    if (!values || f.ahead.has(key)) continue;
    const url = `${f.url}?${queryOf(values)}&ahead=1`;
    const got = (f.chain || Promise.resolve()).then(() =>
      fetch(url, { credentials: "same-origin" })
        .then((r) => (r.ok ? r.json() : null))
        .catch(() => null),
    );
    const entry = { answer: got, data: null }; // data: the answer, once in
    got.then((data) => (entry.data = data));
    f.chain = got;
    f.ahead.set(key, entry);
  }
}

function ask(s, values = sliders(s.follow)) {
  const f = s.follow;
  if (!f.url || s.dragging) return; // a drag on the stage previews its own values
  const query = question(values, s.torch ? s.torch.ctl : {});
  if (query === f.query) return; // asked already, or nothing to ask
  if (f.asked) f.asked.abort();
  f.query = query;
  f.asked = null;
  if (!query) return;
  const asked = (f.asked = new AbortController());
  const url = f.url;
  const known = f.ahead.get(keyOf(values)); // asked ahead: here already, or on its way
  const answer = known
    ? known.answer
    : fetch(`${url}?${query}`, { signal: asked.signal, credentials: "same-origin" }).then((r) =>
        r.ok ? r.json() : null,
      );
  answer
    .then((data) => {
      if (f.asked !== asked) return; // a newer question, or unwatched
      f.asked = null;
      f.query = "";
      // Of this offer only: a rerun that came meanwhile may stand for another grid, and is newer.
      if (data && f.url === url && !s.dragging && data.stage_at?.serial === f.serial) f.draw(data);
    })
    .catch(() => {}); // dropped, or the server can't answer now: the rerun brings torch's numbers
}
