"""Fair turns at a few slots: whoever has used the slots least lately goes first, not whoever came first.

The page kit computes at most :data:`lnviz.serving.budget.MISSES_AT_ONCE`
uncached results at once. First come, first served, one visitor flooding new
seeds at 1024 × 1024 kept a queue of misses in front of everyone: four such
sessions moved a 30-session class's p95 from about 50 to 327 ms. With
:class:`FairSlots`, a waiting computation of the client that has spent the
least time computing lately goes first, so a classmate's one miss overtakes a
flooder's queue.

"Lately" is a decaying sum: each computation's seconds are charged to its
client when it ends, and the sum decays by ``e`` every :data:`DECAY_S`
seconds; a computation still running counts its seconds so far. Ties go to the
client with fewer computations running, then to the earlier arrival. One
client (``None`` for everyone: ``LNVIZ_LIMITS=off``) is plain first come,
first served.

A client is the key :func:`lnviz.serving.limits.client_key` gives: a browser,
or a session without the XSRF cookie; never the address (a classroom behind
one NAT shares it).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

DECAY_S = 60.0  # a client's compute seconds count for about this long
_PRUNE_AT = 256  # clients remembered before those whose sum has decayed away are forgotten
_FORGOTTEN = 1e-3  # seconds of decayed sum below which a client is as good as new


@dataclass(eq=False)  # one is itself only: found and removed by identity
class _Turn:
    client: Hashable
    seq: int  # arrival order
    started: float = math.nan  # clock, once running


class FairSlots:
    """At most ``slots`` holders at once; waiters take turns by the client's recent time in a slot. Thread-safe.

    ``clock`` (seconds, monotonic) is injectable for tests.
    """

    def __init__(self, slots: int, clock: Callable[[], float] = time.monotonic, decay_s: float = DECAY_S) -> None:
        self.slots = slots
        self._clock = clock
        self._decay_s = decay_s
        self._cond = threading.Condition()
        self._running: list[_Turn] = []
        self._waiting: list[_Turn] = []
        self._arrivals = itertools.count()
        self._spent: dict[Hashable, tuple[float, float]] = {}  # client -> (decayed seconds, as of this clock)

    @contextmanager
    def slot(self, client: Hashable) -> Iterator[None]:
        """Hold one slot for ``client`` while the block runs, after waiting a fair turn; the time is charged."""
        turn = self._acquire(client)
        try:
            yield
        finally:
            self._release(turn)

    def spent(self, client: Hashable) -> float:
        """``client``'s decayed seconds in a slot, its running computations' seconds so far included."""
        with self._cond:
            return self._spent_now(client, self._clock())

    def order(self) -> list[Hashable]:
        """The waiting clients, in the order their turns come (one entry per waiting computation)."""
        with self._cond:
            return [t.client for t in self._order(self._clock())]

    def running(self) -> int:
        with self._cond:
            return len(self._running)

    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    # Under the lock ---------------------------------------------------------------------------------------------
    def _acquire(self, client: Hashable) -> _Turn:
        with self._cond:
            turn = _Turn(client, next(self._arrivals))
            self._waiting.append(turn)
            try:
                while True:
                    free = self.slots - len(self._running)
                    if free > 0 and turn in self._order(self._clock())[:free]:
                        break
                    # Bounded: a running computation's time grows, which can change the order without a notify.
                    self._cond.wait(0.05)
            except BaseException:
                self._waiting.remove(turn)
                self._cond.notify_all()
                raise
            self._waiting.remove(turn)
            turn.started = self._clock()
            self._running.append(turn)
            return turn

    def _release(self, turn: _Turn) -> None:
        with self._cond:
            now = self._clock()
            self._running.remove(turn)
            self._spent[turn.client] = (self._decayed(turn.client, now) + max(0.0, now - turn.started), now)
            if len(self._spent) > _PRUNE_AT:
                busy = {t.client for t in (*self._running, *self._waiting)}
                for client in [c for c in self._spent if c not in busy and self._decayed(c, now) < _FORGOTTEN]:
                    del self._spent[client]
            self._cond.notify_all()

    def _decayed(self, client: Hashable, now: float) -> float:
        total, since = self._spent.get(client, (0.0, now))
        return total * math.exp(-max(0.0, now - since) / self._decay_s)

    def _spent_now(self, client: Hashable, now: float) -> float:
        running = sum(now - t.started for t in self._running if t.client == client)
        return self._decayed(client, now) + running

    def _order(self, now: float) -> list[_Turn]:
        def key(turn: _Turn) -> tuple[float, int, int]:
            mine = sum(t.client == turn.client for t in self._running)
            return (self._spent_now(turn.client, now), mine, turn.seq)

        return sorted(self._waiting, key=key)
