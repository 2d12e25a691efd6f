"""The concept check on /class in AppTest (issue 49): a presenter and simulated phones, each its own session and
its own proved browser, through one room's check before and after the lecture; the projector's table and the CSV
against the normalized gain computed here, in plain Python, from the answers the phones sent."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
from streamlit.components.v2.bidi_component.main import _make_trigger_id

from harness.apptest import assert_no_exception, class_element, run_page
from lnviz.labs.classroom import check as items
from server import check
from server import process_store as shared_store
from server.store import MemoryStore
from ui.poll import concept_check

PAGE = "pages/class.py"
_numbers = iter(range(1, 10**6))


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch) -> MemoryStore:
    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    return store


class Phone:
    """A student's phone: its own session (so its own voter id) and its own proved browser."""

    def __init__(self, proved, code: str) -> None:
        self.proved = proved
        proved.fresh()
        self.cookies = dict(proved.cookies)
        self.at = run_page(PAGE, {"room": code})
        assert_no_exception(self.at)

    def answer(self, phase: str, item: str, choice: int) -> str:
        """A tap on option ``choice`` of ``item``, as the element sends it (its trigger value ``check``); what the
        page says it came to."""
        self.proved.cookies = self.cookies
        (found,) = [e for e in self.at.get("bidi_component") if e.proto.component_name == "lnviz.class"]
        states = self.at._tree.get_widget_states()
        state = states.widgets.add()
        state.id = _make_trigger_id(found.proto.id, "events")
        sent = {"phase": phase, "item": item, "answer": str(choice), "n": next(_numbers)}
        state.json_trigger_value = json.dumps([{"event": "check", "value": sent}])
        self.at._run(states)
        assert_no_exception(self.at)
        return (class_element(self.at)["check"]["said"] or {}).get("text", "")

    @property
    def voter(self) -> str:
        return self.at.session_state["class_voter"]


def press(presenter, action: str) -> None:
    (button,) = [b for b in presenter.button if (b.key or "").startswith(f"class_{action}_v")]
    button.click().run()
    assert_no_exception(presenter)


def hand_gain(pre: dict, post: dict, right: dict, qids: list[str]) -> tuple[float | None, int]:
    """g on the pairs of ``qids``, and the number of voters with a pair, as a person computes them."""
    pairs = before = after = 0
    voters = set()
    for voter, answers in pre.items():
        for qid in qids:
            if qid in answers and qid in post.get(voter, {}):
                pairs += 1
                voters.add(voter)
                before += answers[qid] == right[qid]
                after += post[voter][qid] == right[qid]
    if pairs == 0 or before == pairs:
        return None, len(voters)
    return (after / pairs - before / pairs) / (1 - before / pairs), len(voters)


def test_a_check_before_and_after_by_simulated_phones_gives_the_gain_a_hand_computation_gives(fresh_store, proved):
    presenter = run_page(PAGE)
    presenter.button(key="class_start").click().run()
    code = presenter.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    presenter_cookies = dict(proved.cookies)
    presenter.button_group(key=concept_check.VIEW).set_value("check").run()
    assert any(f"{len(items.items())} questions on what LN and BN do" in m.value for m in presenter.markdown)
    press(presenter, check.OPEN)
    assert fresh_store.room(code).check == "pre"

    rng = random.Random(49)
    qids = [q.id for q in items.items()]
    right = {q.id: q.answer for q in items.items()}  # torch's, checked in tests/test_check.py
    phones = [Phone(proved, code) for _ in range(7)]
    entries = class_element(phones[0].at)["check"]["items"]
    assert [e["id"] for e in entries] == qids and all(e["answer"] is None and e["why"] is None for e in entries)
    plan = {"pre": [0, 1, 2, 3, 4, 5], "post": [0, 1, 2, 3, 4, 6]}  # phone 5 answers before only, phone 6 after
    sent: dict[str, dict[str, dict[str, int]]] = {"pre": {}, "post": {}}
    for phase in check.PHASES:
        for k in plan[phase]:
            phone = phones[k]
            for qid in qids[1:] if k == 3 else qids:  # phone 3 leaves the first item out
                choices = len(items.by_id(qid).choices)
                if rng.random() < 0.3:  # a first thought, changed
                    assert phone.answer(phase, qid, rng.randrange(choices)) == "Saved."
                choice = right[qid] if rng.random() < (0.35 if phase == "pre" else 0.75) else rng.randrange(choices)
                assert phone.answer(phase, qid, choice) == "Saved."
                sent[phase].setdefault(phone.voter, {})[qid] = choice
        proved.cookies = presenter_cookies
        presenter.run()
        press(presenter, check.CLOSE)
        assert "closed this concept check" in phones[0].answer(phase, qids[0], 0)  # too late: not taken
        if phase == "pre":
            assert "not open" in phones[6].answer("post", qids[0], 0)  # too early: not taken either
            proved.cookies = presenter_cookies
            press(presenter, check.OPEN)

    proved.cookies = presenter_cookies
    presenter.run()
    assert fresh_store.room(code).check == "post-closed"
    (table,) = presenter.table
    rows = table.value.to_dict("records")
    assert len(rows) == len(qids) + 1
    for row, qid in zip(rows, [*[[q] for q in qids], qids], strict=True):
        g, voters = hand_gain(sent["pre"], sent["post"], right, qid)
        assert row["g"] == ("undefined" if g is None else f"{g:.2f}".replace("-", "\u2212")), (qid, row)
        assert row["Pairs"].rstrip(" *") == str(voters)
    one = qids[0]
    answered = [answers[one] for answers in sent["pre"].values() if one in answers]
    expected = f"{round(100 * sum(a == right[one] for a in answered) / len(answered))} % of {len(answered)}"
    assert rows[0]["Before"] == expected

    csv_text = items.to_csv(concept_check.results_of(code))  # what the download button is given
    assert not any(phone.voter in csv_text for phone in phones)
    for row, qid in zip(csv.DictReader(io.StringIO(csv_text)), [*[[q] for q in qids], qids], strict=True):
        g, _ = hand_gain(sent["pre"], sent["post"], right, qid)
        assert (row["g"] == "") if g is None else float(row["g"]) == pytest.approx(g, abs=1e-4)
    (download,) = presenter.download_button
    assert download.label == "The counts as CSV"


def test_the_projectors_view_follows_the_checks_steps_and_a_phone_sees_no_results(fresh_store, proved):
    presenter = run_page(PAGE)
    presenter.button(key="class_start").click().run()
    code = presenter.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    assert presenter.button_group(key=concept_check.VIEW).value == "questions"  # the check not run yet
    secret = presenter.session_state["class_secret"]["secret"]
    room = fresh_store.act(code, secret, check.OPEN, fresh_store.room(code).version)  # from another tab
    presenter.run()
    assert presenter.button_group(key=concept_check.VIEW).value == "check"
    assert any("answer on your phone" in m.value for m in presenter.markdown)
    assert not presenter.table  # no results while the phase is open
    presenter.button_group(key=concept_check.VIEW).set_value("questions").run()  # the presenter's own choice
    assert not any("answer on your phone" in m.value for m in presenter.markdown)
    presenter.run()
    assert presenter.button_group(key=concept_check.VIEW).value == "questions"  # kept while the step stays
    fresh_store.act(code, secret, check.CLOSE, room.version)
    presenter.run()
    assert presenter.button_group(key=concept_check.VIEW).value == "check"
    phone = Phone(proved, code)
    data = class_element(phone.at)
    assert data["room"]["check"] == {"step": "pre-closed", "voters": 0, "answers": 0}
    assert data["check"]["mine"] == {"phase": None, "answers": {}, "n": None}
    assert all(e["answer"] is None for e in data["check"]["items"])  # after the check too: no answer is sent
