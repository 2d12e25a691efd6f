"""So much per key per window: a :class:`Quota`, kept by the ``limits`` package in memory or in the shared Redis.

One mechanism for every "at most N per key in W seconds" of a shared server:
a session's uploads (:class:`UploadQuota`) and a browser's bytes stored for
links (:mod:`server.own_share`). The windows are ``limits``'s, not ours:
the same code counts in this process's memory and, with ``LNVIZ_REDIS_URL``
(:func:`storage_from_env`), in the Redis every replica shares, each hit one
atomic Lua script there.

Two of its windows serve here. A *moving* window remembers the time of every
unit of every hit, so it is exact and says when the oldest leaves
(:meth:`Quota.retry_after_s`): right for counts, a few per window. For amounts
in bytes it is unfit: 64 MiB of hits took 6.3 s and held 576 MiB (one entry
per byte; measured with limits 5.8.0 in memory). Bytes take a *sliding window
counter* instead: two counters a key, the previous window weighted by how much
of it is still within the last ``window_s`` seconds. Pure: no Streamlit.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from limits import RateLimitItemPerSecond
from limits.errors import StorageError
from limits.storage import Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter, SlidingWindowCounterRateLimiter

from server.limits import MIB, Limits, QuotaExceeded, StoreDown, StoreFull

REDIS_ENV = "LNVIZ_REDIS_URL"
MEMORY = "memory://"


def storage_from_env(environ: Mapping[str, str]) -> Storage:
    """Where quotas are kept: the Redis of ``LNVIZ_REDIS_URL`` (every replica counts together), else this process."""
    url = environ.get(REDIS_ENV, "").strip()
    if not url:
        return storage_from_string(MEMORY)
    # Like the shared store (server.store.RedisStore): a Redis that can't be reached answers within a second.
    return storage_from_string(url, wrap_exceptions=True, socket_timeout=1.0, socket_connect_timeout=1.0)


def _unavailable(error: StorageError) -> StoreDown:
    """What a storage error means to the caller: the Redis full (it refused a write at its maxmemory) or down."""
    cause = error.storage_error
    from redis.exceptions import OutOfMemoryError  # only a Redis storage raises StorageError, so redis is there

    return (StoreFull if isinstance(cause, OutOfMemoryError) else StoreDown)(str(cause))


class Quota:
    """At most ``amount`` per key in any ``window_s`` seconds, counted in ``storage`` (this process's by default).

    ``exact``: a moving window (counts); else a sliding window counter (bytes). ``name`` keeps two quotas on one
    storage apart. Thread-safe, as ``limits``'s storages are. A storage that can't be reached raises
    :class:`~server.limits.StoreDown`.
    """

    def __init__(self, name: str, amount: int, window_s: int, storage: Storage | None = None, exact: bool = True):
        self.amount, self.window_s = amount, window_s
        self._item = RateLimitItemPerSecond(amount, window_s, namespace=f"lnviz-{name}")
        strategy = MovingWindowRateLimiter if exact else SlidingWindowCounterRateLimiter
        self._limiter = strategy(storage if storage is not None else storage_from_string(MEMORY))

    def hit(self, key: str, cost: int = 1) -> bool:
        """Charge ``cost`` to ``key`` if it fits in the window; whether it did (nothing is charged when not)."""
        try:
            return self._limiter.hit(self._item, key, cost=cost)
        except StorageError as error:
            raise _unavailable(error) from error

    def test(self, key: str, cost: int = 1) -> bool:
        """Whether ``cost`` would fit for ``key`` now, charging nothing."""
        try:
            return self._limiter.test(self._item, key, cost=cost)
        except StorageError as error:
            raise _unavailable(error) from error

    def charge(self, key: str, cost: int) -> None:
        """Charge ``cost`` to ``key`` for work done already: as much of it as the window has left."""
        left = self.amount - self.count(key)
        if left > 0:
            self.hit(key, min(cost, left))

    def count(self, key: str) -> int:
        """What ``key`` has been charged within the window now (a sliding window counter's weighted estimate)."""
        try:
            return self.amount - self._limiter.get_window_stats(self._item, key).remaining
        except StorageError as error:
            raise _unavailable(error) from error

    def retry_after_s(self, key: str) -> int:
        """Whole seconds (at least 1) until the oldest of ``key``'s window leaves it."""
        try:
            reset = self._limiter.get_window_stats(self._item, key).reset_time
        except StorageError as error:
            raise _unavailable(error) from error
        return max(1, math.ceil(reset - time.time()))


@dataclass
class UploadQuota:
    """Decides what an upload may keep in memory; thread-safe, one per server process.

    The caller (the Streamlit glue) holds the files; this only counts. For a
    new file it answers which of the session's older files to drop first, or
    refuses with :class:`~server.limits.QuotaExceeded`. A session's
    uploads per window are a :class:`Quota` in this process's memory: a
    session lives in one process.
    """

    limits: Limits
    storage: Storage | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        lim = self.limits
        self.sent = Quota("uploads", lim.uploads_per_window, max(1, math.ceil(lim.window_s)), self.storage)

    def admit(self, session: str, size: int, held: Sequence[tuple[str, int]], server_bytes: int) -> list[str]:
        """The ids of ``session``'s files to drop (oldest first) so that a new file of ``size`` bytes fits.

        ``held``: the session's files as (file id, bytes), oldest first;
        ``server_bytes``: what every session holds together. Raises
        :class:`~server.limits.QuotaExceeded` when the session sends too
        many uploads, when the file alone is over the session's bytes, or when
        the server holds too much already.
        """
        lim = self.limits
        if not lim.enabled:
            return []
        with self._lock:  # test, then hit once admitted: one upload at a time
            if not self.sent.test(session):
                raise self._too_many(session)
            if size > lim.upload_bytes:
                raise QuotaExceeded(f"The file is over this session's {lim.upload_bytes // MIB} MiB.", 0)
            kept = list(held)
            drop: list[str] = []
            while kept and (len(kept) + 1 > lim.upload_files or sum(n for _, n in kept) + size > lim.upload_bytes):
                drop.append(kept.pop(0)[0])
            freed = sum(n for fid, n in held if fid in drop)
            if server_bytes - freed + size > lim.upload_total_bytes:
                raise QuotaExceeded("The server holds as many uploaded files as it can right now.", 30)
            if not self.sent.hit(session):  # the oldest upload is leaving the window this very instant
                raise self._too_many(session)
            return drop

    def _too_many(self, session: str) -> QuotaExceeded:
        lim = self.limits
        return QuotaExceeded(
            f"This session sent {lim.uploads_per_window} files in {lim.window_s / 60:.0f} minutes, the most it may.",
            self.sent.retry_after_s(session),
        )


@dataclass
class CodeTries:
    """Room codes tried that opened no room: at most ``code_misses_per_client`` per client and
    ``code_misses_per_address`` per address per ``code_window_s``, counted in ``storage`` (the shared Redis, else
    this process). Only misses count, so a class joining by its QR code spends nothing; a client or an address
    past its misses can't try another code, a right one included, until the window lets it."""

    limits: Limits
    storage: Storage | None = None

    def __post_init__(self) -> None:
        lim, window = self.limits, max(1, math.ceil(self.limits.code_window_s))
        self._quotas = (
            Quota("code-misses-client", lim.code_misses_per_client, window, self.storage),
            Quota("code-misses-address", lim.code_misses_per_address, window, self.storage),
        )

    def wait_s(self, client: str, address: str) -> int:
        """0 when ``client`` from ``address`` may try a code now; else the whole seconds until it may."""
        if not self.limits.enabled:
            return 0
        waits = [
            q.retry_after_s(key)
            for q, key in zip(self._quotas, (client, address), strict=True)
            if key and not q.test(key)
        ]
        return max(waits, default=0)

    def missed(self, client: str, address: str) -> None:
        """Count a code that opened no room."""
        if self.limits.enabled:
            for q, key in zip(self._quotas, (client, address), strict=True):
                if key:
                    q.hit(key)
