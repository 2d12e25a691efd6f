"""lnviz.serving.fair: uncached computations take fair turns, so one client's flood of misses cannot queue
in front of a classmate's one miss; and the page kit charges each miss to its client."""

import math
import threading
import time

import pytest

from lnviz.serving import budget, limits
from lnviz.serving.budget import MIB, ByteLRU
from lnviz.serving.fair import FairSlots
from ui import heavy
from ui import page as kit


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def until(condition, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def flood_then_one(clients: dict[str, str]) -> list[str]:
    """One slot: A's first miss runs (1 s on the clock), A queues three more, then B one. The order they ran."""
    clock = Clock()
    cache = ByteLRU(64 * MIB, concurrent=1, clock=clock)
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
        t = threading.Thread(target=cache.get_or_compute, args=(name, compute(name, first), clients[name[0]]))
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


def test_the_client_with_the_least_recent_compute_goes_first_and_the_sum_decays():
    clock = Clock()
    slots = FairSlots(2, clock)
    for client, seconds in (("a", 6.0), ("b", 2.0)):
        with slots.slot(client):
            clock.now += seconds
    assert slots.spent("a") == pytest.approx(6.0 * math.exp(-2.0 / 60))
    clock.now += 60.0  # a minute later, each sum is down by a factor e
    assert slots.spent("a") == pytest.approx(6.0 * math.exp(-62.0 / 60))
    assert slots.spent("b") == pytest.approx(2.0 * math.exp(-1.0))
    assert slots.spent("new") == 0.0


def test_a_running_computation_counts_its_time_so_far():
    clock = Clock()
    slots = FairSlots(1, clock)
    with slots.slot("a"):
        clock.now += 3.0
        assert slots.spent("a") == pytest.approx(3.0)
    assert slots.running() == 0 and slots.spent("a") == pytest.approx(3.0)


def test_a_failed_computation_frees_its_slot_and_is_charged():
    clock = Clock()
    slots = FairSlots(1, clock)
    with pytest.raises(ValueError), slots.slot("a"):
        clock.now += 2.0
        raise ValueError("these settings can't be computed")
    assert slots.running() == 0 and slots.spent("a") == pytest.approx(2.0)
    with slots.slot("b"):
        assert slots.running() == 1


def test_a_hit_never_waits_while_every_slot_is_taken():
    cache = ByteLRU(64 * MIB, concurrent=1)
    cache.put("hit", 1)
    release = threading.Event()
    t = threading.Thread(target=cache.get_or_compute, args=("miss", lambda: release.wait(5), "flooder"))
    t.start()
    until(lambda: cache.misses.running() == 1)
    start = time.perf_counter()
    assert cache.get_or_compute("hit", lambda: 2, "classmate") == 1 and time.perf_counter() - start < 0.05
    release.set()
    t.join(5)


class Spy(ByteLRU):
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
    monkeypatch.setattr(kit, "RESULTS", spy)
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
    assert isinstance(kit.RESULTS.misses, FairSlots) and kit.RESULTS.misses.slots == budget.MISSES_AT_ONCE
