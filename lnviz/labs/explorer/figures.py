"""Figure builders for the main explorer: pure functions that return plotly figures.

Each ``fig_*`` takes tensors or numbers and returns a ``go.Figure``, built with
the figure kit (:mod:`lnviz.figures.plot`); nothing here renders.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from lnviz.figures import plot, theme
from lnviz.labs.explorer import Distributions, Exploration

PICKER = "cell picker"  # the name of fig_grid's clickable trace
LN, BN = theme.ROLES["LN"], theme.ROLES["BN"]


def _outline(rows: slice, cols: slice, cell: tuple[int, int], axes: plot.Axes, which: str) -> list[dict]:
    """Outlines of the chosen row (LN's statistics, solid) and/or column (BN's, dotted) on ``axes``."""
    i, j = cell
    shapes = []
    if "row" in which and rows.start <= i < rows.stop:
        shapes += plot.outline(cols.start - 0.5, cols.stop - 0.5, i - 0.5, i + 0.5, axes, "LN row", color=LN)
    if "col" in which and cols.start <= j < cols.stop:
        shapes += plot.outline(
            j - 0.5, j + 0.5, rows.start - 0.5, rows.stop - 0.5, axes, "BN column", color=BN, dash="dot"
        )
    return shapes


def _stats_line(x: np.ndarray, y: np.ndarray, name: str, color: str, sigma: bool, axes: plot.Axes) -> dict:
    """One of the μ (solid, dots) or σ (dotted, diamonds) lines beside the grid."""
    marker = dict(size=5, symbol="diamond") if sigma else dict(size=5)
    return plot.line(x, y, name, color, axes, dash="dot" if sigma else None, markers=marker)


def _picker(x: np.ndarray, rows: slice, cols: slice) -> dict[str, Any]:
    """An invisible marker on every cell centre: plotly can't select heatmap cells by a click, markers it can."""
    ii, jj = np.meshgrid(plot.index(rows), plot.index(cols), indexing="ij")
    return plot.points(jj.ravel(), ii.ravel(), PICKER, theme.INK, size=8, opacity=0) | dict(
        customdata=x.ravel(),
        showlegend=False,
        hovertemplate="sample %{y}, feature %{x}<br>x = %{customdata:.4g}<extra>click to choose</extra>",
    )


def fig_grid(result: Exploration, rows: slice, cols: slice, cell: tuple[int, int]) -> go.Figure:
    """The input x as a heatmap, with LN's per-row and BN's per-column μ and σ beside it.

    Right of the grid: one μ and one σ per sample (LN's statistics, over the
    row's H features), sharing the grid's y axis. Under it: one μ and one σ per
    feature (BN's, over the column's B samples), sharing the grid's x axis. The
    chosen cell's row and column are outlined. Only the window ``rows`` ×
    ``cols`` is drawn; the statistics are over the full grid.
    """
    x = plot.to_numpy(result.x[rows, cols])
    lim = float(np.nanmax(np.abs(x))) if np.isfinite(x).any() else 1.0
    r_idx, c_idx = plot.index(rows), plot.index(cols)
    scale = dict(colorscale=theme.DIVERGING, zmid=0, zmin=-lim, zmax=lim)
    traces = [
        plot.heatmap(x, c_idx, r_idx, "x", **scale, colorbar=dict(title=dict(text="x"), x=1.02, len=0.75, y=0.62))
        | dict(hoverinfo="skip", hovertemplate=None),
        _picker(x, rows, cols),
    ]
    ln = ("x2", "y")  # right of the grid, on its y axis
    traces.append(_stats_line(plot.to_numpy(result.ln.mean[rows, 0]), r_idx, "LN μ", LN, False, ln))
    traces.append(_stats_line(plot.to_numpy(result.ln.std[rows, 0]), r_idx, "LN σ", LN, True, ln))
    has_bn = result.bn is not None
    if has_bn:
        bn = ("x", "y2")  # under the grid, on its x axis
        mu, sd = plot.to_numpy(result.bn.mean[0, cols]), plot.to_numpy(result.bn.std[0, cols])
        traces.append(_stats_line(c_idx, mu, "BN μ", BN, False, bn))
        traces.append(_stats_line(c_idx, sd, "BN σ", BN, True, bn))
    layout = dict(
        # The grid spans x [0, 0.784] and y [0.243, 1]; LN's panel sits right of it, BN's under it.
        xaxis=dict(domain=[0, 0.784], anchor="y2" if has_bn else "y", title=dict(text="feature j (column)")),
        yaxis=plot.samples_axis(
            rows.stop - rows.start, domain=[0.243 if has_bn else 0, 1], anchor="x", title=dict(text="sample i (row)")
        ),
        xaxis2=dict(domain=[0.804, 1], anchor="y", title=dict(text="LN stats")),
        shapes=_outline(rows, cols, cell, ("x", "y"), "row col"),
        clickmode="event+select",
        legend=plot.legend_above(),
    )
    if has_bn:
        layout["yaxis2"] = dict(domain=[0, 0.213], anchor="x", title=dict(text="BN stats"))
    return plot.figure(traces, layout, margin=dict(l=70, r=110, t=40, b=55), height=620)


def fig_outputs(result: Exploration, rows: slice, cols: slice, cell: tuple[int, int], stage: str = "y") -> go.Figure:
    """LN's and BN's output side by side, LN left and BN right, on one shared diverging colour scale.

    LN first, as on the stage (LN's output right of x, BN's below it). ``stage``
    is "y" (after γ and β) or "x_hat" (before). Under LN each row has mean 0 and
    variance σ²/(σ² + ε) (x̂); under BN each column does. The chosen cell's row
    is outlined on LN, its column on BN.
    """
    arrays = [
        None if norm is None else plot.to_numpy(getattr(norm, stage)[rows, cols]) for norm in (result.ln, result.bn)
    ]
    finite = [a[np.isfinite(a)] for a in arrays if a is not None]
    lim = max((float(np.abs(a).max()) for a in finite if a.size), default=1.0) or 1.0
    label = "y" if stage == "y" else "x̂"
    has_bn = result.bn is not None
    halves = ([0, 0.48], [0.52, 1])  # LN's, BN's
    traces, shapes = [], []
    annotations = [plot.title("LayerNorm", 0.24, color=LN), plot.title("BatchNorm", 0.76, color=BN)]
    r_idx, c_idx = plot.index(rows), plot.index(cols)
    for k, (norm_name, z) in enumerate(zip(("LN", "BN"), arrays, strict=True), start=1):
        axes = plot.axis_names(k)
        if z is None:  # in BN's empty half, whose axes are hidden below
            annotations.append(
                # short lines: the half is about 170 px wide on a phone
                plot.note(
                    "BatchNorm refused<br>at B = 1: its output<br>would be β (ε > 0)",
                    sum(halves[1]) / 2,
                    0.5,
                    font=dict(size=theme.TITLE_SIZE),
                )
            )
            continue
        traces.append(plot.heatmap(z, c_idx, r_idx, f"{norm_name} {label}", axes, coloraxis="coloraxis"))
        shapes += _outline(rows, cols, cell, axes, "row" if norm_name == "LN" else "col")
    count = rows.stop - rows.start
    layout = dict(
        xaxis=dict(domain=halves[0], anchor="y", title=dict(text="feature j")),
        xaxis2=dict(domain=halves[1], anchor="y2", title=dict(text="feature j"), visible=has_bn),
        yaxis=plot.samples_axis(count, anchor="x", title=dict(text="sample i")),
        # BN's half shares LN's rows, labelled once on the left.
        yaxis2=plot.samples_axis(count, anchor="x2", matches="y", showticklabels=False, visible=has_bn),
        coloraxis=dict(colorscale=theme.DIVERGING, cmid=0, cmin=-lim, cmax=lim, colorbar=dict(title=dict(text=label))),
        annotations=annotations,
        shapes=shapes,
    )
    return plot.figure(traces, layout, margin=dict(l=70, r=110, t=40, b=55), height=460)


BAR_EDGE = dict(color="white", width=0.5)  # touching bars stay countable, in one opaque colour


def fig_distributions(dists: Distributions) -> go.Figure:
    """The chosen cell's row against its column, before and after each norm, as 2 × 2 small multiples.

    Left, LN's unit: the H values of row i, as x (top) and as LN's y
    (bottom). Right, BN's: the B values of column j, as x and as BN's y. Each
    panel is a histogram from :func:`lnviz.labs.explorer.distributions`, opaque, in
    its norm's colour; a dashed line marks the μ each norm subtracts. The two
    panels of a stage share their value axis, so a row's spread and a
    column's compare at a glance; the count axes are each panel's own (a row
    has H values, a column B). Without BN (B = 1) its column says why.
    """
    traces, layout, annotations = [], {}, []
    halves = plot.columns(2, gap=0.1)  # LN's, BN's
    heights = {"x": [0.6, 1], "y": [0, 0.38]}  # room between them for the top panels' value axis
    for h, (norm, half) in enumerate(zip(("LN", "BN"), halves, strict=True)):
        color, u = theme.ROLES[norm], dists.units.get(norm)
        title = f"<b>{'LayerNorm' if norm == 'LN' else 'BatchNorm'}</b> · {u.name if u else 'a column'}"
        annotations.append(plot.title(title, sum(half) / 2, color=color, size=theme.FONT_SIZE))
        if u is None:
            note = "PyTorch refuses<br>B = 1: one value<br>per column, σ² = 0,<br>so y = β (ε > 0)"  # ~170 px wide on a phone
            annotations.append(plot.note(note, half[1], 0.5, font=dict(color=color), xanchor="right", align="right"))
        for v, stage in enumerate(("x", "y")):
            axes = plot.axis_names(1 + h + 2 * v)  # LN's x, BN's x, LN's y, BN's y
            value_axis = dict(domain=half, anchor=axes[1], nticks=4, tickangle=0, visible=u is not None)
            value_axis["title"] = dict(text="x, before" if stage == "x" else f"{norm}'s y, after")
            if h == 1:  # the row's and the column's values on one scale
                value_axis["matches"] = plot.axis_names(2 * v + 1)[0]
            count_axis = dict(domain=heights[stage], anchor=axes[0], visible=u is not None, rangemode="tozero")
            if h == 0:
                count_axis["title"] = dict(text="count")
            layout[plot.layout_key(axes[0])], layout[plot.layout_key(axes[1])] = value_axis, count_axis
            if u is None:
                continue
            counts, centres = dists.hists[(norm, stage)]
            name = f"{u.name}: x" if stage == "x" else f"{u.name}: {norm} y"
            traces.append(
                plot.histogram(counts, centres, name, color, axes) | dict(marker=dict(color=color, line=BAR_EDGE))
            )
            top = float(counts.max())
            if top <= 6:  # whole-number ticks, not 0.5, 1, 1.5
                count_axis["dtick"] = 1
            if stage == "x":  # the μ this norm subtracts
                mu = plot.line([u.mean, u.mean], [0, top or 1.0], f"μ of {u.name}", theme.INK, axes, dash="dash")
                traces.append(mu | dict(hovertemplate=f"μ of {u.name} = {u.mean:.4g}<extra></extra>"))
    layout |= dict(bargap=0, showlegend=False, annotations=annotations)
    return plot.figure(traces, layout, margin=dict(l=50, r=15, t=32, b=50), height=440)
