"""Attacks on the class poll, replayed against the proved client (issues 30 and 47): browsers opening rooms from
one address leave a lecturer behind it its room (attack 5), fresh browsers voting from one address leave a
classmate behind it its vote (attack 3), and a round stuffed from one address with 50 fresh cookies still counts
the honest votes.

The attacker's cookies are paid for as a script pays (:func:`harness.proofs.redeemed`: a challenge solved, at
the address's price); its rooms and votes go to the store as the page sends them (:func:`ui.poll.classroom.sender`'s
client and address). The honest presenter and students are AppTest sessions of the real page."""

from __future__ import annotations

import pytest
from streamlit.runtime.context import ContextProxy

from harness.apptest import assert_no_exception, class_vote, run_page
from harness.proofs import proved_client, redeemed
from lnviz.labs.classroom import questions
from server import poll, proof, who
from server import process_store as shared_store
from server import proved as server_proved
from server.limits import Limits
from server.store import COUNTED, MemoryStore

PAGE = "pages/class.py"
ATTACKER, CLASS = "8.8.4.4", "8.8.8.8"  # public addresses: the attacker's, and an honest class's NAT
LAN = "10.0.0.7"  # an address the app can't see: every such is who.UNSEEN to the poll


@pytest.fixture(autouse=True)
def fresh(monkeypatch) -> MemoryStore:
    """Today's store and price of new proofs, both fresh."""
    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    price = proof.Price(server_proved.limits.current())
    monkeypatch.setattr(server_proved, "price", lambda: price)
    return store


def from_address(monkeypatch, ip: str) -> None:
    monkeypatch.setattr(ContextProxy, "ip_address", property(lambda self: ip))


def script_clients(ip: str, n: int) -> list[str]:
    """A script that discards its cookies, paying for a new proof ``n`` times from ``ip``: the clients it is
    proved as."""
    found = [proved_client(redeemed(ip)) for _ in range(n)]
    return [c for c in found if c is not None]


def start(monkeypatch, ip: str):
    from_address(monkeypatch, ip)
    at = run_page(PAGE)
    at.button(key="class_start").click().run()
    assert_no_exception(at)
    return at


def code_of(at) -> str:
    code = at.query_params["room"]
    return code[0] if isinstance(code, list) else code


def answer(at, question, pick: int) -> None:
    """A tap on choice ``pick``, or a guess a quarter of the range further per ``pick``, as the phone's element
    sends it."""
    value = pick if question.kind == "choice" else question.lo + pick * (question.hi - question.lo) / 4
    class_vote(at, str(value))


def test_a_session_without_the_cookie_is_told_so_and_can_neither_open_a_room_join_nor_vote(proved, fresh):
    proved.forget()
    at = run_page(PAGE)
    at.button(key="class_start").click().run()
    assert_no_exception(at)
    assert [w.value for w in at.warning] == [proof.NEEDS]
    assert not fresh._data and "room" not in at.query_params
    proved.fresh()
    room, _ = poll.open_room(fresh, ("q",))
    proved.forget()
    phone = run_page(PAGE, {"room": room.code})
    assert proof.NEEDS in [w.value for w in phone.warning]
    assert not phone.get("radio") and not phone.get("number_input")  # nothing to vote with


def test_attack_5_rooms_opened_from_one_address_leave_a_lecturer_behind_it_its_room(monkeypatch, fresh):
    """Issue 47's attack 5: 60 rooms in 14 s locked the lecturer behind the same address out for the hour."""
    questions_ = tuple(q.id for q in questions.bank())
    one = proved_client(redeemed(ATTACKER))
    opened = 0
    with pytest.raises(poll.OpenRefused) as refused:
        for _ in range(1000):
            poll.open_room(fresh, questions_, one, who.counted(ATTACKER))
            opened += 1
    assert (opened, refused.value.why) == (Limits.rooms_per_client, "many")  # one browser: 5 a minute
    for client in script_clients(ATTACKER, 100):  # a script paying for a proof per room
        try:
            poll.open_room(fresh, questions_, client, who.counted(ATTACKER))
        except poll.OpenRefused as no:
            assert no.why == "network"
    at = start(monkeypatch, ATTACKER)  # the lecturer, behind the same NAT: its first room of the minute
    assert not at.warning
    assert fresh.room(code_of(at)) is not None


def test_attack_3_fresh_browsers_voting_from_one_address_leave_a_classmate_behind_it_its_vote(monkeypatch, fresh):
    """Issue 47's attack 3: 500 freshly proved browsers took an address's 500 voter places in 24 s; a classmate
    behind the same address was refused. Now each browser's first voter is its own, and one browser voting as
    many takes only the address's places, which grow as the room ages."""
    presenter = start(monkeypatch, CLASS)
    code = code_of(presenter)
    room = fresh.room(code)
    one = proved_client(redeemed(ATTACKER))
    cast = [fresh.vote(code, f"one-{i}", 0, 1, "1", one, who.counted(ATTACKER)) for i in range(600)]
    assert cast.count(COUNTED) == Limits.voters_per_client and cast[-1] == "crowded"  # 5 of 600
    for n, client in enumerate(script_clients(ATTACKER, 500)):
        assert fresh.vote(code, f"script-{n}", 0, 1, "1", client, who.counted(ATTACKER)) == COUNTED
    from_address(monkeypatch, ATTACKER)
    phone = run_page(PAGE, {"room": code})  # an honest classmate, behind the same NAT
    answer(phone, questions.by_id(room.question), 0)
    assert not phone.warning
    assert fresh.count(code, 0, 1) == Limits.voters_per_client + 500 + 1


def test_a_round_stuffed_from_one_address_with_50_fresh_cookies_still_counts_its_honest_class(
    monkeypatch, fresh, proved
):
    presenter = start(monkeypatch, ATTACKER)  # the lecturer is behind the same NAT as the script
    code = code_of(presenter)
    question = questions.by_id(fresh.room(code).question)
    clients = script_clients(ATTACKER, 50)
    assert len(clients) == 50
    for n, client in enumerate(clients):
        for i in range(20):  # each tries 20 voter ids
            fresh.vote(code, f"stuffer-{n}-{i}", 0, 1, "0", client, who.counted(ATTACKER))
    stuffed = fresh.count(code, 0, 1)
    assert 50 + Limits.voters_per_address <= stuffed < 50 + Limits.voters_per_address + 60  # the room is young
    honest = []
    for ip in (ATTACKER, ATTACKER, CLASS, LAN):  # students behind the same NAT, and elsewhere, a phone each
        from_address(monkeypatch, ip)
        proved.fresh()
        phone = run_page(PAGE, {"room": code})
        answer(phone, question, 1)
        assert not phone.warning, [w.value for w in phone.warning]
        honest.append(phone)
    votes = fresh.votes(code, 0, 1)
    assert len(votes) == stuffed + 4 < Limits.max_voters  # every honest vote counted; the round still open
    assert len(set(votes.values())) == 2  # the stuffers' answer and the class's


def test_trying_room_codes_is_limited_per_browser_and_per_address_and_a_class_joining_by_its_code_spends_none(
    monkeypatch, fresh, proved
):
    from dataclasses import replace

    from server.quota import CodeTries
    from ui.poll import classroom

    tries = CodeTries(replace(Limits(), code_misses_per_client=2, code_misses_per_address=3))
    monkeypatch.setattr(classroom, "_code_tries", lambda: tries)
    room, _ = poll.open_room(fresh, ("q",))
    from_address(monkeypatch, ATTACKER)
    for _ in range(3):
        assert classroom.TRIES[:20] not in " ".join(w.value for w in run_page(PAGE, {"room": room.code}).warning)
    for guess in ("AAAAAAAA", "BBBBBBBB"):
        assert poll.REFUSED["unknown"] in run_page(PAGE, {"room": guess}).warning[0].value
    (refused,) = run_page(PAGE, {"room": room.code}).warning  # the right code too, now
    assert refused.value.startswith("Too many codes that open no room") and "try again in" in refused.value
    proved.fresh()  # a new cookie from the same address: one miss left there
    assert poll.REFUSED["unknown"] in run_page(PAGE, {"room": "CCCCCCCC"}).warning[0].value
    assert run_page(PAGE, {"room": "DDDDDDDD"}).warning[0].value.startswith("Too many codes that open no room")
    from_address(monkeypatch, CLASS)
    proved.fresh()
    assert not run_page(PAGE, {"room": room.code}).warning  # elsewhere, the class joins
