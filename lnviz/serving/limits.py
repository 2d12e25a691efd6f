"""How much one visitor may make a shared server do: heavy actions and uploads. Policy only, no Streamlit.

A hosted lnviz serves a whole class from one process. Three things bound what
one visitor can take from the others:

- :class:`HeavyGate`, for heavy actions (a training race, the benchmark sweep,
  a large download): at most :attr:`Limits.concurrent` of them run at once in
  the process; each gets at most :attr:`Limits.action_cpu_s` seconds of CPU; a
  client gets at most :attr:`Limits.session_cpu_s` seconds in any
  :attr:`Limits.window_s`. Fair shares, not first come first served: an action
  that finds every slot taken may wait in a queue, where the client that has
  held a slot least lately goes first; and while anyone waits, a running
  action keeps its slot for :attr:`Limits.share_s` seconds only
  (:meth:`Ticket.check` stops it after that). Whoever waits is told their place
  and about when their turn comes; whoever can't wait is told when to try again.
- :class:`UploadQuota`, for uploaded files held in memory: per session, a few
  files and bytes at once (older ones make room for newer), a number of uploads
  per window; and a ceiling for the whole process.
- :attr:`Limits.thread_control`: whether a visitor may change torch's thread
  count, which is process-wide: never on a shared server.

A *client* is what the limits are kept per (:func:`client_key`): one browser,
known by the random token in Streamlit's XSRF cookie, which every tab of that
browser sends; or, without that cookie, one session. Not the address: a
classroom behind one NAT shares it.

The limits are on by default. ``LNVIZ_LIMITS=off`` lifts them all, for someone
running lnviz alone on their own machine (:meth:`Limits.from_env`).

How many heavy actions may run at once follows the CPUs the process may use:
the container's quota (``/sys/fs/cgroup/cpu.max``) and its CPU affinity, not
the host's core count (:func:`lnviz.serving.cpus.usable_cpus`).

CPU time is read by a clock the caller gives (``time.thread_time`` by default:
the CPU time of the thread running the action). Work that torch fans out to its
intra-op threads is counted only for the calling thread's share, so a server
keeps torch at one thread for a heavy action (``torch.set_num_threads`` is
process-wide, see :attr:`Limits.thread_control`).
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import heapq
import itertools
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import ClassVar, TypeVar

from lnviz.serving import cpus as cpu_sizing

ENV = "LNVIZ_LIMITS"  # "off" lifts every limit
OFF_VALUES = ("off", "0", "false", "no")
CACHE_ENV = "LNVIZ_CACHE_MIB"  # Limits.cache_bytes, in MiB
OWN_DATA_ENV = "LNVIZ_OWN_DATA_MIB"  # Limits.own_data_bytes, in MiB
MIB = 2**20
LIFTED = 2**53  # a count or a size no one reaches: what off() gives every int (exact in a float, Lua and JS)
T = TypeVar("T")
_PRUNE_AT = 256  # sessions remembered before the ones with nothing left in their window are forgotten


@dataclass(frozen=True)
class Limits:
    """Every number a shared server limits with. The defaults suit a shared server; :meth:`off` lifts them."""

    enabled: bool = True
    # Heavy actions (a race, the sweep): lnviz.serving.slots' heavy lane
    concurrent: int = 1  # heavy actions running at once in the process (from_env: half the cores)
    per_client: int = 1  # heavy actions, and downloads, one client runs at once
    action_cpu_s: float = 60.0  # CPU seconds one heavy action may use
    session_cpu_s: float = 180.0  # CPU seconds of heavy actions one client may use per window
    window_s: float = 600.0  # the window for the per-client budgets, in seconds
    share_s: float = 15.0  # seconds a running heavy action keeps its slot while another waits for one
    waiting: int = 16  # heavy actions that may wait for a slot at once; past that, "try again in N s"
    # Downloads built when clicked: a lane of their own, so a download never waits behind a race
    download_share_s: float = 5.0  # what a download is expected to take at most, for "try again in N s"
    download_wait_s: float = 10.0  # how long a download's build waits for its turn (a browser's request waits too)
    downloads_waiting: int = 2  # downloads waiting at once: each holds one of Streamlit's worker threads
    # Computed results (lnviz.serving.budget)
    cache_bytes: int = 256 * MIB  # the page kit's cache of computed results, per process (LNVIZ_CACHE_MIB)
    misses_at_once: int = 2  # computations of results not yet cached, at once in a process
    # Uploaded files held in memory (UploadQuota)
    upload_files: int = 2  # files a session holds at once: the uploader's one, and its replacement in flight
    upload_bytes: int = 64 * MIB  # bytes a session holds at once (two of the largest file)
    uploads_per_window: int = 20  # uploads a session may send per window
    upload_total_bytes: int = 512 * MIB  # bytes all sessions hold at once
    # Visitors' own matrices (lnviz.serving.own_store, own_share)
    own_data_bytes: int = 128 * MIB  # per process (LNVIZ_OWN_DATA_MIB): sixteen of the largest, 8 MiB each
    own_data_session_bytes: int = 16 * MIB  # one session's matrix and its replacement
    own_data_ttl_s: float = 3600.0  # a matrix unused this long is dropped
    own_data_protect_s: float = 120.0  # a matrix used this recently is never dropped for another's
    shared_bytes_per_client: int = 64 * MIB  # grids a client stores for links per quota window: eight of the largest
    # The class poll (lnviz.serving.rooms)
    max_voters: int = 2000  # voters one round counts; a new voter past them is refused
    voters_per_client: int = 5  # voter ids one browser may vote as in a room: a shared classroom computer
    voters_per_address: int = 500  # voter ids one address may vote as in a room: a class behind one NAT address
    votes_per_rate_window: int = 30  # votes one voter may send per rate window in one room
    rate_window_s: float = 60.0
    rooms_per_client: int = 10  # rooms one browser may open per open window: a lecturer's every section
    rooms_per_address: int = 60  # rooms one address may open per open window: a campus behind one NAT address
    open_window_s: float = 3600.0
    max_rooms: int = 10_000  # rooms the in-memory store holds at once; a new one past them is refused
    quota_window_s: float = 3600.0  # the window of the store's byte quotas (shared_bytes_per_client)
    # The protocol: the longest list of events (JSON) the stage may send in one message. A browser sends one
    # event per release or click, about 80 characters each, and the events of one rerun at most: a few dozen.
    component_events_chars: int = 16 * 1024

    # The spans a budget is counted over: no limit themselves, so off() keeps them (the budgets in them go).
    WINDOWS: ClassVar[tuple[str, ...]] = ("window_s", "rate_window_s", "open_window_s", "quota_window_s")

    @classmethod
    def off(cls) -> Limits:
        """No limit at all: one person on their own machine. Every number but a window is lifted."""
        lifted = {
            f.name: math.inf if isinstance(f.default, float) else LIFTED
            for f in fields(cls)
            if f.name != "enabled" and f.name not in cls.WINDOWS
        }
        return cls(enabled=False, **lifted)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], cpus: int, threads: int = 1) -> Limits:
        """The limits for a process on ``cpus`` cores whose torch kernels use ``threads`` threads.

        ``LNVIZ_LIMITS=off`` (or 0, false, no) lifts every limit. Otherwise heavy
        actions may keep at most half the cores busy: ``cpus // 2 // threads``
        of them at once, at least one. ``cpus`` is what the process may use
        (:func:`lnviz.serving.cpus.usable_cpus`), not the host's count.
        ``LNVIZ_CACHE_MIB`` and ``LNVIZ_OWN_DATA_MIB``, whole MiB, set those
        two memory budgets, with the limits off too.
        """
        lim = cls.off() if environ.get(ENV, "").strip().lower() in OFF_VALUES else cls()
        if lim.enabled:
            lim = replace(lim, concurrent=max(1, cpus // 2 // max(1, threads)))
        mib = {
            name: environ.get(var, "").strip()
            for name, var in (("cache_bytes", CACHE_ENV), ("own_data_bytes", OWN_DATA_ENV))
        }
        return replace(lim, **{name: int(raw) * MIB for name, raw in mib.items() if raw.isdigit()})

    @property
    def thread_control(self) -> bool:
        """Whether a visitor may set torch's (process-wide) thread count: only with the limits off."""
        return not self.enabled


@functools.cache
def current() -> Limits:
    """This process's limits, read once: from the environment and the CPUs it may use (:meth:`Limits.from_env`).

    The one place that answers "are the limits on?". Tests that change the
    environment call ``current.cache_clear()``.
    """
    return Limits.from_env(os.environ, cpu_sizing.usable_cpus(), cpu_sizing.server_threads())


def client_key(session: str, xsrf_cookie: str | None) -> str:
    """Whom the limits count an action against: the browser if its XSRF cookie is readable, else the session.

    Streamlit's XSRF cookie ("2|mask|masked token|time") carries one random
    token per browser, masked afresh on every page load; every tab of the
    browser sends it. Unmasked and hashed, it names the browser without
    keeping the token. A client that sends no cookie (a script) is one session.
    """
    parts = (xsrf_cookie or "").split("|")
    if len(parts) == 4 and parts[0] == "2":
        try:
            mask, masked = binascii.unhexlify(parts[1]), binascii.unhexlify(parts[2])
        except (binascii.Error, ValueError):
            mask = b""
        if len(mask) == 4 and masked:
            token = bytes(b ^ mask[i % 4] for i, b in enumerate(masked))
            return "browser " + hashlib.sha256(token).hexdigest()[:16]
    return "session " + session


def _seconds(s: float) -> int:
    """Whole seconds to wait, at least 1."""
    return max(1, math.ceil(s))


@dataclass(frozen=True)
class Busy:
    """A refusal: why, and in how many seconds trying again may work."""

    why: str  # "server": enough heavy actions are running or waiting; "session": this client's budget is spent
    retry_after_s: int
    detail: str

    @property
    def message(self) -> str:
        return f"Busy: {self.detail} Try again in {self.retry_after_s} s."


@dataclass(frozen=True)
class Waiting:
    """An action waiting for a slot: its place in the queue (1: next) and about when its turn comes."""

    place: int
    eta_s: int

    @property
    def message(self) -> str:
        ahead = "yours is next" if self.place == 1 else f"{self.place - 1} ahead of yours"
        return f"Waiting for a turn on this shared server: {ahead}, in about {self.eta_s} s."


class BusyError(RuntimeError):
    """Raised where a :class:`Busy` can't be shown, such as a download built in the background."""

    def __init__(self, busy: Busy) -> None:
        super().__init__(busy.message)
        self.busy = busy


class OverBudget(RuntimeError):
    """A heavy action used up its CPU budget; :meth:`Ticket.check` raises it between steps."""

    def __init__(self, action: str, spent_s: float, budget_s: float) -> None:
        self.action, self.spent_s, self.budget_s = action, spent_s, budget_s
        super().__init__(
            f"Stopped: {action} used {spent_s:.0f} s of CPU, the most one action gets on this shared server "
            f"({budget_s:.0f} s). Try a smaller setting."
        )


class Yielded(OverBudget):
    """A heavy action gave its slot to one that waited, after its share (:attr:`Limits.share_s`)."""

    def __init__(self, action: str, ran_s: float, share_s: float) -> None:
        RuntimeError.__init__(
            self,
            f"Stopped: {action} ran {ran_s:.0f} s while another visitor waited for a turn; each action gets "
            f"{share_s:.0f} s when others wait. Try a smaller setting, or run it again.",
        )
        self.action, self.spent_s, self.budget_s = action, ran_s, share_s


@dataclass(eq=False)  # one is itself only: found and removed by identity
class Ticket:
    """One heavy action while it runs: its client, its CPU budget and what it has spent."""

    session: str  # the client (see :func:`client_key`)
    action: str
    budget_s: float
    started: float  # gate clock
    _cpu: Callable[[], float]
    _cpu_start: float
    spent_s: float = 0.0  # as of the last check
    _gate: HeavyGate | None = field(default=None, repr=False)

    def check(self) -> float:
        """The CPU seconds spent so far; raises :class:`OverBudget` past the budget, or :class:`Yielded` once
        its share is over while another action waits. Call it between steps."""
        self.spent_s = self._cpu() - self._cpu_start
        if self.spent_s > self.budget_s:
            raise OverBudget(self.action, self.spent_s, self.budget_s)
        if self._gate is not None:
            self._gate._yield_if_waited_for(self)
        return self.spent_s

    @property
    def left_s(self) -> float:
        return max(0.0, self.budget_s - self.spent_s)


@dataclass(eq=False)  # one is itself only: found and removed by identity
class _Waiter:
    session: str
    seq: int  # arrival order


@dataclass(eq=False)  # one is itself only: found and removed by identity
class HeavyGate:
    """Admits heavy actions under :class:`Limits`, fairly; thread-safe, one per server process."""

    limits: Limits
    clock: Callable[[], float] = time.monotonic
    cpu_clock: Callable[[], float] = time.thread_time
    _lock: threading.Condition = field(default_factory=threading.Condition, repr=False)
    _running: list[Ticket] = field(default_factory=list, repr=False)
    _waiting: list[_Waiter] = field(default_factory=list, repr=False)
    _arrivals: Iterator[int] = field(default_factory=itertools.count, repr=False)
    # client -> (end, CPU seconds, seconds it held a slot) of each action that ended in the window
    _spent: dict[str, deque[tuple[float, float, float]]] = field(default_factory=dict, repr=False)

    def _session_spent(self, session: str, now: float) -> deque[tuple[float, float, float]]:
        spent = self._spent.get(session, deque())
        while spent and spent[0][0] <= now - self.limits.window_s:
            spent.popleft()
        if not spent:
            self._spent.pop(session, None)
        return spent

    def begin(
        self,
        session: str,
        action: str,
        wait_s: float = 0.0,
        on_wait: Callable[[Waiting], None] | None = None,
    ) -> Ticket | Busy:
        """A :class:`Ticket` to run ``action`` for the client ``session`` now, or why not (:class:`Busy`).

        With every slot taken, the action waits up to ``wait_s`` seconds in the
        queue for one; ``on_wait`` hears its :class:`Waiting` place about once
        a second, outside the lock, and may raise to give up the place (a
        Streamlit rerun does). Without ``wait_s`` it is refused at once.
        """
        me: _Waiter | None = None
        try:
            with self._lock:
                deadline = self.clock() + wait_s
                while True:
                    got = self._try(session, action, me, wait_s > 0)
                    if isinstance(got, _Waiter):
                        me = got
                        now = self.clock()
                        if now >= deadline:
                            return self._refuse_server(now, self._place(me))
                        waiting = Waiting(self._place(me), _seconds(self._eta(now, self._place(me))))
                        if on_wait is not None:
                            self._lock.release()
                            try:
                                on_wait(waiting)
                            finally:
                                self._lock.acquire()
                        self._lock.wait(min(1.0, max(0.0, deadline - self.clock())))
                        continue
                    me = None  # admitted or refused: _try has left the queue
                    return got
        finally:
            if me is not None:
                with self._lock:
                    if me in self._waiting:
                        self._waiting.remove(me)
                        self._lock.notify_all()

    def _try(self, session: str, action: str, me: _Waiter | None, may_wait: bool) -> Ticket | Busy | _Waiter:
        """Under the lock: admit, refuse, or (keep) queue the client's action."""
        lim = self.limits
        now = self.clock()
        if not lim.enabled:
            return self._admit(session, action, math.inf, now, me)
        mine = [t for t in self._running if t.session == session]
        if mine and not may_wait:
            return self._leave(
                me,
                Busy(
                    "session", _seconds(mine[0].left_s), "your last heavy action, in this tab or another, is running."
                ),
            )
        spent = self._session_spent(session, now)
        used = sum(cpu for _, cpu, _ in spent)
        if used >= lim.session_cpu_s:
            return self._leave(
                me,
                Busy(
                    "session",
                    _seconds(self._session_retry(spent, used, now)),
                    f"you have used your {lim.session_cpu_s:.0f} s of CPU for heavy actions "
                    f"in {lim.window_s / 60:.0f} minutes.",
                ),
            )
        budget = min(lim.action_cpu_s, lim.session_cpu_s - used)
        if me is None:
            if not mine and not self._waiting and len(self._running) < lim.concurrent:
                return self._admit(session, action, budget, now, None)
            if not may_wait or len(self._waiting) >= lim.waiting:
                return self._refuse_server(now, len(self._waiting) + 1)
            me = _Waiter(session, next(self._arrivals))
            self._waiting.append(me)
            self._lock.notify_all()  # the running actions' shares now count
        # The client's own last action may still be unwinding (a rerun starts a new script before the one it
        # interrupts has stopped), or running in another tab: wait for it rather than refuse.
        busy = {t.session for t in self._running}
        ready = [w for w in self._order() if w.session not in busy]
        if me in ready and ready.index(me) < lim.concurrent - len(self._running):
            return self._admit(session, action, budget, now, me)
        return me

    def _admit(self, session: str, action: str, budget: float, now: float, me: _Waiter | None) -> Ticket:
        self._leave(me, None)
        ticket = Ticket(session, action, budget, now, self.cpu_clock, self.cpu_clock(), _gate=self)
        self._running.append(ticket)
        return ticket

    def _leave(self, me: _Waiter | None, then: T) -> T:
        if me is not None and me in self._waiting:
            self._waiting.remove(me)
            self._lock.notify_all()
        return then

    def _order(self) -> list[_Waiter]:
        """The queue in the order turns come: the client that held a slot least in the window first, then by
        arrival. Time holding a slot, not CPU: the slot is what others wait for, and on a busy server an action
        holds it longer than the CPU it gets."""
        now = self.clock()

        def held(w: _Waiter) -> float:
            return sum(h for _, _, h in self._session_spent(w.session, now))

        return sorted(self._waiting, key=lambda w: (held(w), w.seq))

    def _place(self, me: _Waiter) -> int:
        return self._order().index(me) + 1

    def _eta(self, now: float, place: int) -> float:
        """Seconds until the ``place``-th waiter's turn, if every action ahead keeps its slot for its whole share."""
        share = self.limits.share_s
        free = [max(now, t.started + share) for t in self._running]
        free += [now] * max(0, self.limits.concurrent - len(free))
        heapq.heapify(free)
        turn = now
        for _ in range(place):
            turn = heapq.heappop(free)
            heapq.heappush(free, turn + share)
        return turn - now

    def _refuse_server(self, now: float, place: int) -> Busy:
        running = len(self._running)
        if self._waiting:
            wait = self._eta(now, place)
            detail = f"{running} heavy action{'s' if running != 1 else ''} running and {len(self._waiting)} waiting"
        else:  # nobody waits, so the running actions keep their slots up to their budgets
            wait = min((t.left_s for t in self._running), default=1.0)
            detail = f"{running} heavy action{'s are' if running != 1 else ' is'} running"
        return Busy("server", _seconds(wait), f"{detail} for other visitors, the most this shared server takes.")

    def _yield_if_waited_for(self, ticket: Ticket) -> None:
        """Raise :class:`Yielded` if ``ticket`` has had its share while an action waits for a slot."""
        with self._lock:
            ran = self.clock() - ticket.started
            if ran >= self.limits.share_s and any(w.session != ticket.session for w in self._waiting):
                raise Yielded(ticket.action, ran, self.limits.share_s)

    def _session_retry(self, spent: Sequence[tuple[float, float, float]], used: float, now: float) -> float:
        """Seconds until enough of the client's spending leaves the window to admit an action again."""
        for end, cpu, _ in spent:  # oldest first
            used -= cpu
            if used < self.limits.session_cpu_s:
                return end + self.limits.window_s - now
        return self.limits.window_s

    def end(self, ticket: Ticket) -> None:
        """The action is over (done, stopped or failed): free its slot and charge its CPU to its client."""
        spent = self.cpu_clock() - ticket._cpu_start
        with self._lock:
            if ticket in self._running:
                self._running.remove(ticket)
                self._lock.notify_all()
                if self.limits.enabled:
                    now = self.clock()
                    self._spent.setdefault(ticket.session, deque()).append((now, spent, now - ticket.started))
                    if len(self._spent) > _PRUNE_AT:
                        for session in list(self._spent):
                            self._session_spent(session, now)

    def running(self) -> int:
        with self._lock:
            return len(self._running)

    def waiting(self) -> int:
        with self._lock:
            return len(self._waiting)


class QuotaExceeded(RuntimeError):
    """An upload refused: the message says why and when to try again."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass
class UploadQuota:
    """Decides what an upload may keep in memory; thread-safe, one per server process.

    The caller (the Streamlit glue) holds the files; this only counts. For a
    new file it answers which of the session's older files to drop first, or
    refuses with :class:`QuotaExceeded`.
    """

    limits: Limits
    clock: Callable[[], float] = time.monotonic
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _sent: dict[str, deque[float]] = field(default_factory=dict, repr=False)  # session -> upload times

    def admit(self, session: str, size: int, held: Sequence[tuple[str, int]], server_bytes: int) -> list[str]:
        """The ids of ``session``'s files to drop (oldest first) so that a new file of ``size`` bytes fits.

        ``held``: the session's files as (file id, bytes), oldest first;
        ``server_bytes``: what every session holds together. Raises
        :class:`QuotaExceeded` when the session sends too many uploads, when
        the file alone is over the session's bytes, or when the server holds
        too much already.
        """
        lim = self.limits
        if not lim.enabled:
            return []
        with self._lock:
            now = self.clock()
            sent = self._sent.setdefault(session, deque())
            while sent and sent[0] <= now - lim.window_s:
                sent.popleft()
            if len(sent) >= lim.uploads_per_window:
                raise QuotaExceeded(
                    f"This session sent {len(sent)} files in {lim.window_s / 60:.0f} minutes, the most it may.",
                    _seconds(sent[0] + lim.window_s - now),
                )
            if size > lim.upload_bytes:
                raise QuotaExceeded(f"The file is over this session's {lim.upload_bytes // MIB} MiB.", 0)
            kept = list(held)
            drop: list[str] = []
            while kept and (len(kept) + 1 > lim.upload_files or sum(n for _, n in kept) + size > lim.upload_bytes):
                drop.append(kept.pop(0)[0])
            freed = sum(n for fid, n in held if fid in drop)
            if server_bytes - freed + size > lim.upload_total_bytes:
                raise QuotaExceeded("The server holds as many uploaded files as it can right now.", 30)
            sent.append(now)
            if len(self._sent) > _PRUNE_AT:
                for other in [k for k, times in self._sent.items() if times[-1] <= now - lim.window_s]:
                    del self._sent[other]
            return drop
