"""The kernel benchmark: every variant against torch in float64, the GB/s arithmetic, the sweep, the page.

The compiled variant is checked against torch in tests/test_server.py, in the fresh interpreter that runs a sweep
with torch.compile: the suite compiles its graph once.

No test asserts a time: the machine is shared and noisy. Timings are checked
for their structure (how many, which median, which bytes) only.
"""

from __future__ import annotations

import csv
import dataclasses
import inspect
import io
import math
import re
import statistics
import types

import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, figures, run_page
from figcheck import assert_plotly_valid
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from lnviz import text
from lnviz.labs import bench
from server import heavy, limits

CPU = torch.device("cpu")
KIB = 1024


def _module_oracle(name: str, inputs: bench.Inputs) -> torch.Tensor:
    """What torch.nn's modules give for each variant, float64, with the case's parameters loaded."""
    x = inputs.x.double()
    features = x.shape[-1]
    kw = {"eps": inputs.eps, "dtype": torch.float64}
    with torch.no_grad():
        if name == "copy":
            return x.clone()
        if name.startswith("ln_"):
            m = nn.LayerNorm(features, **kw)
            m.weight.copy_(inputs.weight)
            m.bias.copy_(inputs.bias)
            return m(x)
        if name.startswith("rms_"):
            m = nn.RMSNorm(features, **kw)
            m.weight.copy_(inputs.weight)
            return m(x)
        m = nn.BatchNorm1d(features, **kw)
        m.weight.copy_(inputs.weight)
        m.bias.copy_(inputs.bias)
        m.running_mean.copy_(inputs.running_mean)
        m.running_var.copy_(inputs.running_var)
        m.train(name == "bn_train")
        return m(x)


EAGER = ("copy", "ln_naive", "ln_fused", "rms_naive", "rms_fused", "bn_train", "bn_eval")


@pytest.mark.parametrize("name", EAGER)
@pytest.mark.parametrize(("batch", "features", "seed"), [(2, 256, 0), (16, 1023, 1), (7, 1024, 2), (5, 3, 3)])
def test_each_variant_matches_torch_nn_in_float64(name, batch, features, seed):
    inputs = bench.make_inputs(batch, features, torch.float64, CPU, seed)
    y = bench.VARIANTS[name].build(inputs)()
    torch.testing.assert_close(y, _module_oracle(name, inputs), rtol=0, atol=1e-10)


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(2, 12), features=st.integers(1, 70), seed=st.integers(0, 2**31 - 1), name=st.sampled_from(EAGER)
)
def test_variants_match_torch_nn_on_random_shapes(batch, features, seed, name):
    inputs = bench.make_inputs(batch, features, torch.float64, CPU, seed)
    y = bench.VARIANTS[name].build(inputs)()
    assert y.shape == (batch, features)
    torch.testing.assert_close(y, _module_oracle(name, inputs), rtol=0, atol=1e-10)


def test_naive_formulas_are_what_they_say():
    g = torch.Generator().manual_seed(5)
    x = 3.0 + torch.randn(9, 33, generator=g, dtype=torch.float64)
    w, b = torch.randn(33, generator=g, dtype=torch.float64), torch.randn(33, generator=g, dtype=torch.float64)
    expected = F.layer_norm(x, (33,), w, b, 1e-3)
    torch.testing.assert_close(bench.naive_layer_norm(x, w, b, 1e-3), expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(bench.naive_rms_norm(x, w, 1e-3), F.rms_norm(x, (33,), w, 1e-3), rtol=0, atol=1e-12)


def test_op_by_op_float16_overflows_where_the_fused_kernel_does_not():
    row = torch.zeros(1, 64, dtype=torch.float64)
    row[0, ::2], row[0, 1::2] = 300.0, -300.0  # |x − μ| = 300: (x − μ)² = 90000 > 65504
    w, b = torch.ones(64), torch.full((64,), 0.25)
    expected = F.layer_norm(row, (64,), w.double(), b.double(), 1e-5)  # ±1 + 0.25
    half = row.half()
    assert torch.isinf((half - half.mean()).square()).all()
    naive = bench.naive_layer_norm(half, w.half(), b.half(), 1e-5)
    assert (naive == 0.25).all()  # σ² = ∞, so y collapses to β
    fused = F.layer_norm(half, (64,), w.half(), b.half(), 1e-5).double()
    assert (fused - expected).abs().max() <= 2 * 2.0**-11 * expected.abs().max()


@pytest.mark.parametrize("norm", ["copy", "LN", "RMSNorm", "BN train", "BN eval"])
def test_reference_agrees_with_the_step_by_step_norms(norm):
    from lnviz.maths import norms

    inputs = bench.make_inputs(12, 1023, torch.float16, CPU, seed=4)
    x = inputs.x.double()
    w, b = inputs.weight.double(), inputs.bias.double()
    step_by_step = {
        "copy": x,
        "LN": norms.layer_norm(x, w, b, inputs.eps).y,
        "RMSNorm": norms.rms_norm(x, w, inputs.eps).y,
        "BN train": norms.batch_norm(x, w, b, inputs.eps, training=True).y,
        "BN eval": norms.batch_norm(
            x,
            w,
            b,
            inputs.eps,
            training=False,
            running_mean=inputs.running_mean.double(),
            running_var=inputs.running_var.double(),
        ).y,
    }[norm]
    ref = bench.reference(norm, inputs)
    assert ref.dtype == torch.float64
    torch.testing.assert_close(ref, step_by_step, rtol=0, atol=1e-10)


def test_a_failing_compile_is_reported_not_raised(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no C++ compiler found\nsecond line")

    monkeypatch.setattr(torch, "compile", broken)
    m = bench.measure("ln_compiled", 4, 64, "float32", CPU, warmup=0, iters=1)
    assert not m.available
    assert m.note == "unavailable: torch.compile failed: RuntimeError: no C++ compiler found"
    assert all(math.isnan(v) for v in (m.gbps, m.seconds, m.max_error, m.rel_error))


def test_triton_variant_is_unavailable_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("CUDA is here")
    m = bench.measure("ln_triton", 4, 64, "float32", CPU, warmup=0, iters=1)
    assert m.note.startswith("unavailable:")
    with pytest.raises(bench.Unavailable):
        bench.triton_layer_norm(torch.zeros(2, 8), torch.ones(8), torch.zeros(8))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available() or bench.kernels.triton is None, reason="needs CUDA and triton")
@pytest.mark.parametrize("features", [256, 1023, 4096, 16384])
def test_triton_kernel_matches_layer_norm(features):
    cuda = torch.device("cuda")
    for dtype, atol in ((torch.float64, 1e-10), (torch.float32, 1e-5)):
        inputs = bench.make_inputs(33, features, dtype, cuda, seed=features)
        y = bench.triton_layer_norm(inputs.x, inputs.weight, inputs.bias, inputs.eps)
        expected = F.layer_norm(inputs.x, (features,), inputs.weight, inputs.bias, inputs.eps)
        torch.testing.assert_close(y, expected, rtol=0, atol=atol)
    inputs = bench.make_inputs(33, features, torch.float16, cuda, seed=features)
    y = bench.triton_layer_norm(inputs.x, inputs.weight, inputs.bias, inputs.eps)
    expected = F.layer_norm(inputs.x.double(), (features,), inputs.weight.double(), inputs.bias.double(), inputs.eps)
    u = torch.finfo(torch.float16).eps / 2
    assert (y.double() - expected).abs().max() <= 2 * u * expected.abs().max()


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_measurement_uses_events_and_a_large_working_set():
    cuda = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(cuda).L2_cache_size
    assert bench.working_set(cuda) >= max(4 * l2, 256 * bench.MIB)
    ms = bench.measure_inputs(bench.QUICK, bench.make_inputs(64, 1024, torch.float32, cuda), cuda, 1, 5)
    for m in ms:
        if m.available:
            assert len(m.times) == 5 and m.gbps > 0 and m.max_error < 1e-4


# GB/s arithmetic -------------------------------------------------------------------------------------------------


def test_ideal_bytes_and_gbps():
    assert bench.ideal_bytes(10, 4) == 80
    assert bench.ideal_bytes(3 * 1023, 2) == 2 * 3 * 1023 * 2
    assert bench.gbps(2_000_000_000, 1.0) == 2.0
    assert bench.gbps(1_000, 1e-6) == pytest.approx(1.0)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError):
            bench.gbps(100, bad)


@pytest.mark.parametrize(("dtype", "itemsize"), [("float32", 4), ("float16", 2), ("bfloat16", 2), ("float64", 8)])
def test_a_measurement_counts_one_read_and_one_write(dtype, itemsize):
    m = bench.measure("ln_fused", 6, 100, dtype, CPU, warmup=1, iters=5)
    assert m.available and m.note == ""
    assert (m.batch, m.features, m.dtype, m.device) == (6, 100, dtype, "cpu")
    assert m.bytes == 2 * 6 * 100 * itemsize
    assert len(m.times) == 5 and all(t > 0 for t in m.times)
    assert m.seconds == statistics.median(m.times)
    assert m.gbps == pytest.approx(m.bytes / m.seconds / 1e9, rel=1e-12)


def test_error_is_measured_against_float64_on_the_rounded_input():
    for dtype, bound in (("float64", 1e-12), ("float32", 1e-5)):
        m = bench.measure("ln_fused", 16, 1024, dtype, CPU, warmup=0, iters=1, seed=3)
        assert 0 <= m.max_error < bound
    inputs = bench.make_inputs(16, 1024, torch.float16, CPU, seed=3)
    oracle = _module_oracle("ln_fused", inputs)
    y = F.layer_norm(inputs.x, (1024,), inputs.weight, inputs.bias, inputs.eps).double()
    worst = (y - oracle).abs().max().item()
    m = bench.measure("ln_fused", 16, 1024, "float16", CPU, warmup=0, iters=1, seed=3)
    assert m.max_error == pytest.approx(worst, rel=1e-12)
    assert m.rel_error == pytest.approx(worst / oracle.abs().max().item(), rel=1e-12)
    # float32 accumulation inside, one rounding of y: within a couple of float16 unit roundoffs
    assert m.rel_error <= 2 * 2.0**-11
    half = bench.measure("ln_naive", 16, 1024, "float16", CPU, warmup=0, iters=1, seed=3).rel_error
    brain = bench.measure("ln_naive", 16, 1024, "bfloat16", CPU, warmup=0, iters=1, seed=3).rel_error
    assert brain > half > 2.0**-11  # 8 significant bits against 11, and op by op rounds μ and x − μ too


def _fake(variant: str, gbps: float, features: int = 64, dtype: str = "float32", note: str = "") -> bench.Measurement:
    v = bench.VARIANTS[variant]
    return bench.Measurement(
        variant=variant,
        label=v.label,
        norm=v.norm,
        batch=8,
        features=features,
        dtype=dtype,
        device="cpu",
        threads=1,
        times=(1e-3,),
        seconds=1e-3,
        bytes=1000,
        gbps=gbps,
        max_error=0.0,
        rel_error=0.0,
        note=note,
    )


def test_percent_of_copy_matches_on_the_same_case():
    ms = [
        _fake("copy", 100.0),
        _fake("ln_fused", 25.0),
        _fake("ln_naive", 150.0),
        _fake("ln_fused", 40.0, features=128),  # no copy at H = 128
        _fake("copy", 50.0, dtype="float16"),
        _fake("bn_eval", 10.0, dtype="float16"),
    ]
    pct = bench.percent_of_copy(ms)
    assert pct[:3] == [100.0, 25.0, 150.0]
    assert math.isnan(pct[3])
    assert pct[4:] == [100.0, 20.0]
    unavailable = [_fake("copy", float("nan"), note="unavailable: x"), _fake("ln_fused", 10.0)]
    assert all(math.isnan(p) for p in bench.percent_of_copy(unavailable))


# A copy's GB/s for which 100 · g / g rounds above 100: the page once said "Above 100% of the copy" on it.
TRAP = 41.08847960759101


def _timed(variant: str, gbps: float, **kw) -> bench.Measurement:
    """:func:`_fake` with its median time what moving its bytes at ``gbps`` takes."""
    m = _fake(variant, gbps, **kw)
    return dataclasses.replace(m, seconds=m.bytes / gbps / 1e9, times=(m.bytes / gbps / 1e9,))


def test_faster_than_copy_compares_gbps_not_a_rounded_percentage():
    assert 100.0 * TRAP / TRAP > 100  # the trap is real: the copy's own share rounds above 100
    bars = [_fake("copy", TRAP), *(_fake(v, TRAP * f) for v, f in (("ln_naive", 0.15), ("ln_fused", 0.43)))]
    assert any(p > 100 for p in bench.percent_of_copy(bars))  # the old condition
    assert bench.faster_than_copy(bars) == []
    faster = _fake("rms_fused", TRAP * 1.01)
    assert bench.faster_than_copy([*bars, faster]) == [faster]
    # Against the copy of its own case only: 50 GB/s beats the float16 copy, not the float32 one.
    other = [_fake("copy", 100.0), _fake("copy", 40.0, dtype="float16"), _fake("ln_fused", 50.0)]
    assert bench.faster_than_copy(other) == []
    assert bench.faster_than_copy([_fake("ln_fused", 50.0)]) == []  # no copy, nothing to beat


def test_takeaway_says_the_measured_share_and_the_speedup():
    below = [_timed("copy", 100.0), _timed("ln_naive", 10.0), _timed("ln_fused", 35.0)]
    said = bench.takeaway(below)
    assert "35% of the copy" in said and "3.5× as fast as LN op by op" in said
    assert "something other than moving the bytes" in said
    near = bench.takeaway([_timed("copy", 100.0), _timed("ln_naive", 30.0), _timed("ln_fused", 90.0)])
    assert "90% of the copy" in near and "3.0×" in near and "moving the bytes sets its speed" in near
    slower = bench.takeaway([_timed("copy", 100.0), _timed("ln_naive", 40.0), _timed("ln_fused", 39.0)])
    assert "no faster than LN op by op" in slower
    assert "noisy timing" in bench.takeaway([_timed("copy", 100.0), _timed("ln_fused", 120.0)])
    assert bench.takeaway([_timed("copy", 100.0), _timed("ln_naive", 10.0)]) is None
    assert bench.takeaway([_timed("ln_fused", 35.0)]) is None  # no copy on its case


def test_below_copy_explains_only_a_kernel_below_the_ceiling():
    why = bench.below_copy([_fake("copy", 100.0), _fake("ln_fused", 35.0)])
    assert "35%" in why and "caches" in why
    assert "x and y, 1 KiB together" in why  # _fake's case moves 1000 bytes
    assert bench.below_copy([_fake("copy", 100.0), _fake("ln_fused", bench.NEAR_COPY)]) is None
    gpu = [dataclasses.replace(m, device="cuda") for m in (_fake("copy", 100.0), _fake("ln_fused", 35.0))]
    assert "fit in the CPU's caches" not in bench.below_copy(gpu)
    large = [dataclasses.replace(m, bytes=64 * 2**20) for m in (_fake("copy", 100.0), _fake("ln_fused", 35.0))]
    assert "fit in the CPU's caches" not in bench.below_copy(large)  # no claim about a case that need not fit


def test_sweep_share_is_the_median_and_range_per_dtype():
    ms = [
        _fake(v, g, features=h, dtype=d)
        for d, gs in (("float32", (20.0, 50.0, 80.0)), ("float16", (90.0,)))
        for h, g in zip((256, 512, 1024), gs, strict=False)
        for v, g in (("copy", 100.0), ("ln_fused", g))
    ]
    said = bench.sweep_share(ms)
    assert "float32: 50% (from 20% to 80%)" in said and "float16: 90% (from 90% to 90%)" in said
    assert bench.sweep_share([_fake("copy", 100.0)]) is None


# Threads, timing ------------------------------------------------------------------------------------------------


def test_thread_count_is_set_for_the_measurement_and_restored():
    before = torch.get_num_threads()
    m = bench.measure("copy", 4, 64, "float32", CPU, warmup=0, iters=2, threads=1)
    assert m.threads == 1
    assert torch.get_num_threads() == before
    with pytest.raises(KeyError):
        with bench.num_threads(1) as used:
            assert used == torch.get_num_threads() == 1
            raise KeyError("boom")
    assert torch.get_num_threads() == before


def test_time_runners_interleaves_warms_up_and_respects_the_budget():
    calls: list[str] = []

    def runner(tag):
        def run():
            calls.append(tag)
            return torch.zeros(1)

        return run

    times = bench.time_runners([runner("a"), runner("b")], CPU, warmup=2, iters=4)
    assert [len(t) for t in times] == [4, 4]
    assert calls == ["a", "a", "b", "b"] + ["a", "b"] * 4
    calls.clear()
    times = bench.time_runners([runner("a"), runner("b")], CPU, warmup=0, iters=50, budget_s=0.0)
    assert [len(t) for t in times] == [bench.MIN_ITERS] * 2
    with pytest.raises(ValueError):
        bench.time_runners([runner("a")], CPU, warmup=0, iters=0)


# The sweep ------------------------------------------------------------------------------------------------------


def test_sweep_grid_covers_every_size_and_dtype_within_the_cap():
    assert min(bench.SWEEP_FEATURES) == 256 and max(bench.SWEEP_FEATURES) == 16384
    assert any(h % 4 for h in bench.SWEEP_FEATURES)
    assert set(bench.SWEEP_DTYPES) == {"float32", "float16", "bfloat16"}
    budget = bench.working_set(CPU)
    assert budget <= 64 * bench.MIB
    cases = bench.sweep_cases(CPU)
    assert {(c.features, c.dtype) for c in cases} == {(h, d) for h in bench.SWEEP_FEATURES for d in bench.SWEEP_DTYPES}
    assert len(cases) == len(bench.SWEEP_FEATURES) * len(bench.SWEEP_DTYPES)
    for c in cases:
        itemsize = bench.DTYPES[c.dtype].itemsize
        assert 2 * c.batch * c.features * itemsize <= budget  # fits
        assert 2 * (c.batch + 1) * c.features * itemsize > budget  # and fills


def test_gpu_working_set_leaves_the_l2_cache(monkeypatch):
    for l2, expected in ((50 * bench.MIB, 256 * bench.MIB), (100 * bench.MIB, 400 * bench.MIB)):
        monkeypatch.setattr(
            torch.cuda, "get_device_properties", lambda _d, l2=l2: types.SimpleNamespace(L2_cache_size=l2)
        )
        assert bench.working_set(torch.device("cuda")) == expected


def test_sweep_yields_every_case_copy_first_within_the_budget():
    budget = 64 * KIB
    stream = bench.sweep(
        CPU,
        names=("ln_fused", "bn_eval"),
        features=(16, 7),
        dtypes=("float32", "bfloat16"),
        budget=budget,
        warmup=0,
        iters=2,
        budget_s=None,
        threads=1,
    )
    assert inspect.isgenerator(stream)
    ms = list(stream)
    assert len(ms) == 2 * 2 * 3
    assert [m.variant for m in ms] == ["copy", "ln_fused", "bn_eval"] * 4
    assert [(m.dtype, m.features) for m in ms[::3]] == [
        ("float32", 16),
        ("float32", 7),
        ("bfloat16", 16),
        ("bfloat16", 7),
    ]
    for m in ms:
        assert m.available and len(m.times) == 2 and m.threads == 1
        assert m.bytes <= budget and m.bytes == 2 * m.batch * m.features * bench.DTYPES[m.dtype].itemsize


def test_quick_measurement_is_small_and_leaves_compile_out():
    assert "ln_compiled" not in bench.QUICK and "copy" in bench.QUICK
    ms = bench.quick(8192, 16384, "float32", CPU, threads=1)
    assert [m.variant for m in ms] == list(bench.QUICK)
    for m in ms:
        assert m.bytes <= bench.QUICK_WORKING_SET
        assert m.batch == bench.quick_batch(8192, 16384, "float32") < 8192
    assert bench.quick_batch(3, 64, "float16") == 3


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError):
        bench.measure("nope", 4, 8, "float32", CPU)
    with pytest.raises(ValueError):
        bench.measure("copy", 4, 8, "float8", CPU)
    with pytest.raises(ValueError):
        bench.make_inputs(0, 8, torch.float32, CPU)
    with pytest.raises(ValueError):
        bench.reference("nope", bench.make_inputs(2, 8, torch.float32, CPU))


def test_bn_training_needs_two_rows():
    m = bench.measure("bn_train", 1, 64, "float32", CPU, warmup=0, iters=1)
    assert m.note == "unavailable: BN in training mode needs at least 2 rows"


# CSV and figures -------------------------------------------------------------------------------------------------


def test_csv_round_trips():
    ms = [_fake("copy", 100.0), _fake("ln_fused", 25.0), _fake("ln_triton", float("nan"), note='unavailable: a, "b"')]
    rows = list(csv.DictReader(io.StringIO(bench.to_csv(ms))))
    assert tuple(rows[0]) == bench.COLUMNS
    assert (rows[0]["batch"], rows[0]["features"]) == ("8", "64")  # B and H, by the names of the grid
    assert [r["variant"] for r in rows] == ["copy", "ln_fused", "ln_triton"]
    assert float(rows[1]["gbps"]) == 25.0 and float(rows[1]["pct_of_copy"]) == 25.0
    assert float(rows[0]["median_us"]) == pytest.approx(1000.0)
    assert rows[2]["note"] == 'unavailable: a, "b"'
    assert math.isnan(float(rows[2]["gbps"]))


def test_fig_quick_shows_bars_and_the_copy_ceiling():
    ms = [
        _fake("copy", 80.0),
        _fake("ln_naive", 20.0),
        _fake("ln_fused", 60.0),
        _fake("ln_triton", float("nan"), note="unavailable: x"),
    ]
    fig = bench.fig_quick(ms)
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 1
    assert list(bars[0].x) == [bench.VARIANTS["ln_naive"].label, bench.VARIANTS["ln_fused"].label]
    assert list(bars[0].y) == [20.0, 60.0]
    assert list(bars[0].text) == ["25% of copy", "75% of copy"]
    ceiling = [t for t in fig.data if t.name == bench.COPY_NAME]
    assert len(ceiling) == 1 and set(ceiling[0].y) == {80.0}
    assert_plotly_valid(fig)
    assert_plotly_valid(bench.fig_quick([]))


def test_fig_sweep_has_a_copy_line_per_dtype_and_orders_h():
    ms = [
        _fake(v, g * h / 100, features=h, dtype=d)
        for d in ("float32", "float16")
        for h in (1024, 256, 1023)
        for v, g in (("copy", 100.0), ("ln_fused", 50.0))
    ]
    fig = bench.fig_sweep(ms)
    copies = [t for t in fig.data if t.name == bench.COPY_NAME]
    assert len(copies) == 2
    assert {t.xaxis for t in copies} == {"x", "x2"}
    assert list(copies[0].x) == ["256", "1023", "1024"]
    assert list(fig.layout.xaxis.categoryarray) == ["256", "1023", "1024"]
    assert [a.text for a in fig.layout.annotations] == ["float32", "float16"]
    assert sum(1 for t in fig.data if t.showlegend is not False) == 2  # one legend entry per variant
    assert_plotly_valid(fig)


# The page -------------------------------------------------------------------------------------------------------

PAGE = "pages/bench.py"


def _quick_title(at) -> str:
    return next(f.layout.title.text for f in figures(at) if any(t.name == bench.COPY_NAME for t in f.data))


def _variance_fig(at):
    return next(f for f in figures(at) if any(t.name == "Welford" for t in f.data))


def _ran_on_the_servers_threads(at) -> bool:
    """The quick case ran on the thread count the server runs torch with (the device badge's)."""
    for c in at.caption:
        found = re.search(r"CPU · (\d+) threads? by default; this measurement ran on (\d+) thread", c.value)
        if found:
            return found[1] == found[2]
    return False


def test_page_runs_and_every_control_changes_the_view():
    at = run_page(PAGE)
    assert_no_exception(at)
    assert _quick_title(at) == "x of shape (128, 1024), float32, cpu"
    assert len(at.dataframe) >= 3  # quick table, float16/bfloat16 errors, ε table
    assert _ran_on_the_servers_threads(at)  # a visitor can't change the count on a shared server
    assert "threads" not in {s.key for s in at.slider}
    assert any("8 kernels each" in m.value for m in at.markdown)  # torch.compile only when asked for
    before = _variance_fig(at)

    at.number_input(key="features").set_value(1023).run()
    assert_no_exception(at)
    assert _quick_title(at) == "x of shape (128, 1023), float32, cpu"
    at.number_input(key="batch").set_value(8).run()
    assert _quick_title(at) == "x of shape (8, 1023), float32, cpu"
    at.radio(key="dtype").set_value("bfloat16").run()
    assert _quick_title(at) == "x of shape (8, 1023), bfloat16, cpu"
    at.toggle(key="compile").set_value(True).run()
    assert any("9 kernels each" in m.value for m in at.markdown)
    at.select_slider(key="offset").set_value(1e4).run()
    assert_no_exception(at)
    assert _variance_fig(at).layout.shapes[-1].x0 == 1e4
    assert any("offset 10000" in m.label for m in at.metric)
    at.number_input(key="seed").set_value(7).run()
    assert_no_exception(at)
    after = _variance_fig(at)
    assert [list(t.y) for t in after.data] != [list(t.y) for t in before.data]


@given(st.floats(min_value=1e-12, max_value=1e6))
def test_a_percentage_is_written_out_plainly_to_two_digits(fraction):
    """No exponent, whatever the size: the digits read back as 100 · fraction, rounded to 2 significant digits."""
    written = text.percent(fraction)
    assert written.endswith(" %") and "e" not in written.lower()
    assert float(written.removesuffix(" %").replace(",", "")) == float(f"{100 * fraction:.2g}")


def test_the_variance_errors_are_written_as_plain_percentages():
    """The bench's "3.4e-06% error" read as a percentage of 3.4 million: each metric now says 0.0000034 %."""
    for offset, extreme in (("1", "0.0000"), ("1e+06", ",")):  # two-pass's millionths; single-pass's millions
        at = run_page(PAGE, {"offset": offset})
        assert_no_exception(at)
        shown = [m.value for m in at.metric if ", offset " in m.label]
        assert len(shown) == 3 and all(re.fullmatch(r"[0-9,.]+ % error", v) for v in shown), shown
        assert any(extreme in v for v in shown), shown


def _quick_of(fused: float, copy: float = TRAP):
    """A stand-in for bench.quick: every kernel at 15-43% of the copy, fused LN at ``fused`` × its GB/s."""
    shares = {"ln_naive": 0.15, "ln_fused": fused, "rms_naive": 0.2, "rms_fused": 0.3, "bn_train": 0.4}
    return lambda *a, **kw: [_timed("copy", copy), *(_timed(v, copy * f) for v, f in shares.items())]


def test_page_says_above_the_copy_only_when_a_kernel_is_and_gives_a_takeaway(monkeypatch):
    monkeypatch.setattr(bench, "quick", _quick_of(0.35))
    at = run_page(PAGE)
    assert_no_exception(at)
    assert not any("Above 100% of the copy" in c.value for c in at.caption)
    assert [m.value for m in at.markdown if m.value.startswith("**Takeaway:**")] == [bench.takeaway(_quick_of(0.35)())]
    assert any("35%" in m.value and m.value.startswith("**Why below the copy") for m in at.markdown)
    monkeypatch.setattr(bench, "quick", _quick_of(1.02))
    at.run()
    assert_no_exception(at)
    assert any("Above 100% of the copy" in c.value for c in at.caption)
    assert not any(m.value.startswith("**Why below the copy") for m in at.markdown)


def test_page_large_case_is_lowered_and_said_so():
    at = run_page(PAGE, {"batch": "8192", "features": "16384"})
    assert_no_exception(at)
    batch = bench.quick_batch(8192, 16384, "float32")
    assert _quick_title(at) == f"x of shape ({batch}, 16384), float32, cpu"
    assert any(f"Measured {batch} rows, not 8192" in i.value for i in at.info)


def test_the_thread_count_is_a_control_only_on_a_server_run_alone(monkeypatch):
    monkeypatch.setenv("LNVIZ_LIMITS", "off")
    limits.current.cache_clear()
    heavy.gate.cache_clear()
    try:
        at = run_page(PAGE)
        at.slider(key="threads").set_value(2).run()
        assert_no_exception(at)
        assert any("ran on 2 threads" in c.value for c in at.caption)
    finally:
        monkeypatch.delenv("LNVIZ_LIMITS")
        limits.current.cache_clear()
        heavy.gate.cache_clear()


def test_page_link_values_are_validated():
    at = run_page(PAGE, {"features": "99999", "dtype": "float8", "threads": "2"})
    assert_no_exception(at)
    note = "\n".join(i.value for i in at.info)
    assert "Hidden size H" in note and "dtype" in note
    assert _ran_on_the_servers_threads(at)  # the link can't set it
    assert _quick_title(at) == "x of shape (128, 1024), float32, cpu"  # each dropped for its default


def test_page_sweep_runs_behind_the_button_and_offers_a_csv(monkeypatch):
    monkeypatch.setattr(bench, "SWEEP_FEATURES", (64, 63))
    monkeypatch.setattr(bench, "SWEEP_DTYPES", ("float32", "float16"))
    monkeypatch.setattr(bench.timing, "CPU_WORKING_SET", 128 * KIB)
    at = run_page(PAGE, {"compile": "false"})
    assert_no_exception(at)
    assert not at.get("download_button")
    assert sum(t.name == bench.COPY_NAME for f in figures(at) for t in f.data) == 1  # the quick figure only
    at.button(key="bench_run_sweep").click().run()
    assert_no_exception(at)
    results = at.session_state["bench_sweep"]
    assert len(results) == 2 * 2 * 8  # cases × (copy + 7 kernels)
    assert {(m.features, m.dtype) for m in results} == {(h, d) for h in (64, 63) for d in ("float32", "float16")}
    sweep_fig = next(f for f in figures(at) if len([t for t in f.data if t.name == bench.COPY_NAME]) == 2)
    assert {t.xaxis for t in sweep_fig.data if t.name == bench.COPY_NAME} == {"x", "x2"}
    assert [b.label for b in at.get("download_button")] == ["Download the sweep (CSV)"]
    assert bench.sweep_share(results) in [m.value for m in at.markdown]  # fused LN's share, per dtype
    assert any("Triton" in c.value and "unavailable" in c.value for c in at.caption)
    at.number_input(key="features").set_value(512).run()  # results stay through later reruns
    assert_no_exception(at)
    assert at.get("download_button")


def test_measurement_dataclass_is_frozen():
    m = _fake("copy", 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.gbps = 2.0
