// The concept check's views in the class element (issue 49): a phone's list of every item, each tap sent as the
// trigger value `check`; and the projector's count of phones and answers. check_model.js holds what they draw.

import { checkCount } from "./check_model.js";
import { el, spans } from "./dom.js";

// A phone's screen: the heading, then each item as a fieldset of 44 px options, with a note for what its last
// answer came to.
export function buildCheck(s, v) {
  s.heading = el("h3", "prompt", v.heading);
  s.heading.tabIndex = -1;
  s.checkProgress = el("p", "caption");
  s.checkProgress.setAttribute("aria-live", "polite");
  s.body.append(s.heading, el("p", "intro", v.intro), s.checkProgress);
  s.checkItems = {};
  v.items.forEach((item, k) => {
    const box = el("fieldset", "choices check-item");
    const legend = el("legend", "item-prompt");
    legend.appendChild(el("span", "item-number", `${k + 1}. `));
    spans(legend, item.prompt);
    box.appendChild(legend);
    item.choices.forEach((parts, i) => {
      const label = el("label", "choice");
      const input = el("input");
      input.type = "radio";
      input.name = `class-check-${v.phase}-${item.id}`;
      input.value = String(i);
      input.addEventListener("change", () => input.checked && answer(s, v.phase, item.id, i));
      label.append(input, spans(el("span", "text", `${String.fromCharCode(65 + i)}. `), parts));
      box.appendChild(label);
    });
    const note = el("p", "note");
    note.setAttribute("aria-live", "polite");
    box.appendChild(note);
    s.body.appendChild(box);
    s.checkItems[item.id] = { box, note };
  });
}

function answer(s, phase, item, i) {
  s.checkSent[item] = { phase, item, answer: String(i), n: ++s.n };
  s.send?.("check", s.checkSent[item]);
  s.redraw();
}

export function updateCheck(s, v) {
  const t = s.data.check?.text || {};
  s.checkProgress.textContent = v.progress;
  for (const item of v.items) {
    const shown = s.checkItems[item.id];
    if (!shown) continue;
    const own = v.own[item.id];
    for (const input of shown.box.querySelectorAll("input")) input.checked = !!own && input.value === own.answer;
    const said = v.said && v.said.item === item.id && !(own && own.sending) ? v.said : null;
    shown.note.className = `note ${said ? said.kind : ""}`;
    shown.note.textContent = own?.sending ? t.sending || "" : said ? said.text : "";
  }
}

// The projector's count while a phase is open: phones, and the answers they gave.
export function drawCheckCount(s) {
  const d = s.data;
  const t = d.text || {};
  const n = checkCount(s.room);
  if (!s.countValue) {
    s.body.replaceChildren();
    const box = el("div", "count");
    box.appendChild(el("p", "label", t.phones || ""));
    s.countValue = el("p", "value");
    s.countValue.setAttribute("aria-live", "polite");
    s.countDetail = el("p", "detail");
    box.append(s.countValue, s.countDetail);
    box.title = t.count_help || "";
    s.body.appendChild(box);
  }
  s.body.hidden = n === null;
  s.countValue.textContent = n === null ? "" : String(n.voters);
  s.countDetail.textContent = n === null ? "" : (t.answers || "").replace("{n}", String(n.answers));
}
