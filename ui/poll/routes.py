"""lnviz's own HTTP routes beside Streamlit's (``app.py`` passes :func:`routes` to ``st.App``).

- ``GET {base}/api/class/{code}/events``: the class room ``code``'s public state as Server-Sent Events
  (:mod:`server.events` says what is in it, and what never is). On connect, the state at once, whatever
  ``Last-Event-ID`` says; then one ``room`` event per change of the room's version or count; a comment every
  15 s; for an unknown or expired room one ``gone`` event, and a closed room's last state, then the end; while the
  store can't be reached (or has just restarted and may be loading), a ``down`` event, and the stream goes on.
  A request without a proved browser's cookie (:mod:`server.proved`): HTTP 403; too many streams from one browser,
  its address or in all: HTTP 429; each with the sentence to show, in plain text.
- ``GET {base}/api/class/{code}/reveal``: torch's answer at a reveal (:mod:`server.class_reveal`).
- ``GET {base}/api/stage/{token}?gain=…&bias=…``: the stage's numbers at another γ and β (:mod:`ui.stage.stage_at`).
- ``GET {base}/api/proof`` and ``POST {base}/api/proof``: a challenge, and its solution for the proof's cookie
  (:mod:`server.proved`).

Streamlit does not put ``server.baseUrlPath`` before a route of ours: :func:`routes` does. Nothing happens at
import; the process's hub and gate are made on the first stream.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from sse_starlette.sse import SendTimeoutError
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from server import base_path, events, limits, poll, proof, who
from server.limits import StoreDown
from server.process_store import store

EVENTS_PATH = "/api/class/{code}/events"
RETRY_AFTER_S = 60  # a refused stream's Retry-After


def revealed(room: poll.Room, answer: bool) -> tuple[list[dict[str, int]], str | None, str | None]:
    """Each revealed round's counts, round 1 first (:func:`ui.poll.classroom.rounds_of`); with ``answer``, torch's
    answer as a vote is stored and what the class got (:func:`lnviz.labs.classroom.peer.outcome`). Imports the
    question bank on the first reveal, not when the server starts."""
    from lnviz.labs.classroom import peer
    from lnviz.labs.classroom.question import tally
    from lnviz.labs.classroom.questions import by_id
    from ui.poll.classroom import votes_of

    question = by_id(room.question or "")
    votes = votes_of(room)
    rounds = [tally(question, found.values()) for found in votes]
    if not answer:
        return rounds, None, None
    return rounds, question.parse(question.answer), peer.outcome(question, votes)


def _bank() -> None:
    from lnviz.labs.classroom.questions import bank

    bank()


@functools.cache
def hub() -> events.Hub:
    """This process's one watcher of the rooms it streams. The question bank, which a reveal reads, is built
    meanwhile on a thread of its own (torch computes its answers): a replica that serves only streams has not
    built it for a page, and the first reveal would wait for it."""
    threading.Thread(target=_bank, name="lnviz-class-bank", daemon=True).start()
    return events.Hub(store, revealed, limits.current())


@functools.cache
def gate() -> events.Gate:
    """This process's count of open streams, per browser, per address and in all."""
    return events.Gate(limits.current())


class _Stream(EventSourceResponse):
    """An event stream that hands its place back when it ends, however it ends (even before its first byte)."""

    def __init__(self, content: AsyncIterator[ServerSentEvent], release: Callable[[], None]) -> None:
        super().__init__(content, ping=events.HEARTBEAT_S, send_timeout=limits.current().stream_send_s)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except* SendTimeoutError:
            pass  # its phone stopped reading: the stream ends, and its place is free again
        finally:
            self._release()


def _room_event(public: dict[str, Any]) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps(public, separators=(",", ":")), event="room", id=events.event_id(public))


def _gone(code: str) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps({"code": code, "message": events.GONE_MESSAGE}), event="gone")


def _down(code: str) -> ServerSentEvent:
    """The store can't be reached, or is loading what it held: the phone keeps following and says so."""
    return ServerSentEvent(data=json.dumps({"code": code}), event="down")


async def _events(code: str, sub: events.Subscriber) -> AsyncIterator[ServerSentEvent]:
    """The stream of one subscriber: the state now, then each change, until the room ends or the stream lags."""
    first = hub().latest(code)
    if first is None:
        try:
            first = await anyio.to_thread.run_sync(hub().current, code)
        except StoreDown:
            yield _down(code)
            return  # the browser's EventSource tries again in a few seconds
    if first is None:
        yield _gone(code)
        return
    yield _room_event(first)
    last = events.event_id(first)
    if first["closed"]:
        return
    while True:
        items = await sub.next()
        if not items:  # dropped: it fell too far behind; the browser reconnects and gets the state then
            return
        for item in items:
            if item is events.GONE:
                yield _gone(code)
                return
            if item is events.DOWN:
                yield _down(code)
                last = None  # the state after it is sent again, even if unchanged: it ends the phone's note
                continue
            if events.event_id(item) == last:
                continue
            yield _room_event(item)
            last = events.event_id(item)
            if item["closed"]:
                return


def _client(request: Request) -> str | None:
    """The proved browser (:mod:`server.proved`) the stream is counted against; None without a proof ("" with the
    limits off: not counted)."""
    if not limits.current().enabled:
        return ""
    from server.proved import secret

    return proof.client(secret(), request.cookies.get(proof.COOKIE), time.time())


async def class_events(request: Request) -> Response:
    code = poll.valid_code(request.path_params["code"])
    if code is None:
        return EventSourceResponse(iter([_gone(str(request.path_params["code"])[:32])]), ping=0)
    client = _client(request)
    if client is None:  # a script that paid for no identity: no stream (its EventSource tries again, to no avail)
        return PlainTextResponse(events.REFUSED["proof"], status_code=403, headers={"Cache-Control": "no-store"})
    # Every address the app can't see is one (as the poll counts them): else browsers behind a proxy that does not
    # say who its visitors are could hold every further stream this process serves.
    address = who.counted(request.client.host if request.client else None)
    refused = gate().enter(client, address)
    if refused is not None:
        headers = {"Retry-After": str(RETRY_AFTER_S), "Cache-Control": "no-store"}
        return PlainTextResponse(events.REFUSED[refused], status_code=429, headers=headers)
    sub = hub().subscribe(code, asyncio.get_running_loop())
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            hub().unsubscribe(sub)
            gate().leave(client, address)

    return _Stream(_events(code, sub), release)


def routes() -> list[Route]:
    """lnviz's routes, under ``server.baseUrlPath``."""
    from server import proved as proof_routes  # the proof of work that earns a browser its cookie
    from server.class_reveal import REVEAL_PATH, class_reveal  # the phone's (tests/test_class_reveal.py)
    from ui.stage.stage_at import STAGE_AT_PATH, stage_at  # the stage's, at another γ and β

    return [
        Route(base_path.prefix() + EVENTS_PATH, class_events, methods=["GET"]),
        Route(base_path.prefix() + REVEAL_PATH, class_reveal, methods=["GET"]),
        Route(base_path.prefix() + STAGE_AT_PATH, stage_at, methods=["GET"]),
        *proof_routes.routes(),
    ]
