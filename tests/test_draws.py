"""A sample stays itself (issue 27): x[i, j] depends on the seed, the input kind and (i, j), not on B or H.

Torch is the oracle: the property is checked on make_activations and random_affine over seeded random
shapes, then through the explorer as a user moves B and H, and links made before keep the old draw's
numbers, checked against a fixture that the old code wrote (tests/fixtures/draw_v3.json).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from harness.apptest import share_link, stage_grid
from lnviz.maths import data
from lnviz.views import links, state
from tests.conftest import ROOT, assert_no_exception, run_page, stage_data

FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "draw_v3.json").read_text())


def shapes(n: int = 6) -> list[tuple[int, int, int, int, int]]:
    """Seeded random (seed, B, H, b, h) with b ≤ B and h ≤ H: a grid and a smaller one."""
    g = torch.Generator().manual_seed(27)
    out = []
    for _ in range(n):
        big_b, big_h = (int(v) for v in torch.randint(1, 40, (2,), generator=g))
        small_b, small_h = (int(torch.randint(1, m + 1, (1,), generator=g)) for m in (big_b, big_h))
        out.append((int(torch.randint(0, 2**31 - 1, (1,), generator=g)), big_b, big_h, small_b, small_h))
    return [*out, (0, 8, 12, 4, 6), (5, 1030, 2, 3, 2), (9, 2, 1030, 2, 1025)]  # 1030: past one block


@pytest.mark.parametrize("dist", list(state.DIST.options))
def test_a_smaller_grid_is_the_corner_of_a_larger_one_bit_for_bit(dist):
    for seed, big_b, big_h, small_b, small_h in shapes():
        big = data.make_activations(dist, big_b, big_h, seed)
        small = data.make_activations(dist, small_b, small_h, seed)
        assert torch.equal(small, big[:small_b, :small_h]), (seed, big_b, big_h, small_b, small_h)


def test_the_per_feature_gain_and_bias_keep_their_features():
    for seed, _, big_h, _, small_h in shapes():
        g, b = data.random_affine(big_h, seed)
        g_small, b_small = data.random_affine(small_h, seed)
        assert torch.equal(g_small, g[:small_h]) and torch.equal(b_small, b[:small_h])


def same_draw(x: torch.Tensor, written: list, what: str) -> None:
    """``x`` is the draw ``written`` holds, up to the last bit of an ``exp``: torch's vectorised exp rounds the
    last bit differently on different CPUs (the fixture was written on an AVX2 machine; an AVX-512 one differs by
    one unit in the last place in a few cells). A different draw differs by the size of the numbers themselves."""
    want = torch.tensor(written, dtype=torch.float64)
    ulp16 = 16 * torch.finfo(torch.float64).eps * float(want.abs().max())
    torch.testing.assert_close(x, want, rtol=0, atol=ulp16, msg=lambda m: f"{what}: {m}")


def test_the_old_draw_is_the_one_links_of_version_3_were_made_with():
    for grid in FIXTURE["grids"]:
        x = data.make_activations(grid["dist"], grid["batch"], grid["features"], grid["seed"], draw="whole")
        same_draw(x, grid["x"], grid["dist"])
    for case in FIXTURE["affine"]:
        g, b = data.random_affine(case["features"], case["seed"], draw="whole")
        assert torch.equal(g, torch.tensor(case["gain"], dtype=torch.float64))
        assert torch.equal(b, torch.tensor(case["bias"], dtype=torch.float64))


def test_the_stable_draw_is_not_the_old_one_and_its_rows_are_not_each_other():
    x = data.make_activations("standard normal", 8, 12, 0)
    (old,) = [
        g
        for g in FIXTURE["grids"]
        if (g["dist"], g["batch"], g["features"], g["seed"]) == ("standard normal", 8, 12, 0)
    ]
    assert not torch.equal(x, torch.tensor(old["x"], dtype=torch.float64))
    assert len({tuple(row) for row in x.tolist()}) == 8  # each row a stream of its own
    assert not torch.equal(data.make_activations("standard normal", 8, 12, 1)[0], x[1])  # seed 1's row 0 is not row 1


def _grids(at) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    d = stage_data(at)
    return stage_grid(d, d["x"]), stage_grid(d, d["ln"]["y"]), stage_grid(d, d["bn"]["y"]), d["resized"]


def test_through_the_page_b_8_to_4_keeps_ln_rows_and_h_12_to_6_keeps_bn_columns():
    at = run_page("pages/explorer.py", {"seed": "0"})
    assert_no_exception(at)
    x8, ln8, bn8, said = _grids(at)
    assert x8.shape == (8, 12) and said == ""
    at.select_slider(key="batch").set_value(4).run()
    assert_no_exception(at)
    x4, ln4, bn4, said = _grids(at)
    assert x4.shape == (4, 12)
    assert np.array_equal(x4, x8[:4]) and np.array_equal(ln4, ln8[:4])
    assert not np.isclose(bn4, bn8[:4]).any()
    assert said == "B 8 → 4: rows 0–3 of x and of LN's output unchanged; BN's changed."
    at.run()  # a rerun that changes nothing of the grid (the stage's report that it is drawn, say): still said
    assert _grids(at)[3] == said
    at.select_slider(key="batch").set_value(8).run()
    at.select_slider(key="features").set_value(6).run()
    assert_no_exception(at)
    x6, ln6, bn6, said = _grids(at)
    assert x6.shape == (8, 6)
    assert np.array_equal(x6, x8[:, :6]) and np.array_equal(bn6, bn8[:, :6])
    assert not np.isclose(ln6, ln8[:, :6]).any()
    assert said == "H 12 → 6: columns 0–5 of x and of BN's output unchanged; LN's changed."
    at.slider(key="gain").set_value(1.5).run()  # not a resize: nothing to say
    assert _grids(at)[3] == ""


def test_a_session_keeps_no_large_grid_for_the_resize_note():
    """A visitor's session holds the last result only up to 64 × 64 cells: from 128 × 64 down to 64 × 64 the
    stage says nothing (it has nothing to compare with), and from 64 × 64 down again it says what stayed."""
    at = run_page("pages/explorer.py", {"seed": "0", "batch": "128", "features": "64"})
    assert_no_exception(at)
    assert at.session_state["_lnviz_stage_before"][1] is None
    at.select_slider(key="batch").set_value(64).run()
    assert_no_exception(at)
    assert _grids(at)[3] == ""
    at.select_slider(key="batch").set_value(32).run()
    assert _grids(at)[3].startswith("B 64 → 32: rows 0–31 of x and of LN's output unchanged")


def test_a_version_3_link_opens_the_old_draws_numbers_and_keeps_it_in_the_address_bar():
    (old,) = [
        g
        for g in FIXTURE["grids"]
        if (g["dist"], g["batch"], g["features"], g["seed"]) == ("heterogeneous samples", 5, 7, 3)
    ]
    at = run_page(
        "pages/explorer.py", {"v": "3", "dist": "heterogeneous samples", "batch": "5", "features": "7", "seed": "3"}
    )
    assert_no_exception(at)
    d = stage_data(at)
    assert np.array_equal(stage_grid(d, d["x"]), np.asarray(old["x"]))
    assert "Draw = whole" in " ".join(i.value for i in at.info)  # the page says so
    share = share_link(at)  # what a reload or a copied link reopens
    assert "draw=whole" in share and f"v={links.LINK_VERSION}" in share
    fresh = run_page("pages/explorer.py", {"dist": "heterogeneous samples", "batch": "5", "features": "7", "seed": "3"})
    d = stage_data(fresh)
    assert not np.array_equal(stage_grid(d, d["x"]), np.asarray(old["x"]))  # today's link: the stable draw


def test_the_coupling_and_family_grids_keep_their_samples_too():
    from lnviz.labs import coupling, family

    for seed, big_b, big_h, small_b, small_h in shapes(4):
        big_b, small_b = max(big_b, 2), max(small_b, 2)
        big = coupling.couple(big_b, big_h, seed, 0, "outlier", 5.0)
        small = coupling.couple(small_b, small_h, seed, 0, "outlier", 5.0)
        assert torch.equal(small.x, big.x[:small_b, :small_h])
        changed = [coupling.perturb_row(r.x, 0, "outlier", 5.0, seed) for r in (big, small)]  # row 0 is u
        assert torch.equal(changed[1], changed[0][:small_b, :small_h])  # u keeps its features too
        n, c, p = (min(v, 8) for v in (big_b, big_h, big_b + 1))
        x = family.make_tensor(n, c, p, seed)
        assert torch.equal(family.make_tensor(1, max(c // 2, 1), 2, seed), x[:1, : max(c // 2, 1), :2])
    old = family.make_tensor(4, 6, 8, 0, draw="whole")  # the old draw: one generator, (offset, scale, z) in turn
    g = data.generator(0)
    offset = 2.0 * torch.randn(1, 6, 1, generator=g, dtype=torch.float64)
    scale = torch.exp(0.5 * torch.randn(4, 1, 1, generator=g, dtype=torch.float64))
    assert torch.equal(old, offset + scale * torch.randn(4, 6, 8, generator=g, dtype=torch.float64))
