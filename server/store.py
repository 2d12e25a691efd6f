"""The shared key-value store: what outlives a session, kept in this process's memory or in Redis for every replica.

It keeps the class poll's rooms, rounds and votes (:mod:`server.poll` holds the rules it applies) and blobs,
the bytes a visitor shares by a link (:mod:`server.own_share`). One interface, :class:`Store`, two backends:
:class:`MemoryStore`, the embedded default, this process only (``make run``); :class:`RedisStore`, when
``LNVIZ_REDIS_URL`` is set, shared by every replica and kept across a restart of the app.

Every write is atomic (a lock here, one Lua script in Redis), and everything expires: a room and its votes
``idle_s`` after their last write, a blob ``blob_ttl_s`` after it was last stored. Those numbers and the poll's
are fields of the :class:`~server.limits.Limits` either backend is given whole (``MemoryStore(limits)``).

Redis's keys, all under ``lnviz:``: ``room:{code}`` (a hash: the room), ``votes:{code}:{index}:{round}`` (a hash:
voter → choice), ``rate:{code}:{voter}`` (a counter: votes and check answers this voter sent in the last ``rate_window_s``),
``seen:{code}:c:{client}`` and ``seen:{code}:a:{address}`` (sets: the voter ids a client, an address, voted as in
the room), ``joined:{code}`` (a sorted set: each voter of the room, by when it first voted), ``born:{code}``
(when the room opened), ``opened:c:{client}`` and ``opened:a:{address}`` (counters: rooms opened in the last
``open_window_s``), ``check:{code}:{phase}`` (a hash: the concept check's answers, "voter/item" → choice;
:mod:`server.check`) and ``check:{code}:{phase}:voters`` (a set: who answered in that phase), ``take:{sha}`` and
``taking:{code}`` (a take code's room, and a room's live take code: the room taken to another presenter browser,
:mod:`server.store_hosts`) and ``blob:{id}`` (bytes: a grid shared by a link; what a client may store is counted by
:class:`server.quota.Quota`, under ``LIMITS:``, and all blobs together by :mod:`server.store_blobs`, under
``blobs:``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from server import check
from server.limits import Limits, StoreDown, StoreFull
from server.poll import CHANGED, COUNTED, CREATED, Room, presenter_of, refusal
from server.rate_log import RateLog
from server.store_blobs import MemoryBlobs, RedisBlobs
from server.store_hosts import MemoryHosts, RedisHosts
from server.store_scripts import ACT_LUA, CHECK_VOTE_LUA, CREATE_LUA, VOTE_LUA

_log = logging.getLogger(__name__)

RESTART_GRACE_S = 30  # a Redis up for less than this may still be loading: a room it lacks may yet come back


class Store(Protocol):
    """Rooms, votes and blobs, the same on both backends (``tests/test_store.py`` runs both), within its ``limits``."""

    limits: Limits

    def create(self, room: Room, client: str = "", address: str = "") -> str:
        """Store a new room opened by ``client`` from ``address`` ("": unknown, not limited): :data:`CREATED`,
        "taken" if its code is another room's (the caller draws another), or a key of :data:`poll.OPEN_REFUSED`.
        Only a room created counts against the opener's ``rooms_per_client``, and against its address's
        ``rooms_per_address`` only if it is not the client's first of the window."""

    def room(self, code: str) -> Room | None:
        """The room ``code``, or None if there is none (never made, or expired)."""

    def act(self, code: str, secret: str, action: str, version: int) -> Room | None:
        """The presenter's ``action`` (:data:`poll.ACTIONS`), if ``secret`` is the room's, the room is still at
        ``version`` (the one the presenter's page drew) and the action applies there: the room after it; None
        otherwise, with nothing changed. So a double click, a second tab or a second replica that drew the same
        version moves the room once."""

    def vote(
        self, code: str, voter: str, index: int, round: int, choice: str, client: str = "", address: str = ""
    ) -> str:
        """``voter``'s answer ``choice`` to question ``index``, round ``round``, sent by ``client`` from ``address``
        ("": unknown, not limited): :data:`COUNTED`, :data:`CHANGED` or a key of :data:`poll.REFUSED`. Taken only
        while that round is asking; from a voter new to the room only while its door is open; and only from a
        client that has voted as fewer than ``voters_per_client`` other voters in this room. A client's voters past
        its first count against its address, which may have ``voters_per_address`` of them, and ``voters_per_s``
        more each second since the room opened."""

    def votes(self, code: str, index: int, round: int) -> dict[str, str]:
        """Every vote of a round: voter → choice."""

    def count(self, code: str, index: int, round: int) -> int:
        """How many voters have answered in a round (one read, for the presenter's poll)."""

    def mine(self, code: str, voter: str, index: int, round: int) -> str | None:
        """``voter``'s answer in a round, or None."""

    def joined(self, code: str) -> tuple[int, float | None]:
        """How many voters have voted in the room, and how many seconds ago the last of them first did (None:
        none yet): what the projector shows of who joined."""

    # The concept check (server.check): a phase's answers, voter and item -> choice.

    def check_vote(
        self, code: str, voter: str, phase: str, item: str, choice: str, client: str = "", address: str = ""
    ) -> str:
        """``voter``'s answer ``choice`` to the check's ``item`` in ``phase``, sent by ``client`` from ``address``:
        :data:`COUNTED`, :data:`CHANGED` or a key of :data:`poll.REFUSED` or :data:`check.REFUSED`. Taken only
        while that phase is open, within the limits a vote meets (:meth:`vote`); a phase takes ``max_voters``."""

    def check_answers(self, code: str, phase: str) -> dict[str, dict[str, str]]:
        """Every answer of a phase: voter -> item -> choice (the presenter's results; never streamed)."""

    def check_mine(self, code: str, voter: str, phase: str, items: tuple[str, ...]) -> dict[str, str]:
        """``voter``'s answers among ``items`` in a phase: item -> choice."""

    def check_counts(self, code: str, phase: str) -> tuple[int, int]:
        """How many voters have answered in a phase, and how many answers they gave (one read)."""

    # The room taken to another presenter browser (server.store_hosts; poll.hand_over, poll.take_over).

    def hand_over(self, code: str, secret: str, take_sha: str) -> bool:
        """Keep ``take_sha``, a new take code's hash, for ``take_s`` as room ``code``'s one live take code (an
        earlier one stops working), if ``secret`` presents the room and it is open; whether it was kept."""

    def take_over(self, take_sha: str, secret_sha: str) -> tuple[str, str | None]:
        """Use the take code whose hash is ``take_sha``: (:data:`poll.TAKEN`, the room's code), with
        ``secret_sha`` added to the room's hosts and the code gone; or (a key of :data:`poll.TAKE_REFUSED`, None),
        with nothing changed. Once only: two browsers with the same code, one gets the room."""

    def sign_out(self, code: str, secret: str) -> bool:
        """Forget room ``code``'s further presenters and its live take code, if ``secret`` is the first
        presenter's (the browser that started the room); whether it was."""

    def put_blob(self, key: str, data: bytes, client: str = "", address: str = "") -> bool:
        """Keep ``data`` under ``key`` for ``blob_ttl_s``, held by ``client`` of ``address``. Past
        ``shared_grid_bytes``, the oldest blobs of the largest holders go first, while they hold more than this one
        will (:mod:`server.store_blobs`); False, with nothing stored, when that can't make room (what one
        client may store per window is counted by its caller, a :class:`~server.quota.Quota`)."""

    def renew_blob(self, key: str) -> bool:
        """Keep the bytes under ``key`` another ``blob_ttl_s``; False if there are none."""

    def get_blob(self, key: str) -> bytes | None:
        """The bytes under ``key``, or None once expired or never stored."""


class MemoryStore(MemoryBlobs, MemoryHosts):
    """The embedded default: this process's memory, one lock. Expiry as Redis's: reset by each write."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = Limits() if limits is None else limits
        self._clock = clock
        self._lock = threading.Lock()
        self._data: dict[str, tuple[float, object]] = {}  # key -> (expires at, value)

    def _get(self, key: str) -> object | None:
        found = self._data.get(key)
        if found is None or found[0] > self._clock():
            return None if found is None else found[1]
        del self._data[key]
        return None

    def _set(self, key: str, value: object, ttl_s: float) -> None:
        self._data[key] = (self._clock() + ttl_s, value)
        if len(self._data) % 256 == 0:
            self._sweep()

    def _sweep(self) -> None:
        now = self._clock()
        for key in [k for k, (at, _) in self._data.items() if at <= now]:
            del self._data[key]

    def _incr(self, key: str, ttl_s: float) -> None:
        """Add 1 to the counter ``key``; a new counter expires in ``ttl_s``, a running one keeps its expiry (INCR)."""
        found = self._get(key)
        if isinstance(found, int):
            self._data[key] = (self._data[key][0], found + 1)
        else:
            self._set(key, 1, ttl_s)

    def _rooms(self) -> int:
        self._sweep()
        return sum(key.startswith("room:") for key in self._data)

    def create(self, room: Room, client: str = "", address: str = "") -> str:
        lim = self.limits
        with self._lock:
            mine = self._get(f"opened:c:{client}") if client else None
            if isinstance(mine, int) and mine >= lim.rooms_per_client:
                return "many"
            # A client's first room of the window is its own; an opener the caller can't name has none.
            counted = bool(address) and (not client or isinstance(mine, int))
            if counted:
                opened = self._get(f"opened:a:{address}")
                if isinstance(opened, int) and opened >= lim.rooms_per_address:
                    return "network"
            if self._get(f"room:{room.code}") is not None:
                return "taken"
            if len(self._data) >= lim.max_rooms and self._rooms() >= lim.max_rooms:  # fewer keys: fewer rooms
                return "full"
            self._set(f"room:{room.code}", room, lim.idle_s)
            self._set(f"born:{room.code}", self._clock(), lim.idle_s)
            if client:
                self._incr(f"opened:c:{client}", lim.open_window_s)
            if counted:
                self._incr(f"opened:a:{address}", lim.open_window_s)
            return CREATED

    def room(self, code: str) -> Room | None:
        with self._lock:
            found = self._get(f"room:{code}")
            return found if isinstance(found, Room) else None

    def act(self, code: str, secret: str, action: str, version: int) -> Room | None:
        with self._lock:
            room = self._get(f"room:{code}")
            if not isinstance(room, Room) or not presenter_of(room, secret) or room.version != version:
                return None
            changed = room.after(action)
            if changed is not None:
                self._set(f"room:{code}", changed, self.limits.idle_s)
            return changed

    def vote(
        self, code: str, voter: str, index: int, round: int, choice: str, client: str = "", address: str = ""
    ) -> str:
        with self._lock:
            room = self._get(f"room:{code}")
            refused = refusal(room if isinstance(room, Room) else None, index, round)
            if refused:
                return refused
            admitted = self._admit(code, room, voter, client, address)
            if isinstance(admitted, str):
                return admitted
            key = f"votes:{code}:{index}:{round}"
            votes = self._get(key)
            votes = dict(votes) if isinstance(votes, dict) else {}
            if voter not in votes and len(votes) >= self.limits.max_voters:
                return "full"
            outcome = CHANGED if voter in votes else COUNTED
            votes[voter] = choice
            self._set(key, votes, self.limits.idle_s)
            admitted()
            return outcome

    def _admit(self, code: str, room: Room, voter: str, client: str, address: str) -> str | Callable[[], None]:
        """The limits every answer of ``voter`` meets in ``room`` (under the lock): the rate, the door, the voters
        of its client and of its address. A refusal, or what records the voter once its answer is stored."""
        lim = self.limits
        rate_key = f"rate:{code}:{voter}"
        sent = self._get(rate_key)
        if isinstance(sent, int) and sent >= lim.votes_per_rate_window:
            return "flood"
        self._incr(rate_key, lim.rate_window_s)
        joined = self._get(f"joined:{code}")
        joined = dict(joined) if isinstance(joined, dict) else {}
        if room.shut and voter not in joined:
            return "door"
        mine = self._get(f"seen:{code}:c:{client}") if client else None
        mine = set(mine) if isinstance(mine, set) else set()
        if client and voter not in mine and len(mine) >= lim.voters_per_client:
            return "crowded"
        # A client's first voter is its own; its further voters (and those of a sender the caller can't name)
        # take the address's places, which grow with the room's age.
        further = bool(address) and (not client or bool(mine - {voter}))
        theirs = self._get(f"seen:{code}:a:{address}") if further else None
        theirs = set(theirs) if isinstance(theirs, set) else set()
        if further and voter not in theirs and len(theirs) >= self._places(code):
            return "network"

        def record() -> None:
            joined.setdefault(voter, self._clock())
            self._set(f"joined:{code}", joined, lim.idle_s)
            if client:
                self._set(f"seen:{code}:c:{client}", mine | {voter}, lim.idle_s)
            if further:
                self._set(f"seen:{code}:a:{address}", theirs | {voter}, lim.idle_s)

        return record

    def _places(self, code: str) -> float:
        """An address's places for further voters in room ``code`` now: they grow with the room's age, in whole
        seconds as Redis's clock counts it."""
        born = self._get(f"born:{code}")
        age = int(self._clock() - born) if isinstance(born, float | int) else self.limits.idle_s
        return self.limits.voters_per_address + self.limits.voters_per_s * age

    def votes(self, code: str, index: int, round: int) -> dict[str, str]:
        with self._lock:
            found = self._get(f"votes:{code}:{index}:{round}")
            return dict(found) if isinstance(found, dict) else {}

    def count(self, code: str, index: int, round: int) -> int:
        return len(self.votes(code, index, round))

    def mine(self, code: str, voter: str, index: int, round: int) -> str | None:
        return self.votes(code, index, round).get(voter)

    def joined(self, code: str) -> tuple[int, float | None]:
        with self._lock:
            found = self._get(f"joined:{code}")
            times = found.values() if isinstance(found, dict) else ()
            return len(times), (self._clock() - max(times) if times else None)

    # --- the concept check (server.check): check:{code}:{phase}, a dict "voter/item" -> choice ----------

    def check_vote(
        self, code: str, voter: str, phase: str, item: str, choice: str, client: str = "", address: str = ""
    ) -> str:
        with self._lock:
            room = self._get(f"room:{code}")
            refused = check.refusal(room if isinstance(room, Room) else None, phase)
            if refused:
                return refused
            admitted = self._admit(code, room, voter, client, address)
            if isinstance(admitted, str):
                return admitted
            key = f"check:{code}:{phase}"
            answers, voters = self._get(key), self._get(f"{key}:voters")
            answers = dict(answers) if isinstance(answers, dict) else {}
            voters = set(voters) if isinstance(voters, set) else set()
            if voter not in voters and len(voters) >= self.limits.max_voters:
                return "full"
            field = f"{voter}/{item}"
            outcome = CHANGED if field in answers else COUNTED
            answers[field] = choice
            self._set(key, answers, self.limits.idle_s)
            self._set(f"{key}:voters", voters | {voter}, self.limits.idle_s)
            admitted()
            return outcome

    def check_answers(self, code: str, phase: str) -> dict[str, dict[str, str]]:
        with self._lock:
            found = self._get(f"check:{code}:{phase}")
            return _by_voter(found.items() if isinstance(found, dict) else ())

    def check_mine(self, code: str, voter: str, phase: str, items: tuple[str, ...]) -> dict[str, str]:
        return {k: v for k, v in self.check_answers(code, phase).get(voter, {}).items() if k in items}

    def check_counts(self, code: str, phase: str) -> tuple[int, int]:
        with self._lock:
            voters, answers = self._get(f"check:{code}:{phase}:voters"), self._get(f"check:{code}:{phase}")
            return len(voters) if isinstance(voters, set) else 0, len(answers) if isinstance(answers, dict) else 0


class RedisStore(RedisBlobs, RedisHosts):
    """Redis (``LNVIZ_REDIS_URL``): every replica sees the same rooms; each write one atomic command or script.

    A Redis that can't be reached raises :class:`StoreDown` within about a
    second, so a page can say so instead of hanging.
    """

    FULL_LOG_EVERY_S = 60.0  # a Redis at its maxmemory is logged once a minute, with how many writes it refused

    def __init__(
        self,
        url: str,
        prefix: str = "lnviz:",
        limits: Limits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        import redis

        self.limits = Limits() if limits is None else limits
        self._full_log = RateLog(_log, self.FULL_LOG_EVERY_S, clock)  # a flood of refused writes: a line a minute
        self._errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
        self._full = redis.exceptions.OutOfMemoryError
        self._redis = redis.Redis.from_url(
            url, socket_timeout=1.0, socket_connect_timeout=1.0, health_check_interval=15, decode_responses=False
        )
        self._p = prefix
        self._create = self._redis.register_script(CREATE_LUA)
        self._vote = self._redis.register_script(VOTE_LUA)
        self._act = self._redis.register_script(ACT_LUA)
        self._check_vote = self._redis.register_script(CHECK_VOTE_LUA)

    def _call(self, fn: Callable[[], object]) -> object:
        try:
            return fn()
        except self._errors as error:
            raise StoreDown(str(error)) from error
        except self._full as error:
            self._full_log.warn("Redis refused %d write(s), at its maxmemory: %s", error)
            raise StoreFull(str(error)) from error

    def _settled(self) -> None:
        """:class:`StoreDown` while Redis may not hold yet what it held (up for less than :data:`RESTART_GRACE_S`):
        a phone told "no room" stops following it for good (issue 47, attack 7)."""
        up = self._call(lambda: self._redis.info("server")).get("uptime_in_seconds", RESTART_GRACE_S)
        if int(up) < RESTART_GRACE_S:
            raise StoreDown(f"Redis started {up} s ago")

    def create(self, room: Room, client: str = "", address: str = "") -> str:
        keys = [f"{self._p}room:{room.code}", f"{self._p}opened:c:{client}", f"{self._p}opened:a:{address}"]
        keys.append(f"{self._p}born:{room.code}")
        lim = self.limits
        args: list[object] = [lim.idle_s, lim.open_window_s, lim.rooms_per_client if client else 0]
        args.append(lim.rooms_per_address if address else 0)
        args += [part for field in room.to_fields().items() for part in field]
        return _text(self._call(lambda: self._create(keys=keys, args=args)))

    def room(self, code: str) -> Room | None:
        fields = self._call(lambda: self._redis.hgetall(f"{self._p}room:{code}"))
        if not fields:
            self._settled()
            return None
        return Room.from_fields(code, {k.decode(): v.decode() for k, v in fields.items()})

    def act(self, code: str, secret: str, action: str, version: int) -> Room | None:
        room = self.room(code)
        if room is None or not presenter_of(room, secret) or room.version != version:
            return None
        changed = room.after(action)
        if changed is None:
            return None
        args = [str(version)]
        # Not its hosts: a take or a sign-out between this read and the script would be lost (store_hosts).
        args += [part for name, value in changed.to_fields().items() if name != "hosts" for part in (name, value)]
        args.append(str(self.limits.idle_s))
        key = f"{self._p}room:{code}"
        return changed if self._call(lambda: self._act(keys=[key], args=args)) else None

    def vote(
        self, code: str, voter: str, index: int, round: int, choice: str, client: str = "", address: str = ""
    ) -> str:
        keys = [f"{self._p}room:{code}", f"{self._p}votes:{code}:{index}:{round}", f"{self._p}rate:{code}:{voter}"]
        keys += [f"{self._p}seen:{code}:c:{client}", f"{self._p}seen:{code}:a:{address}"]
        keys += [f"{self._p}joined:{code}", f"{self._p}born:{code}"]
        lim = self.limits
        args = [voter, str(index), str(round), choice, lim.idle_s, lim.votes_per_rate_window, lim.rate_window_s]
        args += [lim.max_voters, lim.voters_per_client if client else 0, lim.voters_per_address if address else 0]
        args.append(repr(float(lim.voters_per_s)))
        return _text(self._call(lambda: self._vote(keys=keys, args=args)))

    def votes(self, code: str, index: int, round: int) -> dict[str, str]:
        found = self._call(lambda: self._redis.hgetall(f"{self._p}votes:{code}:{index}:{round}"))
        return {k.decode(): v.decode() for k, v in found.items()}

    def count(self, code: str, index: int, round: int) -> int:
        return int(self._call(lambda: self._redis.hlen(f"{self._p}votes:{code}:{index}:{round}")))

    def mine(self, code: str, voter: str, index: int, round: int) -> str | None:
        found = self._call(lambda: self._redis.hget(f"{self._p}votes:{code}:{index}:{round}", voter))
        return found.decode() if isinstance(found, bytes) else None

    def joined(self, code: str) -> tuple[int, float | None]:
        key = f"{self._p}joined:{code}"

        def read() -> tuple[int, list, list]:
            with self._redis.pipeline(transaction=False) as pipe:  # reads only: a full Redis answers them
                return tuple(pipe.zcard(key).zrange(key, -1, -1, withscores=True).time().execute())

        count, last, (now_s, now_us) = self._call(read)
        return int(count), (now_s + now_us / 1e6 - last[0][1] if last else None)

    # --- the concept check (server.check): check:{code}:{phase} (a hash "voter/item" -> choice) and
    # check:{code}:{phase}:voters (a set), each written by CHECK_VOTE_LUA ---------------------------------------

    def check_vote(
        self, code: str, voter: str, phase: str, item: str, choice: str, client: str = "", address: str = ""
    ) -> str:
        keys = [f"{self._p}room:{code}", f"{self._p}check:{code}:{phase}", f"{self._p}rate:{code}:{voter}"]
        keys += [f"{self._p}seen:{code}:c:{client}", f"{self._p}seen:{code}:a:{address}"]
        keys += [f"{self._p}joined:{code}", f"{self._p}born:{code}", f"{self._p}check:{code}:{phase}:voters"]
        lim = self.limits
        args = [voter, phase, item, choice, lim.idle_s, lim.votes_per_rate_window, lim.rate_window_s]
        args += [lim.max_voters, lim.voters_per_client if client else 0, lim.voters_per_address if address else 0]
        args += [repr(float(lim.voters_per_s)), ",".join(check.closing_steps(phase))]
        return _text(self._call(lambda: self._check_vote(keys=keys, args=args)))

    def check_answers(self, code: str, phase: str) -> dict[str, dict[str, str]]:
        found = self._call(lambda: self._redis.hgetall(f"{self._p}check:{code}:{phase}"))
        return _by_voter((k.decode(), v.decode()) for k, v in found.items())

    def check_mine(self, code: str, voter: str, phase: str, items: tuple[str, ...]) -> dict[str, str]:
        if not items:
            return {}
        fields = [f"{voter}/{item}" for item in items]
        found = self._call(lambda: self._redis.hmget(f"{self._p}check:{code}:{phase}", fields))
        return {item: v.decode() for item, v in zip(items, found, strict=True) if isinstance(v, bytes)}

    def check_counts(self, code: str, phase: str) -> tuple[int, int]:
        key = f"{self._p}check:{code}:{phase}"

        def read() -> tuple[int, int]:
            with self._redis.pipeline(transaction=False) as pipe:
                return tuple(pipe.scard(f"{key}:voters").hlen(key).execute())

        voters, answers = self._call(read)
        return int(voters), int(answers)


def _by_voter(fields: Iterable[tuple[str, str]]) -> dict[str, dict[str, str]]:
    """A phase's stored answers, fields "voter/item" -> choice, as voter -> item -> choice."""
    found: dict[str, dict[str, str]] = {}
    for field, choice in fields:
        voter, _, item = field.partition("/")
        found.setdefault(voter, {})[item] = choice
    return found


def _text(reply: object) -> str:
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def from_env(environ: Mapping[str, str], limits: Limits | None = None) -> Store:
    """Redis when ``LNVIZ_REDIS_URL`` is set, else this process's memory; either within ``limits``."""
    url = environ.get("LNVIZ_REDIS_URL", "").strip()
    return RedisStore(url, limits=limits) if url else MemoryStore(limits)
