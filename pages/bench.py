"""Kernel benchmark: how fast the norms run next to a plain copy, and where their precision goes."""

import time

import pandas as pd
import streamlit as st

from lnviz.labs import bench
from lnviz.labs.bench import numerics, text
from lnviz.maths.device import label
from server import heavy
from ui.kit.page import Page
from ui.labs import measured

page = Page.start(intro=text.INTRO)
with page.sidebar("Case"):
    batch, features, dtype, seed = page.controls("batch", "features", "dtype", "seed")
with page.sidebar("Timing"):
    device = page.device()
    # The thread count is process-wide: a visitor may change it only on a server run alone (LNVIZ_LIMITS=off).
    threads = page.control("threads") if heavy.thread_control() else None
    with_compile = page.control("compile")
with page.sidebar("Numerics"):
    offset = page.control("offset")

# One case, every rerun --------------------------------------------------------------------------------------------
st.header("One case, measured on every rerun")
used_batch = bench.quick_batch(batch, features, dtype)
start = time.perf_counter()
quick = page.run(bench.quick, batch, features, dtype, device, seed=seed, threads=threads)
st.caption(text.quick_caption(label(device), quick[0].threads, 1e3 * (time.perf_counter() - start)))
if used_batch < batch:
    st.info(text.lowered(used_batch, batch))
page.chart(bench.fig_quick(quick), key="bench_quick", alt=text.quick_alt(used_batch, features, dtype))
said = bench.takeaway(quick)
if said:
    st.markdown(said)
if bench.faster_than_copy(quick):
    st.caption(text.FASTER_THAN_COPY)
why = bench.below_copy(quick)
if why:
    page.say(why)
measured.table(quick, measured.QUICK_COLUMNS, "bench_quick_table")

# The sweep ------------------------------------------------------------------------------------------------------
st.header("The full sweep")
cases = bench.sweep_cases(device, bench.SWEEP_FEATURES, bench.SWEEP_DTYPES)
names = [name for name, v in bench.VARIANTS.items() if with_compile or name != "ln_compiled"]
st.markdown(
    text.sweep_plan(bench.SWEEP_FEATURES, bench.SWEEP_DTYPES, bench.working_set(device), len(cases), len(names))
)
if st.button("Run the full sweep", key="bench_run_sweep", type="primary"):
    measured.run_sweep(device, names, len(cases), threads, seed)
measured.sweep_results(page)

# Numerics -------------------------------------------------------------------------------------------------------
st.header("Numerics: where precision goes")
measured.lesson("variance")
curve = page.compute(numerics.variance_curve, numerics.OFFSETS, seed=seed)
page.chart(numerics.fig_variance(curve, offset), key="bench_variance", alt=text.VARIANCE_ALT)
measured.variance_metrics(curve, offset)

measured.lesson("precision")
measured.precision_table(page.compute(numerics.precision_errors, numerics.LOW_PRECISION, seed=seed))

measured.lesson("eps")
st.code(f"torch.tensor(1e-12, dtype=torch.float16) == 0  # {numerics.eps_rounding(1e-12, 'float16').vanishes}")
st.dataframe(pd.DataFrame(numerics.eps_rows(page.compute(numerics.eps_table))), hide_index=True, key="bench_eps")
page.finish()
