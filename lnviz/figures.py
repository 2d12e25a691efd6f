"""Figure builders for the main explorer: pure functions that return plotly figures.

Each ``fig_*`` takes tensors or numbers and returns a ``go.Figure``; nothing
here renders. Arrays go to plotly as float32 numpy arrays, which plotly
serialises as compact binary, so a figure stays small on the wire.

The figures are written as plain dicts and wrapped by :func:`figure` without
plotly's per-property validation: building them through ``make_subplots`` and
``update_*`` cost 20 to 150 ms each, on every slider move, which was most of a
rerun. ``tests/test_figures.py`` validates every builder's output instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from torch import Tensor

from lnviz import palette
from lnviz.explorer import Exploration

PICKER = "cell picker"  # the name of fig_grid's clickable trace

FONT = dict(family="Inter, Source Sans Pro, sans-serif", size=13)
TITLE_FONT = dict(size=16)  # subplot titles, as make_subplots draws them


def figure(traces: list[dict[str, Any]], layout: dict[str, Any], margin: dict[str, int]) -> go.Figure:
    """A figure from plain trace and layout dicts, without plotly's validation (see the module's note).

    The margins are fixed (``margin``: l, r, t, b in pixels, room for the axis
    titles, tick labels, colour bar and legend): plotly.js otherwise measures
    every label and redraws to fit them, the largest part of a redraw after a
    slider move. Streamlit's theme turns that on for every axis, so each axis
    here turns it off.
    """
    layout = {"font": FONT} | layout | {"margin": margin | {"autoexpand": False}}
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            axis.setdefault("automargin", False)
    return go.Figure({"data": traces, "layout": layout}, _validate=False)


def subplot_title(text: str, x: float, y: float = 1.0) -> dict[str, Any]:
    """A title centred at paper coordinate ``x`` above a subplot, as ``make_subplots`` places it."""
    return dict(
        text=text,
        x=x,
        y=y,
        xref="paper",
        yref="paper",
        xanchor="center",
        yanchor="bottom",
        showarrow=False,
        font=TITLE_FONT,
    )


def to_numpy(t: Tensor) -> np.ndarray:
    """A float32 numpy copy of ``t`` (on the CPU), for plotly."""
    return t.detach().to("cpu").float().numpy()


def _axis_index(s: slice) -> np.ndarray:
    return np.arange(s.start, s.stop)


def _outline(rows: slice, cols: slice, cell: tuple[int, int], axes: tuple[str, str], which: str) -> list[dict]:
    """Outlines of the chosen row (LN's statistics) and/or column (BN's), on the subplot ``axes`` (x, y)."""
    i, j = cell
    xref, yref = axes
    shapes = []
    if "row" in which and rows.start <= i < rows.stop:
        shapes.append(
            dict(
                type="rect",
                x0=cols.start - 0.5,
                x1=cols.stop - 0.5,
                y0=i - 0.5,
                y1=i + 0.5,
                xref=xref,
                yref=yref,
                line=dict(color=palette.BLUE, width=3),
                name="LN row",
            )
        )
    if "col" in which and cols.start <= j < cols.stop:
        shapes.append(
            dict(
                type="rect",
                x0=j - 0.5,
                x1=j + 0.5,
                y0=rows.start - 0.5,
                y1=rows.stop - 0.5,
                xref=xref,
                yref=yref,
                line=dict(color=palette.VERMILLION, width=3, dash="dot"),
                name="BN column",
            )
        )
    return shapes


def _rows_axis(rows: slice) -> dict[str, Any]:
    """A samples axis: top to bottom like a matrix, with whole-number ticks when there are few rows."""
    return dict(autorange="reversed") | (dict(dtick=1) if rows.stop - rows.start < 8 else {})


def _heatmap(z: np.ndarray, rows: slice, cols: slice, name: str, **kw) -> dict[str, Any]:
    return (
        dict(
            type="heatmap",
            z=z,
            x=_axis_index(cols),
            y=_axis_index(rows),
            name=name,
            hovertemplate="sample %{y}, feature %{x}<br>" + name + " = %{z:.4g}<extra></extra>",
        )
        | kw
    )


def _stats_line(x: np.ndarray, y: np.ndarray, name: str, color: str, sigma: bool, axes: tuple[str, str]) -> dict:
    """One of the μ (solid, dots) or σ (dotted, diamonds) lines beside the grid."""
    return dict(
        type="scatter",
        x=x,
        y=y,
        mode="markers+lines",
        name=name,
        line=dict(color=color, dash="dot") if sigma else dict(color=color),
        marker=dict(size=5, symbol="diamond") if sigma else dict(size=5),
        xaxis=axes[0],
        yaxis=axes[1],
    )


def fig_grid(result: Exploration, rows: slice, cols: slice, cell: tuple[int, int]) -> go.Figure:
    """The input x as a heatmap, with LN's per-row and BN's per-column μ and σ beside it.

    Right of the grid: one μ and one σ per sample (LN's statistics, over the
    row's H features), sharing the grid's y axis. Under it: one μ and one σ per
    feature (BN's, over the column's B samples), sharing the grid's x axis. The
    chosen cell's row and column are outlined. Only the window ``rows`` ×
    ``cols`` is drawn; the statistics are over the full grid.
    """
    x = to_numpy(result.x[rows, cols])
    lim = float(np.nanmax(np.abs(x))) if np.isfinite(x).any() else 1.0
    r_idx, c_idx = _axis_index(rows), _axis_index(cols)
    traces = [
        _heatmap(
            x,
            rows,
            cols,
            "x",
            colorscale=palette.DIVERGING,
            zmid=0,
            zmin=-lim,
            zmax=lim,
            colorbar=dict(title=dict(text="x"), x=1.02, len=0.75, y=0.62),
            hoverinfo="skip",
            hovertemplate=None,
        ),
    ]
    # Heatmaps can't be selected by a click in plotly; an invisible marker on every
    # cell centre can, and carries the hover text instead.
    ii, jj = np.meshgrid(r_idx, c_idx, indexing="ij")
    traces.append(
        dict(
            type="scatter",
            x=jj.ravel(),
            y=ii.ravel(),
            customdata=x.ravel(),
            mode="markers",
            marker=dict(size=8, opacity=0),
            name=PICKER,
            showlegend=False,
            hovertemplate="sample %{y}, feature %{x}<br>x = %{customdata:.4g}<extra>click to choose</extra>",
        )
    )
    ln = ("x2", "y")  # right of the grid, on its y axis
    traces.append(_stats_line(to_numpy(result.ln.mean[rows, 0]), r_idx, "LN μ (per sample)", palette.BLUE, False, ln))
    traces.append(_stats_line(to_numpy(result.ln.std[rows, 0]), r_idx, "LN σ (per sample)", palette.BLUE, True, ln))
    if result.bn is not None:
        bn = ("x", "y2")  # under the grid, on its x axis
        mu, sd = to_numpy(result.bn.mean[0, cols]), to_numpy(result.bn.std[0, cols])
        traces.append(_stats_line(c_idx, mu, "BN μ (per feature)", palette.VERMILLION, False, bn))
        traces.append(_stats_line(c_idx, sd, "BN σ (per feature)", palette.VERMILLION, True, bn))
    has_bn = result.bn is not None
    layout = dict(
        # The grid spans x [0, 0.784] and y [0.243, 1]; LN's panel sits right of it, BN's under it.
        xaxis=dict(domain=[0, 0.784], anchor="y2" if has_bn else "y", title=dict(text="feature j (column)")),
        yaxis=dict(domain=[0.243 if has_bn else 0, 1], anchor="x", title=dict(text="sample i (row)"))
        | _rows_axis(rows),
        xaxis2=dict(domain=[0.804, 1], anchor="y", title=dict(text="LN stats")),
        shapes=_outline(rows, cols, cell, ("x", "y"), "row col"),
        height=620,
        clickmode="event+select",
        legend=dict(orientation="h", y=1.06, x=0),
    )
    if has_bn:
        layout["yaxis2"] = dict(domain=[0, 0.213], anchor="x", title=dict(text="BN stats"))
    return figure(traces, layout, margin=dict(l=70, r=110, t=40, b=55))


def fig_outputs(result: Exploration, rows: slice, cols: slice, cell: tuple[int, int], stage: str = "y") -> go.Figure:
    """BN's and LN's output side by side, on one shared diverging colour scale.

    ``stage`` is "y" (after γ and β) or "x_hat" (before). Under BN each column
    has mean 0 and variance 1 (x̂); under LN each row does. The chosen cell's
    column is outlined on BN, its row on LN.
    """
    arrays = [None if norm is None else to_numpy(getattr(norm, stage)[rows, cols]) for norm in (result.bn, result.ln)]
    finite = [a[np.isfinite(a)] for a in arrays if a is not None]
    lim = max((float(np.abs(a).max()) for a in finite if a.size), default=1.0) or 1.0
    label = "y" if stage == "y" else "x̂"
    has_bn = result.bn is not None
    ln_domain = [0.52, 1] if has_bn else [0.6, 1]  # alone, LN's half needs room for its own row labels
    traces, shapes = [], []
    annotations = [
        subplot_title("BatchNorm: each column normalized", 0.24),
        subplot_title("LayerNorm: each row normalized", sum(ln_domain) / 2),
    ]
    for k, (norm_name, z) in enumerate(zip(("BN", "LN"), arrays, strict=True), start=1):
        axes = ("x" if k == 1 else f"x{k}", "y" if k == 1 else f"y{k}")
        if z is None:  # in BN's empty half, whose axes are hidden below
            annotations.append(
                dict(
                    text="No BatchNorm output<br>for B = 1", showarrow=False, x=0.24, y=0.5, xref="paper", yref="paper"
                )
                | dict(font=TITLE_FONT)
            )
            continue
        traces.append(
            _heatmap(z, rows, cols, f"{norm_name} {label}", coloraxis="coloraxis", xaxis=axes[0], yaxis=axes[1])
        )
        shapes += _outline(rows, cols, cell, axes, "col" if norm_name == "BN" else "row")
    layout = dict(
        xaxis=dict(domain=[0, 0.48], anchor="y", title=dict(text="feature j"), visible=has_bn),
        xaxis2=dict(domain=ln_domain, anchor="y2", title=dict(text="feature j")),
        yaxis=dict(anchor="x", title=dict(text="sample i"), visible=has_bn) | _rows_axis(rows),
        # LN's half shares BN's rows; alone (B = 1) it labels its own.
        yaxis2=dict(anchor="x2", matches="y", showticklabels=False) | _rows_axis(rows)
        if has_bn
        else dict(anchor="x2", title=dict(text="sample i")) | _rows_axis(rows),
        coloraxis=dict(
            colorscale=palette.DIVERGING, cmid=0, cmin=-lim, cmax=lim, colorbar=dict(title=dict(text=label))
        ),
        annotations=annotations,
        shapes=shapes,
        height=460,
    )
    return figure(traces, layout, margin=dict(l=70, r=110, t=40, b=55))


def fig_distributions(hists: dict[str, tuple[Tensor, Tensor]]) -> go.Figure:
    """Histograms of every value of x and of each norm's output, overlaid.

    ``hists`` maps a name ("input", "BN", "LN") to (counts, bin centres), as
    :func:`lnviz.explorer.histogram` returns them.
    """
    traces = [
        dict(
            type="bar",
            x=to_numpy(centres),
            y=to_numpy(counts),
            name=name,
            opacity=0.55,
            marker=dict(color=palette.NORM_COLORS.get(name, palette.GREY)),
            hovertemplate=name + ": %{y:.0f} values near %{x:.3g}<extra></extra>",
        )
        for name, (counts, centres) in hists.items()
    ]
    layout = dict(
        barmode="overlay",
        bargap=0,
        height=300,
        xaxis=dict(title=dict(text="value")),
        yaxis=dict(title=dict(text="count")),
        legend=dict(orientation="h", y=1.12, x=0),
    )
    return figure(traces, layout, margin=dict(l=70, r=20, t=40, b=55))
