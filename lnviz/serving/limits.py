"""How much one visitor may make a shared server do: heavy actions and uploads. Policy only, no Streamlit.

A hosted lnviz serves a whole class from one process. Three things bound what
one visitor can take from the others:

- :class:`HeavyGate`, for heavy actions (a training race, the benchmark sweep,
  a large download): at most :attr:`Limits.concurrent` of them run at once in
  the process; each gets at most :attr:`Limits.action_cpu_s` seconds of CPU; a
  session gets at most :attr:`Limits.session_cpu_s` seconds in any
  :attr:`Limits.window_s`. Over a limit, :meth:`HeavyGate.begin` answers at
  once with a :class:`Busy` ("try again in N s") instead of queueing, so the
  other sessions' reruns are never kept waiting behind it.
- :class:`UploadQuota`, for uploaded files held in memory: per session, a few
  files and bytes at once (older ones make room for newer), a number of uploads
  per window; and a ceiling for the whole process.
- :attr:`Limits.thread_control`: whether a visitor may change torch's thread
  count, which is process-wide: never on a shared server.

The limits are on by default. ``LNVIZ_LIMITS=off`` lifts them all, for someone
running lnviz alone on their own machine (:meth:`Limits.from_env`).

CPU time is read by a clock the caller gives (``time.thread_time`` by default:
the CPU time of the thread running the action). Work that torch fans out to its
intra-op threads is counted only for the calling thread's share, so a server
keeps torch at one thread for a heavy action (``torch.set_num_threads`` is
process-wide, see :attr:`Limits.thread_control`).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

ENV = "LNVIZ_LIMITS"  # "off" lifts every limit
OFF_VALUES = ("off", "0", "false", "no")
MIB = 2**20
_PRUNE_AT = 256  # sessions remembered before the ones with nothing left in their window are forgotten


@dataclass(frozen=True)
class Limits:
    """The numbers. The defaults suit a shared server; :meth:`off` lifts them."""

    enabled: bool = True
    action_cpu_s: float = 60.0  # CPU seconds one heavy action may use
    session_cpu_s: float = 180.0  # CPU seconds of heavy actions one session may use per window
    window_s: float = 600.0  # the window for the per-session budgets, in seconds
    concurrent: int = 1  # heavy actions running at once in the process
    upload_files: int = 2  # files a session holds at once: the uploader's one, and its replacement in flight
    upload_bytes: int = 64 * MIB  # bytes a session holds at once (two of the largest file)
    uploads_per_window: int = 20  # uploads a session may send per window
    upload_total_bytes: int = 512 * MIB  # bytes all sessions hold at once

    @classmethod
    def off(cls) -> Limits:
        """No limit at all: one person on their own machine."""
        inf = math.inf
        return cls(False, inf, inf, 600.0, 2**31, 2**31, 2**62, 2**31, 2**62)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], cpus: int, threads: int = 1) -> Limits:
        """The limits for a process on ``cpus`` cores whose torch kernels use ``threads`` threads.

        ``LNVIZ_LIMITS=off`` (or 0, false, no) lifts every limit. Otherwise heavy
        actions may keep at most half the cores busy: ``cpus // 2 // threads``
        of them at once, at least one.
        """
        if environ.get(ENV, "").strip().lower() in OFF_VALUES:
            return cls.off()
        return cls(concurrent=max(1, cpus // 2 // max(1, threads)))

    @property
    def thread_control(self) -> bool:
        """Whether a visitor may set torch's (process-wide) thread count: only with the limits off."""
        return not self.enabled


def _seconds(s: float) -> int:
    """Whole seconds to wait, at least 1."""
    return max(1, math.ceil(s))


@dataclass(frozen=True)
class Busy:
    """A refusal: why, and in how many seconds trying again may work."""

    why: str  # "server": enough heavy actions are running; "session": this session's budget is spent
    retry_after_s: int
    detail: str

    @property
    def message(self) -> str:
        return f"Busy: {self.detail} Try again in {self.retry_after_s} s."


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


@dataclass
class Ticket:
    """One heavy action while it runs: its session, its CPU budget and what it has spent."""

    session: str
    action: str
    budget_s: float
    started: float  # gate clock
    _cpu: Callable[[], float]
    _cpu_start: float
    spent_s: float = 0.0  # as of the last check

    def check(self) -> float:
        """The CPU seconds spent so far; raises :class:`OverBudget` past the budget. Call it between steps."""
        self.spent_s = self._cpu() - self._cpu_start
        if self.spent_s > self.budget_s:
            raise OverBudget(self.action, self.spent_s, self.budget_s)
        return self.spent_s

    @property
    def left_s(self) -> float:
        return max(0.0, self.budget_s - self.spent_s)


@dataclass
class HeavyGate:
    """Admits heavy actions under :class:`Limits`; thread-safe, one per server process."""

    limits: Limits
    clock: Callable[[], float] = time.monotonic
    cpu_clock: Callable[[], float] = time.thread_time
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _running: list[Ticket] = field(default_factory=list, repr=False)
    _spent: dict[str, deque[tuple[float, float]]] = field(default_factory=dict, repr=False)  # session -> (end, cpu)

    def _session_spent(self, session: str, now: float) -> deque[tuple[float, float]]:
        spent = self._spent.get(session, deque())
        while spent and spent[0][0] <= now - self.limits.window_s:
            spent.popleft()
        if not spent:
            self._spent.pop(session, None)
        return spent

    def begin(self, session: str, action: str) -> Ticket | Busy:
        """A :class:`Ticket` to run ``action`` for ``session`` now, or why not (:class:`Busy`)."""
        lim = self.limits
        with self._lock:
            now = self.clock()
            if not lim.enabled:
                ticket = Ticket(session, action, math.inf, now, self.cpu_clock, self.cpu_clock())
                self._running.append(ticket)
                return ticket
            if any(t.session == session for t in self._running):
                return Busy("session", 5, "your previous heavy action is still running.")
            spent = self._session_spent(session, now)
            used = sum(cpu for _, cpu in spent)
            if used >= lim.session_cpu_s:
                return Busy(
                    "session",
                    _seconds(self._session_retry(spent, used, now)),
                    f"this session has used its {lim.session_cpu_s:.0f} s of CPU for heavy actions "
                    f"in {lim.window_s / 60:.0f} minutes.",
                )
            if len(self._running) >= lim.concurrent:
                wait = min(t.left_s for t in self._running)
                return Busy(
                    "server",
                    _seconds(wait),
                    f"{len(self._running)} heavy action{'s are' if len(self._running) != 1 else ' is'} running "
                    "for other visitors, the most this shared server runs at once.",
                )
            budget = min(lim.action_cpu_s, lim.session_cpu_s - used)
            ticket = Ticket(session, action, budget, now, self.cpu_clock, self.cpu_clock())
            self._running.append(ticket)
            return ticket

    def _session_retry(self, spent: Sequence[tuple[float, float]], used: float, now: float) -> float:
        """Seconds until enough of the session's spending leaves the window to admit an action again."""
        for end, cpu in spent:  # oldest first
            used -= cpu
            if used < self.limits.session_cpu_s:
                return end + self.limits.window_s - now
        return self.limits.window_s

    def end(self, ticket: Ticket) -> None:
        """The action is over (done, stopped or failed): free its slot and charge its CPU to its session."""
        spent = self.cpu_clock() - ticket._cpu_start
        with self._lock:
            if ticket in self._running:
                self._running.remove(ticket)
                if self.limits.enabled:
                    now = self.clock()
                    self._spent.setdefault(ticket.session, deque()).append((now, spent))
                    if len(self._spent) > _PRUNE_AT:
                        for session in list(self._spent):
                            self._session_spent(session, now)

    def running(self) -> int:
        with self._lock:
            return len(self._running)


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
