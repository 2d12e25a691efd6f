"""How fast the norms run, measured against the speed of a plain copy.

LayerNorm on x of shape (B, H) reduces over each row's H features: it reads the
row, computes μ and σ², and writes y. At the least that is one read and one
write of every element, the same traffic as ``y.copy_(x)``:

.. math::

    \\text{ideal bytes} = 2 \\cdot B H \\cdot \\text{itemsize}, \\qquad
    \\text{GB/s} = \\frac{\\text{ideal bytes}}{\\text{median seconds} \\cdot 10^9}

(γ and β, H values each, are left out: a rounding error next to B·H.) The
copy's bandwidth, measured on the same machine, is therefore a norm's ceiling.
A written-out LN makes several passes over memory; a fused kernel makes one
read and one write. Where the bytes come from memory slower than the kernel's
arithmetic (large arrays), a norm is memory-bound and a fused kernel can come
close to the copy; on data held in a CPU's caches its arithmetic can take
longer than the bytes, and it lands below (:mod:`~lnviz.labs.bench.summary`).

Every variant is checked against torch's float64 result on the same (rounded)
input, so the error shown is the kernel's own. Nothing here holds state between
calls: inputs, buffers and compiled functions are built fresh inside each
measurement.

The package, one idea a module: :mod:`~lnviz.labs.bench.kernels` (the inputs of a
case, the variants, the Triton kernel, the float64 references),
:mod:`~lnviz.labs.bench.timing` (the timing harness: measure, quick, sweep),
:mod:`~lnviz.labs.bench.results` (each against the copy, tables and CSV), :mod:`~lnviz.labs.bench.summary` (what the numbers say, in words),
:mod:`~lnviz.labs.bench.figures`, :mod:`~lnviz.labs.bench.numerics` (where
precision goes) and :mod:`~lnviz.labs.bench.text` (the page's words). A case is
x (B, H), as everywhere in lnviz: ``batch`` and ``features`` name B and H in
every argument, field and column. Callers use the names re-exported
here (``bench.quick``, ``bench.VARIANTS``, ``bench.fig_sweep``); a test that
patches a constant patches it on the module that reads it
(``bench.timing.CPU_WORKING_SET``).
"""

from __future__ import annotations

from lnviz.labs.bench.figures import COPY_NAME, fig_quick, fig_sweep, variant_color
from lnviz.labs.bench.kernels import (
    DTYPES,
    EPS,
    QUICK,
    TRITON_MAX_H,
    VARIANTS,
    Inputs,
    Runner,
    Unavailable,
    Variant,
    as_float64,
    ideal_bytes,
    make_inputs,
    naive_layer_norm,
    naive_rms_norm,
    reference,
    torch_dtype,
    triton_layer_norm,
)
from lnviz.labs.bench.results import COLUMNS, faster_than_copy, percent_of_copy, table, to_csv
from lnviz.labs.bench.summary import NEAR_COPY, below_copy, sweep_share, takeaway
from lnviz.labs.bench.timing import (
    CPU_WORKING_SET,
    GPU_WORKING_SET,
    MAX_THREADS,
    MIB,
    MIN_ITERS,
    QUICK_BUDGET_S,
    QUICK_WORKING_SET,
    SWEEP_DTYPES,
    SWEEP_FEATURES,
    Case,
    Measurement,
    batch_for,
    errors,
    gbps,
    measure,
    measure_inputs,
    num_threads,
    quick,
    quick_batch,
    sweep,
    sweep_cases,
    time_runners,
    working_set,
)

__all__ = [
    "COLUMNS",
    "COPY_NAME",
    "CPU_WORKING_SET",
    "DTYPES",
    "EPS",
    "GPU_WORKING_SET",
    "MAX_THREADS",
    "MIB",
    "MIN_ITERS",
    "NEAR_COPY",
    "QUICK",
    "QUICK_BUDGET_S",
    "QUICK_WORKING_SET",
    "SWEEP_DTYPES",
    "SWEEP_FEATURES",
    "TRITON_MAX_H",
    "VARIANTS",
    "Case",
    "Inputs",
    "Measurement",
    "Runner",
    "Unavailable",
    "Variant",
    "as_float64",
    "batch_for",
    "below_copy",
    "errors",
    "faster_than_copy",
    "fig_quick",
    "fig_sweep",
    "gbps",
    "ideal_bytes",
    "make_inputs",
    "measure",
    "measure_inputs",
    "naive_layer_norm",
    "naive_rms_norm",
    "num_threads",
    "percent_of_copy",
    "quick",
    "quick_batch",
    "reference",
    "sweep",
    "sweep_cases",
    "sweep_share",
    "table",
    "takeaway",
    "time_runners",
    "to_csv",
    "torch_dtype",
    "triton_layer_norm",
    "variant_color",
    "working_set",
]
