"""lnviz.serving.limits: heavy actions and uploads on a shared server, on a clock the test moves by hand."""

import dataclasses
import math
import threading
import time

import pytest

from lnviz.serving import cpus as cpu_sizing
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


def test_off_lifts_every_number_but_the_windows_they_are_counted_in():
    on, off = Limits(), Limits.off()
    assert on.enabled and not off.enabled
    numbers = [f.name for f in dataclasses.fields(Limits) if f.name != "enabled"]
    assert len(numbers) > 30  # every limit of lnviz.serving, not a few
    for name in numbers:
        if name in Limits.WINDOWS:
            assert getattr(off, name) == getattr(on, name) > 0, name
        else:
            assert getattr(off, name) >= limits.LIFTED > getattr(on, name), name


def test_the_memory_budgets_come_from_the_environment_in_mib_with_the_limits_on_or_off():
    assert Limits.from_env({}, cpus=2).cache_bytes == 256 * MIB
    env = {limits.CACHE_ENV: "64", limits.OWN_DATA_ENV: "32"}
    for extra in ({}, {limits.ENV: "off"}):
        lim = Limits.from_env(env | extra, cpus=2)
        assert (lim.cache_bytes, lim.own_data_bytes) == (64 * MIB, 32 * MIB)
    assert Limits.from_env({limits.CACHE_ENV: "lots"}, cpus=2).cache_bytes == 256 * MIB


def test_the_process_reads_its_limits_once(monkeypatch):
    limits.current.cache_clear()
    monkeypatch.setenv(limits.ENV, "off")
    try:
        assert not limits.current().enabled
        monkeypatch.delenv(limits.ENV)
        assert limits.current() is limits.current() and not limits.current().enabled  # read once
        limits.current.cache_clear()
        assert limits.current().enabled
    finally:
        limits.current.cache_clear()


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


# How many heavy actions: the CPUs the container may use


@pytest.mark.parametrize(
    ("cpu_max", "affinity", "cpu_count", "cpus"),
    [
        ("200000 100000\n", 16, 16, 2),  # a 2-CPU pod on a 16-core node
        ("150000 100000\n", 16, 16, 1),  # 1.5 CPUs keep one action busy, not two
        ("50000 100000\n", 16, 16, 1),  # half a CPU: still one
        ("max 100000\n", 16, 16, 16),  # no quota
        ("max 100000\n", 4, 16, 4),  # taskset / cpuset: the affinity
        (None, None, 8, 8),  # no cgroup v2 file, no affinity call
        ("800000 100000\n", 2, 16, 2),  # a quota above the cores it may run on
        ("garbage", 6, 16, 6),
        ("0 100000", 6, 16, 6),
        (None, None, None, 1),
    ],
)
def test_the_cpus_a_process_may_use_come_from_its_cgroup_quota_and_affinity(cpu_max, affinity, cpu_count, cpus):
    assert cpu_sizing.cpus_from(cpu_max, affinity, cpu_count) == cpus


def test_a_two_cpu_pod_on_a_big_node_runs_one_heavy_action_at_a_time(tmp_path, monkeypatch):
    (tmp_path / "cpu.max").write_text("200000 100000\n")
    monkeypatch.setattr(cpu_sizing.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(cpu_sizing.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert cpu_sizing.usable_cpus(str(tmp_path)) == 2
    assert Limits.from_env({}, cpus=cpu_sizing.usable_cpus(str(tmp_path))).concurrent == 1
    assert cpu_sizing.usable_cpus(str(tmp_path / "nowhere")) == 16


# Whom the limits count against


def xsrf_cookie(token: bytes, mask: bytes, when: int = 1700000000) -> str:
    """Streamlit's XSRF cookie: the token masked afresh on each page load."""
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(token))
    return f"2|{mask.hex()}|{masked.hex()}|{when}"


def test_server_threads(monkeypatch):
    monkeypatch.delenv("LNVIZ_TORCH_THREADS", raising=False)
    assert cpu_sizing.server_threads(1) == 1
    assert cpu_sizing.server_threads(2) == 1
    assert cpu_sizing.server_threads(8) == 4
    assert cpu_sizing.server_threads(64) == 4
    monkeypatch.setenv("LNVIZ_TORCH_THREADS", "3")
    assert cpu_sizing.server_threads(2) == 3


def test_a_browser_is_one_client_across_its_tabs_and_page_loads():
    token, other = bytes(range(32)), bytes(range(1, 33))
    tab1 = limits.client_key("session-1", xsrf_cookie(token, b"\x01\x02\x03\x04"))
    tab2 = limits.client_key("session-2", xsrf_cookie(token, b"\xaa\xbb\xcc\xdd", 1700000099))
    assert tab1 == tab2 and tab1.startswith("browser ") and token.hex() not in tab1
    assert limits.client_key("session-3", xsrf_cookie(other, b"\x01\x02\x03\x04")) != tab1
    # No cookie, or one that is not Streamlit's: the session is the client.
    for cookie in (None, "", "2|zz|00|1", "1|abc", "2|0102|0a0b|1"):
        assert limits.client_key("session-1", cookie) == "session session-1"


# Fair shares: a queue, the least-used client first, and a share of the slot while others wait


def run_in_thread(fn, *args):
    out: dict = {}

    def go() -> None:
        out["value"] = fn(*args)

    t = threading.Thread(target=go)
    t.start()
    return t, out


def test_a_waiting_action_gets_the_slot_when_it_frees_and_is_told_its_place():
    g = HeavyGate(Limits(concurrent=1, share_s=60))
    first = g.begin("alice", "race")
    heard: list[limits.Waiting] = []
    t, out = run_in_thread(lambda: g.begin("bob", "race", wait_s=10, on_wait=heard.append))
    time.sleep(0.3)
    assert g.waiting() == 1 and heard and heard[0].place == 1
    assert heard[0].message.startswith("Waiting for a turn on this shared server: yours is next, in about ")
    g.end(first)
    t.join(5)
    assert isinstance(out["value"], Ticket) and out["value"].session == "bob" and g.waiting() == 0


def test_a_newcomer_does_not_jump_the_queue_and_a_full_queue_says_when_to_come_back():
    g = HeavyGate(Limits(concurrent=1, share_s=20, waiting=1))
    first = g.begin("alice", "race")
    t, out = run_in_thread(lambda: g.begin("bob", "race", wait_s=10))
    time.sleep(0.2)
    busy = g.begin("carol", "race", wait_s=10)  # the queue holds one
    assert isinstance(busy, Busy) and busy.why == "server" and "1 waiting" in busy.message
    assert 20 <= busy.retry_after_s <= 41  # alice's share, then bob's
    g.end(first)
    t.join(5)
    assert isinstance(out["value"], Ticket)
    g.end(out["value"])


def test_the_client_that_held_a_slot_least_lately_goes_first(clock):
    g = HeavyGate(Limits(concurrent=1, share_s=15), clock=clock.wall, cpu_clock=clock.thread_cpu)
    hog = g.begin("hog", "race")
    clock.now += 50
    clock.cpu += 10  # a busy server: the hog held the slot 50 s and got 10 s of CPU
    g.end(hog)
    running = g.begin("hog tab 2", "race")
    order: list[str] = []

    def one(who: str) -> None:
        ticket = g.begin(who, "race", wait_s=10)
        order.append(who)
        g.end(ticket)

    threads = []
    for who in ("hog", "newcomer"):  # the hog asks first
        threads.append(run_in_thread(one, who)[0])
        time.sleep(0.2)
    assert g.waiting() == 2
    g.end(running)
    for t in threads:
        t.join(5)
    assert order == ["newcomer", "hog"]


def test_a_running_action_gives_its_slot_up_after_its_share_when_another_waits():
    g = HeavyGate(Limits(concurrent=1, share_s=0.5))
    hog = g.begin("hog", "race")
    hog.check()  # alone, it may run on
    time.sleep(0.6)
    hog.check()  # past its share, but nobody waits
    t, out = run_in_thread(lambda: g.begin("newcomer", "race", wait_s=10))
    time.sleep(0.2)
    with pytest.raises(limits.Yielded, match="while another visitor waited") as stopped:
        hog.check()
    assert isinstance(stopped.value, OverBudget)  # a page shows it as it shows a spent budget
    g.end(hog)
    t.join(5)
    assert isinstance(out["value"], Ticket)


def test_one_client_that_keeps_pressing_run_cannot_keep_a_newcomer_out():
    """The target, on a clock 10 times faster: while three hog sessions press Run again whenever refused,
    each race long, a newcomer's action is admitted within 30 s (here 3 s) in at least 9 of 10 tries."""
    scale = 0.1
    # CPU time as wall time: a race keeps its thread busy.
    g = HeavyGate(Limits(concurrent=1, share_s=15 * scale, window_s=600), cpu_clock=time.monotonic)
    stop = threading.Event()

    def hog(name: str) -> None:
        while not stop.is_set():
            ticket = g.begin(name, "race", wait_s=60 * scale)
            if isinstance(ticket, Busy):
                continue
            try:
                deadline = time.monotonic() + 80 * scale  # a long race, 80 s
                while time.monotonic() < deadline and not stop.is_set():
                    ticket.check()
                    time.sleep(0.02)
            except OverBudget:
                pass
            finally:
                g.end(ticket)

    hogs = [threading.Thread(target=hog, args=(f"hog {i}",)) for i in range(3)]
    for t in hogs:
        t.start()
    waits = []
    try:
        time.sleep(0.5)
        for _ in range(10):
            time.sleep(5 * scale)  # a legitimate Run every 5 s
            start = time.monotonic()
            ticket = g.begin("student", "race", wait_s=60 * scale)
            waits.append(time.monotonic() - start if isinstance(ticket, Ticket) else math.inf)
            if isinstance(ticket, Ticket):
                time.sleep(3 * scale)  # a short race
                g.end(ticket)
    finally:
        stop.set()
        for t in hogs:
            t.join(10)
    admitted = sum(w <= 30 * scale for w in waits)
    print("waits (s, at full scale):", [round(w / scale, 1) for w in waits])
    assert admitted >= 9, [round(w / scale, 1) for w in waits]


def test_a_rerun_waits_for_its_own_interrupted_action_instead_of_being_refused():
    # Streamlit starts a rerun's script before the run it interrupts has stopped: for a moment one client has
    # its old action still running and asks for a new one. It waits; and the old one is not told to yield to it.
    g = HeavyGate(Limits(concurrent=2, share_s=0.2))
    old = g.begin("alice", "race")
    t, out = run_in_thread(lambda: g.begin("alice", "race", wait_s=10))
    time.sleep(0.4)
    assert g.waiting() == 1 and g.running() == 1  # a slot is free, but not for a second action of alice's
    old.check()  # no Yielded: only alice waits
    g.end(old)
    t.join(5)
    assert isinstance(out["value"], Ticket) and g.waiting() == 0
