"""The explorer's computation, windowing, histograms and formula text."""

import re

import pytest
import torch
import torch.nn.functional as F

from lnviz.labs import explorer
from lnviz.labs.explorer import explain
from lnviz.maths import data


def test_normalize_then_the_affine_step_match_torch_and_time_themselves():
    x = data.make_activations("heterogeneous samples", 12, 20, seed=4)
    g, b = data.random_affine(20, seed=4)
    r = explorer.with_affine(explorer.normalize(x, 1e-3), 1.0, 0.0, g, b)
    torch.testing.assert_close(r.ln.y, F.layer_norm(x, (20,), g, b, 1e-3), rtol=0, atol=1e-10)
    torch.testing.assert_close(r.bn.y, F.batch_norm(x, None, None, g, b, training=True, eps=1e-3), rtol=0, atol=1e-10)
    assert r.seconds > 0 and r.device.type == "cpu" and r.bn_error is None


def test_the_controls_make_gamma_and_beta_as_gain_times_g_and_bias_plus_b():
    """γ = gain·g and β = bias + b with the seeded per-feature g, b, or the scalars; y is torch's, in x's dtype."""
    x = data.make_activations("standard normal", 3, 7, seed=3)
    g, b = data.random_affine(7, 3)  # (H,) each
    scalars = explorer.with_affine(explorer.normalize(x), 1.5, -0.25)
    assert (scalars.affine.gamma, scalars.affine.beta) == (1.5, -0.25)
    torch.testing.assert_close(scalars.ln.y, 1.5 * F.layer_norm(x, (7,)) - 0.25, rtol=0, atol=1e-12)
    per_feature = explorer.with_affine(explorer.normalize(x), 1.5, -0.25, g, b)
    torch.testing.assert_close(per_feature.affine.gamma, 1.5 * g, rtol=0, atol=0)
    torch.testing.assert_close(per_feature.affine.beta, b - 0.25, rtol=0, atol=0)
    x32 = x.float()
    y32 = explorer.with_affine(explorer.normalize(x32), 1.5, -0.25, g, b).ln.y
    assert y32.dtype == torch.float32 and y32.shape == (3, 7)
    torch.testing.assert_close(y32, F.layer_norm(x32, (7,), (1.5 * g).float(), (b - 0.25).float()))


def test_a_single_sample_explains_instead_of_raising():
    r = explorer.normalize(data.make_activations("standard normal", 1, 8, seed=0))
    assert r.bn is None and r.bn_error == explorer.BN_SINGLE_SAMPLE
    torch.testing.assert_close(r.ln.y, F.layer_norm(r.x, (8,)), rtol=0, atol=1e-10)


def test_the_single_sample_message_says_what_bn_would_give_and_who_refuses():
    """With one value per feature the biased σ² is 0 and y = β (not "undefined"); it is PyTorch that refuses."""
    x = data.make_activations("standard normal", 1, 8, seed=0)
    beta = torch.linspace(-1, 1, 8, dtype=torch.float64)
    formula = torch.batch_norm(x, None, beta, None, None, True, 0.1, 1e-5, False)  # the op under F.batch_norm
    torch.testing.assert_close(formula, beta.expand_as(x), rtol=0, atol=1e-12)  # rounding only
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(x, None, None, training=True)
    text = explorer.BN_SINGLE_SAMPLE
    assert "output is β" in text and "PyTorch refuses" in text and "undefined" not in text


@pytest.mark.parametrize("n, at", [(10, 3), (64, 63), (100, 0), (100, 99), (1024, 500)])
def test_window_contains_cell_and_fits(n, at):
    rows, cols = explorer.window(n, n, at, at)
    for s in (rows, cols):
        assert s.start <= at < s.stop
        assert s.stop - s.start == min(n, explorer.WINDOW)
        assert 0 <= s.start and s.stop <= n


def test_degenerate_finds_zero_variance_with_zero_eps_only():
    x = data.make_activations("constant row", 4, 6, seed=0)
    assert explorer.degenerate(explorer.normalize(x, 0.0)).ln_rows == (0,)
    assert not explorer.degenerate(explorer.normalize(x, 1e-5))


def test_histogram_counts_every_finite_value():
    v = torch.tensor([0.0, 0.5, 1.0, float("nan"), 2.0], dtype=torch.float64)
    counts, centres = explorer.histogram(v, 0.0, 2.0, bins=4)
    assert counts.sum() == 4 and len(centres) == 4
    torch.testing.assert_close(centres, torch.tensor([0.25, 0.75, 1.25, 1.75], dtype=torch.float64))


def _histc(t: torch.Tensor, lo: float, hi: float, bins: int) -> tuple[torch.Tensor, torch.Tensor]:
    """torch's own histogram of ``t`` over [lo, hi], and the bin centres: the oracle."""
    edges = torch.linspace(lo, hi, bins + 1, dtype=torch.float64)
    return torch.histc(t, bins=bins, min=lo, max=hi), (edges[:-1] + edges[1:]) / 2


def test_distributions_show_the_chosen_row_against_the_chosen_column_before_and_after():
    x = data.make_activations("heterogeneous features", 12, 20, seed=4) * 40 + 100  # far from the outputs' ±3
    g, b = data.random_affine(20, seed=4)
    i, j = 7, 13
    dists = explorer.distributions(explorer.with_affine(explorer.normalize(x, 1e-5), 1.0, 0.0, g, b), (i, j))
    # The oracle: the row LN pools and the column BN pools, and torch's outputs there.
    ln_y = F.layer_norm(x, (20,), g, b, 1e-5)[i]  # (H,)
    bn_y = F.batch_norm(x, None, None, g, b, training=True, eps=1e-5)[:, j]  # (B,)
    want = {("LN", "x"): x[i], ("BN", "x"): x[:, j], ("LN", "y"): ln_y, ("BN", "y"): bn_y}
    assert set(dists.hists) == set(want) and dists.cell == (i, j)
    for stage in ("x", "y"):
        # The row and the column of one stage share a range, so that they compare on one value axis.
        both = torch.cat([want[("LN", stage)], want[("BN", stage)]])
        lo, hi = float(both.min()), float(both.max())
        for norm, count in (("LN", 20), ("BN", 12)):
            counts, centres = dists.hists[(norm, stage)]
            want_counts, want_centres = _histc(want[(norm, stage)], lo, hi, explorer.bins_for(count))
            torch.testing.assert_close(counts, want_counts, rtol=0, atol=0)
            torch.testing.assert_close(centres, want_centres, rtol=0, atol=1e-12)
            assert counts.sum() == count, (norm, stage)
    ln, bn = dists.units["LN"], dists.units["BN"]
    assert (ln.name, bn.name) == (f"row {i}", f"column {j}")
    assert ln.mean == pytest.approx(float(x[i].mean()), abs=1e-10)
    assert bn.mean == pytest.approx(float(x[:, j].mean()), abs=1e-10)
    torch.testing.assert_close(ln.y, ln_y, rtol=0, atol=1e-10)
    torch.testing.assert_close(bn.y, bn_y, rtol=0, atol=1e-10)


def test_distributions_leave_bn_out_at_one_sample():
    x = data.make_activations("standard normal", 1, 30, seed=0)
    dists = explorer.distributions(explorer.normalize(x), (0, 4))
    assert list(dists.units) == ["LN"] and set(dists.hists) == {("LN", "x"), ("LN", "y")}
    want, _ = _histc(x[0], float(x.min()), float(x.max()), explorer.bins_for(30))
    torch.testing.assert_close(dists.hists[("LN", "x")][0], want, rtol=0, atol=0)


@pytest.mark.parametrize("count, bins", [(1, 8), (96, 10), (240, 13), (65_536, 60), (10**6, 60)])
def test_bins_follow_rices_rule(count, bins):
    assert explorer.bins_for(count) == bins


def test_histogram_of_one_repeated_value_is_one_bar_around_it():
    counts, centres = explorer.histogram(torch.full((4, 5), 2.5, dtype=torch.float64), bins=5)
    assert counts.tolist() == [0, 0, 20, 0, 0] and float(centres[2]) == 2.5


def test_table_is_the_window():
    x = data.make_activations("standard normal", 5, 7, seed=1)
    t = explorer.table(x, slice(1, 3), slice(2, 6))
    assert t.shape == (2, 4) and list(t.index) == [1, 2]
    assert t.iloc[1, 3] == float(x[2, 5])


def _numbers(latex: str) -> list[float]:
    return [float(m) for m in re.findall(r"(?<![_{\w])-?\d+\.?\d*(?:e-?\d+)?", latex.replace(r" \times 10^", "e"))]


@pytest.mark.parametrize("kind", ["LN", "BN"])
def test_latex_shows_the_numbers_torch_computes(kind):
    x = data.make_activations("heterogeneous features", 6, 5, seed=2)
    r = explorer.with_affine(explorer.normalize(x, 1e-5), 1.5, -0.25)
    i, j = 4, 3
    norm = r.ln if kind == "LN" else r.bn
    text = explain.latex(norm, i, j, kind)
    y = (
        F.layer_norm(x, (5,), None, None, 1e-5)
        if kind == "LN"
        else F.batch_norm(x, None, None, training=True, eps=1e-5)
    )
    want_y = 1.5 * float(y[i, j]) - 0.25
    mu = float(x[i].mean()) if kind == "LN" else float(x[:, j].mean())
    assert f"{want_y:.4g}" in text and f"{mu:.4g}" in text
    assert text.count(r"\\") == 5  # x̂ and y each on two lines: the formula, then its numbers


def _lines(latex: str) -> dict[str, float]:
    """Each line of an aligned block as {its left-hand side: the number it ends with}."""
    body = latex.split("\n")[1:-1]
    return {line.split("&=")[0].strip(): _numbers(line)[-1] for line in body if line.split("&=")[0].strip()}


def test_latex_names_each_norms_statistic_after_its_row_or_column_and_counts_from_zero():
    """At the cell (0, 0) LN's μ (of row 0) and BN's μ (of column 0) once both read μ₀; now each says whose it is."""
    x = data.make_activations("heterogeneous features", 6, 5, seed=2)
    r = explorer.with_affine(explorer.normalize(x, 1e-5), 1.0, 0.0)
    for i, j in ((0, 0), (4, 2)):
        ln, bn = _lines(explain.latex(r.ln, i, j, "LN")), _lines(explain.latex(r.bn, i, j, "BN"))
        # The statistics by their names, against torch's mean and biased variance of that row or column.
        assert ln[rf"\mu_{{\text{{row}}\,{i}}}"] == pytest.approx(float(x[i].mean()), rel=1e-3)
        assert ln[rf"\sigma^2_{{\text{{row}}\,{i}}}"] == pytest.approx(float(x[i].var(unbiased=False)), rel=1e-3)
        assert bn[rf"\mu_{{\text{{column}}\,{j}}}"] == pytest.approx(float(x[:, j].mean()), rel=1e-3)
        assert bn[rf"\sigma^2_{{\text{{column}}\,{j}}}"] == pytest.approx(float(x[:, j].var(unbiased=False)), rel=1e-3)
        assert not set(ln) & set(bn)  # no line of LN's reads like one of BN's
    # Σ over k = 0 … H − 1 (LN: 5 features) and k = 0 … B − 1 (BN: 6 samples), as the 0-based indices shown.
    ln_text, bn_text = explain.latex(r.ln, 4, 2, "LN"), explain.latex(r.bn, 4, 2, "BN")
    assert ln_text.count(r"\sum_{k=0}^{4}") == 2 and ln_text.count("x_{4,k}") == 2
    assert bn_text.count(r"\sum_{k=0}^{5}") == 2 and bn_text.count("x_{k,2}") == 2
    assert "k=1" not in ln_text + bn_text


@pytest.mark.parametrize("eps", [1e-5, 0.0])
def test_pytorch_line_reproduces_the_value(eps):
    """The line runs at every ε, 0 included, where F.batch_norm refuses training mode."""
    x = data.make_activations("standard normal", 4, 6, seed=3)
    weight, bias = torch.full((6,), 2.0, dtype=x.dtype), torch.zeros(6, dtype=x.dtype)
    r = explorer.with_affine(explorer.normalize(x, eps), 2.0, 0.0)
    for kind, norm in (("LN", r.ln), ("BN", r.bn)):
        line = explain.pytorch_line(kind, 2, 5, 6, eps)
        value = eval(line, {"F": F, "x": x, "weight": weight, "bias": bias, "eps": eps})
        assert abs(float(value) - float(norm.y[2, 5])) < 1e-10
        assert ("F.batch_norm(" in line) == (kind == "BN" and eps > 0)


def test_num_formats_nan_and_exponents():
    assert explain.num(float("nan")) == r"\text{NaN}"
    assert explain.num(1.5e-7) == r"1.5 \times 10^{-7}"


def test_finite_range_ignores_nan_and_inf():
    a = torch.tensor([1.0, float("nan"), -2.0], dtype=torch.float64)
    b = torch.tensor([float("inf"), 5.0], dtype=torch.float64)
    assert explorer.finite_range(a, b) == (-2.0, 5.0)
    assert explorer.finite_range(torch.tensor([float("nan")])) == (-1.0, 1.0)


def test_with_affine_reuses_the_statistics():
    x = data.make_activations("heterogeneous features", 7, 11, seed=5)
    g, b = data.random_affine(11, seed=5)
    base = explorer.normalize(x, 1e-4)
    again = explorer.with_affine(base, 1.0, 0.0, g, b)
    assert again.ln.mean is base.ln.mean and again.bn.var is base.bn.var
    torch.testing.assert_close(again.ln.y, F.layer_norm(x, (11,), g, b, 1e-4), rtol=0, atol=1e-10)
    torch.testing.assert_close(again.bn.y, F.batch_norm(x, None, None, g, b, True, 0.0, 1e-4), rtol=0, atol=1e-10)


def test_listed_indices_are_plural_only_when_several_and_say_how_many_are_left_out():
    assert explorer.listed("sample", (3,)) == "sample 3"
    assert explorer.listed("feature", (0, 2)) == "features 0, 2"
    assert explorer.listed("feature", tuple(range(10))) == "features 0, 1, 2, 3, 4, 5, 6, 7 and 2 more"
