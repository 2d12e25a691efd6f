"""Memory bounded by bytes: how big a value is (:func:`nbytes`), and a :class:`Budget` of them held at most.

A hosted lnviz shares one process among a class. Counting held values by
entries says nothing about memory: one 1024 × 1024 exploration is about 32 MiB,
a 16 × 32 one a few kilobytes, so "32 entries" was anything from a megabyte to a
gigabyte. A :class:`Budget` counts bytes instead (the tensors' and arrays'
storage, once each, plus a little per Python object) and, past its budget,
drops the least recently used entries first; an entry unused for ``ttl_s`` goes
too, and a *holder* (whoever put an entry) may be capped at ``holder_bytes``.
Two uses, one mechanism: the page kit's cache of results (``ui.kit.page``), and
visitors' own matrices (:mod:`server.own_store`).

It is a plain object, never in ``st.cache_resource`` or ``st.cache_data``: a
visitor's ``clear_cache`` message (which clears those) cannot empty it, so one
visitor cannot make everyone's next rerun recompute.

The budgets are fields of :class:`server.limits.Limits`, with defaults
that keep a replica well under its memory limit (docs/deploy.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from server.limits import Full
from server.slots import MISSES, Lane, Slots

MIB = 2**20
_DEPTH = 12  # how deep nbytes walks into containers; results are a few levels deep

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def nbytes(value: Any) -> int:
    """About how many bytes ``value`` holds: each tensor's or array's storage once, plus Python objects' own size.

    Walks tuples, lists, sets, dicts, dataclasses and objects' ``__dict__``.
    A view counts its whole storage, and storage shared by several tensors
    counts once: what freeing the value would free, at most.
    """
    return _walk(value, set(), 0)


def _walk(value: Any, seen: set[Hashable], depth: int) -> int:
    if ("id", id(value)) in seen or depth > _DEPTH:
        return 0
    seen.add(("id", id(value)))
    if hasattr(value, "untyped_storage"):  # a torch tensor: its storage, once however many views share it
        storage = value.untyped_storage()
        key = ("storage", storage.data_ptr(), str(value.device))
        shared = key in seen
        seen.add(key)
        return sys.getsizeof(value) + (0 if shared else storage.nbytes())
    if hasattr(value, "flags") and hasattr(value, "base") and hasattr(value, "nbytes"):  # a numpy array
        if value.flags.owndata:
            return max(sys.getsizeof(value), int(value.nbytes))  # numpy's own size includes the data it owns
        if value.base is None:
            return sys.getsizeof(value) + int(value.nbytes)
        return sys.getsizeof(value) + _walk(value.base, seen, depth)  # a view: what holds its memory
    size = sys.getsizeof(value)
    if isinstance(value, str | bytes | bytearray | memoryview | int | float | complex | bool) or value is None:
        return size
    if isinstance(value, Mapping):
        return size + sum(_walk(k, seen, depth + 1) + _walk(v, seen, depth + 1) for k, v in value.items())
    if isinstance(value, tuple | list | set | frozenset):
        return size + sum(_walk(v, seen, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return size + sum(_walk(getattr(value, f.name), seen, depth + 1) for f in dataclasses.fields(value))
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        return size + _walk(attrs, seen, depth + 1)
    return size


def _full(why: str, limit: int, retry_after_s: int = 0, share: int = 0, clients: int = 0) -> Full:
    """A value refused, and why (:class:`~server.limits.Full`'s ``why``), in a budget's plain words: a caller that
    shows it to a visitor words it (:mod:`server.own_store`)."""
    said = f"{why}: {limit} bytes" + (f", try again in {retry_after_s} s" if retry_after_s else "")
    return Full(said, retry_after_s, why, limit, share, clients)


@dataclass
class _Entry:
    value: Any
    nbytes: int
    used: float  # clock of the last put or get: the order entries are dropped in, and their time to live
    since: float  # clock of its first put: its protection runs from here, and no later use renews it
    holders: dict[Hashable, tuple[Hashable, float]] = field(default_factory=dict)  # holder -> (its client, put at)


class Budget(Generic[K, V]):
    """A thread-safe store of at most ``budget`` bytes (as ``size`` counts, :func:`nbytes` by default).

    Past the budget, entries are dropped to make room (:meth:`_make_room`):
    first those of a *client* over its equal share of the budget, then the
    least recently used, except one put within ``protect_s`` seconds (from
    its first put: a rerun that uses it does not renew that). While only
    those could make room, a new value is refused (:class:`Full`), saying
    when trying again will work. An entry unused for ``ttl_s`` seconds is
    dropped. A value :meth:`put` for a *holder* is counted against that
    holder's ``holder_bytes``, its older entries released first to make room;
    an entry with holders is dropped once the last one releases it
    (:meth:`release`). A key names its value (a content hash, a computation's
    inputs): putting a key that is held already keeps the value held.

    :meth:`get_or_compute` computes each key once at a time: sessions that ask
    for the same key together wait for the first one's result instead of each
    computing (and holding) its own copy. With ``concurrent``, at most that
    many misses are computed at once (``after_miss``, if given, is called after each with its value's bytes): 30
    distinct 1024 × 1024 links opened
    together each held their intermediates at the same time, 1.8 GiB at the
    peak, where a 2-core server gains nothing from running more than two at
    once. Misses that wait take fair turns
    (the misses' lane of
    :class:`~server.slots.Slots`): the client that has computed
    least lately goes first, so one visitor's flood of new seeds does not queue
    in front of a classmate's one miss. A hit never waits.
    """

    def __init__(
        self,
        budget: int,
        size: Callable[[Any], int] = nbytes,
        concurrent: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        holder_bytes: float = math.inf,
        ttl_s: float = math.inf,
        protect_s: float = 0.0,
        after_miss: Callable[[int], object] | None = None,
    ) -> None:
        self.budget, self.holder_bytes, self.ttl_s, self.protect_s = budget, holder_bytes, ttl_s, protect_s
        self._after_miss = after_miss  # with a miss's bytes, once its value is kept: its computation's rest is garbage
        self._size = size
        self.clock = clock
        self.misses = Slots({MISSES: Lane(concurrent)}, clock) if concurrent else None
        self._lock = threading.Lock()
        self._entries: OrderedDict[K, _Entry] = OrderedDict()  # least recently used first
        self._bytes = 0
        self._computing: dict[K, threading.Lock] = {}

    @property
    def bytes(self) -> int:
        """The bytes held now, never more than the budget."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: K) -> bool:
        """Whether ``key`` is held, without counting as a use."""
        return key in self._entries

    def get(self, key: K, default: Any = None) -> V | Any:
        """The value for ``key`` (now the most recently used), or ``default``: never put, dropped or expired."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            entry = self._entries.get(key)
            if entry is None:
                return default
            entry.used = now
            self._entries.move_to_end(key)
            return entry.value

    def put(self, key: K, value: V, holder: Hashable = None, client: Hashable = None) -> None:
        """Keep ``value`` under ``key`` (for ``holder``, if given), dropping what makes room; :class:`Full` if none can.

        The holder's older entries are released first (oldest first) if this one would take it over its cap.
        ``client`` (the holder itself by default) is whom the holder's entries count against for the fair
        shares (:meth:`_make_room`): a browser's tabs are holders of one client.
        """
        size = self._size(value)
        if size > self.budget:
            raise _full("budget", self.budget)
        if holder is not None and size > self.holder_bytes:
            raise _full("holder", int(self.holder_bytes))
        with self._lock:
            now = self.clock()
            self._expire(now)
            if holder is not None:
                self._within_cap(holder, key, size)
            entry = self._entries.get(key)
            if entry is None:
                self._make_room(size, now, holder if client is None else client)
                entry = self._entries[key] = _Entry(value, size, now, now)
                self._bytes += size
            if holder is not None and holder not in entry.holders:  # a put again is a use, not a new protection
                entry.holders[holder] = (holder if client is None else client, now)
            entry.used = now
            self._entries.move_to_end(key)

    def release(self, holder: Hashable, key: K) -> None:
        """``holder`` no longer needs ``key``; it is dropped once no one holds it."""
        with self._lock:
            self._release(holder, key)

    def _release(self, holder: Hashable, key: K) -> None:
        entry = self._entries.get(key)
        if entry is not None and entry.holders.pop(holder, None) is not None and not entry.holders:
            self._drop(key)

    def _drop(self, key: K) -> None:
        self._bytes -= self._entries.pop(key).nbytes

    def _expire(self, now: float) -> None:
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if entry.used > now - self.ttl_s:
                break
            self._drop(key)

    def _within_cap(self, holder: Hashable, key: K, size: int) -> None:
        mine = sorted((e.holders[holder][1], k) for k, e in self._entries.items() if holder in e.holders and k != key)
        held = sum(self._entries[k].nbytes for _, k in mine)
        for _, old in mine:  # oldest first
            if held + size <= self.holder_bytes:
                break
            held -= self._entries[old].nbytes
            self._release(holder, old)

    def _make_room(self, size: int, now: float, client: Hashable) -> None:
        """Drop entries until ``size`` more bytes fit, for ``client``; :class:`Full` if what is left may not go.

        The budget is shared fairly: each client holding entries, and the
        newcomer, may keep an equal share of it. First to go are the entries
        of a client over its share, the one furthest over first (the
        newcomer's own older ones too, if that is the newcomer), whatever their
        protection; only a client further over than the newcomer will be, and
        never an entry that a client within its share holds. Then the least
        recently used entry whose protection (``protect_s`` from its first
        put, which no rerun renews) is over; a newcomer that is over its share
        even then may only drop an entry no one has used for ``protect_s``.
        """
        held = self._held_by_client()  # counted once, then kept up to date as entries go
        if client is not None:
            held[client] = held.get(client, 0) + size
        while self._bytes + size > self.budget:
            share = self.budget / max(1, len(held))
            over_share = client is not None and held[client] > share
            victim = self._over_share(held, share, client) or self._unprotected(now, idle=over_share)
            if victim is None:
                raise self._refusal(size, now, over_share, share, len(held))
            gone = self._entries[victim]
            for c in {c for c, _ in gone.holders.values()}:
                held[c] -= gone.nbytes
                if held[c] <= 0 and c != client:
                    del held[c]
            self._drop(victim)

    def _held_by_client(self) -> dict[Hashable, int]:
        held: dict[Hashable, int] = {}
        for entry in self._entries.values():
            for c in {c for c, _ in entry.holders.values()}:
                held[c] = held.get(c, 0) + entry.nbytes
        return held

    def _over_share(self, held: dict[Hashable, int], share: float, client: Hashable) -> K | None:
        """The least recently used entry of the client furthest over ``share``, and further over than ``client``."""
        floor = max(share, held[client]) if client is not None else share
        over = {c for c, n in held.items() if n > share}
        for c in sorted((c for c in over if held[c] > floor or c == client), key=lambda c: -held[c]):
            for key, entry in self._entries.items():
                clients = {h for h, _ in entry.holders.values()}
                if c in clients and clients <= over:
                    return key
        return None

    def _unprotected(self, now: float, idle: bool) -> K | None:
        for key, entry in self._entries.items():  # least recently used first
            if self._free_at(entry, idle) <= now:
                return key
        return None

    def _free_at(self, entry: _Entry, idle: bool) -> float:
        return max(entry.since, entry.used) + self.protect_s if idle else entry.since + self.protect_s

    def _refusal(self, size: int, now: float, over_share: bool, share: float, clients: int) -> Full:
        """Why nothing more may go, and in how many seconds enough of it may (if no one uses it meanwhile)."""
        needed, retry = self._bytes + size - self.budget, now
        for free_at, nbytes in sorted((self._free_at(e, over_share), e.nbytes) for e in self._entries.values()):
            needed, retry = needed - nbytes, free_at
            if needed <= 0:
                break
        retry_s = max(1, math.ceil(retry - now))
        if over_share:
            return _full("share", self.budget, retry_s, int(share), clients)
        return _full("in use", self.budget, retry_s)

    def get_or_compute(self, key: K, compute: Callable[[], V], client: Hashable = None) -> V:
        """The value for ``key``, computed by ``compute()`` (once, whoever else asks meanwhile) on a miss.

        ``client`` (:func:`server.who.client`) is whom a miss's
        time is charged to, for the fair turns; the same for every caller
        (None) is first come, first served. A value that finds no room is
        returned but not kept. An exception from ``compute`` propagates and
        nothing is kept.
        """
        missing = object()
        hit = self.get(key, missing)
        if hit is not missing:
            return hit
        with self._lock:
            lock = self._computing.setdefault(key, threading.Lock())
        with lock:
            hit = self.get(key, missing)  # computed by another session while this one waited
            if hit is not missing:
                return hit
            try:
                if self.misses is None:
                    value = compute()
                else:
                    with self.misses.slot(client):
                        value = compute()
                with contextlib.suppress(Full):
                    self.put(key, value)
                if self._after_miss is not None:
                    self._after_miss(self._size(value))
                return value
            finally:
                with self._lock:
                    self._computing.pop(key, None)
