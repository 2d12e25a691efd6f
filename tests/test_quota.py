"""server.quota: so much per key per window, one implementation on memory and on a real redis-server
(started for this module, harness/redis.py); time is a clock the test moves by hand."""

import itertools
import time
import types
from collections.abc import Iterator

import limits.storage.memory
import limits.storage.redis
import pytest

from harness import redis as redis_harness
from server import quota as quotas
from server.limits import Limits, QuotaExceeded, StoreDown
from server.quota import Quota, UploadQuota

MIB = 2**20
_names = itertools.count()


class Clock:
    """time.time for the limits package's storages and for server.quota, moved by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    fake = types.SimpleNamespace(time=clock.time)
    for module in (limits.storage.memory, limits.storage.redis, quotas):
        monkeypatch.setattr(module, "time", fake)
    return clock


@pytest.fixture(scope="module")
def redis_server() -> Iterator[redis_harness.RedisServer]:
    with redis_harness.running() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
def storage(request):
    if request.param == "memory":
        return quotas.storage_from_env({})
    return quotas.storage_from_env({quotas.REDIS_ENV: request.getfixturevalue("redis_server").url})


def quota(storage, amount: int, window_s: int, exact: bool = True) -> Quota:
    return Quota(f"test{next(_names)}", amount, window_s, storage, exact)  # each test its own keys


def test_a_count_is_refused_past_its_amount_until_the_oldest_leaves_the_window(clock, storage):
    q = quota(storage, 3, 60)
    for _ in range(3):
        assert q.hit("ann")
        clock.now += 5
    assert not q.hit("ann") and not q.test("ann")
    assert q.retry_after_s("ann") == 45  # the first hit, 15 s ago, leaves a 60 s window in 45 s
    assert q.hit("bob")  # another key is not affected
    clock.now += 45
    assert not q.hit("ann")  # the oldest leaves once more than the window has passed
    clock.now += 0.5
    assert q.test("ann") and q.hit("ann") and not q.hit("ann")  # one left the window: one place


def test_bytes_are_counted_by_cost_and_a_refused_hit_charges_nothing(clock, storage):
    q = quota(storage, 64 * MIB, 3600, exact=False)
    for _ in range(8):
        assert q.hit("ann", 8 * MIB)
    assert not q.hit("ann", 8 * MIB) and not q.hit("ann", 1)
    assert q.hit("bob", 64 * MIB) and not q.hit("bob", 1)
    small = quota(storage, 10, 3600, exact=False)
    assert not small.hit("ann", 11) and small.hit("ann", 10)  # the refused 11 was not charged


def test_bytes_come_back_once_their_window_has_slid_past(clock):
    q = quota(quotas.storage_from_env({}), 64 * MIB, 3600, exact=False)
    assert q.hit("ann", 64 * MIB) and not q.hit("ann", MIB)
    clock.now += 2 * 3600
    assert q.hit("ann", 64 * MIB)


def test_the_memory_and_redis_storages_come_from_the_environment(redis_server):
    assert type(quotas.storage_from_env({})).__name__ == "MemoryStorage"
    assert type(quotas.storage_from_env({quotas.REDIS_ENV: redis_server.url})).__name__ == "RedisStorage"


def test_an_unreachable_redis_raises_store_down_quickly():
    with redis_harness.running() as server:
        q = quota(quotas.storage_from_env({quotas.REDIS_ENV: server.url}), 3, 60)
        assert q.hit("ann")
        server.stop()
        start = time.monotonic()
        for call in (q.hit, q.test, q.retry_after_s):
            with pytest.raises(StoreDown):
                call("ann")
        assert time.monotonic() - start < 10


# Uploads


def upload_quota(**kw) -> UploadQuota:
    return UploadQuota(Limits(**kw))


def test_a_session_keeps_its_newest_files_and_drops_the_oldest(clock):
    q = upload_quota(upload_files=2, upload_bytes=64 * MIB)
    assert q.admit("s", 30 * MIB, [], 0) == []
    assert q.admit("s", 30 * MIB, [("a", 30 * MIB)], 30 * MIB) == []
    # A third file: the oldest goes, so the session never holds more than two.
    assert q.admit("s", 30 * MIB, [("a", 30 * MIB), ("b", 30 * MIB)], 60 * MIB) == ["a"]
    # Bytes too: a big file pushes out both small ones.
    assert q.admit("s", 62 * MIB, [("a", 3 * MIB), ("b", 3 * MIB)], 6 * MIB) == ["a", "b"]


def test_a_session_that_sends_file_after_file_is_refused_for_a_while(clock):
    q = upload_quota(uploads_per_window=3, window_s=60)
    for _ in range(3):
        q.admit("s", MIB, [], 0)
        clock.now += 5
    with pytest.raises(QuotaExceeded, match="3 files in 1 minutes") as info:
        q.admit("s", MIB, [], 0)
    assert info.value.retry_after_s == 45
    q.admit("other", MIB, [], 0)  # another session is not affected
    clock.now += 45.5
    q.admit("s", MIB, [], 0)
    with pytest.raises(QuotaExceeded):
        q.admit("s", MIB, [], 0)


def test_a_refused_upload_is_not_counted(clock):
    q = upload_quota(uploads_per_window=2, upload_bytes=10 * MIB)
    for _ in range(5):
        with pytest.raises(QuotaExceeded, match="over this session's 10 MiB"):
            q.admit("s", 11 * MIB, [], 0)
    q.admit("s", MIB, [], 0)
    q.admit("s", MIB, [], 0)
    with pytest.raises(QuotaExceeded, match="2 files"):
        q.admit("s", MIB, [], 0)


def test_the_server_holds_at_most_its_total_of_uploads(clock):
    q = upload_quota(upload_total_bytes=100 * MIB)
    with pytest.raises(QuotaExceeded, match="as many uploaded files as it can"):
        q.admit("s", 30 * MIB, [], 80 * MIB)
    assert q.admit("s", 30 * MIB, [("a", 10 * MIB), ("b", 10 * MIB)], 80 * MIB) == ["a"]


def test_uploads_are_not_counted_with_the_limits_off(clock):
    q = UploadQuota(Limits.off())
    for _ in range(100):
        assert q.admit("s", 30 * MIB, [("a", 30 * MIB)] * 5, 10**12) == []


def test_room_codes_that_open_no_room_are_counted_per_client_and_per_address_until_the_window_passes(clock, storage):
    from dataclasses import replace

    from server.quota import CodeTries

    lim = replace(Limits(), code_misses_per_client=2, code_misses_per_address=3, code_window_s=60.0)
    tries = CodeTries(lim, storage)
    client, address = f"proved c{next(_names)}", f"address a{next(_names)}"
    for _ in range(2):
        assert tries.wait_s(client, address) == 0
        tries.missed(client, address)
    assert 0 < tries.wait_s(client, address) <= 60  # the client's two are spent
    assert tries.wait_s("proved other", address) == 0
    tries.missed("proved other", address)
    assert tries.wait_s("proved another", address) > 0  # the address's three are spent, whoever tries
    assert tries.wait_s("proved another", "address elsewhere") == 0
    clock.now += 61
    assert tries.wait_s(client, address) == 0
    assert CodeTries(Limits.off(), storage).wait_s(client, address) == 0
