"""Kernel benchmark: how fast the norms run next to a plain copy, and where their precision goes."""

import gc
import time

import pandas as pd
import streamlit as st

from lnviz import text
from lnviz.labs import bench
from lnviz.labs.bench import numerics
from lnviz.maths.device import label
from ui import heavy
from ui.page import Page

HEADERS = {
    "label": "kernel",
    "dtype": "dtype",
    "hidden": "H",
    "rows": "rows",
    "threads": "threads",
    "median_us": "median µs",
    "gbps": "GB/s",
    "pct_of_copy": "% of copy",
    "max_error": "max |y − y₆₄|",
    "rel_error": "error vs float64",
}
FORMATS = {
    "median µs": st.column_config.NumberColumn(format="%.1f"),
    "GB/s": st.column_config.NumberColumn(format="%.1f"),
    "% of copy": st.column_config.NumberColumn(format="%.0f%%"),
    "max |y − y₆₄|": st.column_config.NumberColumn(format="%.1e"),
    "error vs float64": st.column_config.NumberColumn(
        format="%.1e", help="max |y − y₆₄| / max |y₆₄|, y₆₄ from torch in float64 on the same rounded input."
    ),
}


def show_table(measurements: list[bench.Measurement], columns: list[str], key: str) -> None:
    """The measurements that ran, as a table of ``columns``; those that could not run, as captions."""
    table = pd.DataFrame(bench.table(measurements))
    ran = table.loc[table["note"] == "", columns].rename(columns=HEADERS)
    st.dataframe(ran, hide_index=True, key=key, column_config=FORMATS)
    for note in dict.fromkeys(f"{m.label}: {m.note}." for m in measurements if not m.available):
        st.caption(note)


page = Page.start(
    intro="**Claim:** on large arrays, LayerNorm is memory-bound. It reads each row of x once, computes μ and σ², "
    "and writes y once, with a few operations per byte, so memory bandwidth sets its speed and a plain copy "
    "`y.copy_(x)`, measured here, is its ceiling (the roofline model of Williams, Waterman and Patterson, 2009). "
    "A ceiling bounds a kernel's speed; it does not promise it: on a small case held in cache, LN can land well "
    "below the copy (the first chart says why).\n\n"
    "LN written op by op makes several passes over memory. A fused kernel (`F.layer_norm`, `torch.compile`, "
    "or a Triton kernel as in Triton's LayerNorm tutorial) reads once and writes once.\n\n"
    "GB/s counts only those ideal bytes: 2 × B × H × bytes per element.",
)
with page.sidebar("Case"):
    rows, hidden, dtype, seed = page.controls("batch", "features", "dtype", "seed")
with page.sidebar("Timing"):
    device = page.device()
    # The thread count is process-wide: a visitor may change it only on a server run alone (LNVIZ_LIMITS=off).
    threads = page.control("threads") if heavy.thread_control() else None
    with_compile = page.control("compile")
with page.sidebar("Numerics"):
    offset = page.control("offset")

# One case, every rerun --------------------------------------------------------------------------------------------
st.header("One case, measured on every rerun")
used_rows = bench.quick_rows(rows, hidden, dtype)
start = time.perf_counter()
quick = page.run(bench.quick, rows, hidden, dtype, device, seed=seed, threads=threads)
elapsed_ms = 1e3 * (time.perf_counter() - start)
threads_used = quick[0].threads
st.caption(
    f"{label(device)} by default; this measurement ran on {threads_used} thread{'s' if threads_used != 1 else ''}. "
    f"Each kernel: one warm-up call, then the median of the calls that fit in "
    f"{bench.QUICK_BUDGET_S * 1e3:.0f} ms (at least {bench.MIN_ITERS}). All of it took {elapsed_ms:.0f} ms. "
    "torch.compile is left out here: it compiles for seconds (see the sweep)."
)
if used_rows < rows:
    st.info(
        f"Measured {used_rows} rows, not {rows}: the per-rerun case stays under "
        f"{bench.QUICK_WORKING_SET // bench.MIB} MiB (x and y) to stay fast, so it runs from cache. "
        "The sweep below uses large arrays."
    )
page.chart(
    bench.fig_quick(quick),
    key="bench_quick",
    alt=f"GB/s of each kernel on {used_rows} × {hidden} {dtype}, against the copy's.",
)
said = bench.takeaway(quick)
if said:
    st.markdown(said)
if bench.faster_than_copy(quick):
    st.caption(
        "Above 100% of the copy: a kernel moved its bytes faster than the copy did. On a case this small the "
        "data sit in cache and the timings are tens of µs, so a busy machine can reorder them: rerun, or see the sweep."
    )
why = bench.below_copy(quick)
if why:
    page.say(why)
show_table(quick, ["label", "median_us", "gbps", "pct_of_copy", "rel_error"], "bench_quick_table")

# The sweep ------------------------------------------------------------------------------------------------------
st.header("The full sweep")
cases = bench.sweep_cases(device, bench.HIDDENS, bench.SWEEP_DTYPES)
names = [name for name, v in bench.VARIANTS.items() if with_compile or name != "ln_compiled"]
odd = [str(h) for h in bench.HIDDENS if h % 4]
st.markdown(
    f"H = {', '.join(str(h) for h in bench.HIDDENS)} ({', '.join(odd) or 'none'} not a multiple of 4) in "
    f"{', '.join(bench.SWEEP_DTYPES)}, with as many rows as fill "
    f"{bench.working_set(device) / bench.MIB:g} MiB of x and y: {len(cases)} cases, {len(names)} kernels each. "
    "Each kernel is warmed up twice, then timed by the median of 3 to 20 calls, interleaved with the others "
    "(off the GPU, as many as fit in 0.2 s per kernel). "
    "On two CPU cores this takes a few minutes, more with torch.compile, which compiles for each case."
)


def run_sweep() -> None:
    """The sweep, under the server's limit on heavy work; what it compiled leaves the collector's sight after."""
    with heavy.heavy("the benchmark sweep") as ticket:
        if ticket is None:
            return
        total = len(cases) * len(names)
        bar = st.progress(0.0, text="Starting…")
        results = []
        sweep = bench.sweep(device, names, bench.HIDDENS, bench.SWEEP_DTYPES, threads=threads, seed=seed)
        for i, m in enumerate(sweep):
            ticket.check()
            results.append(m)
            bar.progress((i + 1) / total, text=f"{m.dtype}, H={m.hidden}: {m.label}")
        bar.empty()
        st.session_state["bench_sweep"] = results
    if with_compile:
        # torch.compile loads about 284,000 objects for the rest of the process's life; frozen, no later
        # collection walks them (without this, every rerun of every session paid 220-240 ms for them).
        gc.collect()
        gc.freeze()


if st.button("Run the full sweep", key="bench_run_sweep", type="primary"):
    run_sweep()

results = st.session_state.get("bench_sweep")
if results:
    page.chart(bench.fig_sweep(results), key="bench_sweep_fig", alt="GB/s of each kernel against H, by dtype.")
    share = bench.sweep_share(results)
    if share:
        st.markdown(share)
    sweep_table = pd.DataFrame(bench.table(results))
    st.subheader("Error against float64, by dtype")
    st.caption(
        "The largest max |y − y₆₄| / max |y₆₄| over the sizes, y₆₄ computed by torch in float64 from the same "
        "rounded input. Read it against the unit roundoff: 6e-8 in float32, 4.9e-4 in float16, 3.9e-3 in bfloat16."
    )
    errors = sweep_table.pivot_table(index="label", columns="dtype", values="rel_error", aggfunc="max", sort=False)
    st.dataframe(errors.rename_axis(index="kernel").style.format("{:.1e}"), key="bench_sweep_errors")
    st.subheader("Every measurement")
    show_table(results, list(HEADERS), "bench_sweep_table")
    st.download_button(
        "Download the sweep (CSV)",
        data=heavy.deferred("the sweep's CSV", lambda: bench.to_csv(results)),
        on_click="ignore",
        file_name="lnviz-bench.csv",
        mime="text/csv",
        key="bench_download",
    )
else:
    st.caption("No sweep yet in this session.")

# Numerics -------------------------------------------------------------------------------------------------------
st.header("Numerics: where precision goes")


st.subheader("Variance in one pass: E[x²] − E[x]²")
st.markdown(
    "Add a large offset to every x and keep the spread at 1. In float32, E[x²] and E[x]² become two nearly "
    "equal large numbers, and their difference is mostly rounding: catastrophic cancellation. Removing the mean "
    "first (two passes) or Welford's running update keeps the variance accurate."
)
curve = page.compute(numerics.variance_curve, numerics.OFFSETS, seed=seed)
page.chart(
    numerics.fig_variance(curve, offset),
    key="bench_variance",
    alt="Relative error of σ² against the mean offset, for single-pass, two-pass and Welford variance.",
)
at = curve.offsets.index(offset)
cols = st.columns(len(numerics.METHODS))
for col, method in zip(cols, numerics.METHODS, strict=True):
    col.metric(
        f"{method}, offset {offset:g}",
        f"{text.percent(curve.median_error[method][at])} error",
        help="Median relative error of σ² over the rows.",
    )
    negative = curve.negative[method][at]
    if negative:
        col.caption(f"{negative} of {curve.rows} rows got σ² < 0: LN would take the square root of a negative.")

st.subheader("float16 and bfloat16 outputs")
st.markdown(
    "float16 keeps 11 significant bits, bfloat16 8: the unit roundoff u is 2⁻¹¹ or 2⁻⁸. `F.layer_norm` computes "
    "in float32 and rounds y once; op by op, μ, x − μ and σ² are each rounded too. Op by op, float16 can also "
    "overflow: (x − μ)² passes its largest number, 65504, once |x − μ| ≥ 256; σ² becomes ∞ and the row's y "
    "collapses to β. The sweep's float16 op-by-op errors of order 1 come from such rows."
)
st.dataframe(
    pd.DataFrame(
        {
            "dtype": p.dtype,
            "u": p.unit_roundoff,
            "u · max|y|": p.unit_roundoff * p.max_abs_y,
            "F.layer_norm error": p.fused,
            "op-by-op error": p.op_by_op,
        }
        for p in page.compute(numerics.precision_errors, numerics.LOW_PRECISION, seed=seed)
    ).style.format({c: "{:.1e}" for c in ("u", "u · max|y|", "F.layer_norm error", "op-by-op error")}),
    hide_index=True,
    key="bench_precision",
)

st.subheader("ε = 1e-12 in float16")
st.markdown(
    "float16's smallest positive number is 2⁻²⁴ ≈ 6·10⁻⁸, so ε = 1e-12 (or 1e-8) is stored as exactly 0. "
    "On a constant row σ² = 0, and op by op y = 0 · 1/√0 = NaN. `F.layer_norm` adds ε in float32 and "
    "survives; bfloat16 keeps float32's range."
)
st.code(f"torch.tensor(1e-12, dtype=torch.float16) == 0  # {numerics.eps_rounding(1e-12, 'float16').vanishes}")
st.dataframe(pd.DataFrame(numerics.eps_rows(page.compute(numerics.eps_table))), hide_index=True, key="bench_eps")
page.finish()
