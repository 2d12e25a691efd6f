"""The measurements read against the copy on their case, and laid out: as table rows and as CSV.

Each :class:`~lnviz.labs.bench.timing.Measurement` is one variant on one case, x (B, H) = batch × features in one
dtype on one device; the copy measured on the same case is its ceiling.
"""

from __future__ import annotations

from collections.abc import Sequence

from lnviz.labs.bench.timing import Measurement


def _case_key(m: Measurement) -> tuple:
    return (m.batch, m.features, m.dtype, m.device)


def percent_of_copy(measurements: Sequence[Measurement]) -> list[float]:
    """Each measurement's GB/s as a percentage of the copy's on the same case (NaN without one)."""
    copy = {_case_key(m): m.gbps for m in measurements if m.variant == "copy" and m.available}
    return [100.0 * m.gbps / copy[_case_key(m)] if _case_key(m) in copy else float("nan") for m in measurements]


def faster_than_copy(measurements: Sequence[Measurement]) -> list[Measurement]:
    """The kernels, the copy aside, whose GB/s beat the copy's on the same case.

    Compared GB/s against GB/s: through :func:`percent_of_copy` the copy
    itself can come out above 100 (100 · g / g rounds to 100.00000000000001
    for some g).
    """
    copy = {_case_key(m): m.gbps for m in measurements if m.variant == "copy" and m.available}
    return [
        m
        for m in measurements
        if m.variant != "copy" and m.available and _case_key(m) in copy and m.gbps > copy[_case_key(m)]
    ]


COLUMNS = (
    "variant",
    "label",
    "norm",
    "dtype",
    "batch",
    "features",
    "device",
    "threads",
    "median_us",
    "gbps",
    "pct_of_copy",
    "max_error",
    "rel_error",
    "note",
)


def table(measurements: Sequence[Measurement]) -> list[dict]:
    """One plain dict per measurement, keyed by :data:`COLUMNS` in order (for a DataFrame or a CSV): the
    measurement's fields, its median in µs and its % of the copy."""
    out = []
    for m, pct in zip(measurements, percent_of_copy(measurements), strict=True):
        derived = {"median_us": m.seconds * 1e6, "pct_of_copy": pct}
        out.append({key: derived[key] if key in derived else getattr(m, key) for key in COLUMNS})
    return out


def to_csv(measurements: Sequence[Measurement]) -> str:
    """The :func:`table` as CSV text, with a header row."""
    lines = [",".join(COLUMNS)]
    for row in table(measurements):
        cells = []
        for key in COLUMNS:
            value = row[key]
            text = f"{value:.6g}" if isinstance(value, float) else str(value)
            cells.append('"' + text.replace('"', '""') + '"' if ("," in text or '"' in text) else text)
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"
