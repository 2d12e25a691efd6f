"""server.own_store: visitors' own matrices held once by content in a Budget, bounded per visitor, per
process and in time."""

import threading

import numpy as np
import pytest

from server import own_store
from server.budget import MIB, Budget
from server.limits import Full


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def matrix(seed: int, mib: float = 1.0) -> np.ndarray:
    """A (rows, 128) float64 matrix of ``mib`` MiB, different for each seed."""
    rows = int(mib * MIB) // (128 * 8)
    return np.random.default_rng(seed).standard_normal((rows, 128))


@pytest.fixture
def clock() -> Clock:
    return Clock()


class Store:
    """own_store's functions on one budget, read as a store: put(visitor, x) -> id, get(id), release(visitor, id)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.get, self.release = budget.get, budget.release

    def put(self, visitor: str, x: np.ndarray) -> str:
        return own_store.put(self.budget, visitor, x)

    def __contains__(self, key: str) -> bool:
        return key in self.budget

    def __len__(self) -> int:
        return len(self.budget)

    @property
    def bytes(self) -> int:
        return self.budget.bytes


def store(clock, **kw) -> Store:
    return Store(
        own_store.new(**{"budget": 8 * MIB, "session_bytes": 2 * MIB, "ttl_s": 600, "protect_s": 60, **kw}, clock=clock)
    )


def test_the_same_matrix_from_many_visitors_is_held_once(clock):
    s = store(clock)
    x = matrix(0)
    ids = {s.put(f"visitor {i}", x.copy()) for i in range(225)}  # 225 sessions, one 1 MiB upload
    assert len(ids) == 1 and len(s) == 1 and s.bytes == x.nbytes
    np.testing.assert_array_equal(s.get(ids.pop()), x)


def test_the_id_is_the_content_and_its_shape(clock):
    s = store(clock)
    x = np.arange(12.0).reshape(3, 4)
    assert s.put("a", x) == own_store.content_id(x.astype(np.float32)) != own_store.content_id(x.reshape(4, 3))


def test_a_visitor_keeps_its_newest_within_its_share(clock):
    s = store(clock)
    first = s.put("a", matrix(1))
    clock.now += 1
    second = s.put("a", matrix(2))
    clock.now += 1
    third = s.put("a", matrix(3))
    assert s.get(first) is None and s.get(second) is not None and s.get(third) is not None
    assert s.bytes == 2 * MIB
    with pytest.raises(Full, match="a visitor may keep"):
        s.put("a", matrix(4, mib=3))


def test_distinct_visitors_never_hold_more_than_the_budget(clock):
    s = store(clock)
    for i in range(8):
        s.put(f"v{i}", matrix(i))
    clock.now += 61  # none used in the last minute: the least recently used make room
    s.get(s.put("v0", matrix(0)))
    for i in range(100, 140):
        s.put(f"v{i}", matrix(i))
        clock.now += 61
        assert s.bytes <= 8 * MIB


def test_data_in_use_is_never_dropped_for_a_newcomer_over_an_equal_share_who_is_told_when_to_retry(clock):
    s = store(clock)
    ids = [s.put(f"v{i}", matrix(i)) for i in range(8)]
    clock.now += 20
    share = "over an equal share of it .0.9 MiB for each of the 9 visitors.*again in 40 s"
    with pytest.raises(Full, match=share) as refused:
        s.put("newcomer", matrix(99))  # 1 MiB, as much as each of the 8 holds: none is further over its share
    assert refused.value.retry_after_s == 40 and all(k in s for k in ids)
    clock.now += 40  # and then it is true: the least recently used has been idle long enough
    assert s.put("newcomer", matrix(99))
    assert [k in s for k in ids] == [False] + [True] * 7


def test_unused_data_expires_and_its_memory_comes_back(clock):
    s = store(clock)
    key = s.put("a", matrix(0))
    clock.now += 599
    assert s.get(key) is not None
    clock.now += 601
    assert s.get(key) is None and s.bytes == 0 and len(s) == 0


def test_released_data_goes_once_no_one_holds_it(clock):
    s = store(clock)
    x = matrix(0)
    key = s.put("a", x)
    s.put("b", x)
    s.release("a", key)
    assert s.get(key) is not None
    s.release("b", key)
    assert s.get(key) is None and s.bytes == 0


def test_a_new_store_holds_128_mib_and_16_a_session_by_default():
    store = own_store.new()
    assert (store.budget, store.holder_bytes) == (128 * MIB, 16 * MIB)


def test_concurrent_puts_keep_the_count_exact(clock):
    s = store(clock, budget=64 * MIB, session_bytes=64 * MIB)
    threads = [threading.Thread(target=lambda i=i: s.put(f"v{i % 4}", matrix(i % 10))) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert s.bytes == sum(e.nbytes for e in s.budget._entries.values()) == len(s) * MIB
