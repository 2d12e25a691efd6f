"""Visitors' own matrices, held once by content and counted in bytes: per visitor, per process, for a while.

A matrix a visitor uploads or pastes is parsed into float64, up to 8 MiB at
1024 × 1024. Held in each session's state, it was counted nowhere: 225
sessions that each uploaded a 1 MiB ``.npy`` held 2.4 GiB. Here a matrix is
stored once by the hash of its content, whoever sends it and however often, and
is counted:

- per visitor (``visitor_bytes``): a visitor's newest matrices, the older ones
  released first to make room;
- per process (``budget``): a new matrix that does not fit drops the least
  recently used ones that no one has used for ``protect_s`` seconds; if every
  one is in use, it is refused with :class:`StoreFull`, which says when
  trying again will work;
- in time (``ttl_s``): a matrix no one has used for that long is dropped.

A visitor whose matrix was dropped finds :meth:`OwnStore.get` answering None,
and the page says the data is gone; nothing ever shows someone else's data,
since an id is the hash of the content itself.

The interface is a small store (``put`` a matrix, get an id; ``get`` by id;
``release``), so that a shared backend (Redis, by the same content hash) can
replace this in-process one. Pure: no Streamlit.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from lnviz.serving.budget import MIB, budget_from_env

BUDGET_ENV = "LNVIZ_OWN_DATA_MIB"  # per process
BUDGET_MIB = 128  # sixteen of the largest matrices (1024 x 1024 float64, 8 MiB)
VISITOR_MIB = 16  # a visitor's matrix and its replacement
TTL_S = 3600.0  # a matrix unused this long is dropped
PROTECT_S = 120.0  # a matrix used this recently is never dropped for another's (Streamlit's disconnectedSessionTTL)


class StoreFull(ValueError):
    """A matrix refused: every byte of the budget is in recent use. The message says when to try again."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass
class _Entry:
    x: np.ndarray  # (B, H), float64, C-contiguous
    nbytes: int
    used: float  # clock of the last put or get
    holders: dict[str, float] = field(default_factory=dict)  # visitor -> when it put this


def content_id(x: np.ndarray) -> str:
    """The id of a matrix: a hash of its shape and its float64 values, the same on every server."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    digest = hashlib.sha256(f"{x.shape}".encode())
    digest.update(x.tobytes())
    return digest.hexdigest()[:32]


class OwnStore:
    """Matrices by content id, bounded in bytes per visitor and per process, dropped when unused (thread-safe)."""

    def __init__(
        self,
        budget: int = BUDGET_MIB * MIB,
        visitor_bytes: int = VISITOR_MIB * MIB,
        ttl_s: float = TTL_S,
        protect_s: float = PROTECT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget, self.visitor_bytes, self.ttl_s, self.protect_s = budget, visitor_bytes, ttl_s, protect_s
        self.clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # least recently used first
        self._bytes = 0

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> OwnStore:
        """The store with the process budget ``LNVIZ_OWN_DATA_MIB`` (default 128 MiB)."""
        return cls(budget=budget_from_env(environ, BUDGET_ENV, BUDGET_MIB))

    @property
    def bytes(self) -> int:
        """The bytes held now, never more than the budget."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        """Whether ``key`` is held, without counting as a use."""
        return key in self._entries

    def put(self, visitor: str, x: np.ndarray) -> str:
        """Keep ``x`` (B, H) for ``visitor``; its id. Raises :class:`StoreFull` when there is no room now.

        A matrix already held (by anyone) is not stored again. The visitor's
        older matrices are released first if the new one would take it over
        its share.
        """
        x = np.ascontiguousarray(x, dtype=np.float64)
        key, size = content_id(x), x.nbytes
        if size > self.visitor_bytes:
            raise StoreFull(
                f"The matrix is {size / MIB:.1f} MiB, over the {self.visitor_bytes // MIB} MiB a visitor may keep.", 0
            )
        with self._lock:
            now = self.clock()
            self._expire(now)
            mine = sorted(
                (e.holders[visitor], k) for k, e in self._entries.items() if visitor in e.holders and k != key
            )
            held = sum(self._entries[k].nbytes for _, k in mine)
            for _, old in mine:  # oldest first
                if held + size <= self.visitor_bytes:
                    break
                held -= self._entries[old].nbytes
                self._release(visitor, old)
            entry = self._entries.get(key)
            if entry is None:
                self._make_room(size, now)
                entry = self._entries[key] = _Entry(x, size, now)
                self._bytes += size
            entry.holders[visitor] = now
            entry.used = now
            self._entries.move_to_end(key)
            return key

    def get(self, key: str) -> np.ndarray | None:
        """The matrix ``key`` (never to be modified: it may be shared), or None once it is dropped."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            entry = self._entries.get(key)
            if entry is None:
                return None
            entry.used = now
            self._entries.move_to_end(key)
            return entry.x

    def release(self, visitor: str, key: str) -> None:
        """``visitor`` no longer needs ``key``; it is dropped once no one holds it."""
        with self._lock:
            self._release(visitor, key)

    def _release(self, visitor: str, key: str) -> None:
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.holders.pop(visitor, None)
        if not entry.holders:
            self._drop(key)

    def _drop(self, key: str) -> None:
        self._bytes -= self._entries.pop(key).nbytes

    def _expire(self, now: float) -> None:
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if entry.used > now - self.ttl_s:
                break
            self._drop(key)

    def _make_room(self, size: int, now: float) -> None:
        if size > self.budget:
            raise StoreFull(f"The matrix is over the {self.budget // MIB} MiB this server keeps for visitors' data.", 0)
        while self._bytes + size > self.budget:
            key, entry = next(iter(self._entries.items()))  # the least recently used
            if entry.used > now - self.protect_s:
                wait = max(1, math.ceil(entry.used + self.protect_s - now))
                raise StoreFull(
                    f"This server holds as much of visitors' own data as it keeps ({self.budget // MIB} MiB), "
                    f"all of it in use. Try again in {wait} s.",
                    wait,
                )
            self._drop(key)
