"""Figure builders for the main explorer: pure functions that return plotly figures.

Each ``fig_*`` takes tensors or numbers and returns a ``go.Figure``, built with
the figure kit (:mod:`lnviz.plot`); nothing here renders.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from torch import Tensor

from lnviz import plot, theme
from lnviz.explorer import Exploration

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
    """BN's and LN's output side by side, on one shared diverging colour scale.

    ``stage`` is "y" (after γ and β) or "x_hat" (before). Under BN each column
    has mean 0 and variance σ²/(σ² + ε) (x̂); under LN each row does. The chosen
    cell's column is outlined on BN, its row on LN.
    """
    arrays = [
        None if norm is None else plot.to_numpy(getattr(norm, stage)[rows, cols]) for norm in (result.bn, result.ln)
    ]
    finite = [a[np.isfinite(a)] for a in arrays if a is not None]
    lim = max((float(np.abs(a).max()) for a in finite if a.size), default=1.0) or 1.0
    label = "y" if stage == "y" else "x̂"
    has_bn = result.bn is not None
    ln_domain = [0.52, 1] if has_bn else [0.6, 1]  # alone, LN's half needs room for its own row labels
    traces, shapes = [], []
    annotations = [
        plot.title("BatchNorm", 0.24, color=BN),
        plot.title("LayerNorm", sum(ln_domain) / 2, color=LN),
    ]
    r_idx, c_idx = plot.index(rows), plot.index(cols)
    for k, (norm_name, z) in enumerate(zip(("BN", "LN"), arrays, strict=True), start=1):
        axes = plot.axis_names(k)
        if z is None:  # in BN's empty half, whose axes are hidden below
            annotations.append(
                # short lines: the half is about 170 px wide on a phone
                plot.note(
                    "BatchNorm refused<br>at B = 1: its output<br>would be β (ε > 0)",
                    0.24,
                    0.5,
                    font=dict(size=theme.TITLE_SIZE),
                )
            )
            continue
        traces.append(plot.heatmap(z, c_idx, r_idx, f"{norm_name} {label}", axes, coloraxis="coloraxis"))
        shapes += _outline(rows, cols, cell, axes, "col" if norm_name == "BN" else "row")
    count = rows.stop - rows.start
    layout = dict(
        xaxis=dict(domain=[0, 0.48], anchor="y", title=dict(text="feature j"), visible=has_bn),
        xaxis2=dict(domain=ln_domain, anchor="y2", title=dict(text="feature j")),
        yaxis=plot.samples_axis(count, anchor="x", title=dict(text="sample i"), visible=has_bn),
        # LN's half shares BN's rows; alone (B = 1) it labels its own.
        yaxis2=plot.samples_axis(count, anchor="x2", matches="y", showticklabels=False)
        if has_bn
        else plot.samples_axis(count, anchor="x2", title=dict(text="sample i")),
        coloraxis=dict(colorscale=theme.DIVERGING, cmid=0, cmin=-lim, cmax=lim, colorbar=dict(title=dict(text=label))),
        annotations=annotations,
        shapes=shapes,
    )
    return plot.figure(traces, layout, margin=dict(l=70, r=110, t=40, b=55), height=460)


PANELS = {"input": "Input x", "BN": "BatchNorm y", "LN": "LayerNorm y"}  # fig_distributions' panel titles
BAR_EDGE = dict(color="white", width=0.5)  # touching bars stay countable, in one opaque colour


def fig_distributions(hists: dict[str, tuple[Tensor, Tensor]]) -> go.Figure:
    """Histograms of x and of each norm's output as small multiples, side by side.

    ``hists`` maps a name ("input", "BN", "LN") to (counts, bin centres), as
    :func:`lnviz.explorer.histogram` returns them, each binned over its own
    range: each panel has its own value axis. They share the count axis: each
    holds the same values in the same number of bins. Each is opaque, in its
    norm's colour (the input grey), so no two blend.
    """
    traces, layout, annotations = [], {}, []
    few = max(float(counts.max()) for counts, _ in hists.values()) <= 6  # whole-number ticks, not 0.5, 1, 1.5
    for k, ((name, (counts, centres)), domain) in enumerate(
        zip(hists.items(), plot.columns(len(hists), gap=0.04), strict=True), start=1
    ):
        axes = plot.axis_names(k)
        color = theme.ROLES.get(name, theme.GREY)
        traces.append(
            plot.histogram(counts, centres, name, color, axes) | dict(marker=dict(color=color, line=BAR_EDGE))
        )
        # Few, level ticks: on a phone each panel is about 100 px wide.
        x_axis = dict(domain=domain, anchor=axes[1], nticks=3, tickangle=0, title=dict(text="value"))
        layout[plot.layout_key(axes[0])] = x_axis
        # Same number of values and of bins in every panel, so the counts compare: one count axis, labelled once.
        shared = dict(title=dict(text="count")) if k == 1 else dict(matches="y", showticklabels=False)
        layout[plot.layout_key(axes[1])] = dict(anchor=axes[0]) | shared | (dict(dtick=1) if few else {})
        # Titles at the body size: "BatchNorm y" must fit over its panel on a phone.
        annotations.append(plot.title(PANELS.get(name, name), sum(domain) / 2, color=color, size=theme.FONT_SIZE))
    layout |= dict(bargap=0, showlegend=False, annotations=annotations)
    return plot.figure(traces, layout, margin=dict(l=50, r=15, t=32, b=50), height=300)
