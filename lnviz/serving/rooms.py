"""A class's poll rooms: the room, its rounds and one vote per voter, in a store every replica shares.

A room is a lecture's run of questions. The presenter holds its secret; the
students hold its code. Each question is asked in round 1 and, after
**Ask again** (peer instruction), round 2. A round is *asking* until the
presenter reveals it. Its votes are a map voter → choice, so a changed answer
replaces the earlier one and never adds to it.

One interface, :class:`Store`, and two backends:

- :class:`MemoryStore`, the embedded default: this process only (``make run``);
- :class:`RedisStore`, when ``LNVIZ_REDIS_URL`` is set: shared by every
  replica and kept across a restart of the app.

Every write is atomic (a lock here, one Lua script in Redis), and everything
expires: a room and its votes after :data:`IDLE_S` without a write. A voter is
an opaque random id (a cookie of the browser's, :mod:`ui.classroom`); nothing
else about a person is kept. The presenter's secret is kept only as its
SHA-256.

One visitor can neither fill the store nor a class's round. A *client* is a
browser (:func:`lnviz.serving.limits.client_key`, the hash of its XSRF
cookie) and an *address* the one its connection comes from, when the app
knows it; the caller passes both, "" for unknown (no limit on that one).

- Opening rooms: a client may open :data:`ROOMS_PER_CLIENT` rooms per
  :data:`OPEN_WINDOW_S`, an address :data:`ROOMS_PER_ADDRESS` (many lecturers
  may share a campus's address); :class:`MemoryStore` holds at most
  :data:`MAX_ROOMS` rooms at once. In Redis the window's counters are what
  bounds the rooms, each of which expires after :data:`IDLE_S`.
- Voting: a client may vote as :data:`VOTERS_PER_CLIENT` voter ids in one room
  (a shared classroom computer serves a few students), an address as
  :data:`VOTERS_PER_ADDRESS` (a class behind one NAT address), so a script
  that mints voter cookies can't take a round's :data:`MAX_VOTERS` places.
  A script that also discards its browser cookie is a new client each
  time; only the address limit holds it.

Redis's keys, all under ``lnviz:``: ``room:{code}`` (a hash: the room),
``votes:{code}:{index}:{round}`` (a hash: voter → choice), ``rate:{code}:{voter}``
(a counter: how many votes this voter sent in the last :data:`RATE_WINDOW_S`),
``seen:{code}:c:{client}`` and ``seen:{code}:a:{address}`` (sets: the voter
ids a client, an address, voted as in the room), ``opened:c:{client}`` and
``opened:a:{address}`` (counters: rooms opened in the last :data:`OPEN_WINDOW_S`),
``blob:{id}`` (bytes: a grid shared by a link) and ``quota:{visitor}`` (a
counter: bytes a visitor stored in the last :data:`QUOTA_WINDOW_S`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

IDLE_S = 6 * 3600  # a room and its votes expire this long after their last write
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read off a projector and typed on a phone
CODE_LENGTH = 8  # 31**8 ≈ 8.5e11 codes: 39 bits
RATE_VOTES, RATE_WINDOW_S = 30, 60  # a voter may send this many votes per window in one room; a flood is refused
MAX_VOTERS = 2000  # voters one round counts; a new voter past them is refused (a room is a class, not the internet)
VOTERS_PER_CLIENT = 5  # voter ids one browser may vote as in a room: a shared classroom computer, not a crowd
VOTERS_PER_ADDRESS = 500  # voter ids one address may vote as in a room: a class behind one NAT address
ROOMS_PER_CLIENT, OPEN_WINDOW_S = 10, 3600  # rooms one browser may open per window: a lecturer's every section
ROOMS_PER_ADDRESS = 60  # rooms one address may open per window: a campus of lecturers behind one NAT address
MAX_ROOMS = 10_000  # rooms MemoryStore holds at once; a new one past them is refused
BLOB_TTL_S = 24 * 3600  # a grid shared by a link is kept this long after it was last stored
QUOTA_WINDOW_S = 3600
ACTIONS = ("reveal", "again", "next", "close")

# What a vote came to: counted (a first vote), changed (replaced this voter's vote), or why it was refused.
COUNTED, CHANGED = "counted", "changed"
REFUSED = {
    "unknown": "There is no room with this code, or it has expired.",
    "closed": "The presenter has closed this room.",
    "moved": "The presenter has moved on to another question: this one no longer takes answers.",
    "revealed": "The answers to this question have been revealed: it no longer takes answers.",
    "flood": "Too many answers in a short time: wait a minute, then answer again.",
    "full": "This round has as many voters as a room takes.",
    "crowded": f"This browser has already answered as {VOTERS_PER_CLIENT} different voters in this room, the most "
    "one device may: answer from your own phone.",
    "network": f"{VOTERS_PER_ADDRESS} voters from your network have already answered in this room, the most one "
    "address may.",
}
# What opening a room came to: CREATED, "taken" (the code is another room's: draw again), or why it was refused.
CREATED = "created"
OPEN_REFUSED = {
    "many": f"You have opened {ROOMS_PER_CLIENT} rooms in the last hour, the most one browser may. A room stays "
    "open for 6 idle hours: go back to one you opened, or start another within the hour.",
    "network": f"{ROOMS_PER_ADDRESS} rooms have been opened from your network in the last hour, the most one "
    "address may. Try again within the hour.",
    "full": "This server holds as many class rooms as it can just now. Try again later.",
}


class StoreDown(RuntimeError):
    """The shared store can't be reached now (Redis down or unreachable)."""


class OpenRefused(RuntimeError):
    """A room was not opened: too many lately from this client or address, or the store is full.

    ``why`` is a key of :data:`OPEN_REFUSED`; the message is its sentence.
    """

    def __init__(self, why: str) -> None:
        super().__init__(OPEN_REFUSED[why])
        self.why = why


@dataclass(frozen=True)
class Room:
    """A room's state: which question (``index`` into ``questions``), which round (1 or 2), and its phase.

    ``phase`` is "ask" (votes are taken), "reveal" (the round's answers are
    shown) or "done" (past the last question). ``version`` grows with every
    presenter action, so a poll that sees it unchanged has nothing to redraw.
    """

    code: str
    questions: tuple[str, ...]
    index: int = 0
    round: int = 1
    phase: str = "ask"
    closed: bool = False
    version: int = 0
    secret_sha: str = ""

    @property
    def question(self) -> str | None:
        """The id of the question asked now; None past the last one."""
        return self.questions[self.index] if self.index < len(self.questions) else None

    def after(self, action: str) -> Room | None:
        """This room after the presenter's ``action``; None where the action does not apply now.

        reveal: an asking round is revealed. again: a revealed first round is
        asked a second time. next: the next question's first round (or "done"
        past the last). close: the room takes nothing more.
        """
        if self.closed:
            return None
        if action == "reveal" and self.phase == "ask":
            return replace(self, phase="reveal", version=self.version + 1)
        if action == "again" and self.phase == "reveal" and self.round == 1:
            return replace(self, round=2, phase="ask", version=self.version + 1)
        if action == "next" and self.phase != "done":
            index = self.index + 1
            phase = "ask" if index < len(self.questions) else "done"
            return replace(self, index=index, round=1, phase=phase, version=self.version + 1)
        if action == "close":
            return replace(self, closed=True, version=self.version + 1)
        return None

    def to_fields(self) -> dict[str, str]:
        return {
            "questions": ",".join(self.questions),
            "index": str(self.index),
            "round": str(self.round),
            "phase": self.phase,
            "closed": "1" if self.closed else "0",
            "version": str(self.version),
            "secret_sha": self.secret_sha,
        }

    @classmethod
    def from_fields(cls, code: str, fields: Mapping[str, str]) -> Room:
        return cls(
            code=code,
            questions=tuple(q for q in fields["questions"].split(",") if q),
            index=int(fields["index"]),
            round=int(fields["round"]),
            phase=fields["phase"],
            closed=fields["closed"] == "1",
            version=int(fields["version"]),
            secret_sha=fields["secret_sha"],
        )


def sha(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_code(randbelow: Callable[[int], int] = secrets.randbelow) -> str:
    """A room code: :data:`CODE_LENGTH` characters of :data:`CODE_ALPHABET`, from the system's CSPRNG."""
    return "".join(CODE_ALPHABET[randbelow(len(CODE_ALPHABET))] for _ in range(CODE_LENGTH))


def valid_code(text: object) -> str | None:
    """``text`` as a room code (upper case, spaces and dashes dropped), or None if it can't be one."""
    if not isinstance(text, str) or len(text) > 4 * CODE_LENGTH:
        return None
    code = text.upper().replace(" ", "").replace("-", "")
    return code if len(code) == CODE_LENGTH and all(c in CODE_ALPHABET for c in code) else None


class Store(Protocol):
    """Rooms, votes and shared grids, the same on both backends (``tests/test_rooms.py`` runs both)."""

    def create(self, room: Room, client: str = "", address: str = "") -> str:
        """Store a new room opened by ``client`` from ``address`` ("": unknown, not limited): :data:`CREATED`,
        "taken" if its code is another room's (the caller draws another), or a key of :data:`OPEN_REFUSED`.
        Only a room created counts against the opener's :data:`ROOMS_PER_CLIENT` and :data:`ROOMS_PER_ADDRESS`."""

    def room(self, code: str) -> Room | None:
        """The room ``code``, or None if there is none (never made, or expired)."""

    def act(self, code: str, secret: str, action: str, version: int) -> Room | None:
        """The presenter's ``action`` (:data:`ACTIONS`), if ``secret`` is the room's, the room is still at
        ``version`` (the one the presenter's page drew) and the action applies there: the room after it; None
        otherwise, with nothing changed. So a double click, a second tab or a second replica that drew the same
        version moves the room once."""

    def vote(
        self, code: str, voter: str, index: int, round: int, choice: str, client: str = "", address: str = ""
    ) -> str:
        """``voter``'s answer ``choice`` to question ``index``, round ``round``, sent by ``client`` from ``address``
        ("": unknown, not limited): :data:`COUNTED`, :data:`CHANGED` or a key of :data:`REFUSED`. Taken only while
        that round is asking, and only from a client (an address) that has voted as fewer than
        :data:`VOTERS_PER_CLIENT` (:data:`VOTERS_PER_ADDRESS`) other voters in this room."""

    def votes(self, code: str, index: int, round: int) -> dict[str, str]:
        """Every vote of a round: voter → choice."""

    def count(self, code: str, index: int, round: int) -> int:
        """How many voters have answered in a round (one read, for the presenter's poll)."""

    def mine(self, code: str, voter: str, index: int, round: int) -> str | None:
        """``voter``'s answer in a round, or None."""

    def put_blob(self, key: str, data: bytes, visitor: str, quota: int) -> bool:
        """Keep ``data`` under ``key`` for :data:`BLOB_TTL_S`; False if ``visitor`` has stored ``quota`` bytes in
        the last :data:`QUOTA_WINDOW_S` already. Storing a key again renews it and costs nothing."""

    def get_blob(self, key: str) -> bytes | None:
        """The bytes under ``key``, or None once expired or never stored."""


def open_room(store: Store, questions: tuple[str, ...], client: str = "", address: str = "") -> tuple[Room, str]:
    """A new room with a fresh code, and its secret (which is stored only as its SHA-256), opened by ``client``
    from ``address``. Raises :class:`OpenRefused` past their limits or with the store full."""
    secret = secrets.token_urlsafe(24)
    for _ in range(16):
        room = Room(new_code(), questions, secret_sha=sha(secret))
        outcome = store.create(room, client, address)
        if outcome == CREATED:
            return room, secret
        if outcome in OPEN_REFUSED:
            raise OpenRefused(outcome)
    raise RuntimeError("16 random room codes in a row were taken")  # 39 bits: never, unless the CSPRNG is broken


def presenter_of(room: Room, secret: str | None) -> bool:
    """Whether ``secret`` is this room's (compared in constant time)."""
    return bool(secret) and hmac.compare_digest(room.secret_sha, sha(secret or ""))


class MemoryStore:
    """The embedded default: this process's memory, one lock. Expiry as Redis's: reset by each write."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._data: dict[str, tuple[float, object]] = {}  # key -> (expires at, value)

    def _get(self, key: str) -> object | None:
        found = self._data.get(key)
        if found is None:
            return None
        if found[0] <= self._clock():
            del self._data[key]
            return None
        return found[1]

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
        openers = [(f"opened:c:{client}", ROOMS_PER_CLIENT, "many")] if client else []
        openers += [(f"opened:a:{address}", ROOMS_PER_ADDRESS, "network")] if address else []
        with self._lock:
            for key, limit, why in openers:
                opened = self._get(key)
                if isinstance(opened, int) and opened >= limit:
                    return why
            if self._get(f"room:{room.code}") is not None:
                return "taken"
            if len(self._data) >= MAX_ROOMS and self._rooms() >= MAX_ROOMS:  # fewer keys than that: fewer rooms
                return "full"
            self._set(f"room:{room.code}", room, IDLE_S)
            for key, _, _ in openers:
                self._incr(key, OPEN_WINDOW_S)
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
                self._set(f"room:{code}", changed, IDLE_S)
            return changed

    def vote(
        self, code: str, voter: str, index: int, round: int, choice: str, client: str = "", address: str = ""
    ) -> str:
        senders = [(f"seen:{code}:c:{client}", VOTERS_PER_CLIENT, "crowded")] if client else []
        senders += [(f"seen:{code}:a:{address}", VOTERS_PER_ADDRESS, "network")] if address else []
        with self._lock:
            room = self._get(f"room:{code}")
            refused = _refusal(room if isinstance(room, Room) else None, index, round)
            if refused:
                return refused
            rate_key = f"rate:{code}:{voter}"
            sent = self._get(rate_key)
            if isinstance(sent, int) and sent >= RATE_VOTES:
                return "flood"
            self._incr(rate_key, RATE_WINDOW_S)
            seen = {}
            for seen_key, limit, why in senders:
                found = self._get(seen_key)
                seen[seen_key] = found if isinstance(found, set) else set()
                if voter not in seen[seen_key] and len(seen[seen_key]) >= limit:
                    return why
            key = f"votes:{code}:{index}:{round}"
            votes = self._get(key)
            votes = dict(votes) if isinstance(votes, dict) else {}
            if voter not in votes and len(votes) >= MAX_VOTERS:
                return "full"
            outcome = CHANGED if voter in votes else COUNTED
            votes[voter] = choice
            self._set(key, votes, IDLE_S)
            for seen_key, voters in seen.items():
                voters.add(voter)
                self._set(seen_key, voters, IDLE_S)
            return outcome

    def votes(self, code: str, index: int, round: int) -> dict[str, str]:
        with self._lock:
            found = self._get(f"votes:{code}:{index}:{round}")
            return dict(found) if isinstance(found, dict) else {}

    def count(self, code: str, index: int, round: int) -> int:
        return len(self.votes(code, index, round))

    def mine(self, code: str, voter: str, index: int, round: int) -> str | None:
        return self.votes(code, index, round).get(voter)

    def put_blob(self, key: str, data: bytes, visitor: str, quota: int) -> bool:
        with self._lock:
            if self._get(f"blob:{key}") is None:
                used = self._get(f"quota:{visitor}")
                used = used if isinstance(used, int) else 0
                if used + len(data) > quota:
                    return False
                self._set(f"quota:{visitor}", used + len(data), QUOTA_WINDOW_S)
            self._set(f"blob:{key}", bytes(data), BLOB_TTL_S)
            return True

    def get_blob(self, key: str) -> bytes | None:
        with self._lock:
            found = self._get(f"blob:{key}")
            return found if isinstance(found, bytes) else None


def _refusal(room: Room | None, index: int, round: int) -> str | None:
    if room is None:
        return "unknown"
    if room.closed:
        return "closed"
    if room.index != index or room.round != round:
        return "moved"
    if room.phase != "ask":
        return "revealed"
    return None


# A new room, unless the opener's counters are at their limits or its code is taken; a room created counts
# once in each. KEYS: room, the client's counter, the address's. ARGV: ttl, window, the client's limit, the
# address's (0: not counted, the opener is unknown), then the room's fields as name, value pairs.
_CREATE_LUA = """
local limits, refusals = {tonumber(ARGV[3]), tonumber(ARGV[4])}, {'many', 'network'}
for i = 1, 2 do
  if limits[i] > 0 and tonumber(redis.call('GET', KEYS[i + 1]) or '0') >= limits[i] then return refusals[i] end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'taken' end
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
for i = 1, 2 do
  if limits[i] > 0 and redis.call('INCR', KEYS[i + 1]) == 1 then redis.call('EXPIRE', KEYS[i + 1], ARGV[2]) end
end
return 'created'
"""
# The vote, atomically: the same checks as _refusal and MemoryStore.vote, in one script.
# KEYS: room, votes, rate, the client's voters, the address's voters. ARGV: voter, index, round, choice, idle ttl,
# rate votes, rate window, max voters, voters per client, voters per address (0: the sender is unknown).
_VOTE_LUA = """
local r = redis.call('HMGET', KEYS[1], 'index', 'round', 'phase', 'closed')
if not r[1] then return 'unknown' end
if r[4] == '1' then return 'closed' end
if r[1] ~= ARGV[2] or r[2] ~= ARGV[3] then return 'moved' end
if r[3] ~= 'ask' then return 'revealed' end
local sent = redis.call('INCR', KEYS[3])
if sent == 1 then redis.call('EXPIRE', KEYS[3], ARGV[7]) end
if sent > tonumber(ARGV[6]) then return 'flood' end
local limits, refusals = {tonumber(ARGV[9]), tonumber(ARGV[10])}, {'crowded', 'network'}
for i = 1, 2 do
  local seen = KEYS[i + 3]
  if limits[i] > 0 and redis.call('SISMEMBER', seen, ARGV[1]) == 0 and redis.call('SCARD', seen) >= limits[i] then
    return refusals[i]
  end
end
local known = redis.call('HEXISTS', KEYS[2], ARGV[1])
if known == 0 and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[8]) then return 'full' end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[5])
for i = 1, 2 do
  if limits[i] > 0 then
    redis.call('SADD', KEYS[i + 3], ARGV[1])
    redis.call('EXPIRE', KEYS[i + 3], ARGV[5])
  end
end
if known == 1 then return 'changed' end
return 'counted'
"""
# The presenter's action, atomically: compare and set on the version the presenter's page drew (which act has
# already found the room at), so two presses of that page, or two pages at that version, move the room once.
# KEYS: room. ARGV: expected version, then the new room's fields as name, value pairs, then the ttl last.
_ACT_LUA = """
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
local n = #ARGV
for i = 2, n - 1, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[n])
return 1
"""
# Store a blob if the visitor's quota allows. KEYS: blob, quota. ARGV: data, size, quota, blob ttl, quota window.
_BLOB_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  local used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return 0 end
  redis.call('INCRBY', KEYS[2], ARGV[2])
  if redis.call('TTL', KEYS[2]) < 0 then redis.call('EXPIRE', KEYS[2], ARGV[5]) end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
return 1
"""


class RedisStore:
    """Redis (``LNVIZ_REDIS_URL``): every replica sees the same rooms; each write one atomic command or script.

    A Redis that can't be reached raises :class:`StoreDown` within about a
    second, so a page can say so instead of hanging.
    """

    def __init__(self, url: str, prefix: str = "lnviz:") -> None:
        import redis

        self._errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
        self._redis = redis.Redis.from_url(
            url, socket_timeout=1.0, socket_connect_timeout=1.0, health_check_interval=15, decode_responses=False
        )
        self._p = prefix
        self._create = self._redis.register_script(_CREATE_LUA)
        self._vote = self._redis.register_script(_VOTE_LUA)
        self._act = self._redis.register_script(_ACT_LUA)
        self._blob = self._redis.register_script(_BLOB_LUA)

    def _call(self, fn: Callable[[], object]) -> object:
        try:
            return fn()
        except self._errors as error:
            raise StoreDown(str(error)) from error

    def create(self, room: Room, client: str = "", address: str = "") -> str:
        keys = [f"{self._p}room:{room.code}", f"{self._p}opened:c:{client}", f"{self._p}opened:a:{address}"]
        args: list[object] = [IDLE_S, OPEN_WINDOW_S, ROOMS_PER_CLIENT if client else 0]
        args.append(ROOMS_PER_ADDRESS if address else 0)
        for name, value in room.to_fields().items():
            args += [name, value]
        return _text(self._call(lambda: self._create(keys=keys, args=args)))

    def room(self, code: str) -> Room | None:
        fields = self._call(lambda: self._redis.hgetall(f"{self._p}room:{code}"))
        if not fields:
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
        for name, value in changed.to_fields().items():
            args += [name, value]
        args.append(str(IDLE_S))
        key = f"{self._p}room:{code}"
        return changed if self._call(lambda: self._act(keys=[key], args=args)) else None

    def vote(
        self, code: str, voter: str, index: int, round: int, choice: str, client: str = "", address: str = ""
    ) -> str:
        keys = [f"{self._p}room:{code}", f"{self._p}votes:{code}:{index}:{round}", f"{self._p}rate:{code}:{voter}"]
        keys += [f"{self._p}seen:{code}:c:{client}", f"{self._p}seen:{code}:a:{address}"]
        args = [voter, str(index), str(round), choice, IDLE_S, RATE_VOTES, RATE_WINDOW_S, MAX_VOTERS]
        args += [VOTERS_PER_CLIENT if client else 0, VOTERS_PER_ADDRESS if address else 0]
        return _text(self._call(lambda: self._vote(keys=keys, args=args)))

    def votes(self, code: str, index: int, round: int) -> dict[str, str]:
        found = self._call(lambda: self._redis.hgetall(f"{self._p}votes:{code}:{index}:{round}"))
        return {k.decode(): v.decode() for k, v in found.items()}

    def count(self, code: str, index: int, round: int) -> int:
        return int(self._call(lambda: self._redis.hlen(f"{self._p}votes:{code}:{index}:{round}")))

    def mine(self, code: str, voter: str, index: int, round: int) -> str | None:
        found = self._call(lambda: self._redis.hget(f"{self._p}votes:{code}:{index}:{round}", voter))
        return found.decode() if isinstance(found, bytes) else None

    def put_blob(self, key: str, data: bytes, visitor: str, quota: int) -> bool:
        keys = [f"{self._p}blob:{key}", f"{self._p}quota:{visitor}"]
        args = [data, len(data), quota, BLOB_TTL_S, QUOTA_WINDOW_S]
        return bool(self._call(lambda: self._blob(keys=keys, args=args)))

    def get_blob(self, key: str) -> bytes | None:
        found = self._call(lambda: self._redis.get(f"{self._p}blob:{key}"))
        return found if isinstance(found, bytes) else None


def _text(reply: object) -> str:
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def from_env(environ: Mapping[str, str]) -> Store:
    """Redis when ``LNVIZ_REDIS_URL`` is set, else this process's memory."""
    url = environ.get("LNVIZ_REDIS_URL", "").strip()
    return RedisStore(url) if url else MemoryStore()
