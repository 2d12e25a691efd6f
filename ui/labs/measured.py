"""The kernel benchmark's Streamlit side: measurements as tables, the sweep run under the heavy-work gate and
what it found, and the numerics' tables.

The measuring is :mod:`lnviz.labs.bench`, its words :mod:`lnviz.labs.bench.text`. Nothing here acts on import.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

import pandas as pd
import streamlit as st
import torch

from lnviz import text as written
from lnviz.labs import bench
from lnviz.labs.bench import numerics, text
from server import heavy
from ui.kit.page import Page

SWEEP = "bench_sweep"  # the session's last sweep, a list of measurements
HEADERS = {
    "label": "kernel",
    "dtype": "dtype",
    "features": "H",
    "batch": "B",
    "threads": "threads",
    "median_us": "median µs",
    "gbps": "GB/s",
    "pct_of_copy": "% of copy",
    "max_error": "max |y − y₆₄|",
    "rel_error": "error vs float64",
}
FORMATS = {
    "median µs": {"format": "%.1f"},
    "GB/s": {"format": "%.1f"},
    "% of copy": {"format": "%.0f%%"},
    "max |y − y₆₄|": {"format": "%.1e"},
    "error vs float64": {
        "format": "%.1e",
        "help": "max |y − y₆₄| / max |y₆₄|, y₆₄ from torch in float64 on the same rounded input.",
    },
}
QUICK_COLUMNS = ["label", "median_us", "gbps", "pct_of_copy", "rel_error"]
PRECISION = {  # the float16 and bfloat16 table: a column's header, and its value for one dtype's errors
    "dtype": lambda p: p.dtype,
    "u": lambda p: p.unit_roundoff,
    "u · max|y|": lambda p: p.unit_roundoff * p.max_abs_y,
    "F.layer_norm error": lambda p: p.fused,
    "op-by-op error": lambda p: p.op_by_op,
}


def table(measurements: Sequence[bench.Measurement], columns: Sequence[str], key: str) -> None:
    """The measurements that ran, as a table of ``columns``; those that could not run, as captions."""
    frame = pd.DataFrame(bench.table(measurements))
    ran = frame.loc[frame["note"] == "", list(columns)].rename(columns=HEADERS)
    formats = {name: st.column_config.NumberColumn(**spec) for name, spec in FORMATS.items()}
    st.dataframe(ran, hide_index=True, key=key, column_config=formats)
    for note in dict.fromkeys(f"{m.label}: {m.note}." for m in measurements if not m.available):
        st.caption(note)


def run_sweep(device: torch.device, names: Sequence[str], cases: int, threads: int | None, seed: int) -> None:
    """The sweep, ``cases`` cases of the kernels ``names``, under the server's limit on heavy work, its progress
    in a bar; kept in the session. What torch.compile loaded leaves the collector's sight after."""
    with heavy.heavy("the benchmark sweep") as ticket:
        if ticket is None:
            return
        total = cases * len(names)
        bar = st.progress(0.0, text="Starting…")
        results = []
        sweep = bench.sweep(device, names, bench.SWEEP_FEATURES, bench.SWEEP_DTYPES, threads=threads, seed=seed)
        for i, m in enumerate(sweep):
            ticket.check()
            results.append(m)
            bar.progress((i + 1) / total, text=f"{m.dtype}, H={m.features}: {m.label}")
        bar.empty()
        st.session_state[SWEEP] = results
    if "ln_compiled" in names:
        # torch.compile loads about 284,000 objects for the rest of the process's life; frozen, no later
        # collection walks them (without this, every rerun of every session paid 220-240 ms for them).
        gc.collect()
        gc.freeze()


def sweep_results(page: Page) -> None:
    """The session's sweep, if it ran: GB/s by H, fused LN's share of the copy, the errors by dtype, every
    measurement, and the CSV."""
    results = st.session_state.get(SWEEP)
    if not results:
        st.caption(text.NO_SWEEP)
        return
    page.chart(bench.fig_sweep(results), key="bench_sweep_fig", alt=text.SWEEP_ALT)
    share = bench.sweep_share(results)
    if share:
        st.markdown(share)
    frame = pd.DataFrame(bench.table(results))
    st.subheader(text.ERRORS)
    st.caption(text.ERRORS_CAPTION)
    errors = frame.pivot_table(index="label", columns="dtype", values="rel_error", aggfunc="max", sort=False)
    st.dataframe(errors.rename_axis(index="kernel").style.format("{:.1e}"), key="bench_sweep_errors")
    st.subheader("Every measurement")
    table(results, list(HEADERS), "bench_sweep_table")
    st.download_button(
        "Download the sweep (CSV)",
        data=heavy.deferred("the sweep's CSV", lambda: bench.to_csv(results)),
        on_click="ignore",
        file_name="lnviz-bench.csv",
        mime="text/csv",
        key="bench_download",
    )


def lesson(name: str) -> None:
    """One of the numerics' lessons (:data:`text.NUMERICS`): its subheader and its words."""
    title, said = text.NUMERICS[name]
    st.subheader(title)
    st.markdown(said)


def variance_metrics(curve: numerics.VarianceCurve, offset: float) -> None:
    """Each variance method's median error at ``offset``, and its rows whose σ² came out negative."""
    at = curve.offsets.index(offset)
    for col, method in zip(st.columns(len(numerics.METHODS)), numerics.METHODS, strict=True):
        error = written.percent(curve.median_error[method][at])
        col.metric(f"{method}, offset {offset:g}", f"{error} error", help=text.VARIANCE_HELP)
        negative = curve.negative[method][at]
        if negative:
            col.caption(text.negative(negative, curve.batch))


def precision_table(errors: Sequence[numerics.PrecisionError]) -> None:
    """F.layer_norm and op by op against float64, in float16 and bfloat16, beside their unit roundoff."""
    frame = pd.DataFrame({header: value(p) for header, value in PRECISION.items()} for p in errors)
    numbers = {header: "{:.1e}" for header in PRECISION if header != "dtype"}
    st.dataframe(frame.style.format(numbers), hide_index=True, key="bench_precision")
