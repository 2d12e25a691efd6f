"""server.slots: one fair scheduler for heavy actions, downloads and uncached computations, on a clock the
test moves by hand; and the page kit's use of it for its misses."""

import math
import threading
import time

import pytest

from server import heavy, limits
from server.budget import MIB, Budget
from server.limits import Busy, Limits, OverBudget
from server.slots import DOWNLOADS, HEAVY, MISSES, Lane, Place, Slots, Ticket
from ui.kit import page as kit


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


def gate(clock: Clock, **kw) -> Slots:
    return Slots.from_limits(Limits(**kw), clock=clock.wall, cpu_clock=clock.thread_cpu)


def until(condition, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def in_thread(fn, *args):
    out: dict = {}

    def go() -> None:
        out["value"] = fn(*args)

    t = threading.Thread(target=go, daemon=True)  # a broken scheduler fails the test, not the run
    t.start()
    return t, out


# Heavy actions: slots, CPU budgets, refusals


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


def test_one_client_runs_one_heavy_action_at_a_time(clock):
    g = gate(clock, concurrent=4)
    assert isinstance(g.begin("alice", "race"), Ticket)
    busy = g.begin("alice", "download")
    assert isinstance(busy, Busy) and busy.why == "client"


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


def test_a_client_budget_spans_actions_and_says_when_it_comes_back(clock):
    g = gate(clock, action_cpu_s=60, client_cpu_s=150, window_s=600, concurrent=4)
    ends = []
    for spend in (60, 60):
        ticket = g.begin("alice", "race")
        clock.cpu += spend
        clock.now += 100
        g.end(ticket)
        ends.append(clock.now)
    third = g.begin("alice", "race")
    assert third.budget_s == 30  # what is left of the client's 150 s
    clock.cpu += 30
    clock.now += 10
    g.end(third)
    busy = g.begin("alice", "race")
    assert isinstance(busy, Busy) and busy.why == "client"
    # Once the first action's 60 s leave the 600 s window, 90 of 150 s are in it again.
    assert busy.retry_after_s == pytest.approx(ends[0] + 600 - clock.now, abs=1)
    assert isinstance(g.begin("bob", "race"), Ticket)  # other clients are not charged
    clock.now = ends[0] + 600
    assert isinstance(g.begin("alice", "race"), Ticket)


def test_with_the_limits_off_nothing_is_refused_or_stopped(clock):
    g = Slots.from_limits(Limits.off(), clock=clock.wall, cpu_clock=clock.thread_cpu)
    tickets = [g.begin(who, "sweep") for who in ("alice", "alice", "bob", "carol")]
    assert all(isinstance(t, Ticket) for t in tickets)
    clock.cpu += 10**6
    clock.now += 10**6
    assert tickets[0].check() == 10**6
    for t in tickets:
        g.end(t)
    assert isinstance(g.begin("alice", "sweep"), Ticket)


def test_the_server_wide_limit_holds_under_concurrent_requests():
    def slow_clock() -> float:  # read between the check and the count: widens the gap a loaded server has
        time.sleep(0.005)
        return time.monotonic()

    g = Slots.from_limits(Limits(concurrent=2), cpu_clock=slow_clock)
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


# Fair shares: a queue, the least-used client first, and a share of the slot while others wait


def test_a_waiting_action_gets_the_slot_when_it_frees_and_is_told_its_place(clock):
    g = gate(clock, concurrent=1, share_s=60)
    first = g.begin("alice", "race")
    heard: list[limits.Waiting] = []
    t, out = in_thread(lambda: g.begin("bob", "race", wait_s=10, on_wait=heard.append))
    until(lambda: heard)
    assert g.waiting() == 1 and heard[0].place == 1
    assert heard[0].message == "Waiting for a turn on this shared server: yours is next, in about 60 s."
    g.end(first)
    t.join(5)
    assert isinstance(out["value"], Ticket) and out["value"].client == "bob" and g.waiting() == 0


def test_a_newcomer_does_not_jump_the_queue_and_a_full_queue_says_when_to_come_back(clock):
    g = gate(clock, concurrent=1, share_s=20, waiting=1)
    first = g.begin("alice", "race")
    bob = g.ask("bob", "race", wait=True)
    assert isinstance(bob, Place) and bob.outcome is None
    busy = g.ask("carol", "race", wait=True)  # the queue holds one
    assert isinstance(busy, Busy) and busy.why == "server" and "1 heavy action running and 1 waiting" in busy.message
    assert busy.retry_after_s == 40  # alice's share, then bob's
    assert isinstance(g.begin("dave", "race"), Busy)  # one that can't wait is refused, not queued
    g.end(first)
    assert isinstance(bob.outcome, Ticket) and g.waiting() == 0


def test_a_full_queue_makes_room_for_a_newcomer_who_has_held_less_than_its_last_waiter(clock):
    """Clients that ask back to back keep a short queue full; a newcomer between their asks still gets in."""
    g = gate(clock, concurrent=1, share_s=20, waiting=1)
    earlier = g.begin("bob", "download")
    clock.now += 30
    g.end(earlier)  # bob has held a slot for 30 s lately
    first = g.begin("alice", "download")
    bob = g.ask("bob", "download", wait=True)
    assert isinstance(bob, Place) and bob.outcome is None
    carol = g.ask("carol", "download", wait=True)  # has held nothing: takes bob's place
    assert isinstance(carol, Place) and carol.outcome is None
    assert isinstance(bob.outcome, Busy) and bob.outcome.why == "server" and g.order(lane=HEAVY) == ["carol"]
    assert isinstance(g.ask("bob", "download", wait=True), Busy)  # bob asking again: carol has held less
    g.end(first)
    assert isinstance(carol.outcome, Ticket) and g.waiting() == 0


def test_a_wait_that_runs_out_says_when_to_come_back_and_leaves_the_queue(clock):
    # What a page's wait does at its deadline (Slots.give_up, which only this test called, is gone: begin gives up).
    g = gate(clock, concurrent=1, share_s=20)
    first = g.begin("alice", "race")
    heard: list[int] = []

    def five_seconds_later(waiting: limits.Waiting) -> None:
        heard.append(g.waiting())
        clock.now += 5

    refused = g.begin("bob", "race", wait_s=5, on_wait=five_seconds_later)
    assert heard == [1]  # bob waited in the queue
    assert isinstance(refused, Busy) and refused.retry_after_s == 15 and g.waiting() == 0
    g.end(first)
    assert g.running() == 0


def test_the_client_that_held_a_slot_least_lately_goes_first(clock):
    g = gate(clock, concurrent=1, share_s=15)
    hog = g.begin("hog", "race")
    clock.now += 50
    clock.cpu += 10  # a busy server: the hog held the slot 50 s and got 10 s of CPU
    g.end(hog)
    running = g.begin("hog tab 2", "race")
    first, second = g.ask("hog", "race", wait=True), g.ask("newcomer", "race", wait=True)  # the hog asks first
    assert g.order(HEAVY) == ["newcomer", "hog"]
    g.end(running)
    assert isinstance(second.outcome, Ticket) and first.outcome is None
    g.end(second.outcome)
    assert isinstance(first.outcome, Ticket)


def test_a_running_action_gives_its_slot_up_after_its_share_when_another_waits(clock):
    g = gate(clock, concurrent=1, share_s=15)
    hog = g.begin("hog", "race")
    hog.check()  # alone, it may run on
    clock.now += 16
    hog.check()  # past its share, but nobody waits
    newcomer = g.ask("newcomer", "race", wait=True)
    with pytest.raises(limits.Yielded, match="while another visitor waited") as stopped:
        hog.check()
    assert isinstance(stopped.value, OverBudget)  # a page shows it as it shows a spent budget
    g.end(hog)
    assert isinstance(newcomer.outcome, Ticket)


def test_a_rerun_waits_for_its_own_interrupted_action_instead_of_being_refused(clock):
    # Streamlit starts a rerun's script before the run it interrupts has stopped: for a moment one client has
    # its old action still running and asks for a new one. It waits; and the old one is not told to yield to it.
    g = gate(clock, concurrent=2, share_s=15)
    old = g.begin("alice", "race")
    new = g.ask("alice", "race", wait=True)
    clock.now += 20
    assert g.waiting() == 1 and g.running() == 1  # a slot is free, but not for a second action of alice's
    old.check()  # no Yielded: only alice waits
    g.end(old)
    assert isinstance(new.outcome, Ticket) and g.waiting() == 0


def test_a_turn_that_came_while_the_page_gave_up_is_freed(clock):
    g = gate(clock, concurrent=1)
    first = g.begin("alice", "race")

    def rerun(waiting: limits.Waiting) -> None:  # the slot frees while the page is told its place, then it stops
        g.end(first)
        raise RuntimeError("a rerun")

    with pytest.raises(RuntimeError, match="a rerun"):
        g.begin("bob", "race", wait_s=10, on_wait=rerun)
    assert g.running() == 0 and g.waiting() == 0


def test_one_client_that_keeps_pressing_run_cannot_keep_a_newcomer_out(clock):
    """Three hogs, each a client of its own (a script without cookies: the worst case), press Run again whenever
    refused or stopped, each race 80 s long; a student presses Run 5 s after each of its 3 s races. Its race
    starts within 30 s in at least 9 of 10 tries. On the clock, turn by turn every half second."""
    g = Slots.from_limits(  # CPU time as wall time: a race keeps its thread busy; no budget runs out
        Limits(concurrent=1, share_s=15, client_cpu_s=math.inf), clock=clock.wall, cpu_clock=clock.wall
    )

    class Visitor:
        def __init__(self, name: str, race_s: float) -> None:
            self.name, self.race_s, self.state, self.since = name, race_s, None, 0.0

        def press(self) -> None:
            self.since = clock.now
            self.took(g.ask(self.name, "race", wait=True))

        def took(self, got) -> None:
            self.state = None if isinstance(got, Busy) else got  # refused: press again

        def turn(self) -> None:
            if isinstance(self.state, Place) and (self.state.outcome or clock.now - self.since >= 60):
                self.took(g._give_up(self.state, clock.now))  # a page waits 60 s at most: what begin does then
            elif isinstance(self.state, Ticket):
                try:
                    self.state.check()
                    done = clock.now - self.state.started >= self.race_s
                except OverBudget:
                    done = True
                if done:
                    g.end(self.state)
                    self.state = None

    hogs = [Visitor(f"hog {i}", 80) for i in range(3)]
    student, waits, next_press = Visitor("student", 3), [], clock.now + 10
    while len(waits) < 10:
        for hog in hogs:
            if hog.state is None:
                hog.press()
            else:
                hog.turn()
        waited = isinstance(student.state, Place)
        if student.state is None and clock.now >= next_press:
            student.press()
            waited = True
        elif student.state is not None:
            student.turn()
        if waited and not isinstance(student.state, Place):  # its race started, or it was refused
            waits.append(student.state.started - student.since if student.state else math.inf)
        if student.state is None and next_press <= clock.now:
            next_press = clock.now + 5
        clock.now += 0.5
    print("waits (s):", waits)
    assert sum(w <= 30 for w in waits) >= 9, waits


# Lanes: downloads beside heavy actions, misses beside both, one accounting


def test_a_download_never_waits_behind_races(clock):
    g = gate(clock, concurrent=1)
    race = g.begin("racer", "training race")
    download = g.begin("student", "the CSV", lane=DOWNLOADS)
    assert isinstance(download, Ticket) and g.running(HEAVY) == 1 and g.running(DOWNLOADS) == 1
    assert isinstance(g.begin("student", "the sweep"), Busy)
    g.end(race)
    g.end(download)


def test_a_downloads_queue_is_short_and_its_share_is_short(clock):
    g = gate(clock, concurrent=1, downloads_waiting=2, download_share_s=5)
    first = g.begin("a", "CSV", lane=DOWNLOADS)
    places = [g.ask(who, "CSV", lane=DOWNLOADS, wait=True) for who in ("b", "c")]
    assert all(isinstance(p, Place) for p in places)
    busy = g.ask("d", "CSV", lane=DOWNLOADS, wait=True)
    assert isinstance(busy, Busy) and busy.retry_after_s == 15  # a's share, then b's, then c's
    clock.now += 5
    with pytest.raises(limits.Yielded):
        first.check()


def test_time_held_in_any_lane_counts_for_a_clients_turn_in_every_lane(clock):
    g = gate(clock, concurrent=1, misses_at_once=1)
    race = g.begin("racer", "training race")
    clock.now += 30
    g.end(race)
    miss = g.begin("third", "", lane=MISSES)
    g.ask("racer", "", lane=MISSES, wait=True)
    g.ask("classmate", "", lane=MISSES, wait=True)
    assert g.order(MISSES) == ["classmate", "racer"]
    g.end(miss)


def test_misses_wait_as_long_as_it_takes_and_one_client_may_hold_every_slot(clock):
    g = gate(clock, misses_at_once=2)
    held = [g.ask("flooder", "", lane=MISSES) for _ in range(2)]
    assert all(isinstance(t, Ticket) for t in held)  # no one else waits: both slots work for one client
    place = g.ask("flooder", "", lane=MISSES, wait=True)
    clock.now += 10**6
    assert isinstance(place, Place) and place.outcome is None
    g.end(held[0])
    assert isinstance(place.outcome, Ticket)


def test_a_server_forgets_the_clients_it_no_longer_needs_to_count(clock):
    g = Slots({MISSES: Lane(1)}, clock.wall)
    for i in range(300):
        with g.slot(f"client {i}"):
            clock.now += 1.0
    assert len(g._accounts) <= 300
    clock.now += 3600
    with g.slot("late"):
        pass
    assert len(g._accounts) < 300
    assert g.spent("client 299") == 0.0


# Uncached computations: the page kit's misses take fair turns


def flood_then_one(clients: dict[str, str]) -> list[str]:
    """One slot: A's first miss runs (1 s on the clock), A queues three more, then B one. The order they ran."""
    clock = Clock()
    cache = Budget(64 * MIB, concurrent=1, clock=clock.wall)
    release, ran, threads = threading.Event(), [], []

    def compute(name: str, first: bool = False):
        def run():
            ran.append(name)
            if first:
                release.wait(5)
                clock.now += 1.0  # the first miss took a second of compute
            return name

        return run

    def ask(name: str, first: bool = False) -> None:
        t = threading.Thread(
            target=cache.get_or_compute, args=(name, compute(name, first), clients[name[0]]), daemon=True
        )
        threads.append(t)
        t.start()

    ask("A1", first=True)
    until(lambda: cache.misses.running() == 1)
    for n, name in enumerate(["A2", "A3", "A4", "B1"], start=1):  # one at a time: their arrival order is known
        ask(name)
        until(lambda n=n: cache.misses.waiting() == n)
    release.set()
    for t in threads:
        t.join(5)
    assert all(name in cache for name in ran)
    return ran


def test_a_classmates_one_miss_overtakes_a_flooders_queue():
    assert flood_then_one({"A": "browser a", "B": "browser b"}) == ["A1", "B1", "A2", "A3", "A4"]


def test_one_client_for_everyone_is_first_come_first_served():
    """LNVIZ_LIMITS=off: the page kit passes no client, and turns go by arrival."""
    assert flood_then_one({"A": None, "B": None}) == ["A1", "A2", "A3", "A4", "B1"]


def test_the_client_with_the_least_recent_time_goes_first_and_the_sum_decays(clock):
    g = Slots({MISSES: Lane(2)}, clock.wall)
    start = clock.now
    for client, seconds in (("a", 6.0), ("b", 2.0)):
        with g.slot(client):
            clock.now += seconds
    assert g.spent("a") == pytest.approx(6.0 * math.exp(-2.0 / 60))
    clock.now = start + 68.0  # a minute after each ended, each sum is down by a factor e
    assert g.spent("a") == pytest.approx(6.0 * math.exp(-62.0 / 60))
    assert g.spent("b") == pytest.approx(2.0 * math.exp(-1.0))
    assert g.spent("new") == 0.0


def test_a_running_computation_counts_its_time_so_far(clock):
    g = Slots({MISSES: Lane(1)}, clock.wall)
    with g.slot("a"):
        clock.now += 3.0
        assert g.spent("a") == pytest.approx(3.0)
    assert g.running() == 0 and g.spent("a") == pytest.approx(3.0)


def test_a_failed_computation_frees_its_slot_and_is_charged(clock):
    g = Slots({MISSES: Lane(1)}, clock.wall)
    with pytest.raises(ValueError), g.slot("a"):
        clock.now += 2.0
        raise ValueError("these settings can't be computed")
    assert g.running() == 0 and g.spent("a") == pytest.approx(2.0)
    with g.slot("b"):
        assert g.running() == 1


def test_a_hit_never_waits_while_every_slot_is_taken():
    cache = Budget(64 * MIB, concurrent=1)
    cache.put("hit", 1)
    release = threading.Event()
    t = threading.Thread(target=cache.get_or_compute, args=("miss", lambda: release.wait(5), "flooder"))
    t.start()
    until(lambda: cache.misses.running() == 1)
    start = time.perf_counter()
    assert cache.get_or_compute("hit", lambda: 2, "classmate") == 1 and time.perf_counter() - start < 0.05
    release.set()
    t.join(5)


class Spy(Budget):
    def __init__(self) -> None:
        super().__init__(16 * MIB)
        self.clients: list[object] = []

    def get_or_compute(self, key, compute, client=None):
        self.clients.append(client)
        return super().get_or_compute(key, compute, client)


def square(x: int) -> int:
    return x * x


@pytest.mark.parametrize("env, expected", [({}, "browser 1234"), ({"LNVIZ_LIMITS": "off"}, None)])
def test_the_page_kit_charges_each_miss_to_the_runs_client_unless_the_limits_are_off(monkeypatch, env, expected):
    spy = Spy()
    monkeypatch.setattr(kit, "results", lambda: spy)
    monkeypatch.setattr(heavy, "client", lambda: "browser 1234")
    monkeypatch.delenv("LNVIZ_LIMITS", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    limits.current.cache_clear()  # the process reads its limits once
    try:
        page = kit.Page.__new__(kit.Page)  # compute needs no drawn page
        assert page.compute(square, 7) == 49
        assert spy.clients == [expected]
    finally:
        monkeypatch.undo()
        limits.current.cache_clear()


def test_the_page_kits_cache_takes_fair_turns_at_the_misses_limit():
    misses = kit.results().misses
    assert isinstance(misses, Slots) and misses.lanes[MISSES].slots == limits.current().misses_at_once == 2
