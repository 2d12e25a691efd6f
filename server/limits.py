"""The numbers a shared server limits with, in one :class:`Limits` read once per process (:func:`current`).

A hosted lnviz serves a whole class from one process. Every bound on what one
visitor can take from the others is a field of :class:`Limits`: the slots of
heavy actions, downloads and uncached computations (:mod:`server.slots`,
which enforces them), the memory budgets, the upload quota (:class:`server.quota.UploadQuota`),
visitors' own matrices, the class poll's voters and rooms, the protocol's bound
on a component's events; and :attr:`Limits.thread_control`, whether a visitor
may change torch's thread count, which is process-wide: never on a shared server.

The limits are on by default. ``LNVIZ_LIMITS=off`` lifts them all, for someone
running lnviz alone on their own machine (:meth:`Limits.from_env`, :meth:`Limits.off`).

How many heavy actions may run at once follows the CPUs the process may use:
the container's quota (``/sys/fs/cgroup/cpu.max``) and its CPU affinity, not
the host's core count (:func:`server.cpus.usable_cpus`).

What a limit says when it bites is here too, for every room that enforces one:
:class:`Busy` (refused: why, and when to try again), :class:`Waiting` (a place
in a queue), :class:`OverBudget` and :class:`Yielded` (an action stopped); and
the one hierarchy of refusals raised, :class:`Refused`: busy (:class:`BusyError`,
try again later), full (:class:`Full`, no room) and down (:class:`StoreDown`, the
shared store can't be reached; :class:`StoreFull`, it refused a write for want of room).
Whom the limits are counted against is :mod:`server.who`: a *client* (a
browser) and an *address* (hashed, public ones only).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import ClassVar

from server import cpus as cpu_sizing

ENV = "LNVIZ_LIMITS"  # "off" lifts every limit
OFF_VALUES = ("off", "0", "false", "no")
CACHE_ENV = "LNVIZ_CACHE_MIB"  # Limits.cache_bytes, in MiB
WORK_ENV = "LNVIZ_PROOF_WORK"  # Limits.proof_work: a test server's browsers pay less
OWN_DATA_ENV = "LNVIZ_OWN_DATA_MIB"  # Limits.own_data_bytes, in MiB
MIB = 2**20
LIFTED = 2**53  # a count or a size no one reaches: what off() gives every int (exact in a float, Lua and JS)
_PRUNE_AT = 256  # sessions remembered before the ones with nothing left in their window are forgotten


@dataclass(frozen=True)
class Limits:
    """Every number a shared server limits with. The defaults suit a shared server; :meth:`off` lifts them."""

    enabled: bool = True
    # Heavy actions (a race, the sweep): server.slots' heavy lane
    concurrent: int = 1  # heavy actions running at once in the process (from_env: half the cores)
    per_client: int = 1  # heavy actions, and downloads, one client runs at once
    action_cpu_s: float = 60.0  # CPU seconds one heavy action may use
    client_cpu_s: float = 180.0  # CPU seconds of heavy actions one client may use per window
    window_s: float = 600.0  # the window for the per-client budgets, in seconds
    share_s: float = 15.0  # seconds a running heavy action keeps its slot while another waits for one
    waiting: int = 16  # heavy actions that may wait for a slot at once; past that, "try again in N s"
    # Downloads built when clicked: a lane of their own, so a download never waits behind a race
    download_share_s: float = 5.0  # what a download is expected to take at most, for "try again in N s"
    download_wait_s: float = 10.0  # how long a download's build waits for its turn (a browser's request waits too)
    downloads_waiting: int = 2  # downloads waiting at once: each holds one of Streamlit's worker threads
    # Computed results (server.budget)
    cache_bytes: int = 256 * MIB  # the page kit's cache of computed results, per process (LNVIZ_CACHE_MIB)
    misses_at_once: int = 2  # computations of results not yet cached, at once in a process
    # Uploaded files held in memory (UploadQuota)
    upload_files: int = 2  # files a session holds at once: the uploader's one, and its replacement in flight
    upload_bytes: int = 64 * MIB  # bytes a session holds at once (two of the largest file)
    uploads_per_window: int = 20  # uploads a session may send per window
    upload_total_bytes: int = 512 * MIB  # bytes all sessions hold at once
    # Visitors' own matrices (server.own_store, own_share)
    own_data_bytes: int = 128 * MIB  # per process (LNVIZ_OWN_DATA_MIB): sixteen of the largest, 8 MiB each
    own_data_session_bytes: int = 16 * MIB  # one session's matrix and its replacement
    own_data_ttl_s: float = 3600.0  # a matrix unused this long is dropped
    own_data_protect_s: float = 120.0  # a matrix used this recently is never dropped for another's
    shared_bytes_per_client: int = 64 * MIB  # grids a client stores for links per quota window: eight of the largest
    # The class poll (server.poll's rules, kept by server.store)
    idle_s: int = 6 * 3600  # a room and its votes expire this long after their last write
    max_voters: int = 2000  # voters one round counts; a new voter past them is refused
    voters_per_client: int = 5  # voter ids one browser may vote as in a room: a shared classroom computer
    voters_per_address: int = 60  # voters past each browser's first one address may vote as in a room, at first
    voters_per_s: float = 1.0  # and these more each second after the room opened: they grow as students arrive
    votes_per_rate_window: int = 30  # votes one voter may send per rate window in one room
    rate_window_s: int = 60  # whole seconds, as Redis's EXPIRE takes them
    rooms_per_client: int = 5  # rooms one browser may open per open window: its first is never the address's
    rooms_per_address: int = 30  # a browser's further rooms, of one address, per open window: a campus's NAT
    open_window_s: int = 60
    max_rooms: int = 10_000  # rooms the in-memory store holds at once; a new one past them is refused
    take_s: int = 5 * 60  # a take code is gone this long after it was made, used or not
    max_hosts: int = 3  # further presenter browsers a room takes: a lecturer's phone, laptop and the podium's PC
    quota_window_s: float = 3600.0  # the window shared_bytes_per_client is counted over
    # The class stream (server.events): rooms' public states as Server-Sent Events (ui/poll/routes.py)
    streams_per_client: int = 8  # streams one proved browser holds open at once: a phone's page, a projector, tabs
    streams_per_address: int = 600  # a browser's second and later streams, of one address: its first is not counted
    subscribers: int = 4000  # streams one process serves at once: a lecture hall's phones on one replica, twice over
    streams_kept_first: int = 1000  # of the subscribers, places only a browser's first stream may take
    stream_queue: int = 16  # events a stream may fall behind by before it is dropped (its browser reconnects)
    stream_send_s: float = 30.0  # a stream whose write waits this long (a phone gone without a word) is ended
    # The proved client (server.proof): a browser that paid for its signed cookie with a proof of work
    proof_work: int = (
        200_000  # the proof's price: numbers a browser may have to hash, half on average (LNVIZ_PROOF_WORK)
    )
    proofs_at_price: int = 300  # new proofs one address gets per proof window at that price: a class of 500 arriving
    proof_doublings: int = 2  # past them the price doubles per as many again, up to 2**this times (never a refusal)
    proof_window_s: float = 60.0
    code_misses_per_client: int = 10  # room codes one browser may try that open no room, per code window
    code_misses_per_address: int = 500  # the same for one address: a class of 500 mistyping its code once
    code_window_s: float = 60.0
    # The protocol: the longest list of events (JSON) the stage may send in one message. A browser sends one
    # event per release or click, about 80 characters each, and the events of one rerun at most: a few dozen.
    component_events_chars: int = 16 * 1024
    # The stage's route (ui/stage/stage_at.py): a client's answers cost it compute time, from a budget that refills
    stage_ms_per_client: int = 1000  # milliseconds of compute one client's answers may take per stage window
    stage_window_s: float = 4.0  # a quarter of a core: a 1024 x 1024 drag's 4 s of answers (25 ms each), then reruns
    # The shared store (server.store): what one visitor can put there must not crowd out a class
    shared_grid_bytes: int = 96 * MIB  # grids all clients keep for links at once, in the store: eleven of the largest
    blob_ttl_s: int = 24 * 3600  # a grid shared by a link is kept this long after it was last stored

    # The spans a budget is counted over, how long the store keeps things, and the proof's price: no limit
    # themselves, so off() keeps them.
    WINDOWS: ClassVar[tuple[str, ...]] = (
        "proof_work",
        "proof_doublings",
        "idle_s",
        "take_s",
        "blob_ttl_s",
        "window_s",
        "rate_window_s",
        "open_window_s",
        "quota_window_s",
        "proof_window_s",
        "code_window_s",
        "stage_window_s",
    )

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
        (:func:`server.cpus.usable_cpus`), not the host's count.
        ``LNVIZ_CACHE_MIB`` and ``LNVIZ_OWN_DATA_MIB``, whole MiB, set those
        two memory budgets, with the limits off too; ``LNVIZ_PROOF_WORK`` the proof's price.
        """
        lim = cls.off() if environ.get(ENV, "").strip().lower() in OFF_VALUES else cls()
        if lim.enabled:
            lim = replace(lim, concurrent=max(1, cpus // 2 // max(1, threads)))
        mib = {
            name: environ.get(var, "").strip()
            for name, var in (("cache_bytes", CACHE_ENV), ("own_data_bytes", OWN_DATA_ENV))
        }
        lim = replace(lim, **{name: int(raw) * MIB for name, raw in mib.items() if raw.isdigit()})
        work = environ.get(WORK_ENV, "").strip()
        return replace(lim, proof_work=max(1, int(work))) if work.isdigit() and lim.enabled else lim

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


def whole_seconds(s: float) -> int:
    """Whole seconds to wait, at least 1 (and at most a day, for a wait with no end)."""
    return max(1, math.ceil(min(s, 86400.0)))


# What a limit says when it bites ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Busy:
    """A refusal: why, and in how many seconds trying again may work."""

    why: str  # "server": enough are running or waiting; "client": this client's own are running or its budget spent
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


class Refused(RuntimeError):
    """A limit, or the shared store, said no. The message is the sentence it is said in; ``retry_after_s``, when
    trying again may work (0: waiting won't help). Catch a kind, never this: each is handled its own way."""

    def __init__(self, sentence: str, retry_after_s: int = 0) -> None:
        super().__init__(sentence)
        self.retry_after_s = retry_after_s


class BusyError(Refused):
    """Busy: try again later. Raised where a :class:`Busy` can't be shown, such as a download built in the
    background."""

    def __init__(self, busy: Busy) -> None:
        super().__init__(busy.message, busy.retry_after_s)
        self.busy = busy


class Full(Refused):
    """No room: a value over a bound this server keeps, in its memory (:class:`server.budget.Budget`, the
    visitors' matrices of :mod:`server.own_store`) or for links (the shared grids' cap, :mod:`server.own_share`).

    ``why`` names the bound for a caller that words it: "budget" (over the whole budget) and "holder" (over a
    holder's cap) never fit; "in use": every byte it needs is in recent use, and trying again in
    ``retry_after_s`` seconds will work; "share": the budget is full, the value would take its client over an
    equal share of it (``share`` bytes each for ``clients`` clients), and the bytes it needs are in use.
    ``limit`` is the bound's bytes.
    """

    def __init__(
        self, sentence: str, retry_after_s: int = 0, why: str = "", limit: int = 0, share: int = 0, clients: int = 0
    ) -> None:
        super().__init__(sentence, retry_after_s)
        self.why, self.limit, self.share, self.clients = why, limit, share, clients


class StoreDown(Refused):
    """Down: the shared store can't be reached now (Redis down or unreachable, or just restarted)."""


class StoreFull(StoreDown):
    """Redis refused a write: it holds its ``maxmemory`` and evicts nothing (``noeviction``, deploy/k8s/redis.yaml).

    Reads still work and nothing it held is lost. It is a :class:`StoreDown`, so a caller that only knows that
    still copes; one that knows this can say it truly (``text.FULL``).
    """


class OverBudget(RuntimeError):
    """A heavy action used up its CPU budget; :meth:`server.slots.Ticket.check` raises it between steps."""

    def __init__(self, action: str, spent_s: float, budget_s: float) -> None:
        self.action, self.spent_s, self.budget_s = action, spent_s, budget_s
        super().__init__(
            f"Stopped: {action} used {spent_s:.0f} s of CPU, the most one action gets on this shared server "
            f"({budget_s:.0f} s). Try a smaller setting."
        )


class Yielded(OverBudget):
    """A heavy action gave its slot to one that waited, after its share (``Lane.share_s`` of :mod:`server.slots`)."""

    def __init__(self, action: str, ran_s: float, share_s: float) -> None:
        RuntimeError.__init__(
            self,
            f"Stopped: {action} ran {ran_s:.0f} s while another visitor waited for a turn; each action gets "
            f"{share_s:.0f} s when others wait. Try a smaller setting, or run it again.",
        )
        self.action, self.spent_s, self.budget_s = action, ran_s, share_s


class QuotaExceeded(Refused):
    """An upload refused: the message says why and when to try again."""
