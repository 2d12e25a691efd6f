"""lnviz.serving.limits: heavy actions and uploads on a shared server, on a clock the test moves by hand."""

import threading
import time

import pytest

from lnviz.serving import limits
from lnviz.serving.limits import Busy, HeavyGate, Limits, OverBudget, QuotaExceeded, Ticket, UploadQuota

MIB = 2**20


class Clock:
    """A clock that moves only when told; ``cpu`` is a second one for CPU time."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.cpu = 0.0

    def wall(self) -> float:
        return self.now

    def thread_cpu(self) -> float:
        return self.cpu


@pytest.fixture
def clock() -> Clock:
    return Clock()


def gate(clock: Clock, **kw) -> HeavyGate:
    return HeavyGate(Limits(**kw), clock=clock.wall, cpu_clock=clock.thread_cpu)


def test_limits_are_on_by_default_and_lifted_by_the_documented_variable():
    on = Limits.from_env({}, cpus=2)
    assert on.enabled and on.concurrent == 1 and not on.thread_control
    assert Limits.from_env({"LNVIZ_LIMITS": "on"}, cpus=2).enabled
    for value in ("off", "OFF", " 0 ", "false", "no"):
        off = Limits.from_env({limits.ENV: value}, cpus=2)
        assert not off.enabled and off.thread_control and off.concurrent > 1000


def test_heavy_work_keeps_at_most_half_the_cores_busy():
    assert Limits.from_env({}, cpus=1).concurrent == 1
    assert Limits.from_env({}, cpus=2, threads=1).concurrent == 1
    assert Limits.from_env({}, cpus=8, threads=1).concurrent == 4
    assert Limits.from_env({}, cpus=16, threads=4).concurrent == 2


def test_a_second_visitor_is_told_to_come_back_while_the_first_action_runs(clock):
    g = gate(clock, concurrent=1, action_cpu_s=60)
    first = g.begin("alice", "training race")
    assert isinstance(first, Ticket)
    clock.cpu += 20
    first.check()
    busy = g.begin("bob", "bench sweep")
    assert isinstance(busy, Busy) and busy.why == "server"
    assert busy.retry_after_s == 40  # what the running action may still use
    assert busy.message.startswith("Busy: ") and busy.message.endswith("Try again in 40 s.")
    g.end(first)
    assert isinstance(g.begin("bob", "bench sweep"), Ticket)


def test_one_session_runs_one_heavy_action_at_a_time(clock):
    g = gate(clock, concurrent=4)
    assert isinstance(g.begin("alice", "race"), Ticket)
    busy = g.begin("alice", "download")
    assert isinstance(busy, Busy) and busy.why == "session"


def test_an_action_is_stopped_once_it_has_used_its_cpu_budget(clock):
    g = gate(clock, action_cpu_s=30)
    ticket = g.begin("alice", "training race")
    clock.cpu += 29
    assert ticket.check() == pytest.approx(29)
    clock.cpu += 2
    with pytest.raises(OverBudget, match="used 31 s of CPU") as info:
        ticket.check()
    assert info.value.budget_s == 30
    g.end(ticket)
    assert g.running() == 0


def test_a_session_budget_spans_actions_and_says_when_it_comes_back(clock):
    g = gate(clock, action_cpu_s=60, session_cpu_s=150, window_s=600, concurrent=4)
    ends = []
    for spend in (60, 60):
        ticket = g.begin("alice", "race")
        clock.cpu += spend
        clock.now += 100
        g.end(ticket)
        ends.append(clock.now)
    third = g.begin("alice", "race")
    assert third.budget_s == 30  # what is left of the session's 150 s
    clock.cpu += 30
    clock.now += 10
    g.end(third)
    busy = g.begin("alice", "race")
    assert isinstance(busy, Busy) and busy.why == "session"
    # Once the first action's 60 s leave the 600 s window, 90 of 150 s are in it again.
    assert busy.retry_after_s == pytest.approx(ends[0] + 600 - clock.now, abs=1)
    assert isinstance(g.begin("bob", "race"), Ticket)  # other sessions are not charged
    clock.now = ends[0] + 600
    assert isinstance(g.begin("alice", "race"), Ticket)


def test_with_the_limits_off_nothing_is_refused_or_stopped(clock):
    g = HeavyGate(Limits.off(), clock=clock.wall, cpu_clock=clock.thread_cpu)
    tickets = [g.begin(who, "sweep") for who in ("alice", "alice", "bob", "carol")]
    assert all(isinstance(t, Ticket) for t in tickets)
    clock.cpu += 10**6
    assert tickets[0].check() == 10**6
    for t in tickets:
        g.end(t)
    assert isinstance(g.begin("alice", "sweep"), Ticket)


def test_the_server_wide_limit_holds_under_concurrent_requests():
    def slow_clock() -> float:  # read between the check and the count: widens the gap a loaded server has
        time.sleep(0.005)
        return time.monotonic()

    g = HeavyGate(Limits(concurrent=2), cpu_clock=slow_clock)
    results, start = [], threading.Barrier(16)

    def visitor(i: int) -> None:
        start.wait()
        results.append(g.begin(f"s{i}", "race"))

    threads = [threading.Thread(target=visitor, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(isinstance(r, Ticket) for r in results) == 2
    assert sum(isinstance(r, Busy) for r in results) == 14


# Uploads


def quota(clock: Clock, **kw) -> UploadQuota:
    return UploadQuota(Limits(**kw), clock=clock.wall)


def test_a_session_keeps_its_newest_files_and_drops_the_oldest(clock):
    q = quota(clock, upload_files=2, upload_bytes=64 * MIB)
    assert q.admit("s", 30 * MIB, [], 0) == []
    assert q.admit("s", 30 * MIB, [("a", 30 * MIB)], 30 * MIB) == []
    # A third file: the oldest goes, so the session never holds more than two.
    assert q.admit("s", 30 * MIB, [("a", 30 * MIB), ("b", 30 * MIB)], 60 * MIB) == ["a"]
    # Bytes too: a big file pushes out both small ones.
    assert q.admit("s", 62 * MIB, [("a", 3 * MIB), ("b", 3 * MIB)], 6 * MIB) == ["a", "b"]


def test_a_session_that_sends_file_after_file_is_refused_for_a_while(clock):
    q = quota(clock, uploads_per_window=3, window_s=60)
    for _ in range(3):
        q.admit("s", MIB, [], 0)
        clock.now += 5
    with pytest.raises(QuotaExceeded, match="3 files in 1 minutes") as info:
        q.admit("s", MIB, [], 0)
    assert info.value.retry_after_s == 45
    q.admit("other", MIB, [], 0)  # another session is not affected
    clock.now += 45
    q.admit("s", MIB, [], 0)


def test_the_server_holds_at_most_its_total_of_uploads(clock):
    q = quota(clock, upload_total_bytes=100 * MIB)
    with pytest.raises(QuotaExceeded, match="as many uploaded files as it can"):
        q.admit("s", 30 * MIB, [], 80 * MIB)
    assert q.admit("s", 30 * MIB, [("a", 10 * MIB), ("b", 10 * MIB)], 80 * MIB) == ["a"]


def test_uploads_are_not_counted_with_the_limits_off(clock):
    q = UploadQuota(Limits.off(), clock=clock.wall)
    for _ in range(100):
        assert q.admit("s", 30 * MIB, [("a", 30 * MIB)] * 5, 10**12) == []
