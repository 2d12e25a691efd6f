"""Page.compute's cache: bounded by bytes across distinct links, and out of reach of a visitor's "clear caches"."""

import pytest
import streamlit as st
import torch

from server import budget, limits
from server.budget import MIB
from ui.kit import page as kit

CALLS: list[int] = []


def grid(seed: int, size: int) -> torch.Tensor:
    """A (size, size) float64 grid, counting its calls."""
    CALLS.append(seed)
    return torch.full((size, size), float(seed), dtype=torch.float64)


@pytest.fixture
def page(monkeypatch):
    cache = budget.Budget(16 * MIB)
    monkeypatch.setattr(kit, "results", lambda: cache)
    CALLS.clear()
    return kit.Page.__new__(kit.Page)  # compute needs no drawn page


def test_forty_distinct_links_hold_at_most_the_budget(page):
    for seed in range(40):  # each 2 MiB, as a 1024 x 1024 result is 32 MiB against 256
        assert page.compute(grid, seed, 512, shared=True)[0, 0] == seed
        assert kit.results().bytes <= 16 * MIB
    assert len(kit.results()) == 7
    page.compute(grid, 39, 512, shared=True)
    assert CALLS.count(39) == 1  # still held


def test_a_clear_cache_message_does_not_empty_it(page):
    page.compute(grid, 1, 8)
    st.cache_data.clear()  # what Streamlit does for a browser's BackMsg clear_cache
    st.cache_resource.clear()
    page.compute(grid, 1, 8)
    assert CALLS == [1]


def test_shared_results_are_one_object_and_the_others_copies(page):
    assert page.compute(grid, 2, 4, shared=True) is page.compute(grid, 2, 4, shared=True)
    mine = page.compute(grid, 3, 4)
    mine += 1
    assert page.compute(grid, 3, 4)[0, 0] == 3 and CALLS == [2, 3]


def test_tensors_are_refused_as_arguments(page):
    with pytest.raises(TypeError, match="plain values"):
        page.compute(grid, torch.tensor(1), 4)


@pytest.mark.parametrize("env, mib", [({}, 256), ({"LNVIZ_CACHE_MIB": "64"}, 64)])
def test_the_page_kits_cache_is_256_mib_unless_the_environment_says_otherwise(monkeypatch, env, mib):
    monkeypatch.delenv("LNVIZ_CACHE_MIB", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    limits.current.cache_clear()  # the process reads its limits once, and builds its cache once
    kit.results.cache_clear()
    try:
        assert kit.results().budget == mib * MIB
    finally:
        monkeypatch.undo()
        limits.current.cache_clear()
        kit.results.cache_clear()
