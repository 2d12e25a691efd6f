"""The class poll's public stream: a room's state as one event, and the hub that fans a room's change out.

What a phone or the projector may know of a room, and nothing more (the contract the ``phone`` element reads):

- :func:`state`: the room's public state, one JSON object: its version, phase, question, round and how many
  have answered; after a round's reveal, each revealed round's counts (unless the presenter hides them); only
  once the presenter shows torch's answer, that answer and what the class got (the share right, the shift between
  rounds); the concept check's step and, while a phase of it is open, how many voters answered and how many
  answers they gave (:func:`check_part`), never an answer of the check's, before or after its phase closes. Never
  a choice before the reveal, never who is right before torch's answer (peer instruction's second round would
  measure nothing), never the presenter's secret or its hash, never a voter id.
- :func:`event_id`: ``{version}.{answers}``, and while the check is open its two counts after them, which changes
  exactly when a phone or the projector has something new to show.
- :class:`Hub`: this process's one look at each room it streams, every :data:`LOOK_S`, not one per subscriber:
  two reads of the store per room (the room, its round's count), a third while the concept check is open (its
  counts), and the round's votes only when that changed during a reveal. A change goes to every subscriber of the room, each a bounded queue
  (:attr:`Limits.stream_queue`): one that doesn't keep up is dropped, and its browser reconnects and gets the
  current state at once. A room that closes or expires ends its streams.
- :class:`Gate`: the open streams one proved browser, one address and the whole process may hold
  (:attr:`Limits.streams_per_client`, :attr:`Limits.streams_per_address`, :attr:`Limits.subscribers`), places
  kept for browsers' first streams (:attr:`Limits.streams_kept_first`), and the plain sentence each refusal is
  said in (:data:`REFUSED`).

Why a look every 0.5 s and not Redis pub/sub: the look costs a replica a few reads per streamed room per second,
whatever the number of subscribers, and a change reaches the phones within :data:`LOOK_S` plus a write; pub/sub
would need every write of the store (a vote, an action, on both backends) to publish, and a connection per
replica that must be watched and reopened. docs/benchmarks.md has the figures.

Pure: no Streamlit. The store's calls block, so the hub makes them on its own thread; subscribers live on an
asyncio loop and are handed events with ``loop.call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from server import check
from server.limits import Limits, StoreDown
from server.poll import REFUSED as VOTE_REFUSED
from server.poll import Room

_log = logging.getLogger(__name__)
LOOK_S = 0.5  # how often the hub reads each streamed room
HEARTBEAT_S = 15  # a comment line this often keeps proxies from closing an idle stream
GONE_MESSAGE = VOTE_REFUSED["unknown"]  # what a stream of an unknown or expired room says, in its one event

# Why a stream was refused, the sentence a phone shows (an HTTP 429's body).
REFUSED = {
    "client": "This browser already follows as many class streams as one browser may: close another tab of the "
    "class, then reload.",
    "address": "As many class streams are open from your network as one address may: close another tab of the class, "
    "then reload.",
    "server": "This server follows as many phones as it can just now. Try again in a minute.",
    "proof": "Following the class needs your browser to keep this site's cookies and run its scripts: allow them "
    "for this site, then reload the page.",
}


class Reads(Protocol):
    """What the stream reads of a store: :class:`server.store.Store` is one."""

    def room(self, code: str) -> Room | None: ...

    def count(self, code: str, index: int, round: int) -> int: ...

    def check_counts(self, code: str, phase: str) -> tuple[int, int]: ...


# For a room past its asking round: the revealed rounds' counts, and, asked for with torch's answer (the second
# argument), that answer as a vote is stored and what the class got in a sentence (lnviz.labs.classroom.peer);
# without it, None for both, and nothing about who is right is computed. The labs' business (the question bank),
# handed in by the caller, the poll's glue.
Revealed = Callable[[Room, bool], tuple[list[dict[str, int]], str | None, str | None]]


def check_part(store: Reads, room: Room) -> dict[str, Any]:
    """The concept check's public part: its step, and while a phase is open how many voters answered it and how
    many answers they gave (one read; none while no phase is open). Never an answer."""
    phase = check.open_phase(room.check)
    voters, answers = store.check_counts(room.code, phase) if phase else (0, 0)
    return {"step": room.check, "voters": voters, "answers": answers}


def state(room: Room, answers: int, revealed: Revealed, checked: dict[str, Any] | None = None) -> dict[str, Any]:
    """The room's public state with ``answers`` voters in its current round and the check's part ``checked``
    (:func:`check_part`; without it, the step with no counts) (the contract's ``room`` event)."""
    rounds = answer = outcome = None
    if room.phase == "answer":
        rounds, answer, outcome = revealed(room, True)
    elif room.phase == "reveal" and not room.hidden:
        rounds, _, _ = revealed(room, False)
    return {
        "code": room.code,
        "version": room.version,
        "phase": room.phase,
        "closed": room.closed,
        "index": room.index,
        "questions": len(room.questions),
        "question": room.question,
        "round": room.round,
        "answers": answers,
        "hidden": room.hidden,
        "rounds": rounds,
        "answer": answer,
        "check": checked or {"step": room.check, "voters": 0, "answers": 0},
        "outcome": outcome,
    }


def event_id(public: dict[str, Any]) -> str:
    """The event's id: ``{version}.{answers}``, then ``.{voters}.{answers}`` of the check while a phase is open."""
    found = public["check"]
    counts = f".{found['voters']}.{found['answers']}" if check.open_phase(found["step"]) else ""
    return f"{public['version']}.{public['answers']}{counts}"


def look(store: Reads, code: str) -> tuple[Room, int] | None:
    """The room and its current round's count (two reads), or None when there is no such room."""
    room = store.room(code)
    if room is None:
        return None
    return room, (store.count(code, room.index, room.round) if room.question is not None else 0)


DOWN_SEEN = (-1, -1)  # a room's last look, when it found the store down
GONE = None  # what a subscriber is handed when its room is gone: its stream sends `gone` and ends
DOWN = {"down": True}  # ... when the store can't be reached: its stream sends `down` and goes on (issue 47, attack 7)


@dataclass(eq=False)
class Subscriber:
    """One open stream of ``code``: the events not yet sent, at most ``size`` of them, on ``loop``."""

    code: str
    loop: asyncio.AbstractEventLoop
    size: int
    pending: deque[dict[str, Any] | None] = field(default_factory=deque)
    dropped: bool = False  # it fell ``size`` events behind: its stream ends, the browser reconnects
    ready: asyncio.Event = field(default_factory=asyncio.Event)

    def offer(self, item: dict[str, Any] | None) -> None:
        """Queue ``item`` (on the loop's thread); past ``size`` unsent, drop this subscriber instead."""
        if len(self.pending) >= self.size:
            self.dropped = True
            self.pending.clear()
        else:
            self.pending.append(item)
        self.ready.set()

    async def next(self) -> list[dict[str, Any] | None]:
        """The events queued since the last call, waiting for one; [] once dropped."""
        await self.ready.wait()
        self.ready.clear()
        if self.dropped:
            return []
        items = list(self.pending)
        self.pending.clear()
        return items


class Hub:
    """This process's one watcher of the rooms it streams (see the module's docstring)."""

    def __init__(self, store: Callable[[], Reads], revealed: Revealed, limits: Limits, look_s: float = LOOK_S):
        self._store, self._revealed, self._limits, self._look_s = store, revealed, limits, look_s
        self._lock = threading.Lock()
        self._rooms: dict[str, set[Subscriber]] = {}
        self._seen: dict[str, tuple[int, ...]] = {}  # room -> (version, answers, the check's counts) of its last look
        self._latest: dict[str, dict[str, Any]] = {}  # room -> its last state sent
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def subscribe(self, code: str, loop: asyncio.AbstractEventLoop) -> Subscriber:
        sub = Subscriber(code, loop, max(1, int(min(self._limits.stream_queue, 2**20))))
        with self._lock:
            self._rooms.setdefault(code, set()).add(sub)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lnviz-class-stream", daemon=True)
                self._thread.start()
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        with self._lock:
            subs = self._rooms.get(sub.code)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._rooms[sub.code]
                    self._seen.pop(sub.code, None)
                    self._latest.pop(sub.code, None)

    def subscribers(self) -> int:
        with self._lock:
            return sum(len(subs) for subs in self._rooms.values())

    def latest(self, code: str) -> dict[str, Any] | None:
        """The state last sent to ``code``'s subscribers, if the hub watches it: a new subscriber's first event."""
        with self._lock:
            return self._latest.get(code)

    def current(self, code: str) -> dict[str, Any] | None:
        """``code``'s state now, read from the store (blocking); None when there is no such room."""
        store = self._store()
        found = look(store, code)
        return None if found is None else state(*found, self._revealed, check_part(store, found[0]))

    def _run(self) -> None:
        while True:
            self._wake.wait(self._look_s)
            self._wake.clear()
            self.look_all()

    def look_all(self) -> None:
        """One look at every streamed room: each change goes to its subscribers (the thread's step; a test's)."""
        with self._lock:
            codes = list(self._rooms)
        for code in codes:
            try:
                self._look(code)
            except StoreDown:  # the phones keep what they show and say the store is coming back, once
                with self._lock:
                    told = self._seen.get(code) == DOWN_SEEN
                    self._seen[code] = DOWN_SEEN  # so the first look after it is back sends the state again
                if not told:
                    self._send(code, DOWN, end=False)
            except Exception:  # a bug of one room's must not stop every room's stream: said, and looked at again
                _log.exception("class stream: the look at room %s failed", code)

    def _look(self, code: str) -> None:
        store = self._store()
        found = look(store, code)
        if found is None:
            self._send(code, GONE, end=True)
            return
        room, answers = found
        checked = check_part(store, room)
        seen = (room.version, answers, checked["voters"], checked["answers"])
        if self._seen.get(code) == seen:
            return
        public = state(room, answers, self._revealed, checked)
        with self._lock:
            if code not in self._rooms:
                return
            self._seen[code] = seen
            self._latest[code] = public
        self._send(code, public, end=room.closed)

    def _send(self, code: str, item: dict[str, Any] | None, end: bool) -> None:
        with self._lock:
            subs = list(self._rooms.get(code, ()))
            if end:
                self._rooms.pop(code, None)
                self._seen.pop(code, None)
                self._latest.pop(code, None)
        for sub in subs:
            try:
                sub.loop.call_soon_threadsafe(sub.offer, item)  # a closed room's state ends its stream
            except RuntimeError:  # its loop has closed: the server is stopping
                continue


class Gate:
    """The open streams each proved browser, each address and this process hold, within their limits.

    A browser's first stream is counted against the process alone: an honest phone always gets it while the
    process has a place. Its further streams (tabs, a projector) are counted against its address too, and may
    not take the last ``streams_kept_first`` places, which wait for browsers that hold none yet. A script that
    wants many streams needs as many proved browsers, each paid for with a proof of work.
    """

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._lock = threading.Lock()
        self._clients: dict[str, int] = {}
        self._addresses: dict[str, int] = {}
        self.open = 0

    def enter(self, client: str, address: str) -> str | None:
        """Count one more stream for ``client`` from ``address`` ("": unknown, not limited): None, or why it is
        refused (a key of :data:`REFUSED`), with nothing counted."""
        lim = self._limits
        with self._lock:
            if self.open >= lim.subscribers:
                return "server"
            held = self._clients.get(client, 0) if client else 0
            if held >= lim.streams_per_client:
                return "client"
            further = held > 0
            if further and lim.enabled and self.open >= lim.subscribers - lim.streams_kept_first:
                return "server"
            if further and address and self._addresses.get(address, 0) >= lim.streams_per_address:
                return "address"
            self.open += 1
            if client:
                self._clients[client] = held + 1
            if further and address:
                self._addresses[address] = self._addresses.get(address, 0) + 1
            return None

    def leave(self, client: str, address: str) -> None:
        with self._lock:
            self.open -= 1
            if not client:
                return
            held = self._clients[client] - 1
            if held:
                self._clients[client] = held
                left = self._addresses.get(address, 0) - 1  # one of its further streams, as the address counts them
                if left > 0:
                    self._addresses[address] = left
                else:
                    self._addresses.pop(address, None)
            else:
                del self._clients[client]
