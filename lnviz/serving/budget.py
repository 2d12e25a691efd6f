"""Memory bounded by bytes: how big a value is (:func:`nbytes`), and a cache that holds at most a budget of them.

A hosted lnviz shares one process among a class. Counting cached results by
entries says nothing about memory: one 1024 × 1024 exploration is about 32 MiB,
a 16 × 32 one a few kilobytes, so "32 entries" was anything from a megabyte to a
gigabyte. :class:`ByteLRU` counts bytes instead (the tensors' and arrays'
storage, once each, plus a little per Python object) and, past its budget,
drops the least recently used entries first.

It is a plain object, never in ``st.cache_resource`` or ``st.cache_data``: a
visitor's ``clear_cache`` message (which clears those) cannot empty it, so one
visitor cannot make everyone's next rerun recompute.

The budgets come from the environment (:func:`budget_from_env`), in MiB, with
defaults that keep a replica well under its memory limit (docs/deploy.md).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from lnviz.serving.slots import MISSES, Lane, Slots

MIB = 2**20
CACHE_ENV = "LNVIZ_CACHE_MIB"  # per process: the page kit's cache of computed results
CACHE_MIB = 256
MISSES_AT_ONCE = 2  # computations of results not yet cached, at once in a process
_DEPTH = 12  # how deep nbytes walks into containers; results are a few levels deep

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def budget_from_env(environ: Mapping[str, str], name: str, default_mib: int) -> int:
    """The budget ``environ[name]`` names, in MiB, as bytes; ``default_mib`` when unset or not a whole number ≥ 0."""
    raw = environ.get(name, "").strip()
    mib = int(raw) if raw.isdigit() else default_mib
    return mib * MIB


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


class ByteLRU(Generic[K, V]):
    """A thread-safe cache of at most ``budget`` bytes (as :func:`nbytes` counts), least recently used out.

    A value larger than the whole budget is computed and returned but not
    kept. :meth:`get_or_compute` computes each key once at a time: sessions
    that ask for the same key together wait for the first one's result
    instead of each computing (and holding) its own copy. With
    ``concurrent``, at most that many misses are computed at once: 30
    distinct 1024 × 1024 links opened together each held their intermediates
    at the same time, 1.8 GiB at the peak, where a 2-core server gains nothing
    from running more than two at once. Misses that wait take fair turns
    (the misses' lane of :class:`~lnviz.serving.slots.Slots`): the client that has computed
    least lately goes first, so one visitor's flood of new seeds does not
    queue in front of a classmate's one miss. A hit never waits.
    """

    def __init__(
        self,
        budget: int,
        size: Callable[[Any], int] = nbytes,
        concurrent: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget = budget
        self._size = size
        self.misses = Slots({MISSES: Lane(concurrent)}, clock) if concurrent else None
        self._lock = threading.Lock()
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()  # oldest use first
        self._bytes = 0
        self._computing: dict[K, threading.Lock] = {}

    @property
    def bytes(self) -> int:
        """The bytes held now, never more than the budget."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: K) -> bool:
        return key in self._entries

    def get(self, key: K, default: Any = None) -> V | Any:
        """The value for ``key`` (now the most recently used), or ``default``."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return default
            self._entries.move_to_end(key)
            return hit[0]

    def put(self, key: K, value: V) -> bool:
        """Keep ``value`` under ``key``, dropping the least recently used entries to make room.

        Returns whether it was kept: a value over the whole budget is not.
        """
        size = self._size(value)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if size > self.budget:
                return False
            while self._entries and self._bytes + size > self.budget:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped
            self._entries[key] = (value, size)
            self._bytes += size
            return True

    def get_or_compute(self, key: K, compute: Callable[[], V], client: Hashable = None) -> V:
        """The value for ``key``, computed by ``compute()`` (once, whoever else asks meanwhile) on a miss.

        ``client`` (:func:`lnviz.serving.who.client`) is whom a miss's
        time is charged to, for the fair turns; the same for every caller
        (None) is first come, first served. An exception from ``compute``
        propagates and nothing is kept.
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
                self.put(key, value)
                return value
            finally:
                with self._lock:
                    self._computing.pop(key, None)
