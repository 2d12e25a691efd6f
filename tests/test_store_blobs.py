"""The shared store's blobs (server.store_blobs): one byte cap for every grid shared by a link, counted on
write, on both backends; and issue 30's attack 1 rerun on a real redis-server set up as deploy/k8s/redis.yaml
sets it up: shares from fresh clients fill the grids to their cap while a class runs, and the class loses nothing."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import redis
import yaml
from conftest import assert_no_exception, run_page, share_box, stage_x

from harness import redis as redis_harness
from server import limits, own_share, poll
from server import process_store as shared_store
from server.limits import Limits
from server.store import MemoryStore, RedisStore, Store
from ui.labs import own_data

ROOT = Path(__file__).resolve().parents[1]
_prefixes = itertools.count()


def deployed_redis_args() -> list[str]:
    """redis.yaml's memory options, as its container passes them to redis-server: --maxmemory and its policy."""
    docs = list(yaml.safe_load_all((ROOT / "deploy/k8s/redis.yaml").read_text()))
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return [part for i, opt in enumerate(args) if opt.startswith("--maxmemory") for part in (opt, args[i + 1])]


@pytest.fixture(scope="module")
def deployed_redis() -> Iterator[redis_harness.RedisServer]:
    with redis_harness.running(deployed_redis_args()) as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
def make_store(request) -> Callable[..., Store]:
    if request.param == "memory":
        return lambda **numbers: MemoryStore(replace(Limits(), **numbers))
    server = request.getfixturevalue("deployed_redis")

    def redis_store(**numbers: int) -> Store:
        return RedisStore(server.url, prefix=f"blobs{next(_prefixes)}:", limits=replace(Limits(), **numbers))

    return redis_store


def test_the_blobs_held_together_stay_within_the_cap_and_a_refused_one_is_not_kept(make_store):
    store = make_store(shared_grid_bytes=1000)
    assert store.put_blob("a", b"a" * 400) and store.put_blob("b", b"b" * 400)
    assert not store.put_blob("c", b"c" * 201)  # 1,001 bytes
    assert store.get_blob("c") is None and not store.renew_blob("c")
    assert store.put_blob("a", b"a" * 400)  # the same blob again is counted once
    assert store.put_blob("c", b"c" * 200) and store.blob_bytes() == 1000
    assert store.get_blob("a") == b"a" * 400 and store.get_blob("b") == b"b" * 400  # nothing held was dropped


def test_a_blob_past_its_time_gives_its_bytes_back_memory():
    now = [0.0]
    store = MemoryStore(replace(Limits(), blob_ttl_s=100, shared_grid_bytes=1000), clock=lambda: now[0])
    assert store.put_blob("a", b"a" * 600)
    now[0] = 99.0
    assert store.renew_blob("a") and not store.put_blob("b", b"b" * 600)
    now[0] = 199.5  # 100 s after its renewal
    assert store.put_blob("b", b"b" * 600) and store.blob_bytes() == 600


def test_a_blob_past_its_time_gives_its_bytes_back_redis(deployed_redis):
    prefix = f"blobs{next(_prefixes)}:"
    store = RedisStore(deployed_redis.url, prefix=prefix, limits=replace(Limits(), shared_grid_bytes=1000))
    assert store.put_blob("a", b"a" * 600) and not store.put_blob("b", b"b" * 600)
    client = redis.Redis.from_url(deployed_redis.url)
    assert 0 < client.ttl(f"{prefix}blobs:bytes") <= store.limits.blob_ttl_s  # the count expires too
    # As Redis finds "a" once its time has passed: its key gone, its time in blobs:at behind Redis's clock.
    client.delete(f"{prefix}blob:a")
    client.zadd(f"{prefix}blobs:at", {"a": 1})
    assert store.put_blob("b", b"b" * 600) and store.blob_bytes() == 600


def test_attack_6_a_clients_grids_past_its_share_go_first_and_an_honest_share_succeeds(make_store):
    """Issue 47, attack 6, at a small scale on both backends: three clients of one address fill the cap; a classmate
    behind the same address, then a visitor from another, each share a grid, and the oldest grids of the largest
    holders made room; a client that would be the largest holder itself is refused, and nothing else goes."""
    store = make_store(shared_grid_bytes=1000)
    nat, home = "address nat", "address home"
    for n in range(3):
        for k in range(2):
            assert store.put_blob(f"a{n}{k}", b"a" * 150, f"script {n}", nat)
    assert store.blob_bytes() == 900
    assert store.put_blob("honest", b"h" * 200, "classmate", nat)  # 100 bytes to find: a script's oldest grid
    assert store.get_blob("a00") is None and store.blob_bytes() == 950
    assert store.put_blob("visitor", b"v" * 300, "visitor", home)  # its address holds less: nat's largest go
    assert store.blob_bytes() <= 1000
    gone = {k for k in ("a01", "a10", "a11", "a20", "a21") if store.get_blob(k) is None}
    assert len(gone) == 2 and gone < {"a10", "a11", "a20", "a21"}  # the scripts' grids, never the classmate's
    assert store.get_blob("honest") == b"h" * 200 and store.get_blob("visitor") == b"v" * 300
    held = store.blob_bytes()
    assert not store.put_blob("greedy", b"g" * 400, "visitor", home)  # it would hold the most: it waits
    assert store.get_blob("greedy") is None and store.blob_bytes() == held


def test_redis_yaml_evicts_nothing_and_the_grids_cap_leaves_most_of_its_memory_to_the_class():
    args = deployed_redis_args()
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"
    maxmemory = int(args[args.index("--maxmemory") + 1].removesuffix("mb")) * 10**6
    # jemalloc keeps an 8 MiB grid (and its header) in a 10 MiB run: the cap's bytes take up to 1.25 times that.
    assert Limits.shared_grid_bytes * 1.25 < maxmemory / 2
    assert Limits.off().shared_grid_bytes > 2**50  # LNVIZ_LIMITS=off lifts it


def test_attack_1_shares_from_fresh_clients_fill_the_grids_cap_and_the_running_class_loses_nothing(deployed_redis):
    """Issue 30, attack 1: sessions without cookies (a fresh client each) share 8 MiB grids, more than Redis holds.
    With redis.yaml's Redis and the store's cap, the grids stop at the cap, Redis evicts nothing, and the class's
    room, its 30 votes and the presenter's next press are all there."""
    prefix = f"attack{next(_prefixes)}:"
    store = RedisStore(deployed_redis.url, prefix=prefix)
    room, secret = poll.open_room(store, ("q-one", "q-two"))
    for i in range(30):
        assert store.vote(room.code, f"student{i}", 0, 1, str(i % 3)) == poll.COUNTED
    largest = (own_share.MAX_ROWS, own_share.MAX_COLS)
    stored, refused = 0, 0
    for i in itertools.count():
        try:
            stored += (
                own_share.share(store, own_share.new_quota(), np.full(largest, float(i)), f"session {i}") is not None
            )
        except limits.Full:
            refused += 1
            if refused == 2:
                break
    grid_bytes = own_share.MAX_BYTES
    assert stored == Limits.shared_grid_bytes // grid_bytes == 11
    assert store.blob_bytes() == stored * grid_bytes <= Limits.shared_grid_bytes
    info = redis.Redis.from_url(deployed_redis.url).info()
    assert info["evicted_keys"] == 0 and info["used_memory"] < info["maxmemory"] / 2
    assert store.room(room.code) == room
    assert store.votes(room.code, 0, 1) == {f"student{i}": str(i % 3) for i in range(30)}
    assert store.vote(room.code, "late", 0, 1, "1") == poll.COUNTED  # the class goes on
    assert store.act(room.code, secret, "reveal", room.version).phase == "reveal"
    # Issue 47, attack 6: with the cap full, a classmate's share still succeeds; the oldest of the largest go.
    honest = own_share.share(store, own_share.new_quota(), np.eye(100), "classmate")
    assert honest is not None and own_share.load(store, honest) is not None
    assert store.blob_bytes() <= Limits.shared_grid_bytes and info["evicted_keys"] == 0


def test_with_the_grids_at_their_cap_a_paste_is_shown_and_the_link_says_why_it_cant_carry_it(monkeypatch):
    small = MemoryStore(replace(Limits(), shared_grid_bytes=64))  # under a 3 x 4 grid's bytes
    monkeypatch.setattr(shared_store, "_store", small)
    monkeypatch.setattr(shared_store, "shared", lambda: True)
    quota = own_share.new_quota()
    monkeypatch.setattr(own_data, "share_quota", lambda: quota)
    at = run_page("pages/explorer.py")
    at.text_area(key="paste").input("1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 0").run()
    at = at.button(key="use_paste").click().run()
    assert_no_exception(at)
    np.testing.assert_array_equal(stage_x(at), [[1.0, 2, 3, 4], [2, 4, 6, 9], [0, 0, 1, 0]])  # shown all the same
    assert "already holds as much data for links as it keeps at once" in share_box(at).caption[0].value
