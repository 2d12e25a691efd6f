"""The explorer page's words: its guide, and the sentences built from what it shows.

The grid is x (B, H), samples by features; the windows are slices of its rows and columns.
"""

from __future__ import annotations

from lnviz.labs.explorer import Degenerate, listed

# One line under the stage, where a first-time visitor looks next; GUIDE says the rest. {ln}, {bn}: the norms'
# prose colours (lnviz.figures.theme.PROSE).
FIRST_LINE = (
    "Rows are samples, columns are features: :{ln}[**LayerNorm**] normalizes each row, :{bn}[**BatchNorm**] each "
    "column."
)

GUIDE = (
    "Each row of the grid **x** is one sample, each column one feature.\n\n"
    ":blue[**LayerNorm**] takes one mean μ and one standard deviation σ per **row**: each sample is normalized "
    "over its own H features. Its output sits right of x, its μ and σ between them (on a narrow screen, under "
    "x).\n\n"
    ":orange[**BatchNorm**] takes one μ and σ per **column**: each feature is normalized over the B samples of "
    "the batch, so in training mode every output depends on the whole batch. Its output sits under x (on a "
    "narrow screen, under LayerNorm's).\n\n"
    "Both then compute y = γ (x − μ) / √(σ² + ε) + β, with the biased variance, as PyTorch does. Drag γ, β or "
    "ε: the outputs follow in your browser, and torch recomputes them when you let go. Hover a cell for its "
    "numbers, click it to choose it for the details below, and press Play to watch the reduction.\n\n"
    "The details show one thing at a time, chosen above them: the chosen cell's formulas with torch's numbers, "
    "charts of each norm's μ and σ and of the outputs, the chosen row and column before and after, the grid as "
    "tables, "
    "or downloads."
)
CHARTS_INPUT = (
    "Right: LN's μ and σ, one per sample (row). Below: BN's μ and σ, one per feature (column). "
    "Click a cell to choose it: the solid outline is the row LN uses, the dotted one the column BN uses."
)
OWN_SCRIPT = "The script reproduces generated views; your own data is in the downloads above."


def stage_window(batch: int, features: int, rows: slice, cols: slice) -> str:
    """Under a stage that shows only a window of the grid: which samples and features it draws from (a narrow
    screen draws fewer of the window's columns, and x's title on the stage says which)."""
    return (
        f"The stage draws from samples {rows.start}–{rows.stop - 1} and features {cols.start}–{cols.stop - 1} of "
        f"the {batch} × {features} grid, around the chosen cell, as many as fit the screen with their numbers; "
        "μ and σ are over the whole grid."
    )


def details_window(what: str, batch: int, features: int, rows: slice, cols: slice) -> str:
    """Over heatmaps or tables (``what``) that show a window of a large grid."""
    return (
        f"The grid is {batch} × {features}; the {what} show the {rows.stop - rows.start} × {cols.stop - cols.start} "
        f"window of exact values around the chosen cell (samples {rows.start}–{rows.stop - 1}, features "
        f"{cols.start}–{cols.stop - 1}). Every μ and σ is over the full grid. Pick another cell to move the window."
    )


def zero_over_zero(bad: Degenerate) -> str:
    """Where ε = 0 meets σ = 0: LN's rows and BN's columns whose x̂ is 0/0."""
    where = []
    if bad.ln_rows:
        where.append(f"{listed('sample', bad.ln_rows)} (LN)")
    if bad.bn_cols:
        where.append(f"{listed('feature', bad.bn_cols)} (BN)")
    return (
        f"ε = 0 and σ = 0 for {' and '.join(where)}: every value there equals its mean, so "
        "x̂ = (x − μ)/√(σ² + ε) = 0/0, which is undefined (NaN). Those cells are left blank. "
        "This is what ε is for: any ε > 0 makes x̂ = 0 there, so y = β."
    )


def distributions(i: int, j: int, batch: int, features: int, has_bn: bool) -> tuple[str, str]:
    """The distributions view's prose and its chart's text alternative, for row ``i`` and column ``j``."""
    bn = (
        f"BatchNorm over column {j}, its {batch} samples (right)"
        if has_bn
        else f"BatchNorm would take them over column {j}, a single value (right)"
    )
    prose = (
        f"LayerNorm takes its μ and σ over row {i}, its {features} features (left); {bn}. Top: those "
        "values of x, with the μ each norm subtracts (dashed). Bottom: the same cells after the norm. The row and "
        "the column share each value axis."
    )
    column = f", and of column {j}'s before and after BatchNorm" if has_bn else ""
    return prose, f"Histograms of row {i}'s values before and after LayerNorm{column}."
