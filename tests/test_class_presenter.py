"""The presenter's own view and taking a room to another browser (ui/poll/presenter.py, ui/poll/handover.py), in AppTest:
the presenter, their second device and students as separate sessions of one server, through the real router.

What only the presenter may see (the share right, the advice, torch's answer before it is shown) is looked for in
everything each session draws: its markdown, captions, banners, text and the class element's data."""

from __future__ import annotations

import json
import re

import pytest

from harness.apptest import assert_no_exception, class_element, class_vote, run_page
from lnviz.labs.classroom import questions, text
from server import poll
from server import process_store as shared_store
from server.store import MemoryStore
from ui.poll import handover

PAGE = "pages/class.py"
TAKE_SHOWN = re.compile(r"^## (\w{4})\u2011(\w{4})\u2011(\w{4})$")


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch) -> MemoryStore:
    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    return store


def button(at, action: str):
    (found,) = [b for b in at.button if (b.key or "").startswith(f"class_{action}_v")]
    return found


def press(at, action: str) -> None:
    button(at, action).click().run()
    assert_no_exception(at)


def presents(at) -> bool:
    """Whether the session is drawn a presenter's buttons (keys such as ``class_next_v3``)."""
    return any(re.fullmatch(r"class_\w+_v\d+", b.key or "") for b in at.button)


def everything(at) -> str:
    """All an AppTest session draws as text, and what its class elements are given."""
    parts = [
        e.value for kind in ("markdown", "caption", "info", "warning", "success", "error", "text") for e in at.get(kind)
    ]
    parts += [e.proto.json for e in at.get("bidi_component")]
    return "\n".join(str(p) for p in parts)


def take_code(presenter) -> str:
    """Press "Present from another device" and read the take code off its box."""
    presenter.button(key="class_take").click().run()
    assert_no_exception(presenter)
    (shown,) = [m.value for m in presenter.markdown if TAKE_SHOWN.match(m.value)]
    return "".join(TAKE_SHOWN.match(shown).groups())


def opened(proved) -> tuple:
    at = run_page(PAGE)
    at.button(key="class_start").click().run()
    assert_no_exception(at)
    code = at.query_params["room"]
    return at, code[0] if isinstance(code, list) else code


def own_view(proved, take: str):
    """Another browser (its own proof and session) opens the take code's link."""
    proved.fresh()
    at = run_page(PAGE, {"take": take})
    assert_no_exception(at)
    return at


def test_a_round_through_peer_instruction_with_the_share_right_and_the_advice_on_the_presenters_view_only(
    fresh_store, proved
):
    presenter, code = opened(proved)
    press(presenter, "next")  # the first choice question
    room = fresh_store.room(code)
    question = questions.by_id(room.question)
    assert question.kind == "choice"
    right, wrong = question.answer, (question.answer + 1) % len(question.choices)
    own = own_view(proved, take_code(presenter))
    assert dict(own.query_params) in ({"room": code, "view": handover.VIEW}, {"room": [code], "view": [handover.VIEW]})
    assert any(text.TAKEN_HERE in s.value for s in own.success)
    assert any(text.VIEW_NOTE in c.value for c in own.caption)
    assert question.answer_text in everything(own)  # torch's answer, for the presenter's eyes

    phones = []
    for pick in (right, right, wrong):  # 2 of 3 right: 67 %, "turn to your neighbour"
        proved.fresh()
        phones.append(run_page(PAGE, {"room": code}))
        class_vote(phones[-1], str(pick))
    own.run()
    assert "Right so far: **2 of 3 (67\u00a0%)**" in everything(own)
    press(own, "reveal")
    assert "Right: **2 of 3 (67\u00a0%)**" in everything(own)
    assert [i.value for i in own.info] == [text.ADVICE["discuss"]]
    presenter.run()
    for at in [presenter, *phones]:
        at.run()
        shown = everything(at)
        assert "67\u00a0%" not in shown and "2 of 3" not in shown, shown
        for advice in text.ADVICE.values():
            assert advice not in shown
        assert question.why not in shown and "✓ right" not in shown and "Right answer" not in shown
    for phone in phones:
        data = class_element(phone)
        assert data["room"]["phase"] == "reveal" and data["room"]["answer"] is None
        assert data["questions"][question.id]["answer"] is None and data["questions"][question.id]["why"] is None

    press(own, "again")
    for phone in phones:
        phone.run()
        class_vote(phone, str(right))  # the third phone moved to torch's answer
    own.run()
    assert "Right so far: **3 of 3 (100\u00a0%)**" in everything(own)
    press(own, "answer")
    moved = (
        "Right in round 1: 2 of 3 (67\u00a0%); in round 2: 3 of 3 (100\u00a0%). "
        "Of the 3 who answered both rounds, 1 moved to torch's answer and 0 away from it."
    )
    presenter.run()
    for at in (own, presenter):
        assert moved in everything(at)
    for phone in phones:
        phone.run()
        data = class_element(phone)
        assert data["room"]["outcome"] == moved and data["room"]["answer"] == str(right)
        assert data["questions"][question.id]["why"]  # torch's reasons, now


def test_a_take_code_works_once_never_as_a_room_code_and_each_refusal_is_a_sentence(fresh_store, proved):
    presenter, code = opened(proved)
    take = take_code(presenter)
    assert take != code and poll.valid_code(take) is None
    student = run_page(PAGE, {"room": take})  # typed where a room's code goes: no room opens
    assert not presents(student)
    first = own_view(proved, take)
    assert presents(first)
    second = own_view(proved, take)
    assert [w.value for w in second.warning] == [poll.TAKE_REFUSED["used"]]
    assert "take" not in second.query_params and not presents(second)
    bad = own_view(proved, "NOPE-NOPE-NOPE")
    (said,) = [w.value for w in bad.warning]
    assert said.startswith("`NOPE-NOPE-NOPE` can't be a presenter's code") and f"has {poll.TAKE_LENGTH}" in said
    typed = run_page(PAGE)  # the lobby's form, on a podium's PC with no camera
    typed.text_input(key="class_take_code").input(take_code(presenter).lower())
    typed.button(key="class_take_go").click().run()
    assert_no_exception(typed)
    assert typed.query_params["view"] in (handover.VIEW, [handover.VIEW])
    assert any(text.TAKEN_HERE in s.value for s in typed.success) and presents(typed)
    assert len(fresh_store.room(code).hosts) == 2


def test_a_student_asking_for_the_presenters_view_gets_a_phone_and_a_signed_out_device_presents_no_more(
    fresh_store, proved
):
    presenter, code = opened(proved)
    sneaky = run_page(PAGE, {"room": code, "view": handover.VIEW})
    assert not presents(sneaky)
    assert class_element(sneaky)["mode"] == "phone"
    own = own_view(proved, take_code(presenter))
    presenter.run()
    assert any(text.HOSTS[1] in c.value for c in presenter.caption)
    assert not [b for b in own.button if b.key == "class_sign_out"]  # only the browser that started the room
    presenter.button(key="class_sign_out").click().run()
    assert any(text.SIGNED_OUT in s.value for s in presenter.success)
    own.run()
    assert_no_exception(own)
    assert not presents(own)  # a phone now
    assert fresh_store.room(code).hosts == ()


def test_the_presenter_hides_the_class_answers_and_the_reveal_then_shows_only_that_the_round_is_over(
    fresh_store, proved
):
    presenter, code = opened(proved)
    phone = run_page(PAGE, {"room": code})
    question = questions.by_id(fresh_store.room(code).question)
    class_vote(phone, str(question.parse(question.answer)))
    press(presenter, "hide")
    press(presenter, "reveal")
    assert [i.value for i in presenter.info] == [text.HIDDEN_PROJECTOR.format(round=1)]
    assert not presenter.get("plotly_chart") and "1 vote" not in everything(presenter)
    phone.run()
    assert class_element(phone)["room"]["rounds"] is None and class_element(phone)["room"]["hidden"]
    press(presenter, "show")
    phone.run()
    assert class_element(phone)["room"]["rounds"] and "1 vote" in everything(presenter)
    assert json.loads(json.dumps(class_element(phone)["room"]))["answer"] is None
