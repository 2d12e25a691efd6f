"""The invariance table: derived from computed max |Δ| and compared with the paper's Table 1; norms against torch."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, figures, run_page
from figcheck import assert_plotly_valid
from hypothesis import given, settings
from hypothesis import strategies as hs
from test_theme import srgb
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

from lnviz.figures import theme
from lnviz.labs import invariance
from lnviz.views import state

ORDER = (
    "weight_matrix_rescale",
    "weight_matrix_recenter",
    "weight_vector_rescale",
    "dataset_rescale",
    "dataset_recenter",
    "case_rescale",
)
# Ba, Kiros and Hinton (2016), Table 1, typed from the paper (✓ = invariant), in ORDER.
PAPER = {
    "BN": "✓✗✓✓✓✗",
    "WN": "✓✗✓✗✗✗",
    "LN": "✓✓✗✓✗✓",
    # Zhang and Sennrich (2019), Table 1: y = a / rms(a) per case survives a → c·a for c > 0 (weight matrix,
    # dataset and single-case re-scaling), but not a shift of a (either re-centering) and not the
    # re-scaling of one unit, which changes the case's rms and that unit's share of it.
    "RMSNorm": "✓✗✗✓✗✓",
}
# ✓ when max |Δ| is at most this, at ε = 0: float64 rounding is ~1e-15, a broken invariance ~1.
STRICT = 1e-10


def _derived(table: dict[str, dict[str, float]], tol: float) -> dict[str, str]:
    return {norm: "".join("✓" if table[norm][t] <= tol else "✗" for t in ORDER) for norm in table}


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 17, 123, 2**31 - 1])
def test_table_at_eps_0_is_the_papers(seed: int) -> None:
    table = invariance.invariance_table(0.0, seed)
    assert set(table) == set(PAPER)
    assert all(set(row) == set(ORDER) for row in table.values())
    assert all(isinstance(v, float) for row in table.values() for v in row.values())
    assert _derived(table, STRICT) == PAPER
    assert _derived(table, invariance.TOL) == PAPER
    broken = [table[n][t] for n in PAPER for t, mark in zip(ORDER, PAPER[n], strict=True) if mark == "✗"]
    assert min(broken) > 1e-2  # far from any tolerance in between


@settings(max_examples=15, deadline=None)
@given(factor=hs.floats(0.05, 20).filter(lambda f: abs(f - 1) > 0.05), seed=hs.integers(0, 10_000))
def test_table_holds_for_any_positive_factor(factor: float, seed: int) -> None:
    table = invariance.invariance(0.0, seed, factor=factor).table
    assert _derived(table, STRICT) == PAPER


def test_negative_factor_is_refused_and_would_break_the_scale_invariances() -> None:
    with pytest.raises(ValueError, match="positive"):
        invariance.invariance(0.0, 0, factor=-3.0)
    layer = invariance.make_layer(0)
    a = invariance.normalized("LN", layer.weight, layer.x, 0.0)
    flipped = invariance.normalized("LN", -3.0 * layer.weight, layer.x, 0.0)
    torch.testing.assert_close(flipped, -a, rtol=0, atol=1e-12)


def test_eps_makes_the_scale_invariances_approximate() -> None:
    eps_values = (1e-12, 1e-8, 1e-5, 1e-3, 1e-1, 1.0)
    tables = [invariance.invariance_table(eps, 5) for eps in eps_values]
    for norm, name in (("LN", "case_rescale"), ("LN", "dataset_rescale"), ("BN", "weight_matrix_rescale")):
        deltas = [t[norm][name] for t in tables]
        assert all(d > 1e-14 for d in deltas)  # never exact once ε > 0
        assert deltas == sorted(deltas)  # and further from it as ε grows
        assert deltas[2] < invariance.TOL < deltas[-2]
    for t in tables:
        # A shift that the norm subtracts stays exact whatever ε: ε only enters through σ.
        assert t["LN"]["weight_matrix_recenter"] < 1e-12
        assert t["BN"]["dataset_recenter"] < 1e-12
        # WN has no ε.
        assert t["WN"]["weight_matrix_rescale"] < 1e-12
    assert invariance.agreement(tables[0]) == invariance.CELLS
    assert invariance.agreement(tables[-1]) < invariance.CELLS


def test_transforms_do_what_the_paper_says() -> None:
    layer = invariance.make_layer(8)
    w, x = layer.weight, layer.x
    delta = invariance.FACTOR
    assert delta > 0
    w2, x2 = invariance.transform(layer, "weight_matrix_rescale")
    torch.testing.assert_close(w2, delta * w, rtol=0, atol=0)
    assert torch.equal(x2, x)
    w2, _ = invariance.transform(layer, "weight_matrix_recenter")
    diff = w2 - w  # (H, D): the same row vᵀ for every unit
    torch.testing.assert_close(diff, diff[:1].expand_as(diff), rtol=0, atol=1e-15)
    shift = x @ w2.T - x @ w.T  # (N, H): each case's summed inputs move together
    torch.testing.assert_close(shift, shift[:, :1].expand_as(shift), rtol=0, atol=1e-12)
    w2, _ = invariance.transform(layer, "weight_vector_rescale")
    torch.testing.assert_close(w2[0], delta * w[0], rtol=0, atol=0)
    assert torch.equal(w2[1:], w[1:])
    _, x2 = invariance.transform(layer, "dataset_rescale")
    torch.testing.assert_close(x2, delta * x, rtol=0, atol=0)
    _, x2 = invariance.transform(layer, "dataset_recenter")
    diff = x2 - x  # (N, D): the same vector for every case
    torch.testing.assert_close(diff, diff[:1].expand_as(diff), rtol=0, atol=1e-15)
    _, x2 = invariance.transform(layer, "case_rescale")
    torch.testing.assert_close(x2[0], delta * x[0], rtol=0, atol=0)
    assert torch.equal(x2[1:], x[1:])
    with pytest.raises(ValueError, match="unknown transformation"):
        invariance.transform(layer, "rotate")


def _torch_outputs(w: torch.Tensor, x: torch.Tensor, eps: float) -> dict[str, torch.Tensor]:
    a = x @ w.T
    h, d = w.shape
    linear = nn.Linear(d, h, bias=False, dtype=torch.float64)
    with torch.no_grad():
        linear.weight.copy_(w)
    linear = weight_norm(linear)  # w = g v / ‖v‖, one norm per output unit
    with torch.no_grad():
        linear.parametrizations.weight.original0.fill_(1.0)  # g = 1
        wn = linear(x)
    return {
        "BN": F.batch_norm(a, None, None, training=True, eps=eps),
        "WN": wn,
        "LN": F.layer_norm(a, (h,), eps=eps),
        "RMSNorm": F.rms_norm(a, (h,), eps=eps),
    }


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("eps", [1e-12, 1e-5, 0.5])
def test_normalized_outputs_match_torch(seed: int, eps: float) -> None:
    layer = invariance.make_layer(seed)
    result = invariance.invariance(eps, seed)
    want = _torch_outputs(layer.weight, layer.x, eps)
    for norm in invariance.NORMS:
        torch.testing.assert_close(result.before[norm], want[norm], rtol=0, atol=1e-12)
    for name in invariance.TRANSFORMS:
        after = _torch_outputs(*invariance.transform(layer, name), eps)
        for norm in invariance.NORMS:
            torch.testing.assert_close(result.after[norm][name], after[norm], rtol=0, atol=1e-12)
            expected = float((after[norm] - want[norm]).abs().max())
            assert math.isclose(result.table[norm][name], expected, rel_tol=1e-6, abs_tol=1e-13)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="eps"):
        invariance.invariance_table(-1.0, 0)
    layer = invariance.make_layer(0)
    with pytest.raises(ValueError, match="unknown norm"):
        invariance.normalized("GN", layer.weight, layer.x, 0.0)


def test_fig_table_shows_values_and_marks() -> None:
    table = invariance.invariance_table(1.0, 0)
    fig = invariance.fig_table(table)
    heat = fig.data[0]
    assert list(heat.y) == list(invariance.NORMS)
    raw = np.array([[table[n][t] for t in ORDER] for n in invariance.NORMS])
    np.testing.assert_allclose(heat.customdata, raw, rtol=1e-6)
    np.testing.assert_allclose(heat.z, np.log10(np.maximum(raw, 1e-17)), rtol=1e-5)
    for r, norm in enumerate(invariance.NORMS):
        for c, name in enumerate(ORDER):
            ok = table[norm][name] <= invariance.TOL
            assert heat.text[r][c].startswith("✓" if ok else "✗")
            assert ("≠ paper" in heat.text[r][c]) == ((PAPER[norm][c] == "✓") != ok)


def test_fig_table_fills_cells_with_a_checks_colours_not_the_value_scales() -> None:
    table = invariance.invariance_table(1.0, 0)
    heat = invariance.fig_table(table).data[0]
    (_, holds), (step, _), (_, breaks), _ = heat.colorscale
    assert (holds, breaks) == (theme.HOLDS, theme.BREAKS)  # tests/test_theme.py checks these against the norms
    scales = {tuple(np.round(255 * srgb(c))) for _, c in (*theme.DIVERGING, *theme.SEQUENTIAL)}
    assert tuple(np.round(255 * srgb(breaks))) not in scales  # green and purple mean a value's sign elsewhere
    assert holds == "#FFFFFF"  # nothing to flag: the page's own white
    at = (np.asarray(heat.z) - heat.zmin) / (heat.zmax - heat.zmin)  # (norms, transforms): place on the scale
    marks = np.array([[text[0] for text in row] for row in heat.text])
    np.testing.assert_array_equal(marks, np.where(at < step, "✓", "✗"))  # each mark on its own fill


@pytest.mark.parametrize(
    ("eps", "tol"),
    [
        (1e-5, invariance.TOL),
        (0.0, invariance.TOL),  # exact zeros, drawn at the floor
        (1.0, invariance.TOL),  # several cells off the paper: three lines of text
        (0.1, 1e-30),  # a threshold under the colour scale: every cell ✗
        (0.1, 1e3),  # and over it: every cell ✓
    ],
)
def test_fig_table_passes_plotly_validation(eps, tol) -> None:
    fig = invariance.fig_table(invariance.invariance_table(eps, 0), tol)
    assert_plotly_valid(fig)
    marks = {text[0] for row in fig.data[0].text for text in row}
    assert marks == ({"✗"} if tol < 1e-20 else {"✓"} if tol > 10 else {"✓", "✗"})


# The page, through the router.


def _cells(at) -> list[list[str]]:
    return [list(row) for row in figures(at)[0].data[0].text]


def test_page_runs_and_every_control_acts() -> None:
    at = run_page("pages/invariance.py")
    assert_no_exception(at)
    cells = _cells(at)
    assert [m.value for m in at.metric] == [f"24 of {invariance.CELLS}"]
    assert [[c[0] for c in row] for row in cells] == [list(PAPER[n]) for n in invariance.NORMS]

    at.select_slider(key="eps").set_value(0.0).run()
    assert_no_exception(at)
    zero = figures(at)[0].data[0]
    ln_case = invariance.NORMS.index("LN"), ORDER.index("case_rescale")
    assert zero.customdata[ln_case[0]][ln_case[1]] < 1e-12
    assert [m.value for m in at.metric] == ["24 of 24"]

    at.select_slider(key="eps").set_value(0.1).run()
    assert_no_exception(at)
    cells = _cells(at)
    assert cells[ln_case[0]][ln_case[1]].startswith("✗") and "≠ paper" in cells[ln_case[0]][ln_case[1]]
    assert int(at.metric[0].value.split()[0]) < 24

    before = np.asarray(figures(at)[0].data[0].customdata)
    at.number_input(key="seed").set_value(42).run()
    assert_no_exception(at)
    assert not np.allclose(np.asarray(figures(at)[0].data[0].customdata), before)


def test_the_page_says_b_cancels_in_delta_and_g_scales_it() -> None:
    """y = g ⊙ x̂ + b, so Δy = g ⊙ Δx̂: b drops out of a difference, g does not (torch's LN, float64)."""
    g0 = torch.Generator().manual_seed(0)
    x, shifted = torch.randn(2, 5, 6, generator=g0, dtype=torch.float64)  # (N, H) each: before and after
    g, b = torch.randn(2, 6, generator=g0, dtype=torch.float64)  # (H,) each
    delta = F.layer_norm(shifted, (6,)) - F.layer_norm(x, (6,))  # (N, H): Δ of the normalized outputs
    delta_y = F.layer_norm(shifted, (6,), g, b) - F.layer_norm(x, (6,), g, b)
    torch.testing.assert_close(delta_y, g * delta, rtol=1e-12, atol=1e-12)
    assert not torch.allclose(delta_y, delta)
    prose = " ".join(m.value for m in run_page("pages/invariance.py").markdown)
    assert "b cancels in Δ and g only scales it (Δy = g · Δ)" in prose and "so they cancel" not in prose


def test_page_takes_eps_and_seed_from_the_link() -> None:
    at = run_page("pages/invariance.py", {"eps": "0.5", "seed": "9"})
    assert_no_exception(at)
    assert at.select_slider(key="eps").value == 0.5
    table = invariance.invariance_table(0.5, 9)
    np.testing.assert_allclose(
        figures(at)[0].data[0].customdata, [[table[n][t] for t in ORDER] for n in invariance.NORMS], rtol=1e-6
    )

    at = run_page("pages/invariance.py", {"eps": "0.3"})  # not one of the ε steps
    assert_no_exception(at)
    assert at.select_slider(key="eps").value == state.EPS.default
    assert "Epsilon" in " ".join(i.value for i in at.info)


def test_the_recentering_vector_is_v_not_the_gain_and_shifts_each_case_by_its_own_amount() -> None:
    """Ba, Kiros and Hinton write the re-centering vector γ; lnviz's γ is the gain, so the page writes it v. Under
    weight matrix re-centering every unit of case n shifts by the same vᵀxₙ, and that amount differs per case."""
    layer = invariance.make_layer(0)
    w2, x = invariance.transform(layer, "weight_matrix_recenter")
    shift = x @ w2.T - x @ layer.weight.T  # (N, H)
    v = (w2 - layer.weight)[0]  # (D,)
    torch.testing.assert_close(shift, (x @ v)[:, None].expand_as(shift), rtol=0, atol=1e-12)
    assert float(shift[:, 0].max() - shift[:, 0].min()) > 1.0  # one amount per case, not one for all
    prose = " ".join(m.value for m in run_page("pages/invariance.py").markdown)
    assert "v is a standard-normal vector of length D" in prose and "Ba, Kiros and Hinton write it γ" in prose
    assert "W → W + 1 vᵀ" in prose and "γ is a standard-normal vector" not in prose
