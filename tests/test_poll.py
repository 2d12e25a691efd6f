"""server.poll: the class poll's rules that need no store of their own: a room's code, read leniently from a
link, a collision drawn again, and the join link's QR code. The rules a store applies (rounds, refusals, limits)
are tested on both backends in tests/test_store.py."""

from __future__ import annotations

from dataclasses import replace

from server import poll
from server.limits import Limits
from server.store import MemoryStore

QUESTIONS = ("q-one", "q-two")


def test_codes_are_39_bits_of_an_unambiguous_alphabet_and_links_are_read_leniently():
    assert len(poll.CODE_ALPHABET) ** poll.CODE_LENGTH > 2**38
    assert not set("01OIL") & set(poll.CODE_ALPHABET)
    code = poll.new_code()
    assert poll.valid_code(code.lower()) == code
    assert poll.valid_code(f"{code[:4]}-{code[4:]}") == code
    for bad in ("", "ABC", "ABCDEFG0", None, 12345678, "A" * 9, "<script>", "ABCD EFG" * 10):
        assert poll.valid_code(bad) is None


def test_a_collision_draws_another_code(monkeypatch):
    store = MemoryStore()
    taken, _ = poll.open_room(store, QUESTIONS)
    draws = iter([taken.code, "ZZZZZZZZ"])
    monkeypatch.setattr(poll, "new_code", lambda: next(draws))
    room, _ = poll.open_room(store, QUESTIONS)
    assert room.code == "ZZZZZZZZ" and store.room(taken.code) == taken


def test_the_join_links_qr_code_is_a_self_contained_svg_on_a_white_ground():
    from lnviz.figures.qr import qr_svg

    svg = qr_svg("https://lnviz.example/class?room=K7PMQ2XD")
    assert svg.startswith("<svg") and 'xmlns="http://www.w3.org/2000/svg"' in svg
    assert "href" not in svg and "http://www.w3.org/2000/svg" in svg  # nothing fetched from elsewhere
    assert "#fff" in svg.lower() and "<title>" in svg
    assert qr_svg("a") != qr_svg("b")


def test_the_join_links_qr_code_is_drawn_once_per_link(monkeypatch):
    from lnviz.figures import qr

    drawn = []
    make = qr.segno.make
    monkeypatch.setattr(qr.segno, "make", lambda *a, **k: drawn.append(a) or make(*a, **k))
    qr.qr_svg.cache_clear()
    first = qr.qr_svg("https://lnviz.example/class?room=ABCDEFGH")
    assert qr.qr_svg("https://lnviz.example/class?room=ABCDEFGH") is first
    qr.qr_svg("https://lnviz.example/class?room=HGFEDCBA")
    assert len(drawn) == 2


def test_a_refusals_sentence_names_the_number_its_limits_hold():
    small = replace(Limits(), voters_per_client=2, rooms_per_client=3, rooms_per_address=4, max_hosts=1)
    for table in (poll.REFUSED, poll.OPEN_REFUSED, poll.TAKE_REFUSED):
        assert all("{" not in poll.said(table, why, Limits()) for why in table)  # every number filled in
    assert "as 2 different voters" in poll.said(poll.REFUSED, "crowded", small)
    assert poll.said(poll.OPEN_REFUSED, "many", small).startswith("You have opened 3 rooms")
    assert poll.said(poll.OPEN_REFUSED, "network", small).startswith("4 rooms")
    assert "from 1 further devices" in poll.said(poll.TAKE_REFUSED, "many", small)
    assert str(poll.OpenRefused("many", small)) == poll.said(poll.OPEN_REFUSED, "many", small)
