"""The class page in AppTest: a presenter and students as separate sessions of one server (one process, the
in-process store), through the real router."""

from __future__ import annotations

import pytest

from harness.apptest import assert_no_exception, class_element, class_vote, run_page
from lnviz.labs.classroom import questions
from lnviz.labs.classroom.question import tally
from server import poll
from server import process_store as shared_store
from server.limits import StoreDown, StoreFull
from server.store import MemoryStore, RedisStore

PAGE = "pages/class.py"


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch) -> MemoryStore:
    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    return store


def presenter_opens_a_room() -> tuple:
    at = run_page(PAGE)
    assert_no_exception(at)
    at.button(key="class_start").click().run()
    assert_no_exception(at)
    code = at.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    return at, code


def button(at, action: str):
    """The presenter's ``action`` button as drawn now: its key carries the room's version (``class_next_v3``)."""
    (found,) = [b for b in at.button if (b.key or "").startswith(f"class_{action}_v")]
    return found


def student(code: str, **extra: str):
    at = run_page(PAGE, {"room": code, **extra})
    assert_no_exception(at)
    return at


def test_a_presenter_starts_a_room_and_sees_the_code_the_first_question_and_the_buttons(fresh_store):
    at, code = presenter_opens_a_room()
    room = fresh_store.room(code)
    assert room is not None and room.questions == tuple(q.id for q in questions.bank())
    assert any(code[:4] in m.value and code[4:] in m.value for m in at.markdown)
    first = questions.by_id(room.questions[0])
    assert any(first.prompt in m.value for m in at.markdown)
    for action in ("reveal", "again", "answer", "next", "close"):
        assert button(at, action).key == f"class_{action}_v{room.version}"
    assert button(at, "again").disabled  # nothing revealed yet
    assert not at.get("radio") or all(r.key != "answer" for r in at.radio)  # the projector does not vote


def test_students_vote_change_their_answer_and_are_counted_once(fresh_store):
    _, code = presenter_opens_a_room()
    room = fresh_store.room(code)
    question = questions.by_id(room.question)
    phones = [student(code) for _ in range(3)]
    for i, phone in enumerate(phones):
        _answer(phone, question, i % 2)
    _answer(phones[0], question, 1)  # changes its mind
    votes = fresh_store.votes(code, 0, 1)
    assert len(votes) == 3
    assert sorted(votes.values()) == sorted(question.parse(v) for v in _raw(question, [1, 1, 0]))


def test_a_student_link_with_extra_parameters_cannot_reveal_advance_or_close(fresh_store):
    _, code = presenter_opens_a_room()
    before = fresh_store.room(code)
    sneaky = student(code, secret="x" * 32, host="1", present="1", class_reveal="1", class_next="1", action="reveal")
    for key in ("class_reveal", "class_again", "class_next", "class_close", "class_start"):
        assert not any((b.key or "").startswith(key) for b in sneaky.button), key
    assert fresh_store.room(code) == before


def test_the_reveal_shows_the_class_counts_and_only_show_the_answer_gives_every_phone_torchs(fresh_store):
    presenter, code = presenter_opens_a_room()
    question = questions.by_id(fresh_store.room(code).question)
    phone = student(code)
    _answer(phone, question, 0)
    button(presenter, "reveal").click().run()
    assert_no_exception(presenter)
    assert fresh_store.room(code).phase == "reveal"
    drawn = class_element(phone)["room"]
    assert drawn["phase"] == "ask" and drawn["rounds"] is None and drawn["answer"] is None  # nothing before it
    counts = [tally(question, [question.parse(_value(question, 0))])]
    phone.run()  # a reload: the element draws the reveal at once, before its stream connects
    data = class_element(phone)
    assert data["room"]["phase"] == "reveal" and data["room"]["rounds"] == counts
    assert data["room"]["answer"] is None and data["room"]["outcome"] is None  # peer instruction: torch's later
    assert all(e["answer"] is None and e["why"] is None for e in data["questions"].values())
    projected = "\n".join(t.value for t in presenter.text)
    assert "1 vote" in projected and "right" not in projected.lower() and question.answer_text not in projected
    assert not any(question.why in m.value for m in presenter.markdown)
    button(presenter, "answer").click().run()
    assert_no_exception(presenter)
    assert "Right answer" in "\n".join(t.value for t in presenter.text) or "torch:" in presenter.text[0].value
    assert any("Right: 1 of 1" in m.value or "Right: 0 of 1" in m.value for m in presenter.markdown)  # the outcome
    phone.run()
    assert_no_exception(phone)
    data = class_element(phone)
    assert data["room"]["phase"] == "answer" and data["room"]["answers"] == 1
    assert data["room"]["rounds"] == counts and data["room"]["outcome"].startswith("Right: ")
    assert data["room"]["answer"] == question.parse(question.answer)
    assert data["mine"]["answer"] == question.parse(_value(question, 0))
    shown = data["questions"][question.id]  # the question revealed now, and only it, with torch's answer
    assert shown["answer"] == question.answer and shown["why"]
    assert all(e["why"] is None for qid, e in data["questions"].items() if qid != question.id)
    assert not phone.get("plotly_chart")  # a phone gets the counts as text; the projector draws the chart
    presenter_text = "\n".join(t.value for t in presenter.text)
    assert presenter_text  # the class_results text is on the projector too


def test_an_unknown_or_malformed_room_code_is_said_plainly(fresh_store):
    unknown = run_page(PAGE, {"room": "ZZZZZZZZ"})
    assert_no_exception(unknown)
    assert any("no room with this code" in w.value for w in unknown.warning)
    malformed = run_page(PAGE, {"room": "<b>hi</b>"})
    assert_no_exception(malformed)
    # the link's text is shown only as a code span, which Markdown shows as it is (lnviz.text.quote)
    assert malformed.warning and all("<b>" not in w.value.replace("`<b>hi</b>`", "") for w in malformed.warning)


def test_a_code_that_cant_be_one_is_told_what_is_wrong_with_it(fresh_store):
    """NOPE1234 is 8 letters and digits, yet no room code: O and 1 are not in the codes' alphabet. The page names
    them, and what a code is, from the alphabet itself; a code of the wrong length is told its length."""
    at = run_page(PAGE, {"room": "NOPE1234"})
    assert_no_exception(at)
    (said,) = [w.value for w in at.warning]
    outside = [c for c in "NOPE1234" if c not in poll.CODE_ALPHABET]
    assert outside == ["O", "1"] and "`O` and `1` are in no room code" in said
    left_out = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in poll.CODE_ALPHABET]
    assert f"{poll.CODE_LENGTH} characters" in said and "but I, L and O" in said and left_out == ["I", "L", "O"]
    digits = sorted(c for c in poll.CODE_ALPHABET if c.isdigit())
    assert f"the digits {digits[0]} to {digits[-1]}" in said and "8 letters and digits" not in said
    short = run_page(PAGE)
    short.text_input(key="class_join").input("K7PM-Q2X")
    short.button(key="class_join_go").click().run()
    assert any("`K7PM-Q2X` can't be a room code: it has 7 characters." in w.value for w in short.warning)


def test_a_store_that_is_down_gets_a_banner_not_an_exception(monkeypatch):
    class Down(MemoryStore):
        def room(self, code):
            raise StoreDown("refused")

    monkeypatch.setattr(shared_store, "_store", Down())
    at = run_page(PAGE, {"room": "ABCDEFGH"})
    assert_no_exception(at)
    assert any("can't be reached" in e.value for e in at.error)


def _raw(question, picks):
    if question.kind == "choice":
        return list(picks)
    return [str(question.lo + p * (question.hi - question.lo) / 4) for p in picks]


def _value(question, pick: int) -> int | float:
    return pick if question.kind == "choice" else question.lo + pick * (question.hi - question.lo) / 4


def _answer(phone, question, pick: int) -> None:
    """A tap on choice ``pick``; for a number question, a guess typed and sent."""
    class_vote(phone, str(_value(question, pick)))


def _shown(phone, question) -> str | None:
    """The answer the phone's element is given as this voter's: the stored one, or None."""
    return class_element(phone)["mine"]["answer"]


def said(phone) -> str:
    """What the phone's element says the last vote came to ("" if nothing)."""
    return (class_element(phone)["said"] or {}).get("text", "")


def test_a_flood_of_answers_from_one_phone_is_refused_plainly_and_counted_once(fresh_store):
    _, code = presenter_opens_a_room()
    question = questions.by_id(fresh_store.room(code).question)
    phone = student(code)
    for i in range(fresh_store.limits.votes_per_rate_window + 2):
        _answer(phone, question, i % 2)
    assert "Too many answers" in said(phone)
    assert fresh_store.count(code, 0, 1) == 1


def test_redis_stopped_mid_class_gets_a_banner_and_the_vote_goes_through_once_it_is_back(monkeypatch):
    from harness import redis as redis_harness
    from server import store as store_module

    with redis_harness.running() as server:
        store = RedisStore(server.url, prefix="page:")
        monkeypatch.setattr(shared_store, "_store", store)
        _, code = presenter_opens_a_room()
        question = questions.by_id(store.room(code).question)
        phone = student(code)
        server.stop()
        _answer(phone, question, 1)
        assert any("can't be reached" in e.value for e in phone.error)
        down = run_page(PAGE, {"room": code})
        assert_no_exception(down)
        assert any("can't be reached" in e.value for e in down.error)
        server.start()  # an empty Redis: tests keep nothing on disk, so the room is gone
        loading = run_page(PAGE, {"room": code})  # but a Redis just started may still be loading it (issue 47)
        assert any("can't be reached" in e.value for e in loading.error)
        monkeypatch.setattr(store_module, "RESTART_GRACE_S", 0)
        again = run_page(PAGE, {"room": code})
        assert_no_exception(again)
        assert any("no room with this code" in w.value for w in again.warning)
        _, fresh = presenter_opens_a_room()
        phone = student(fresh)
        _answer(phone, questions.by_id(store.room(fresh).question), 1)
        assert store.count(fresh, 0, 1) == 1


def test_after_an_outage_each_phone_shows_the_answer_the_store_holds_never_a_default_and_no_vote_is_lost(monkeypatch):
    """Redis goes away mid-vote and comes back with what it held: each phone shows its stored answer, or none, and
    says so; a vote the phone could not send is not counted, and one it had sent is not lost or doubled."""
    from harness import redis as redis_harness

    with redis_harness.running() as server:
        store = RedisStore(server.url, prefix="outage:")
        monkeypatch.setattr(shared_store, "_store", store)
        presenter, code = presenter_opens_a_room()
        for kind in ("number", "choice"):  # the bank opens with a number question; Next brings a choice
            while questions.by_id(store.room(code).question).kind != kind:
                button(presenter, "next").click().run()
            room = store.room(code)
            question = questions.by_id(room.question)
            sent, silent, late = student(code), student(code), student(code)
            _answer(sent, question, 2)
            server.stop(keep=True)
            _answer(sent, question, 1)  # a change of mind that can't be sent
            _answer(late, question, 3)  # a first answer that can't be sent
            silent.run()  # a rerun that can't reach the store: no answer widget drawn
            for phone in (sent, late, silent):
                assert any("can't be reached" in e.value for e in phone.error)
            server.start()
            for phone in (sent, late, silent):
                phone.run()  # what the page's poll does once the store answers
                assert_no_exception(phone)
                assert any("store is back" in i.value for i in phone.info)
            assert _shown(sent, question) == question.parse(_value(question, 2))  # the store's, not the missed one
            assert _shown(late, question) is None and _shown(silent, question) is None  # not option A, not the min
            assert any("holds no answer" in i.value for i in late.info)
            assert list(store.votes(code, room.index, room.round).values()) == [question.parse(_value(question, 2))]
            _answer(late, question, 3)  # sent again, now counted once
            assert store.count(code, room.index, room.round) == 2


def test_a_full_redis_is_said_as_full_not_as_down_and_the_class_keeps_what_it_had(monkeypatch):
    """Redis at its maxmemory (noeviction): a phone's answer and the presenter's press are refused in words that say
    the store is full and what it kept; the answer already counted stays, and the page still draws the room."""
    import redis

    from harness import redis as redis_harness

    with redis_harness.running(args=("--maxmemory-policy", "noeviction")) as server:
        store = RedisStore(server.url, prefix="full:")
        monkeypatch.setattr(shared_store, "_store", store)
        presenter, code = presenter_opens_a_room()
        question = questions.by_id(store.room(code).question)
        first, late = student(code), student(code)
        _answer(first, question, 1)
        raw = redis.Redis.from_url(server.url)
        raw.config_set("maxmemory", raw.info("memory")["used_memory"] - 2**16)
        _answer(late, question, 2)
        assert_no_exception(late)
        assert "store is full" in said(late) and not late.error  # not the banner of a store that is down
        button(presenter, "reveal").click().run()
        assert_no_exception(presenter)
        assert any("store is full" in e.value for e in presenter.error)
        assert store.room(code).phase == "ask" and store.count(code, 0, 1) == 1


def test_a_browser_past_its_rooms_for_the_minute_is_told_so_and_no_room_is_opened(fresh_store, monkeypatch):
    from server import heavy

    monkeypatch.setattr(heavy, "client", lambda: "browser lecturer")
    for _ in range(fresh_store.limits.rooms_per_client):  # every section of the day, opened from this browser
        poll.open_room(fresh_store, ("q",), client="browser lecturer")
    at = run_page(PAGE)
    at.button(key="class_start").click().run()
    assert_no_exception(at)
    opened = f"You have opened {fresh_store.limits.rooms_per_client} rooms in the last minute"
    assert any(opened in w.value for w in at.warning)
    assert "room" not in at.query_params
    monkeypatch.setattr(heavy, "client", lambda: "browser colleague")  # another browser is not affected
    _, code = presenter_opens_a_room()
    assert fresh_store.room(code) is not None


def test_one_browser_answering_as_many_voters_is_refused_plainly_past_its_few(fresh_store, monkeypatch):
    from server import heavy

    _, code = presenter_opens_a_room()
    question = questions.by_id(fresh_store.room(code).question)
    monkeypatch.setattr(heavy, "client", lambda: "browser shared-computer")  # each phone below: a new voter cookie
    phones = [student(code) for _ in range(fresh_store.limits.voters_per_client + 1)]
    for phone in phones:
        _answer(phone, question, 1)
    assert fresh_store.count(code, 0, 1) == fresh_store.limits.voters_per_client
    assert class_element(phones[0])["said"]["kind"] == "success"
    assert "already answered as" in said(phones[-1]) and "own phone" in said(phones[-1])


def test_a_shared_devices_further_voters_take_its_addresss_places_and_the_store_keeps_only_its_hash(
    fresh_store, monkeypatch
):
    from dataclasses import replace

    from streamlit.runtime.context import ContextProxy

    from server import heavy

    _, code = presenter_opens_a_room()
    question = questions.by_id(fresh_store.room(code).question)
    monkeypatch.setattr(fresh_store, "limits", replace(fresh_store.limits, voters_per_address=2, voters_per_s=0))
    monkeypatch.setattr(ContextProxy, "ip_address", property(lambda self: "8.8.4.4"))
    monkeypatch.setattr(heavy, "client", lambda: "browser shared")  # each phone below: a new voter cookie
    phones = [student(code) for _ in range(4)]
    for phone in phones:
        _answer(phone, question, 1)
    assert fresh_store.count(code, 0, 1) == 3  # the browser's own voter, then the address's two places
    assert "from your network" in said(phones[-1])
    assert "8.8.4.4" not in repr(fresh_store._data)
    monkeypatch.setattr(heavy, "client", lambda: "browser own-phone")
    _answer(student(code), question, 1)  # a classmate's own phone, behind the same address
    monkeypatch.setattr(ContextProxy, "ip_address", property(lambda self: "10.1.2.3"))  # a proxy's, not a visitor's
    monkeypatch.setattr(heavy, "client", lambda: "browser shared")
    _answer(student(code), question, 1)
    assert fresh_store.count(code, 0, 1) == 5


def test_each_presenter_button_can_be_pressed_exactly_where_its_action_applies(fresh_store):
    presenter, code = presenter_opens_a_room()

    def pressable() -> set[str]:
        return {a for a in ("reveal", "again", "answer", "next", "close") if not button(presenter, a).disabled}

    def primary() -> str:
        (found,) = [
            b.key.split("_")[1] for b in presenter.button if b.proto.type == "primary" and b.key.startswith("class_")
        ]
        return found

    assert pressable() == {"reveal", "answer", "next", "close"} and primary() == "reveal"  # asking round 1
    for action, then, first in (
        ("reveal", {"again", "answer", "next", "close"}, "again"),  # round 1 over: ask again, show the answer, move on
        ("again", {"reveal", "answer", "next", "close"}, "reveal"),  # asking round 2
        ("reveal", {"answer", "next", "close"}, "answer"),  # round 2 over: no third round
        ("answer", {"next", "close"}, "next"),  # torch's answer: then only the next question
    ):
        button(presenter, action).click().run()
        assert_no_exception(presenter)
        assert pressable() == then, action
        assert primary() == first, action
    for _ in fresh_store.room(code).questions:
        button(presenter, "next").click().run()
    assert fresh_store.room(code).phase == "done" and pressable() == {"close"}
    button(presenter, "close").click().run()
    assert fresh_store.room(code).closed and not [b for b in presenter.button if (b.key or "").startswith("class_")]


def test_a_press_whose_store_is_down_is_said_on_the_page_not_raised(fresh_store, monkeypatch):
    presenter, code = presenter_opens_a_room()

    def down(*args, **kwargs):
        raise StoreDown("refused")

    monkeypatch.setattr(fresh_store, "act", down)
    button(presenter, "reveal").click().run()
    assert_no_exception(presenter)
    assert any("can't be reached" in e.value for e in presenter.error)
    assert fresh_store.room(code).phase == "ask"
    monkeypatch.setattr(poll, "open_room", down)
    lobby = run_page(PAGE)
    lobby.button(key="class_start").click().run()
    assert_no_exception(lobby)
    assert any("can't be reached" in e.value for e in lobby.error) and "room" not in lobby.query_params


def test_on_the_projector_a_refused_press_is_said_over_the_screen_not_above_the_buttons(fresh_store, monkeypatch):
    """In lecture mode a banner above the question pushed the buttons below a 1280 × 720 screen (seen with a full
    Redis): the press's outcome is a toast there, and a banner everywhere else."""
    from lnviz.labs.classroom import text

    at = run_page(PAGE, {"present": "1"})
    at.button(key="class_start").click().run()
    assert_no_exception(at)

    def full(*args, **kwargs):
        raise StoreFull("OOM command not allowed when used memory > 'maxmemory'")

    monkeypatch.setattr(fresh_store, "act", full)
    button(at, "reveal").click().run()
    assert_no_exception(at)
    assert [t.value for t in at.toast] == [text.FULL] and not at.error
    assert button(at, "reveal")  # the room, its buttons included, is drawn as before
    at.run()
    assert not at.toast  # said once


def test_a_phone_behind_the_room_is_told_it_moved_on_and_a_guess_out_of_range_is_refused_in_words(fresh_store):
    presenter, code = presenter_opens_a_room()
    question = questions.by_id(fresh_store.room(code).question)
    assert question.kind == "number"
    phone = student(code)
    class_vote(phone, str(question.hi + 1))
    assert said(phone) == f"{question.hi + 1:g} is outside this question's range, {question.span}: nothing was sent."
    class_vote(phone, "twelve")
    assert said(phone) == "That is not one of this question's answers."
    button(presenter, "next").click().run()
    class_vote(phone, str(_value(question, 1)), index=0, round=1)  # drawn before Next, sent after it
    assert "moved on to another question" in said(phone)
    assert fresh_store.count(code, 0, 1) == 0 and fresh_store.count(code, 1, 1) == 0
    assert class_element(phone)["room"]["index"] == 1  # the run after it draws the room as it is


def test_the_phone_element_gets_every_question_of_the_room_and_the_stream_under_the_base_path(fresh_store):
    from streamlit import config

    _, code = presenter_opens_a_room()
    room = fresh_store.room(code)
    data = class_element(student(code))
    assert data["url"] == f"/api/class/{code}/events"
    assert set(data["questions"]) == set(room.questions)  # Next is drawn from the stream alone
    assert all(entry["kind"] == questions.by_id(qid).kind for qid, entry in data["questions"].items())
    assert all(e["answer"] is None and e["why"] is None for e in data["questions"].values())  # before the reveal
    assert data["reveal_url"] == f"/api/class/{code}/reveal"
    config.set_option("server.baseUrlPath", "lnviz/")
    try:
        assert class_element(student(code))["url"] == f"/lnviz/api/class/{code}/events"
    finally:
        config.set_option("server.baseUrlPath", "")


def test_a_cells_vote_goes_through_the_page_as_a_mask_and_the_projector_counts_each_cell(fresh_store):
    """bn-mu-cells, reached by Next: a phone's taps sent as the element sends them (the hex mask, in any case) are
    stored canonical and given back to restore the taps; a mask with a bit past the last cell is refused in words;
    the reveal's text counts each tapped cell with no word of torch's, and Show answer marks torch's cells."""
    presenter, code = presenter_opens_a_room()
    room = fresh_store.room(code)
    question = questions.by_id("bn-mu-cells")
    for _ in range(room.questions.index(question.id)):
        button(presenter, "next").click().run()
    assert fresh_store.room(code).question == question.id
    phones = [student(code) for _ in range(2)]
    class_vote(phones[0], "208208")  # torch's cells: feature 3 of every sample
    class_vote(phones[1], "1" + "0" * 6)  # cell 24 of 24 cells: no such cell
    assert said(phones[1]) == "That is not one of this question's answers."
    class_vote(phones[1], "00F000")  # cells 12 to 15: sample 2's first four features
    assert sorted(fresh_store.votes(code, room.questions.index(question.id), 1).values()) == ["00f000", "208208"]
    assert _shown(phones[1], question) == "00f000"  # the element decodes it back to the taps
    button(presenter, "reveal").click().run()
    assert_no_exception(presenter)
    projected = "\n".join(t.value for t in presenter.text)
    assert "Round 1: 2 votes." in projected and "sample 2, feature 3: 2 of 2 tapped it" in projected
    assert "sample 0, feature 3: 1 of 2 tapped it" in projected and "torch" not in projected
    (chart,) = presenter.get("plotly_chart")
    assert '"heatmap"' in chart.proto.spec  # fig_cells, not fig_results' bars
    button(presenter, "answer").click().run()
    assert_no_exception(presenter)
    projected = "\n".join(t.value for t in presenter.text)
    assert "Round 1: 2 votes, 1 exactly torch's cells." in projected
    assert "sample 1, feature 3: 1 of 2 tapped it (torch's)" in projected
    assert "torch's cells: feature 3 of every sample." in projected
    assert any("Right: 1 of 2" in m.value for m in presenter.markdown)
