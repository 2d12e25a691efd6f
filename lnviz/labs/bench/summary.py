"""What the benchmark's numbers say, in words: fused LN against the copy ceiling and against LN op by op.

Every sentence is computed from :class:`~lnviz.labs.bench.timing.Measurement` s of
one case (x of shape (B, H)) or of a sweep. The roofline bounds a kernel's
speed by the copy's, which moves the same ideal bytes with no arithmetic; it
does not promise that LN reaches it. :func:`takeaway` says how close fused LN
came on a case, :func:`below_copy` why it can land below the ceiling, and
:func:`sweep_share` how close it came over the sweep's larger arrays.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from lnviz.labs.bench.results import faster_than_copy, percent_of_copy
from lnviz.labs.bench.timing import CPU_WORKING_SET, QUICK_WORKING_SET, Measurement

# From this share of the copy's GB/s up, a kernel is said to run at the memory's speed.
NEAR_COPY = 80.0


def _case(measurements: Sequence[Measurement], variant: str) -> tuple[Measurement, float] | None:
    """The first measurement of ``variant`` that ran, and its % of the copy on its case (None without both)."""
    for m, pct in zip(measurements, percent_of_copy(measurements), strict=True):
        if m.variant == variant and m.available and pct == pct:
            return m, pct
    return None


def _mib(nbytes: int) -> str:
    mib = nbytes / 2**20
    return f"{mib:.2g} MiB" if mib >= 0.1 else f"{nbytes / 2**10:.0f} KiB"


def takeaway(measurements: Sequence[Measurement]) -> str | None:
    """One line for a student: fused LN's share of the copy on this case, and what fusing bought over op by op.

    None without a measured copy and fused LN.
    """
    found = _case(measurements, "ln_fused")
    if found is None:
        return None
    fused, pct = found
    line = f"**Takeaway:** fused LN (`F.layer_norm`) ran at {pct:.0f}% of the copy's speed"
    naive = next((m for m in measurements if m.variant == "ln_naive" and m.available), None)
    if naive is not None:
        speedup = naive.seconds / fused.seconds
        line += f" and {speedup:.1f}× as fast as LN op by op" if speedup >= 1.05 else " and no faster than LN op by op"
    if faster_than_copy([m for m in measurements if m.variant in ("copy", "ln_fused")]):
        return line + ": faster than the copy itself, which only a noisy timing can do (rerun)."
    if pct >= NEAR_COPY:
        return line + ": moving the bytes sets its speed here, as the claim says."
    return line + ": on this case something other than moving the bytes sets its speed (see below)."


def below_copy(measurements: Sequence[Measurement]) -> str | None:
    """Why fused LN ran below the copy on this case, or None where it came within :data:`NEAR_COPY` % of it."""
    found = _case(measurements, "ln_fused")
    if found is None or found[1] >= NEAR_COPY:
        return None
    fused, pct = found
    head = (
        "**Why below the copy, if LN is memory-bound?** The copy is a ceiling: a kernel that reads x and writes "
        "y moves at least the copy's bytes, so it should not beat the copy's speed. A ceiling is not a promise: "
        f"LN can come close to it only where moving the bytes is the slowest part of its work, and here it got "
        f"{pct:.0f}%. "
    )
    if fused.device == "cpu" and fused.bytes <= QUICK_WORKING_SET:
        return head + (
            f"This case's x and y, {_mib(fused.bytes)} together, fit in the CPU's caches, where the copy moves "
            "bytes faster than it can from main memory. LN does more per element than move it: a reduction "
            "over its row for μ and σ², then (x − μ)/√(σ² + ε) · γ + β on a second pass to write y. The likely "
            "reason it lands below: from cache, that arithmetic takes longer than the bytes (LN is "
            "compute-bound here). On arrays that must come from main memory, the copy slows to the memory's "
            "speed and fused LN can come close to it. The sweep's larger cases measure how close on this "
            f"machine ({_mib(CPU_WORKING_SET)} of x and y, which a server's last-level cache may still hold)."
        )
    return head + (
        "Where the bytes come quickly (from a cache, or on a case so small that each call takes microseconds), "
        "LN's arithmetic and the fixed cost of each call can weigh as much as its bytes. The sweep's larger "
        "arrays show how close it comes where memory bandwidth is the bottleneck."
    )


def sweep_share(measurements: Sequence[Measurement]) -> str | None:
    """Fused LN's share of the copy over the sweep, per dtype: its median and range over H (None without it)."""
    per_dtype: dict[str, list[float]] = {}
    for m, pct in zip(measurements, percent_of_copy(measurements), strict=True):
        if m.variant == "ln_fused" and m.available and pct == pct:
            per_dtype.setdefault(m.dtype, []).append(pct)
    if not per_dtype:
        return None
    parts = [
        f"{dtype}: {statistics.median(pcts):.0f}% (from {min(pcts):.0f}% to {max(pcts):.0f}%)"
        for dtype, pcts in per_dtype.items()
    ]
    return "**In this sweep**, fused LN's share of the copy's speed, the median over H: " + "; ".join(parts) + "."
