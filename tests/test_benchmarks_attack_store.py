"""benchmarks/attack_store.py's verdicts: a class that lost its room or a vote, a Redis that evicted, or grids past
the store's cap each miss (the run itself is tests/test_store_blobs.py's attack 1, on the same Redis options)."""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks import attack_store

HELD = attack_store.Outcome("1. x", 4, 30, 11, 17, 3.0, 88.0, 121.0, 0, True, attack_store.CLASS, True)


def test_the_store_run_uses_redis_yaml_s_memory_options():
    assert attack_store.redis_args() == ["--maxmemory", "256mb", "--maxmemory-policy", "noeviction"]


@pytest.mark.parametrize(
    "change",
    [
        {"room_kept": False},
        {"votes_kept": attack_store.CLASS - 1},
        {"pressed": False},
        {"evicted": 1},
        {"grid_mib": 97},
    ],
)
def test_a_class_that_lost_anything_or_grids_past_the_cap_miss(change):
    assert attack_store.markdown([HELD]).count("**PASS**") == 1
    assert attack_store.markdown([dataclasses.replace(HELD, **change)]).count("**MISS**") == 1
