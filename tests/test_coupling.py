"""Batch coupling: lnviz.labs.coupling against torch.nn.functional in float64, and the page through the router."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, figures, run_page
from figcheck import assert_plotly_valid
from hypothesis import assume, given, settings
from hypothesis import strategies as hs

from lnviz.labs import coupling
from lnviz.maths import data
from lnviz.views import pages

TOL = dict(rtol=0, atol=1e-12)


def _bn(x: torch.Tensor, eps: float) -> torch.Tensor:
    return F.batch_norm(x, None, None, training=True, eps=eps)


def _ln(x: torch.Tensor, eps: float) -> torch.Tensor:
    return F.layer_norm(x, (x.shape[1],), eps=eps)


def _random_case(seed: int) -> tuple[int, int, int, float, float]:
    """(B, H, i, a, ε) drawn from a generator of the test's own."""
    g = torch.Generator().manual_seed(1000 + seed)
    b = int(torch.randint(2, 41, (1,), generator=g))
    h = int(torch.randint(2, 33, (1,), generator=g))
    i = int(torch.randint(0, b, (1,), generator=g))
    a = float(torch.empty(1, dtype=torch.float64).uniform_(-10, 10, generator=g))
    eps = [1e-12, 1e-5, 1e-2][seed % 3]  # torch refuses eps = 0 in training-mode batch_norm
    return b, h, i, a, eps


@pytest.mark.parametrize("kind", list(coupling.PERTURBATIONS))
@pytest.mark.parametrize("seed", range(6))
def test_couple_matches_torch(kind: str, seed: int) -> None:
    b, h, i, a, eps = _random_case(seed)
    r = coupling.couple(b, h, seed, i, kind, a, eps=eps)
    assert r.x.dtype == torch.float64 and r.x.shape == (b, h)
    assert torch.equal(r.x, data.make_activations("standard normal", b, h, seed))
    others = [n for n in range(b) if n != i]
    assert torch.equal(r.x_new[others], r.x[others])
    if kind == "scale":
        torch.testing.assert_close(r.x_new[i], a * r.x[i], **TOL)
    elif kind == "shift":
        torch.testing.assert_close(r.x_new[i], r.x[i] + a, **TOL)
    for got, want in (
        (r.bn.y, _bn(r.x, eps)),
        (r.bn_new.y, _bn(r.x_new, eps)),
        (r.ln.y, _ln(r.x, eps)),
        (r.ln_new.y, _ln(r.x_new, eps)),
        (r.bn_delta, (_bn(r.x_new, eps) - _bn(r.x, eps)).abs()),
        (r.ln_delta, (_ln(r.x_new, eps) - _ln(r.x, eps)).abs()),
    ):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-10)


def test_outlier_row_is_a_times_one_fresh_row() -> None:
    """The outlier is a·u for one u per seed: linear in a, not x's own row, and it leaves x alone."""
    r1 = coupling.couple(8, 12, 3, 2, "outlier", 1.0)
    r5 = coupling.couple(8, 12, 3, 2, "outlier", -5.0)
    torch.testing.assert_close(r5.x_new[2], -5.0 * r1.x_new[2], **TOL)
    assert not torch.allclose(r1.x_new[2], r1.x[2])
    assert torch.equal(r1.x, r5.x)
    u = r1.x_new[2]
    assert abs(float(u.mean())) < 1.5 and 0.2 < float(u.std()) < 3.0  # standard normal, 12 draws


@settings(max_examples=40, deadline=None)
@given(
    b=hs.integers(2, 24),
    h=hs.integers(2, 24),
    seed=hs.integers(0, 2**31 - 1),
    pick=hs.floats(0, 1, exclude_max=True),
    kind=hs.sampled_from(list(coupling.PERTURBATIONS)),
    a=hs.floats(-10, 10),
)
def test_ln_moves_only_row_i_bn_moves_every_row(b, h, seed, pick, kind, a) -> None:
    assume(not (kind == "scale" and abs(a - 1) < 0.1))  # a = 1 changes nothing
    assume(not (kind == "shift" and abs(a) < 0.1))  # nor does a = 0
    i = int(pick * b)
    r = coupling.couple(b, h, seed, i, kind, a)
    others = [n for n in range(b) if n != i]
    assert float(r.ln_delta[others].max()) == 0.0
    assert float(r.bn_delta[others].amax(dim=1).min()) > 1e-9
    assert r.bn_rows_changed == tuple(range(b))
    assert r.ln_rows_changed in ((), (i,))


def test_ln_ignores_scale_and_shift_of_the_sample_at_eps_0() -> None:
    for kind, a in (("scale", 4.0), ("shift", -3.0)):
        r = coupling.couple(10, 16, 7, 4, kind, a, eps=0.0)
        assert float(r.ln_delta.max()) < 1e-12
        assert float(r.bn_delta.amax(dim=1).min()) > 1e-3


def test_a_shifted_rows_ln_output_moves_by_rounding_only_and_does_not_count_as_moved() -> None:
    """A shift of row i: torch's LN output of row i moves in its last bits only (not bit for bit the same, so a
    comparison without the rule of lnviz.maths.rounding would count row i), and no LN row counts as moved, while
    every BN row does."""
    last_bits = []
    for seed in range(4):
        r = coupling.couple(8, 12, seed, 2, "shift", 3.0)
        last_bits.append(float((_ln(r.x_new, 1e-5) - _ln(r.x, 1e-5)).abs()[2].max()))
        assert float((r.ln_new.y - r.ln.y).abs().max()) < 1e-12
        assert r.ln_rows_changed == () and r.bn_rows_changed == tuple(range(8))
    assert 0 < max(last_bits) < 1e-12


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1, 4, 0, 0, "scale", 2.0), "at least 2"),
        ((4, 4, 0, 4, "scale", 2.0), "sample must be"),
        ((4, 4, 0, -1, "scale", 2.0), "sample must be"),
        ((4, 4, 0, 0, "rotate", 2.0), "perturb must be"),
    ],
)
def test_couple_rejects_bad_arguments(args, match) -> None:
    with pytest.raises(ValueError, match=match):
        coupling.couple(*args)


@pytest.mark.parametrize("seed", range(3))
def test_batch_sweep_matches_torch(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    h = int(torch.randint(2, 20, (1,), generator=g))
    star = torch.randn(h, generator=g, dtype=torch.float64) * 2
    eps = 1e-5
    sizes = (2, 3, 5, 17, 40)
    s = coupling.batch_sweep(star, seed, sizes=sizes, draws=4, eps=eps, feature=h - 1)
    mates = coupling.companions(h, seed, draws=4, most=40)
    assert mates.shape == (4, 39, h)
    assert s.bn_y.shape == (len(sizes), 4, h)
    for k, size in enumerate(sizes):
        for r in range(4):
            batch = torch.cat([star[None], mates[r, : size - 1]])
            torch.testing.assert_close(s.bn_y[k, r], _bn(batch, eps)[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(s.ln_y, _ln(star[None], eps)[0], **TOL)
    torch.testing.assert_close(s.bn_limit, star / math.sqrt(1 + eps), **TOL)


def test_batch_sweep_properties() -> None:
    """BN output of one of B samples is at most √(B − 1) (and ±1 for B = 2); it settles as B grows."""
    star = torch.tensor([2.5, -1.0, 0.3, 1.7, -0.4], dtype=torch.float64)
    s = coupling.batch_sweep(star, 11, eps=0.0)
    for k, size in enumerate(s.sizes):
        assert float(s.bn_y[k].abs().max()) <= math.sqrt(size - 1) + 1e-12
    torch.testing.assert_close(s.bn_y[0].abs(), torch.ones_like(s.bn_y[0]), **TOL)
    spread = s.bn_y[:, :, 0].std(dim=1)  # (S,)
    assert float(spread[-1]) < float(spread[s.sizes.index(16)])
    assert abs(float(s.bn_y[-1, :, 0].mean() - s.bn_limit[0])) < 0.3


def test_the_sweep_narrows_because_the_batch_statistics_approach_the_populations() -> None:
    """The caption's reason: the bound √(B − 1) grows with B, while the batch's μ, σ² close in on 0 and 1."""
    star = torch.tensor([2.5, -1.0, 0.3, 1.7, -0.4], dtype=torch.float64)
    s = coupling.batch_sweep(star, 11)  # ε = 1e-5, as on the page
    bound = [math.sqrt(size - 1) for size in s.sizes]
    assert bound == sorted(bound) and bound[0] == 1  # it loosens as B grows: it cannot narrow the lines
    mates = coupling.companions(5, 11)  # (R, 255, H)
    apart = (star - mates[:, 0]).abs() > 0.2  # (R, H): B = 2 pairs whose values are more than 0.2 apart
    assert float(s.bn_y[0].abs().max()) <= 1 and float((s.bn_y[0].abs() - 1)[apart].abs().max()) < 1e-3
    off = []  # for each size, the largest distance of a batch's (μ, σ²) from the population's (0, 1)
    for size in s.sizes:
        batch = torch.cat([star.expand(mates.shape[0], 1, 5), mates[:, : size - 1]], dim=1)  # (R, B, H)
        mean, var = batch.mean(dim=1), batch.var(dim=1, unbiased=False)  # (R, H) each
        off.append(float(torch.maximum(mean.abs(), (var - 1).abs()).max()))
    assert off[-1] < 0.35 < off[0] and off[-1] < off[s.sizes.index(16)]
    # As they do, x★'s BN output closes in on the limit (x★ − 0)/√(1 + ε).
    gap = (s.bn_y - s.bn_limit).abs().amax(dim=(1, 2))  # (S,)
    assert float(gap[-1]) < 0.3 < float(gap[s.sizes.index(16)])


def test_fig_delta_and_sweep_are_built_from_the_result() -> None:
    r = coupling.couple(6, 5, 2, 3, "outlier", 4.0)
    fig = coupling.fig_delta(r)
    bn, ln = fig.data
    np.testing.assert_allclose(bn.customdata, r.bn_delta.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ln.customdata, r.ln_delta.numpy(), rtol=1e-6)
    floor = math.log10(coupling.FLOOR)
    np.testing.assert_allclose(ln.z[[0, 1, 2, 4, 5]], floor, rtol=1e-6)
    assert np.all(np.asarray(bn.z) > floor)
    assert {(s.y0, s.y1) for s in fig.layout.shapes} == {(2.5, 3.5)}

    sw = coupling.batch_sweep(r.x[3], 2)
    fig = coupling.fig_sweep(sw)
    bn_line, ln_line, limit = fig.data
    assert len(bn_line.y) == coupling.SWEEP_DRAWS * (len(coupling.SWEEP_SIZES) + 1)
    np.testing.assert_allclose(np.asarray(bn_line.y)[: len(sw.sizes)], sw.bn_y[:, 0, 0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(ln_line.y, [float(sw.ln_y[0])] * 2, rtol=1e-6)
    np.testing.assert_allclose(limit.y, [float(sw.bn_limit[0])] * 2, rtol=1e-6)


@pytest.mark.parametrize(
    ("b", "h", "i", "kind", "a", "feature"),
    [
        (6, 5, 3, "outlier", 4.0, 0),
        (2, 2, 1, "shift", -3.0, 1),  # the smallest batch BN accepts
        (40, 32, 0, "scale", 1.0, 31),  # a = 1 changes nothing: every |Δy| sits at the floor
    ],
)
def test_coupling_figures_pass_plotly_validation(b, h, i, kind, a, feature) -> None:
    r = coupling.couple(b, h, 0, i, kind, a)
    assert_plotly_valid(coupling.fig_delta(r))
    assert_plotly_valid(coupling.fig_sweep(coupling.batch_sweep(r.x[i], 0, sizes=(2, 3), draws=2, feature=feature)))


# The page, through the router.


def _delta_maps(at) -> tuple[np.ndarray, np.ndarray]:
    fig = figures(at)[0]
    return np.asarray(fig.data[0].customdata), np.asarray(fig.data[1].customdata)


def _metrics(at) -> list[str]:
    return [m.value for m in at.metric]


def test_page_runs_and_every_control_acts() -> None:
    at = run_page("pages/coupling.py")
    assert_no_exception(at)
    assert len(figures(at)) == 2
    sweep_words = next(c.value for c in at.caption if "batch-mates" in c.value)
    assert "√(B − 1)" in sweep_words and "population" in sweep_words and "less as B grows" not in sweep_words
    bn, ln = _delta_maps(at)
    b = at.select_slider(key="batch").value  # batch and features may come from another page (same key, same meaning)
    assert bn.shape == ln.shape == (b, at.select_slider(key="features").value)
    assert np.all(bn.max(axis=1) > 1e-6)
    assert np.all(ln[1:] == 0) and ln[0].max() > 0.1
    assert _metrics(at) == [f"{b} of {b}", f"1 of {b}"]

    at.number_input(key="sample").set_value(5).run()
    assert_no_exception(at)
    bn, ln = _delta_maps(at)
    assert np.flatnonzero(ln.max(axis=1)).tolist() == [5]
    assert {(s["y0"], s["y1"]) for s in figures(at)[0].layout.to_plotly_json()["shapes"]} == {(4.5, 5.5)}
    sweep_5 = np.asarray(figures(at)[1].data[1].y)
    assert sweep_5[0] == sweep_5[1]  # LN: one value for every batch size

    at.radio(key="perturb").set_value("scale").run()
    bn_scale, ln_scale = _delta_maps(at)
    assert ln_scale.max() < 1e-3 and np.all(ln_scale[[0, 1, 2, 3, 4, 6]] == 0)
    assert np.all(bn_scale.max(axis=1) > 1e-6)

    at.slider(key="amount").set_value(-2.0).run()
    bn_neg, ln_neg = _delta_maps(at)
    assert not np.allclose(bn_neg, bn_scale)
    assert ln_neg[5].max() > 0.5  # a negative scale flips the sample's LN output

    at.radio(key="perturb").set_value("shift").run()
    bn_shift, ln_shift = _delta_maps(at)
    assert ln_shift.max() < 1e-3 and np.all(bn_shift.max(axis=1) > 1e-6)
    prose = " ".join(m.value for m in at.markdown)
    assert "row 5's LN output does not move" in prose and "ε's share" not in prose

    at.select_slider(key="batch").set_value(8).run()
    at.select_slider(key="features").set_value(10).run()
    assert_no_exception(at)
    bn, _ = _delta_maps(at)
    assert bn.shape == (8, 10)
    assert _metrics(at)[0] == "8 of 8"

    at.number_input(key="seed").set_value(1).run()
    bn_seed, _ = _delta_maps(at)
    assert not np.allclose(bn_seed, bn)
    sweep_seed = np.asarray(figures(at)[1].data[1].y)
    assert sweep_seed[0] != sweep_5[0]


@pytest.mark.parametrize(
    ("kind", "amount", "words"),
    [
        ("shift", 5.0, "does not move"),
        ("shift", -10.0, "does not move"),
        ("scale", 5.0, "barely moves"),
        ("scale", 0.5, "barely moves"),
        ("scale", -2.0, "changes sign"),
        ("scale", 0.0, "makes row 0 constant"),
        ("scale", 1.0, None),
        ("outlier", 5.0, None),
    ],
)
def test_what_the_page_says_about_ln_row_i_is_what_it_computes(kind, amount, words) -> None:
    """A shift leaves σ² alone (row i does not move); only a positive scale is ε's share; a < 0 flips the row."""
    r = coupling.couple(16, 16, 0, 0, kind, amount)
    text = coupling.why_ln_row_moves(kind, amount, 0)
    assert (text is None) == (words is None)
    if text is None:
        return
    assert words in text and "BN" in text and len(r.bn_rows_changed) == 16
    row, row_new = r.ln.y[0], r.ln_new.y[0]
    moved = float((row_new - row).abs().max())
    if kind == "shift":
        assert moved < 1e-12 and "ε" not in text
    elif amount > 0:
        assert 1e-12 < moved < 1e-3 and "ε's share" in text
    elif amount < 0:
        torch.testing.assert_close(row_new, -row, rtol=0, atol=1e-3)
    else:
        assert float(row_new.abs().max()) == 0.0


def test_page_clamps_the_sample_to_the_batch() -> None:
    at = run_page("pages/coupling.py", {"batch": "8", "sample": "40", "perturb": "bogus"})
    assert_no_exception(at)
    infos = " ".join(i.value for i in at.info)
    assert "Perturbed sample i: 40 is past the last of 8; using 7" in infos
    assert "Perturbation" in infos  # the bad choice was noted and replaced
    _, ln = _delta_maps(at)
    assert np.flatnonzero(ln.max(axis=1)).tolist() == [7]

    at.select_slider(key="batch").set_value(4).run()
    assert_no_exception(at)
    assert at.number_input(key="sample").value == 3
    _, ln = _delta_maps(at)
    assert np.flatnonzero(ln.max(axis=1)).tolist() == [3]


def test_page_clamps_a_wider_value_left_by_another_page() -> None:
    """The explorer's batch and features reach 1024; this page's sliders stop lower, and must not break."""
    at = run_page("pages/invariance.py")  # a page without these sliders, so the values below stay in the session
    at.session_state["batch"] = 500
    at.session_state["features"] = 100
    at.switch_page("pages/coupling.py")
    at.run()
    assert_no_exception(at)
    bn, _ = _delta_maps(at)
    assert bn.shape == (pages.COUPLING.batch.hi, pages.COUPLING.features.hi)
