"""The kernel benchmark page's words: its claim, what each measurement did, and the numerics' lessons.

What the numbers themselves say is :mod:`lnviz.labs.bench.summary`. x is (B, H): B samples, one LN row each, by
H features.
"""

from __future__ import annotations

from collections.abc import Sequence

from lnviz.labs.bench.timing import MIB, MIN_ITERS, QUICK_BUDGET_S, QUICK_WORKING_SET

INTRO = (
    "**Claim:** on large arrays, LayerNorm is memory-bound. It reads each row of x once, computes μ and σ², "
    "and writes y once, with a few operations per byte, so memory bandwidth sets its speed and a plain copy "
    "`y.copy_(x)`, measured here, is its ceiling (the roofline model of Williams, Waterman and Patterson, 2009). "
    "A ceiling bounds a kernel's speed; it does not promise it: on a small case held in cache, LN can land well "
    "below the copy (the first chart says why).\n\n"
    "LN written op by op makes several passes over memory. A fused kernel (`F.layer_norm`, `torch.compile`, "
    "or a Triton kernel as in Triton's LayerNorm tutorial) reads once and writes once.\n\n"
    "GB/s counts only those ideal bytes: 2 × B × H × bytes per element."
)
FASTER_THAN_COPY = (
    "Above 100% of the copy: a kernel moved its bytes faster than the copy did. On a case this small the "
    "data sit in cache and the timings are tens of µs, so a busy machine can reorder them: rerun, or see the sweep."
)
NO_SWEEP = "No sweep yet in this session."
ERRORS = "Error against float64, by dtype"
ERRORS_CAPTION = (
    "The largest max |y − y₆₄| / max |y₆₄| over the sizes, y₆₄ computed by torch in float64 from the same "
    "rounded input. Read it against the unit roundoff: 6e-8 in float32, 4.9e-4 in float16, 3.9e-3 in bfloat16."
)
# The numerics section's three lessons, each a subheader and what it shows, in the page's order.
NUMERICS = {
    "variance": (
        "Variance in one pass: E[x²] − E[x]²",
        "Add a large offset to every x and keep the spread at 1. In float32, E[x²] and E[x]² become two nearly "
        "equal large numbers, and their difference is mostly rounding: catastrophic cancellation. Removing the mean "
        "first (two passes) or Welford's running update keeps the variance accurate.",
    ),
    "precision": (
        "float16 and bfloat16 outputs",
        "float16 keeps 11 significant bits, bfloat16 8: the unit roundoff u is 2⁻¹¹ or 2⁻⁸. `F.layer_norm` computes "
        "in float32 and rounds y once; op by op, μ, x − μ and σ² are each rounded too. Op by op, float16 can also "
        "overflow: (x − μ)² passes its largest number, 65504, once |x − μ| ≥ 256; σ² becomes ∞ and the row's y "
        "collapses to β. The sweep's float16 op-by-op errors of order 1 come from such rows.",
    ),
    "eps": (
        "ε = 1e-12 in float16",
        "float16's smallest positive number is 2⁻²⁴ ≈ 6·10⁻⁸, so ε = 1e-12 (or 1e-8) is stored as exactly 0. "
        "On a constant row σ² = 0, and op by op y = 0 · 1/√0 = NaN. `F.layer_norm` adds ε in float32 and "
        "survives; bfloat16 keeps float32's range.",
    ),
}
VARIANCE_ALT = "Relative error of σ² against the mean offset, for single-pass, two-pass and Welford variance."
VARIANCE_HELP = "Median relative error of σ² over the rows."
SWEEP_ALT = "GB/s of each kernel against H, by dtype."


def quick_caption(device: str, threads: int, elapsed_ms: float) -> str:
    """Under the per-rerun case's heading: where and how it was timed, and how long that took."""
    return (
        f"{device} by default; this measurement ran on {threads} thread{'s' if threads != 1 else ''}. "
        f"Each kernel: one warm-up call, then the median of the calls that fit in "
        f"{QUICK_BUDGET_S * 1e3:.0f} ms (at least {MIN_ITERS}). All of it took {elapsed_ms:.0f} ms. "
        "torch.compile is left out here: it compiles for seconds (see the sweep)."
    )


def lowered(measured: int, batch: int) -> str:
    """When the per-rerun case measured fewer rows than asked for."""
    return (
        f"Measured {measured} rows, not {batch}: the per-rerun case stays under "
        f"{QUICK_WORKING_SET // MIB} MiB (x and y) to stay fast, so it runs from cache. "
        "The sweep below uses large arrays."
    )


def quick_alt(batch: int, features: int, dtype: str) -> str:
    return f"GB/s of each kernel on {batch} × {features} {dtype}, against the copy's."


def sweep_plan(features: Sequence[int], dtypes: Sequence[str], working_set: int, cases: int, kernels: int) -> str:
    """What the sweep will measure, and how long it takes: ``cases`` of ``kernels`` each."""
    odd = [str(h) for h in features if h % 4]
    return (
        f"H = {', '.join(str(h) for h in features)} ({', '.join(odd) or 'none'} not a multiple of 4) in "
        f"{', '.join(dtypes)}, with as many rows as fill "
        f"{working_set / MIB:g} MiB of x and y: {cases} cases, {kernels} kernels each. "
        "Each kernel is warmed up twice, then timed by the median of 3 to 20 calls, interleaved with the others "
        "(off the GPU, as many as fit in 0.2 s per kernel). "
        "On two CPU cores this takes a few minutes, more with torch.compile, which compiles for each case."
    )


def negative(count: int, batch: int) -> str:
    """Under a variance method's metric: its rows whose σ² came out negative."""
    return f"{count} of {batch} rows got σ² < 0: LN would take the square root of a negative."
