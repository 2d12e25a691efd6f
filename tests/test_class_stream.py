"""The class stream (``GET /api/class/{code}/events``, ui/poll/routes.py; server/events.py).

First the pure parts: a room's public state (never a choice before the reveal, never the secret), the hub that
reads each room once per look whatever its subscribers, drops a subscriber that falls behind, and ends the
streams of a room that closes or expires; the gate's limits. Then the route itself, served by uvicorn on a port
of the OS's choosing from the process's in-memory store (as ``make run`` has it): a phone's stream sees the
room at once, a vote's count, the reveal with its counts, then torch's answer, a reconnect's state at once, the
close and its end, `gone` for an unknown room, and a 429 with its sentence past a browser's limit.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from urllib.parse import urlsplit

import pytest
import uvicorn
from starlette.applications import Starlette

from harness import aio
from lnviz.labs.classroom.questions import by_id
from server import events, poll, process_store, proof, proved
from server.limits import Limits, StoreDown
from server.store import MemoryStore
from ui.poll import routes

QUESTIONS = ("bn-one-sample", "ln-cell")


def _revealed(room: poll.Room, answer: bool) -> tuple[list[dict[str, int]], str | None, str | None]:
    """A stand-in for ui.poll.routes.revealed that gives torch's answer and the outcome whether asked for them or not: the
    state must leave them out itself before the presenter shows the answer."""
    return [{"0": 1, "1": 0}], "TORCH", "OUTCOME"


class CountingStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def room(self, code: str) -> poll.Room | None:
        self.reads += 1
        return super().room(code)


def _opened(store: MemoryStore) -> tuple[poll.Room, str]:
    return poll.open_room(store, QUESTIONS)


def test_the_state_before_the_reveal_has_no_choice_and_never_the_secret_or_a_voter():
    store = MemoryStore()
    room, secret = _opened(store)
    store.vote(room.code, "voter-abc", 0, 1, "1")
    public = events.state(*events.look(store, room.code), _revealed)
    assert public == {
        "code": room.code,
        "version": 0,
        "phase": "ask",
        "closed": False,
        "index": 0,
        "questions": 2,
        "question": "bn-one-sample",
        "round": 1,
        "answers": 1,
        "hidden": False,
        "rounds": None,
        "answer": None,
        "check": {"step": "", "voters": 0, "answers": 0},
        "outcome": None,
    }
    assert events.event_id(public) == "0.1"
    text = json.dumps(public)
    assert secret not in text and room.secret_sha not in text and "voter-abc" not in text
    revealed = store.act(room.code, secret, "reveal", 0)
    shown = events.state(revealed, 1, _revealed)
    assert (shown["phase"], shown["rounds"], shown["answer"]) == ("reveal", [{"0": 1, "1": 0}], None)
    assert "TORCH" not in json.dumps(shown) and "OUTCOME" not in json.dumps(shown)  # peer instruction: not yet
    hidden = events.state(store.act(room.code, secret, "hide", 1), 1, _revealed)
    assert hidden["hidden"] and hidden["rounds"] is None and hidden["answer"] is None  # only that the round is over
    answered = events.state(store.act(room.code, secret, "answer", 2), 1, _revealed)
    assert (answered["rounds"], answered["answer"], answered["outcome"]) == ([{"0": 1, "1": 0}], "TORCH", "OUTCOME")


def test_the_routes_reveal_is_rounds_of_the_store_then_torchs_answer_and_the_shift_paired_by_voter(monkeypatch):
    store = MemoryStore()
    monkeypatch.setattr(process_store, "_store", store)
    room, secret = _opened(store)
    question = by_id("bn-one-sample")
    right = str(question.answer)
    first = {"a": "0", "b": "2", "c": right, "d": "2"}  # one right of four
    second = {"a": right, "b": right, "c": "1", "e": right}  # a and b moved to it, c away, d silent, e new
    for voter, choice in first.items():
        store.vote(room.code, voter, 0, 1, choice)
    room = store.act(room.code, secret, "reveal", 0)
    rounds, answer, outcome = routes.revealed(room, False)
    assert rounds == [{str(i): sum(v == str(i) for v in first.values()) for i in range(4)}]
    assert answer is None and outcome is None
    room = store.act(room.code, secret, "again", 1)
    for voter, choice in second.items():
        store.vote(room.code, voter, 0, 2, choice)
    room = store.act(room.code, secret, "answer", 2)
    rounds, answer, outcome = routes.revealed(room, True)
    assert len(rounds) == 2 and answer == right == "3"
    assert outcome == (
        "Right in round 1: 1 of 4 (25\u00a0%); in round 2: 3 of 4 (75\u00a0%). "
        "Of the 3 who answered both rounds, 2 moved to torch's answer and 1 away from it."
    )


def _hub(store: MemoryStore, **limits: int) -> events.Hub:
    return events.Hub(lambda: store, _revealed, replace(Limits(), **limits), look_s=3600)


def test_the_hub_reads_a_room_once_a_look_for_all_its_subscribers_and_sends_only_changes():
    async def main() -> None:
        store = CountingStore()
        room, secret = _opened(store)
        hub = _hub(store)
        loop = asyncio.get_running_loop()
        subs = [hub.subscribe(room.code, loop) for _ in range(50)]
        store.reads = 0
        hub.look_all()
        await asyncio.sleep(0)  # the loop runs the hand-overs the look scheduled
        assert store.reads == 1
        assert [[e["version"] for e in s.pending] for s in subs] == [[0]] * 50
        for s in subs:
            await s.next()
        hub.look_all()  # nothing changed: nothing sent
        await asyncio.sleep(0)
        assert all(not s.pending for s in subs)
        store.vote(room.code, "v1", 0, 1, "0")
        hub.look_all()
        await asyncio.sleep(0)
        assert [e["answers"] for e in subs[0].pending] == [1]
        store.act(room.code, secret, "reveal", 0)
        hub.look_all()
        await asyncio.sleep(0)
        assert [e["phase"] for e in subs[7].pending] == ["ask", "reveal"]
        assert store.reads == 4 and hub.subscribers() == 50

    aio.run(main())


def test_a_subscriber_that_falls_behind_is_dropped_and_a_closed_or_expired_room_ends_the_streams():
    async def main() -> None:
        store = MemoryStore()
        room, secret = _opened(store)
        hub = _hub(store, stream_queue=2)
        loop = asyncio.get_running_loop()
        slow, quick = hub.subscribe(room.code, loop), hub.subscribe(room.code, loop)
        for i in range(3):
            store.vote(room.code, f"v{i}", 0, 1, "0")
            hub.look_all()
            await asyncio.sleep(0)
            assert len(await quick.next()) == 1
        assert slow.dropped and await slow.next() == []  # its stream ends; its browser reconnects
        store.act(room.code, secret, "close", 0)
        hub.look_all()
        await asyncio.sleep(0)
        assert [e["closed"] for e in await quick.next()] == [True]
        assert hub.subscribers() == 0  # the hub let the closed room go
        other, _ = _opened(store)
        gone = hub.subscribe(other.code, loop)
        store._data.clear()  # the room expired
        hub.look_all()
        await asyncio.sleep(0)
        assert await gone.next() == [events.GONE]

    aio.run(main())


def test_the_gate_keeps_a_browsers_first_stream_counted_against_the_process_alone_and_lifts_with_the_limits_off():
    lim = replace(Limits(), streams_per_client=3, streams_per_address=2, subscribers=7, streams_kept_first=2)
    gate = events.Gate(lim)
    assert [gate.enter("proved a", "address x") for _ in range(4)] == [None, None, None, "client"]
    assert gate.enter("proved b", "address x") is None  # its first: the address's further streams don't count
    assert gate.enter("proved b", "address x") == "address"  # its second: x holds 2 further streams already
    assert gate.enter("proved c", "address y") is None
    assert gate.enter("proved c", "address y") == "server"  # a further stream may not take the places kept
    assert [gate.enter(f"proved {n}", "address x") for n in "def"] == [None, None, "server"]  # firsts take them
    gate.leave("proved a", "address x")
    assert gate.enter("proved f", "address x") is None
    lifted = events.Gate(Limits.off())
    assert all(lifted.enter("proved a", "address x") is None for _ in range(100))
    assert set(events.REFUSED) == {"client", "address", "server", "proof"}


# The route, served ---------------------------------------------------------------------------------------------


@pytest.fixture
def served(monkeypatch) -> Iterator[tuple[int, MemoryStore]]:
    """ui/poll/routes.py's routes served by uvicorn from an in-memory store, with fresh hub and gate, a quick look."""
    store = MemoryStore()
    monkeypatch.setattr(process_store, "_store", store)
    lim = replace(Limits(), streams_per_client=2)
    hub = events.Hub(process_store.store, _revealed, lim, look_s=0.05)
    monkeypatch.setattr(routes, "hub", lambda: hub)
    gate = events.Gate(lim)
    monkeypatch.setattr(routes, "gate", lambda: gate)
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes.routes()), port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        threading.Event().wait(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield port, store
    finally:
        server.should_exit = True
        thread.join(10)


class Stream:
    """One stream read as a browser's EventSource would: event by event (comments skipped). ``url``: the server's
    (``http://127.0.0.1:PORT``, with a path if served under one); ``headers``: the request's, its cookies, say."""

    def __init__(self, url: str, code: str, cookie: str = "", headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        sent = {**({"Cookie": cookie} if cookie else {}), **(headers or {})}
        self.conn.request("GET", f"{parts.path.rstrip('/')}/api/class/{code}/events", headers=sent)
        self.response = self.conn.getresponse()

    def event(self) -> dict[str, str] | None:
        """The next event's fields (event, id, data), or None at the stream's end."""
        fields: dict[str, str] = {}
        while True:
            line = self.response.readline()
            if not line:
                return None
            line = line.decode().rstrip("\r\n")
            if not line:
                if fields:
                    return fields
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")

    def events(self) -> Iterator[dict[str, str]]:
        while (event := self.event()) is not None:
            yield event

    def close(self) -> None:
        self.conn.close()


class Follower(threading.Thread):
    """A stream read on a thread of its own, each event put on :attr:`seen` as it comes (None at the end), so a
    test can drive a browser meanwhile."""

    def __init__(self, url: str, code: str, cookie: str = "") -> None:
        super().__init__(daemon=True)
        self.stream = Stream(url, code, cookie)
        self.seen: queue.Queue[dict | None] = queue.Queue()
        self.start()

    def run(self) -> None:
        try:
            for event in self.stream.events():
                self.seen.put(event)
        except (OSError, AttributeError, ValueError):  # closed under it (http.client drops its file)
            pass
        self.seen.put(None)

    def until(self, test, timeout: float = 30.0) -> dict:
        """The first event's data (a ``room`` event's JSON) for which ``test`` holds, within ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            event = self.seen.get(timeout=max(0.01, deadline - time.monotonic()))
            assert event is not None, "the stream ended"
            data = json.loads(event["data"])
            if test(data):
                return data


def _data(event: dict[str, str] | None) -> dict:
    assert event is not None and event["event"] == "room", event
    return json.loads(event["data"])


def _cookie() -> str:
    """A new proved browser's cookie, signed as this process's :mod:`server.proved` signs one."""
    return f"{proof.COOKIE}={proof.mint(proved.secret(), time.time())}"


def test_a_stream_sees_the_room_at_once_then_a_vote_the_reveal_the_answer_and_the_close_then_ends(served):
    port, store = served
    room, secret = _opened(store)
    phone = Stream(f"http://127.0.0.1:{port}", room.code, _cookie())
    assert phone.response.status == 200
    assert phone.response.getheader("content-type").startswith("text/event-stream")
    first = phone.event()
    assert first["id"] == "0.0" and _data(first)["phase"] == "ask"
    store.vote(room.code, "v1", 0, 1, "0")
    assert _data(phone.event())["answers"] == 1
    store.act(room.code, secret, "reveal", 0)
    shown = phone.event()
    assert shown["id"] == "1.1" and _data(shown)["rounds"] == [{"0": 1, "1": 0}] and _data(shown)["answer"] is None
    store.act(room.code, secret, "answer", 1)
    answered = _data(phone.event())
    assert (answered["phase"], answered["answer"], answered["outcome"]) == ("answer", "TORCH", "OUTCOME")
    again = Stream(f"http://127.0.0.1:{port}", room.code, _cookie(), {"Last-Event-ID": "2.1"})  # a reconnect: at once
    assert _data(again.event())["phase"] == "answer"
    store.act(room.code, secret, "close", 2)
    assert _data(phone.event())["closed"] is True
    assert phone.event() is None  # the end
    assert _data(again.event())["closed"] is True and again.event() is None
    phone.close()
    again.close()


def test_an_unknown_room_is_gone_and_a_browser_past_its_streams_is_refused_in_a_sentence(served):
    port, store = served
    gone = Stream(f"http://127.0.0.1:{port}", "ABCDEFGH", _cookie())
    event = gone.event()
    assert event["event"] == "gone" and json.loads(event["data"])["message"] == poll.REFUSED["unknown"]
    assert gone.event() is None
    room, _ = _opened(store)
    cookie = _cookie()
    held = [Stream(f"http://127.0.0.1:{port}", room.code, cookie) for _ in range(2)]
    assert all(_data(s.event())["code"] == room.code for s in held)
    refused = Stream(f"http://127.0.0.1:{port}", room.code, cookie)
    assert refused.response.status == 429
    assert refused.response.read().decode() == events.REFUSED["client"]
    assert refused.response.getheader("retry-after") == str(routes.RETRY_AFTER_S)
    other = Stream(f"http://127.0.0.1:{port}", room.code, _cookie())
    assert other.response.status == 200
    held[0].close()  # a closed stream gives its place back
    for _ in range(100):
        if routes.gate().open == 2:
            break
        threading.Event().wait(0.05)
    assert Stream(f"http://127.0.0.1:{port}", room.code, cookie).response.status == 200


def test_attack_4_a_script_with_no_proof_gets_no_stream_and_one_with_many_leaves_an_honest_phone_its_first(
    served, monkeypatch
):
    """Issue 47's attack 4, at a small scale: streams without a cookie were 600 taken in 1.1 s, then a phone's was
    refused. Now a stream needs a proof, a browser's second and later streams count against its address, and the
    last places wait for first streams."""
    port, store = served
    lim = replace(Limits(), streams_per_client=8, streams_per_address=10, subscribers=40, streams_kept_first=10)
    gate = events.Gate(lim)
    monkeypatch.setattr(routes, "gate", lambda: gate)
    room, _ = _opened(store)
    url = f"http://127.0.0.1:{port}"
    bare = Stream(url, room.code)
    assert bare.response.status == 403 and bare.response.read().decode() == events.REFUSED["proof"]
    held, refused = [], []
    for _ in range(4):  # four proved browsers of one address, each asking for all the streams it may hold
        cookie = _cookie()
        for _ in range(lim.streams_per_client):
            stream = Stream(url, room.code, cookie)
            (held if stream.response.status == 200 else refused).append(stream)
    assert len(held) == 4 + lim.streams_per_address and {s.response.status for s in refused} == {429}
    phone = Stream(url, room.code, _cookie())  # an honest phone behind the same address
    assert phone.response.status == 200 and _data(phone.event())["code"] == room.code
    for s in [*held, *refused, phone, bare]:
        s.close()


def test_attack_7_through_redis_restarting_from_its_file_a_stream_says_down_and_never_gone(monkeypatch):
    """Issue 47, attack 7: after Redis restarted from its append-only file, a phone was shown "no room" and stopped
    following the room for good. With a real redis-server set up as deploy/k8s/redis.yaml's (an append-only
    file), stopped and started holding what it held: the stream says `down` once while Redis can't be reached,
    then the room again, and never `gone`; a room Redis lacks while it may still be loading is the store down,
    not "no room", and after that grace it is "no room"."""
    from harness import redis as redis_harness
    from server import store as store_module
    from server.store import RedisStore

    async def main(server: redis_harness.RedisServer) -> None:
        store = RedisStore(server.url)
        room, _ = _opened(store)
        hub = events.Hub(lambda: store, _revealed, Limits(), look_s=3600)
        sub = hub.subscribe(room.code, asyncio.get_running_loop())
        seen: list = []
        for step in ("look", "stop", "look", "look", "start", "look"):
            if step == "stop":
                server.stop(keep=True)
            elif step == "start":
                server.start()
            else:
                hub.look_all()
            await asyncio.sleep(0)  # the loop runs the hand-overs the look scheduled
            seen += sub.pending
            sub.pending.clear()
        assert [("down" if e is events.DOWN else e["code"]) for e in seen] == [room.code, "down", room.code]
        with pytest.raises(StoreDown):  # up for less than the grace: it may still be loading
            store.room("ABCDEFGH")
        monkeypatch.setattr(store_module, "RESTART_GRACE_S", 0)
        assert store.room("ABCDEFGH") is None

    with redis_harness.running(["--appendonly", "yes", "--appendfsync", "everysec"]) as server:
        aio.run(main(server))


def test_a_stream_asked_while_the_store_is_down_says_down_and_ends_for_its_browser_to_ask_again(served, monkeypatch):
    port, store = served
    room, _ = _opened(store)

    def down(code: str) -> None:
        raise StoreDown("Redis is loading the dataset in memory")

    monkeypatch.setattr(store, "room", down)
    phone = Stream(f"http://127.0.0.1:{port}", room.code, _cookie())
    assert [e["event"] for e in phone.events()] == ["down"]
