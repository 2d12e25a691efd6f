"""Slots: one fair scheduler for everything that takes a shared server's CPU time. Policy only, no Streamlit.

Work comes in lanes (:func:`lanes`), each with slots of its own, so that one kind of work never waits behind another:

- :data:`HEAVY`, heavy actions (a training race, the benchmark sweep, reading a large file):
  :attr:`~server.limits.Limits.concurrent` at once, one per client; each gets at most ``action_cpu_s`` seconds
  of CPU, a client at most ``client_cpu_s`` in any ``window_s``; and while anyone waits, a running action keeps its
  slot for ``share_s`` seconds only (:meth:`Ticket.check` stops it after that). A queue of at most ``waiting``;
  whoever waits is told their place and about when their turn comes, whoever can't wait is told when to try again
  (:class:`~server.limits.Busy`, :class:`~server.limits.Waiting`).
- :data:`DOWNLOADS`, downloads built when clicked: the same, with a short share and a short queue.
- :data:`MISSES`, computations of results not cached yet (:class:`server.budget.Budget`): ``misses_at_once`` at
  once; they wait as long as it takes and are never refused. (First come, first served, four sessions flooding new
  seeds moved a 30-session class's p95 from 50 to 327 ms.)

One accounting for every lane: the seconds each client has held a slot, wall time and not CPU (the slot is what others
wait for, and on a busy server an action holds it longer than the CPU it gets), summed with a decay by ``e`` every
:data:`DECAY_S` seconds, a running action's time so far included. In every queue the client that has held a slot least
lately goes first; ties go to the client with fewer running, then to the earlier arrival. One client for everyone
(``None``, as the page kit passes with ``LNVIZ_LIMITS=off``) is first come, first served. A client is
:func:`server.who.client`'s key.

Turns are given, not taken: whenever a slot frees or a waiter comes or goes, the scheduler hands the free slots to the
waiters whose turn it is, under its one lock, and each wakes to find its :class:`Ticket` (or why not).

CPU time is the running thread's (``time.thread_time``, injectable): torch's intra-op threads count only for its
share, so a server keeps torch at one thread (:attr:`~server.limits.Limits.thread_control`).
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from server.limits import LIFTED, Busy, BusyError, Limits, OverBudget, Waiting, Yielded, whole_seconds

HEAVY, DOWNLOADS, MISSES = "heavy", "downloads", "misses"
DECAY_S = 60.0  # a client's seconds in a slot count for about this long
_PRUNE_AT = 256  # clients remembered before those with nothing left to count are forgotten
_FORGOTTEN = 1e-3  # decayed seconds below which a client is as good as new


@dataclass(frozen=True)
class Lane:
    """One kind of work: how many run at once, and the rules of its queue. The defaults: no limit but ``slots``."""

    slots: int
    per_client: int = LIFTED  # running at once for one client; another of its own waits (or is refused)
    waiting: int = LIFTED  # waiters at once; past that, refused
    share_s: float = math.inf  # a running one keeps its slot this long while another waits (Ticket.check)
    action_cpu_s: float = math.inf  # CPU seconds one may use
    client_cpu_s: float = math.inf  # CPU seconds one client may use per window
    window_s: float = 600.0


def lanes(lim: Limits) -> dict[str, Lane]:
    """The process's lanes under ``lim``."""
    heavy = Lane(
        lim.concurrent, lim.per_client, lim.waiting, lim.share_s, lim.action_cpu_s, lim.client_cpu_s, lim.window_s
    )
    return {
        HEAVY: heavy,
        DOWNLOADS: replace(heavy, waiting=lim.downloads_waiting, share_s=lim.download_share_s),
        MISSES: Lane(lim.misses_at_once),
    }


@dataclass(eq=False)  # one is itself only: found and removed by identity
class Ticket:
    """One action holding a slot: its client, its lane, its CPU budget and what it has spent."""

    client: Hashable
    action: str
    lane: str
    budget_s: float
    started: float  # scheduler clock
    _cpu: Callable[[], float] = field(repr=False)
    _cpu_start: float = field(repr=False)
    _slots: Slots = field(repr=False)
    spent_s: float = 0.0  # as of the last check

    def check(self) -> float:
        """The CPU seconds spent so far; raises :class:`OverBudget` past the budget, or :class:`Yielded` once
        its share is over while another client waits in its lane. Call it between steps."""
        self.spent_s = self._cpu() - self._cpu_start
        if self.spent_s > self.budget_s:
            raise OverBudget(self.action, self.spent_s, self.budget_s)
        self._slots._yield_if_waited_for(self)
        return self.spent_s

    @property
    def left_s(self) -> float:
        return max(0.0, self.budget_s - self.spent_s)


@dataclass(eq=False)  # one is itself only: found and removed by identity
class Place:
    """A place in a lane's queue; ``outcome`` is its :class:`Ticket` (or a :class:`Busy`) once its turn came."""

    client: Hashable
    action: str
    lane: str
    seq: int  # arrival order
    outcome: Ticket | Busy | None = None


@dataclass
class _Account:
    """What one client has used: seconds in a slot (decayed, as of ``as_of``) and the CPU of each that ended."""

    held_s: float
    as_of: float
    cpu: deque[tuple[float, float, str]] = field(default_factory=deque)  # (end, CPU seconds, lane), oldest first


class Slots:
    """Admits work to its lanes' slots, fairly; thread-safe, one per server process. Clocks injectable."""

    def __init__(
        self,
        lanes: Mapping[str, Lane],
        clock: Callable[[], float] = time.monotonic,
        cpu_clock: Callable[[], float] = time.thread_time,
        decay_s: float = DECAY_S,
    ) -> None:
        self.lanes = dict(lanes)
        self._clock, self._cpu_clock, self._decay_s = clock, cpu_clock, decay_s
        self._cond = threading.Condition(threading.RLock())  # re-entrant: a place left after its turn came ends it
        self._running: list[Ticket] = []
        self._waiting: list[Place] = []
        self._arrivals = itertools.count()
        self._accounts: dict[Hashable, _Account] = {}

    @classmethod
    def from_limits(
        cls, lim: Limits, clock: Callable[[], float] = time.monotonic, cpu_clock: Callable[[], float] = time.thread_time
    ) -> Slots:
        """The process's scheduler under ``lim``, with its three lanes (:func:`lanes`)."""
        return cls(lanes(lim), clock, cpu_clock)

    # Waiting for a turn -----------------------------------------------------------------------------------------
    def begin(
        self,
        client: Hashable,
        action: str,
        wait_s: float = 0.0,
        on_wait: Callable[[Waiting], None] | None = None,
        lane: str = HEAVY,
    ) -> Ticket | Busy:
        """A :class:`Ticket` to run ``action`` for ``client`` in ``lane`` now, or why not (:class:`Busy`).

        With every slot taken, the action waits up to ``wait_s`` seconds in the
        queue for one; ``on_wait`` hears its :class:`Waiting` place about once
        a second, outside the lock, and may raise to give up the place (a
        Streamlit rerun does). Without ``wait_s`` it is refused at once.
        """
        with self._cond:
            got = self._ask(client, action, lane, wait_s > 0)
            if not isinstance(got, Place):
                return got
            deadline = self._clock() + wait_s
            try:
                while got.outcome is None:
                    now = self._clock()
                    if now >= deadline:
                        return self._give_up(got, now)
                    if on_wait is not None:
                        heard = Waiting(self._place(got), whole_seconds(self._eta(got.lane, now, self._place(got))))
                        self._cond.release()
                        try:
                            on_wait(heard)
                        finally:
                            self._cond.acquire()
                    if got.outcome is None:
                        self._cond.wait(min(1.0, max(0.0, deadline - self._clock())))
            except BaseException:
                self._forget(got)
                raise
            if isinstance(got.outcome, Ticket):
                got.outcome._cpu_start = self._cpu_clock()  # the CPU clock of the thread that runs it
            return got.outcome

    @contextmanager
    def slot(self, client: Hashable, lane: str = MISSES) -> Iterator[Ticket]:
        """Hold a slot of ``lane`` (one that never refuses, else :class:`BusyError`) for ``client`` while the
        block runs, after a fair turn; the time is charged."""
        got = self.begin(client, "", wait_s=math.inf, lane=lane)
        if isinstance(got, Busy):
            raise BusyError(got)
        try:
            yield got
        finally:
            self.end(got)

    def ask(self, client: Hashable, action: str, lane: str = HEAVY, wait: bool = False) -> Ticket | Busy | Place:
        """:meth:`begin` without blocking: a :class:`Ticket`, a refusal, or with ``wait`` a :class:`Place`
        whose ``outcome`` the scheduler fills in when its turn comes. For a caller
        that drives time itself, as a simulation does; CPU is read on the clock of the thread that asked."""
        with self._cond:
            got = self._ask(client, action, lane, wait)
            if isinstance(got, Place) and got.outcome is not None:
                return got.outcome
            return got

    def end(self, ticket: Ticket) -> None:
        """The work is over (done, stopped or failed): free its slot and charge its time to its client."""
        cpu = self._cpu_clock() - ticket._cpu_start
        with self._cond:
            if ticket not in self._running:
                return
            self._running.remove(ticket)
            now = self._clock()
            account = self._accounts.setdefault(ticket.client, _Account(0.0, now))
            account.held_s, account.as_of = self._decayed(account, now) + max(0.0, now - ticket.started), now
            if self.lanes[ticket.lane].client_cpu_s < math.inf:
                account.cpu.append((now, cpu, ticket.lane))
            if len(self._accounts) > _PRUNE_AT:
                self._prune(now)
            self._dispatch(now)
            self._cond.notify_all()

    # What a page or a test reads ----------------------------------------------------------------------------------
    def spent(self, client: Hashable) -> float:
        """``client``'s decayed seconds in a slot, its running work's seconds so far included."""
        with self._cond:
            return self._held(client, self._clock())

    def order(self, lane: str = MISSES) -> list[Hashable]:
        """The clients waiting in ``lane``, in the order their turns come (one entry per waiter)."""
        with self._cond:
            return [p.client for p in self._order(lane, self._clock())]

    def running(self, lane: str | None = None) -> int:
        with self._cond:
            return sum(lane in (None, t.lane) for t in self._running)

    def waiting(self, lane: str | None = None) -> int:
        with self._cond:
            return sum(lane in (None, p.lane) for p in self._waiting)

    # Under the lock ---------------------------------------------------------------------------------------------
    def _ask(self, client: Hashable, action: str, lane: str, may_wait: bool) -> Ticket | Busy | Place:
        rules, now = self.lanes[lane], self._clock()
        mine = [t for t in self._running if t.client == client and t.lane == lane]
        if len(mine) >= rules.per_client and not may_wait:
            detail = "your last heavy action, in this tab or another, is running."
            return Busy("client", whole_seconds(mine[0].left_s), detail)
        spent = self._over_budget(client, lane, now)
        if spent is not None:
            return spent
        queue = [p for p in self._waiting if p.lane == lane]
        if len(mine) < rules.per_client and not queue and self._in(lane) < rules.slots:
            return self._admit(client, action, lane, now)
        if not may_wait:
            return self._refuse(lane, now, len(queue) + 1)
        if len(queue) >= rules.waiting:
            # A full queue keeps the clients that have held least lately: a newcomer who has held less than its
            # last waiter takes that place, and the waiter is told when to try again. Else clients that ask back
            # to back keep the queue full, and whoever comes between their asks never gets in.
            last = self._order(lane, now)[-1]
            if self._held(client, now) >= self._held(last.client, now):
                return self._refuse(lane, now, len(queue) + 1)
            self._waiting.remove(last)
            last.outcome = self._refuse(lane, now, len(queue))
        place = Place(client, action, lane, next(self._arrivals))
        self._waiting.append(place)
        # The client's own last action may still be unwinding (a rerun starts a new script before the one it
        # interrupts has stopped), or running in another tab: it waits for it rather than being refused.
        self._dispatch(now)
        self._cond.notify_all()  # the running actions' shares now count
        return place

    def _admit(self, client: Hashable, action: str, lane: str, now: float) -> Ticket:
        rules = self.lanes[lane]
        budget = min(rules.action_cpu_s, rules.client_cpu_s - sum(cpu for _, cpu in self._window(client, lane, now)))
        ticket = Ticket(client, action, lane, budget, now, self._cpu_clock, self._cpu_clock(), self)
        self._running.append(ticket)
        return ticket

    def _dispatch(self, now: float) -> None:
        """Give each lane's free slots to the waiters whose turn it is."""
        for lane, rules in self.lanes.items():
            while self._in(lane) < rules.slots:
                busy = Counter(t.client for t in self._running if t.lane == lane)
                ready = [p for p in self._order(lane, now) if busy[p.client] < rules.per_client]
                if not ready:
                    break
                turn = ready[0]
                self._waiting.remove(turn)
                turn.outcome = self._over_budget(turn.client, lane, now) or self._admit(
                    turn.client, turn.action, lane, now
                )

    def _give_up(self, place: Place, now: float) -> Ticket | Busy:
        if place.outcome is not None:
            return place.outcome
        refused = self._refuse(place.lane, now, self._place(place))
        self._forget(place)
        return refused

    def _forget(self, place: Place) -> None:
        """``place`` leaves: out of the queue, or, if its turn came meanwhile, its slot freed."""
        if place in self._waiting:
            self._waiting.remove(place)
            self._dispatch(self._clock())
            self._cond.notify_all()
        elif isinstance(place.outcome, Ticket):
            self.end(place.outcome)  # the lock is re-entrant

    def _in(self, lane: str) -> int:
        return sum(t.lane == lane for t in self._running)

    def _decayed(self, account: _Account, now: float) -> float:
        return account.held_s * math.exp(-max(0.0, now - account.as_of) / self._decay_s)

    def _held(self, client: Hashable, now: float) -> float:
        account = self._accounts.get(client)
        past = self._decayed(account, now) if account is not None else 0.0
        return past + sum(now - t.started for t in self._running if t.client == client)

    def _order(self, lane: str, now: float) -> list[Place]:
        """``lane``'s queue in the order turns come: least held lately, then fewer running, then arrival."""
        running = Counter(t.client for t in self._running)
        queue = [p for p in self._waiting if p.lane == lane]
        return sorted(queue, key=lambda p: (self._held(p.client, now), running[p.client], p.seq))

    def _place(self, place: Place) -> int:
        return self._order(place.lane, self._clock()).index(place) + 1

    def _window(self, client: Hashable, lane: str, now: float) -> list[tuple[float, float]]:
        """(end, CPU seconds) of ``client``'s work in ``lane`` that ended within the lane's window, oldest first."""
        account, since = self._accounts.get(client), now - self.lanes[lane].window_s
        return [(end, cpu) for end, cpu, ln in account.cpu if ln == lane and end > since] if account else []

    def _over_budget(self, client: Hashable, lane: str, now: float) -> Busy | None:
        rules, spent = self.lanes[lane], self._window(client, lane, now)
        used = sum(cpu for _, cpu in spent)
        if used < rules.client_cpu_s:
            return None
        retry = rules.window_s
        for end, cpu in spent:  # oldest first: until enough has left the window to admit one again
            used -= cpu
            if used < rules.client_cpu_s:
                retry = end + rules.window_s - now
                break
        budget = f"your {rules.client_cpu_s:.0f} s of CPU for heavy actions in {rules.window_s / 60:.0f} minutes"
        return Busy("client", whole_seconds(retry), f"you have used {budget}.")

    def _eta(self, lane: str, now: float, place: int) -> float:
        """Seconds until the ``place``-th waiter's turn, if every action ahead keeps its slot for its whole share."""
        rules = self.lanes[lane]
        share = rules.share_s
        free = [max(now, t.started + share) for t in self._running if t.lane == lane]
        free += [now] * max(0, min(place, rules.slots - len(free)))
        heapq.heapify(free)
        turn = now
        for _ in range(place):
            turn = heapq.heappop(free)
            heapq.heappush(free, turn + share)
        return turn - now

    def _refuse(self, lane: str, now: float, place: int) -> Busy:
        running = [t for t in self._running if t.lane == lane]
        queue = sum(p.lane == lane for p in self._waiting)
        n = len(running)
        if queue:
            wait = self._eta(lane, now, place)
            detail = f"{n} heavy action{'s' if n != 1 else ''} running and {queue} waiting"
        else:  # nobody waits, so the running actions keep their slots up to their budgets
            wait = min((t.left_s for t in running), default=1.0)
            detail = f"{n} heavy action{'s are' if n != 1 else ' is'} running"
        return Busy("server", whole_seconds(wait), f"{detail} for other visitors, the most this shared server takes.")

    def _yield_if_waited_for(self, ticket: Ticket) -> None:
        """Raise :class:`Yielded` if ``ticket`` has had its share while another client waits in its lane."""
        with self._cond:
            ran = self._clock() - ticket.started
            share = self.lanes[ticket.lane].share_s
            if ran >= share and any(p.lane == ticket.lane and p.client != ticket.client for p in self._waiting):
                raise Yielded(ticket.action, ran, share)

    def _prune(self, now: float) -> None:
        """Forget the clients with nothing running or waiting, next to nothing held, and no CPU in a window."""
        busy = {t.client for t in self._running} | {p.client for p in self._waiting}
        for client, account in list(self._accounts.items()):
            account.cpu = deque(e for e in account.cpu if e[0] > now - self.lanes[e[2]].window_s)
            if client not in busy and self._decayed(account, now) < _FORGOTTEN and not account.cpu:
                del self._accounts[client]
