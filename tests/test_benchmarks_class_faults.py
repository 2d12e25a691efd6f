"""benchmarks/class_faults.py's and benchmarks/vote_route.py's own parts, without a long run: votes lost or doubled
counted against what each phone last confirmed, what a page run's messages say (confirmed, the voter cookie, the
store's banner), the element's vote as harness/apptest.py sends it, and the throwaway vote route's limits."""

from __future__ import annotations

import asyncio
import json
import time

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks import class_faults, vote_route
from benchmarks.class_faults import Phone, count
from harness import aio
from lnviz.labs.classroom import text
from server import poll
from server import process_store as shared_store
from server.store import MemoryStore


def _phone(name: str, voters: list[str], confirmed: list[str]) -> Phone:
    return Phone(name, plan=list(confirmed), voters=voters, confirmed=confirmed)


def test_no_fault_when_the_store_holds_each_phones_last_confirmed_answer():
    phones = [_phone("a", ["va"], ["0", "2"]), _phone("b", ["vb"], ["1"])]
    found = count(phones, {"va": "2", "vb": "1"})
    assert (found.lost, found.doubled, found.unconfirmed) == ([], 0, 0)
    assert found.expected == found.held == {"1": 1, "2": 1}
    assert found.passed


def test_a_phone_whose_last_confirmed_answer_is_missing_or_replaced_by_an_older_one_is_lost():
    phones = [_phone("a", ["va"], ["0", "2"]), _phone("b", ["vb"], ["1"]), _phone("c", ["vc"], ["3"])]
    found = count(phones, {"va": "0", "vc": "3"})  # a's change of mind undone, b's answer gone
    assert found.lost == ["a", "b"]
    assert found.doubled == 0 and not found.passed


def test_a_phone_that_came_back_as_a_new_voter_with_both_answers_held_is_doubled_and_so_is_a_stranger():
    phones = [_phone("a", ["va", "va2"], ["0", "1"]), _phone("b", ["vb"], ["2"])]
    found = count(phones, {"va": "0", "va2": "1", "vb": "2", "someone": "3"})
    assert found.lost == [] and found.doubled == 2
    assert found.held == {"0": 1, "1": 1, "2": 1, "3": 1} != found.expected
    assert not found.passed
    assert count(phones, {"va2": "1", "vb": "2"}).passed  # a new voter id, its old one holding nothing: no fault


def test_a_phone_with_no_confirmed_answer_is_a_miss():
    found = count([_phone("a", ["va"], []), _phone("b", ["vb"], ["1"])], {"vb": "1"})
    assert found.unconfirmed == 1 and found.lost == [] and not found.passed


def _run(*elements: tuple[str, str, dict]) -> list[ForwardMsg]:
    """A page run's messages drawing ``elements``: (kind, name, data), kind "bidi" or "alert"."""
    run = []
    for kind, name, data in elements:
        msg = ForwardMsg()
        if kind == "bidi":
            msg.delta.new_element.bidi_component.component_name = name
            msg.delta.new_element.bidi_component.id = f"id-{name}"
            msg.delta.new_element.bidi_component.json = json.dumps(data)
        else:
            msg.delta.new_element.alert.body = name
        run.append(msg)
    return run


class _Session:
    def __init__(self, run: list[ForwardMsg]) -> None:
        self.run = run


def test_a_runs_last_element_the_voter_cookie_it_sets_and_the_stores_banner_are_read_from_its_messages():
    mine = {"room": {"index": 0, "round": 2}, "mine": {"answer": "1"}, "said": {"kind": "success", "text": text.SENT}}
    cookies = {"cookies": [["lnviz_voter", "v" * 22, 43200], ["lnviz_host", "CODE.secret", 43200]]}
    session = _Session(
        _run(
            ("bidi", "lnviz.class", {"room": {}}), ("bidi", "lnviz.class", mine), ("bidi", "ui.lnviz_cookies", cookies)
        )
    )
    assert json.loads(class_faults.bidi(session, "lnviz.class").json) == mine
    assert class_faults.bidi(session, "lnviz.stage") is None
    phone = Phone("a", [])
    class_faults.note(phone, session)
    assert phone.cookies["lnviz_voter"] == phone.voters[-1] == "v" * 22 and phone.downs == 0
    down = _Session(_run(("alert", text.DOWN, {})))
    class_faults.note(phone, down)
    assert phone.downs == 1 and phone.voters == ["v" * 22]


def test_a_vote_is_confirmed_only_when_the_page_says_sent_and_holds_that_answer():
    sent = {"said": {"kind": "success", "text": text.SENT}, "mine": {"answer": "2"}}
    assert class_faults.confirmed(sent, "2")
    assert not class_faults.confirmed(sent, "1")  # the store holds another answer
    assert not class_faults.confirmed({**sent, "said": {"kind": "warning", "text": "moved"}}, "2")
    assert not class_faults.confirmed({"said": None, "mine": {"answer": "2"}}, "2")  # the run after a reconnect


def test_the_elements_vote_is_the_trigger_harness_apptest_sends_for_the_round_it_drew():
    (msg,) = _run(("bidi", "lnviz.class", {"room": {"index": 3, "round": 2}}))
    state = class_faults.vote_state(msg.delta.new_element.bidi_component, "1", 7)
    assert state.id == _make_trigger_id("id-lnviz.class", "events")
    assert json.loads(state.json_trigger_value) == [
        {"event": "vote", "value": {"index": 3, "round": 2, "answer": "1", "n": 7}}
    ]


def test_the_route_poster_sends_origin_cookies_and_json_and_reads_a_framed_answer():
    async def main() -> tuple[list[bytes], list[tuple[int, dict]]]:
        got: list[bytes] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            for _ in range(2):  # two requests on one kept-alive connection
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                got.append(head + await reader.readexactly(length))
                body = b'{"outcome": "counted"}'
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        poster = vote_route.Poster(server.sockets[0].getsockname()[1], {"lnviz_proof": "p", "lnviz_voter": "v"})
        answers = [await poster.post("/api/class/X/vote", {"answer": str(i)}) for i in range(2)]
        await poster.close()
        server.close()
        return got, answers

    got, answers = aio.run(main())
    assert answers == [(200, {"outcome": "counted"})] * 2
    assert got[0].startswith(b"POST /api/class/X/vote HTTP/1.1\r\n")
    assert b"Cookie: lnviz_proof=p; lnviz_voter=v\r\n" in got[0] and b"Origin: http://127.0.0.1:" in got[0]
    assert got[1].endswith(b'{"answer": "1"}')


def _post(code: str, body: dict, cookies: dict[str, str], origin: str = "http://app") -> tuple[int, dict]:
    """The throwaway route's answer to a POST from 127.0.0.1 with ``cookies``, straight through Starlette."""
    from starlette.requests import Request

    raw = json.dumps(body).encode()
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    scope = {
        "type": "http",
        "method": "POST",
        "path": f"/api/class/{code}/vote",
        "path_params": {"code": code},
        "headers": [(b"host", b"app"), (b"origin", origin.encode()), (b"cookie", cookie.encode())],
        "client": ("127.0.0.1", 5000),
        "query_string": b"",
    }

    async def receive() -> dict:
        return {"type": "http.request", "body": raw, "more_body": False}

    response = aio.run(vote_route.vote(Request(scope, receive)))
    return response.status_code, json.loads(response.body)


def test_the_throwaway_vote_route_keeps_the_proof_the_voter_cookie_the_origin_and_once_per_voter(monkeypatch):
    from server import proof
    from server import proved as server_proved

    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    room, _ = poll.open_room(store, class_faults.QUESTIONS)
    proved = {proof.COOKIE: proof.mint(server_proved.secret(), time.time()), "lnviz_voter": "v" * 22}
    vote = {"index": 0, "round": 1, "answer": "2"}
    assert _post(room.code, vote, proved) == (200, {"outcome": "counted"})
    assert _post(room.code, {**vote, "answer": "1"}, proved) == (200, {"outcome": "changed"})
    assert store.votes(room.code, 0, 1) == {"v" * 22: "1"}
    assert _post(room.code, vote, proved, origin="http://elsewhere")[0] == 403
    assert _post(room.code, vote, {"lnviz_voter": "w" * 22}) == (403, {"outcome": "proof"})
    assert _post(room.code, vote, {**proved, "lnviz_voter": "short"})[0] == 400
    assert _post(room.code, {**vote, "round": 2}, proved) == (200, {"outcome": "moved"})
    assert _post(room.code, {**vote, "answer": "9"}, proved) == (200, {"outcome": "bad"})
    assert store.votes(room.code, 0, 1) == {"v" * 22: "1"}


def test_the_reveals_counts_are_read_from_the_first_room_event_of_a_fresh_stream():
    state = {"phase": "reveal", "rounds": [{"0": 2, "1": 1}]}
    body = f": ping\r\n\r\nevent: room\r\nid: 3.3\r\ndata: {json.dumps(state)}\r\n\r\n".encode()

    async def main() -> tuple[dict, bytes]:
        got: list[bytes] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            got.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            writer.write(f"{len(body):x}\r\n".encode() + body + b"\r\n")
            await writer.drain()
            await asyncio.sleep(5)  # a stream stays open: the reader stops at the first room event
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        found = await asyncio.wait_for(asyncio.to_thread(class_faults.first_state, base, "X", "k"), 4)
        server.close()
        return found, got[0]

    found, request = aio.run(main())
    assert found == state
    assert request.startswith(b"GET /api/class/X/events HTTP/1.1\r\n") and b"lnviz_route=k" in request
