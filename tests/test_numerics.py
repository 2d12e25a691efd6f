"""The numerics panel's claims, each checked against torch in float64."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from figcheck import assert_plotly_valid
from hypothesis import given, settings
from hypothesis import strategies as st

from lnviz.figures import theme
from lnviz.labs.bench import numerics
from lnviz.maths.data import make_activations


def _oracle_var(x: torch.Tensor) -> torch.Tensor:
    return x.double().var(dim=-1, unbiased=False)  # (B,)


# The three variance formulas are right in exact-enough arithmetic -----------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    batch=st.integers(1, 6),
    features=st.integers(1, 40),
    seed=st.integers(0, 2**31 - 1),
    loc=st.floats(-100, 100),
    scale=st.floats(0.01, 10),
)
def test_every_method_is_the_biased_variance_in_float64(batch, features, seed, loc, scale):
    g = torch.Generator().manual_seed(seed)
    x = loc + scale * torch.randn(batch, features, generator=g, dtype=torch.float64)  # (B, H)
    expected = _oracle_var(x)
    for method in (numerics.single_pass_var, numerics.two_pass_var, numerics.welford_var):
        got = method(x)
        assert got.shape == (batch,) and got.dtype == torch.float64
        # single-pass loses about loc²·2⁻⁵² in absolute terms, which is its whole point
        tol = 1e-10 * (1 + loc * loc) if method is numerics.single_pass_var else 1e-10
        torch.testing.assert_close(got, expected, rtol=1e-10, atol=tol)


def test_welford_keeps_the_dtype_and_the_shape():
    x = torch.randn(3, 17, generator=torch.Generator().manual_seed(1))
    assert numerics.welford_var(x).dtype == torch.float32
    assert numerics.welford_var(x).shape == (3,)


# Catastrophic cancellation ---------------------------------------------------------------------------------------


def test_variance_result_uses_float32_data_and_a_float64_oracle():
    r = numerics.variance_under_offset(1e3, batch=8, features=32, seed=3)
    assert r.x.dtype == torch.float32 and r.x.shape == (8, 32)
    torch.testing.assert_close(r.exact, _oracle_var(r.x), rtol=1e-12, atol=0)
    z = make_activations("standard normal", 8, 32, 3, draw="whole")  # the bench draws its grids whole
    torch.testing.assert_close(r.x, (1e3 + z).float())
    for method in numerics.METHODS:
        assert r.estimates[method].dtype == torch.float32
        expected = (r.estimates[method].double() - _oracle_var(r.x)).abs() / _oracle_var(r.x)
        torch.testing.assert_close(r.relative_error(method), expected)


def test_without_an_offset_all_three_methods_are_accurate():
    r = numerics.variance_under_offset(0.0, seed=1)
    for method in numerics.METHODS:
        assert r.relative_error(method).max() < 1e-5
        assert r.negative(method) == 0


def test_a_large_offset_destroys_the_single_pass_variance_only():
    r = numerics.variance_under_offset(1e4, seed=2)
    oracle = _oracle_var(r.x)
    single = (r.estimates["single-pass"].double() - oracle).abs() / oracle
    assert single.median() > 0.5  # mostly rounding noise
    assert r.negative("single-pass") > 0  # and sometimes below zero, which exact arithmetic never gives
    for method in ("two-pass", "Welford"):
        assert ((r.estimates[method].double() - oracle).abs() / oracle).max() < 1e-2  # within 1%
        assert r.negative(method) == 0


def test_single_pass_error_grows_with_the_offset():
    curve = numerics.variance_curve(numerics.OFFSETS, seed=0)
    errors = dict(zip(curve.offsets, curve.median_error["single-pass"], strict=True))
    grid = [o for o in curve.offsets if o >= 10]
    assert all(errors[a] < errors[b] for a, b in itertools.pairwise(grid))
    # rounding E[x²] ≈ offset² to float32 leaves an error of the order of offset² · 2⁻²⁴ in a variance of 1
    for offset in (1e3, 1e4, 1e5):
        assert 0.1 < errors[offset] / (offset**2 * 2**-24) < 10
    assert max(curve.median_error["two-pass"]) < 1e-2


def test_offset_must_be_finite_and_non_negative():
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            numerics.variance_under_offset(bad)


# float16 and bfloat16 outputs ------------------------------------------------------------------------------------


def test_low_precision_errors_against_float64():
    found = {p.dtype: p for p in numerics.precision_errors(seed=4)}
    base = make_activations("heterogeneous samples", 64, 1024, 4, draw="whole")  # as the bench does
    for name, dtype in (("float32", torch.float32), ("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        x = base.to(dtype)
        ref = F.layer_norm(x.double(), (1024,))
        p = found[name]
        assert p.unit_roundoff == torch.finfo(dtype).eps / 2
        assert p.fused == pytest.approx((F.layer_norm(x, (1024,)).double() - ref).abs().max().item(), rel=1e-12)
        assert p.max_abs_y == pytest.approx(ref.abs().max().item(), rel=1e-12)
    u16, ubf = found["float16"].unit_roundoff, found["bfloat16"].unit_roundoff
    assert (u16, ubf) == (2.0**-11, 2.0**-8)
    # F.layer_norm accumulates in float32 and rounds y once: within about one unit roundoff of |y|
    for name in ("float16", "bfloat16"):
        p = found[name]
        assert p.fused <= 2 * p.unit_roundoff * p.max_abs_y
        assert p.op_by_op >= p.fused  # rounding μ, x − μ and σ² too costs more
    assert found["bfloat16"].fused > found["float16"].fused > found["float32"].fused


# ε in float16 ----------------------------------------------------------------------------------------------------


def test_eps_1e12_is_zero_in_float16_and_not_in_bfloat16():
    assert torch.tensor(1e-12, dtype=torch.float16) == 0
    assert torch.tensor(1e-12, dtype=torch.bfloat16) != 0
    row = numerics.eps_rounding(1e-12, "float16")
    assert row.vanishes and row.stored == 0.0
    assert math.isnan(row.op_by_op)  # 0 · 1/√0
    assert row.fused == 0.0
    assert not numerics.eps_rounding(1e-12, "bfloat16").vanishes
    assert numerics.eps_rounding(1e-12, "bfloat16").op_by_op == 0.0


def test_constant_row_is_zero_in_float64():
    row = torch.full((1, 8), 0.5, dtype=torch.float64)
    assert F.layer_norm(row, (8,), eps=1e-12).abs().max() == 0
    assert numerics.eps_rounding(1e-12, "float32").op_by_op == 0.0


def test_eps_vanishes_in_float16_exactly_below_half_the_smallest_subnormal():
    smallest = 2.0**-24  # float16's smallest positive (subnormal) number
    assert torch.tensor(smallest, dtype=torch.float16).item() == smallest
    table = numerics.eps_table()
    assert len(table) == len(numerics.EPS_VALUES) * len(numerics.LOW_PRECISION)
    for e in table:
        if e.dtype == "float16":
            assert e.vanishes == (e.eps <= smallest / 2)
            assert math.isnan(e.op_by_op) == e.vanishes
        else:
            assert not e.vanishes and e.op_by_op == 0.0
        assert e.fused == 0.0


def test_eps_rows_show_one_row_per_eps():
    rows = numerics.eps_rows(numerics.eps_table((1e-12, 1e-5), ("float16", "bfloat16")))
    assert [r["ε"] for r in rows] == ["1e-12", "1e-05"]
    assert rows[0]["float16: ε stored"] == "0" and rows[0]["float16: y op by op"] == "nan"
    assert rows[0]["bfloat16: y op by op"] == "0"
    assert rows[1]["float16: ε stored"] == f"{torch.tensor(1e-5, dtype=torch.float16).item():.4g}"
    assert all(r["F.layer_norm y, every dtype"] == "0" for r in rows)


# The figure ------------------------------------------------------------------------------------------------------


def test_fig_variance_has_one_line_per_method_and_marks_the_offset():
    curve = numerics.variance_curve((0.0, 10.0, 1e4), batch=8, features=32, seed=1)
    fig = numerics.fig_variance(curve, 1e4)
    lines = {t.name: t for t in fig.data}
    assert set(lines) == set(numerics.METHODS)
    assert list(lines["single-pass"].x) == [0.1, 10.0, 1e4]  # 0 drawn at 0.1 on the log axis
    assert all(y >= numerics.ERROR_FLOOR for t in fig.data for y in t.y)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert [s.x0 for s in fig.layout.shapes if s.x0 == s.x1] == [1e4]


@pytest.mark.parametrize(
    ("offsets", "offset"),
    [
        (numerics.OFFSETS, 1e4),
        ((0.0,), 0.0),  # one point, at the offset drawn at 0.1
        ((0.0, 1e6), 1e6),  # the chosen offset at the axis' end
    ],
)
def test_fig_variance_passes_plotly_validation(offsets, offset):
    curve = numerics.variance_curve(offsets, batch=4, features=16, seed=0)
    fig = numerics.fig_variance(curve, offset)
    assert_plotly_valid(fig)
    assert {t.line.color for t in fig.data}.isdisjoint({theme.ROLES["LN"], theme.ROLES["BN"]})
