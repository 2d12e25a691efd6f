// The stage follows the page's own γ and β sliders (issue 32). A press on the sidebar's γ reruns the page, and
// the stage would show torch's numbers only after the request, the server's run and the browser's render of
// every element. Instead, as one of those sliders moves, the stage asks the server for torch's numbers at the
// new values (ui/stage_at.py: a route, no script run) and draws them; the rerun the slider starts brings the
// same numbers again. The payload's `stage_at` says where to ask and for which controls ({url, keys}); a page
// that offers none (the Walkthrough) leaves the stage to its reruns.
//
// The sliders are Streamlit's, found by their key's class (`st-key-gain`, as lnviz's stylesheet finds them)
// and their range input, whose value Streamlit's slider sets as it moves (watched with a MutationObserver:
// it fires no input event). A Streamlit whose slider has no range input leaves the stage to the rerun.

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
  return new URLSearchParams(Object.fromEntries(names.map((n) => [n, String(values[n])]))).toString();
}

// Follow the sliders the payload's `offer` names; `draw(data)` takes torch's payload as a rerun's. They are
// looked for again after each payload, and at each key or pointer press anywhere on the page, before the
// page's own handlers move a slider: a new visitor's sliders may arrive after the stage (their chunks load
// lazily), and a rerun may make them anew.
export function follow(s, offer, draw) {
  const f = s.follow;
  f.url = offer ? offer.url : "";
  f.keys = offer ? offer.keys : [];
  f.draw = draw;
  watch(s);
  if (f.url && !f.wake) {
    f.wake = () => watch(s);
    document.addEventListener("keydown", f.wake, true);
    document.addEventListener("pointerdown", f.wake, true);
  }
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
  if (f.wake) {
    document.removeEventListener("keydown", f.wake, true);
    document.removeEventListener("pointerdown", f.wake, true);
  }
  Object.assign(f, { url: "", inputs: [], observer: null, asked: null, query: "", wake: null, draw: null });
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
  fetch(`${url}?${query}`, { signal: asked.signal, credentials: "same-origin" })
    .then((r) => (r.ok ? r.json() : null))
    .then((data) => {
      if (f.asked !== asked) return; // a newer question, or unwatched
      f.asked = null;
      f.query = "";
      if (data && f.url === url && !s.dragging) f.draw(data);
    })
    .catch(() => {}); // dropped, or the server can't answer now: the rerun brings torch's numbers
}
