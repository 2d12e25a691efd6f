"""Figure builders for the main explorer: pure functions that return plotly figures.

Each ``fig_*`` takes tensors or numbers and returns a ``go.Figure``; nothing
here renders. Arrays go to plotly as float32 numpy arrays, which plotly
serialises as compact binary, so a figure stays small on the wire.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor

from lnviz import palette
from lnviz.explorer import Exploration

PICKER = "cell picker"  # the name of fig_grid's clickable trace

FONT = dict(family="Inter, Source Sans Pro, sans-serif", size=13)


def to_numpy(t: Tensor) -> np.ndarray:
    """A float32 numpy copy of ``t`` (on the CPU), for plotly."""
    return t.detach().to("cpu").float().numpy()


def _axis_index(s: slice) -> np.ndarray:
    return np.arange(s.start, s.stop)


def _highlight(fig: go.Figure, rows: slice, cols: slice, cell: tuple[int, int], row: int, col: int, which: str) -> None:
    """Outline the chosen row (LN's statistics) and/or column (BN's) on subplot (row, col)."""
    i, j = cell
    if "row" in which and rows.start <= i < rows.stop:
        fig.add_shape(
            type="rect",
            x0=cols.start - 0.5,
            x1=cols.stop - 0.5,
            y0=i - 0.5,
            y1=i + 0.5,
            line=dict(color=palette.BLUE, width=3),
            name="LN row",
            row=row,
            col=col,
        )
    if "col" in which and cols.start <= j < cols.stop:
        fig.add_shape(
            type="rect",
            x0=j - 0.5,
            x1=j + 0.5,
            y0=rows.start - 0.5,
            y1=rows.stop - 0.5,
            line=dict(color=palette.VERMILLION, width=3, dash="dot"),
            name="BN column",
            row=row,
            col=col,
        )


def _heatmap(z: np.ndarray, rows: slice, cols: slice, name: str, coloraxis: str | None = None, **kw) -> go.Heatmap:
    return go.Heatmap(
        z=z,
        x=_axis_index(cols),
        y=_axis_index(rows),
        name=name,
        coloraxis=coloraxis,
        **({"hovertemplate": "sample %{y}, feature %{x}<br>" + name + " = %{z:.4g}<extra></extra>"} | kw),
    )


def fig_grid(result: Exploration, rows: slice, cols: slice, cell: tuple[int, int]) -> go.Figure:
    """The input x as a heatmap, with LN's per-row and BN's per-column μ and σ beside it.

    Right of the grid: one μ and one σ per sample (LN's statistics, over the
    row's H features). Under it: one μ and one σ per feature (BN's, over the
    column's B samples). The chosen cell's row and column are outlined. Only
    the window ``rows`` × ``cols`` is drawn; the statistics are over the full grid.
    """
    x = to_numpy(result.x[rows, cols])
    fig = make_subplots(
        rows=2,
        cols=2,
        column_widths=[0.8, 0.2],
        row_heights=[0.78, 0.22],
        shared_xaxes=True,
        shared_yaxes=True,
        horizontal_spacing=0.02,
        vertical_spacing=0.03,
    )
    lim = float(np.nanmax(np.abs(x))) if np.isfinite(x).any() else 1.0
    fig.add_trace(
        _heatmap(
            x,
            rows,
            cols,
            "x",
            colorscale=palette.DIVERGING,
            zmid=0,
            zmin=-lim,
            zmax=lim,
            colorbar=dict(title="x", x=1.02, len=0.75, y=0.62),
            hoverinfo="skip",
            hovertemplate=None,
        ),
        row=1,
        col=1,
    )
    # Heatmaps can't be selected by a click in plotly; an invisible marker on every
    # cell centre can, and carries the hover text instead.
    ii, jj = np.meshgrid(_axis_index(rows), _axis_index(cols), indexing="ij")
    fig.add_trace(
        go.Scatter(
            x=jj.ravel(),
            y=ii.ravel(),
            customdata=x.ravel(),
            mode="markers",
            marker=dict(size=8, opacity=0),
            name=PICKER,
            showlegend=False,
            hovertemplate="sample %{y}, feature %{x}<br>x = %{customdata:.4g}<extra>click to choose</extra>",
        ),
        row=1,
        col=1,
    )
    r_idx, c_idx = _axis_index(rows), _axis_index(cols)
    ln_mu = to_numpy(result.ln.mean[rows, 0])
    ln_sd = to_numpy(result.ln.std[rows, 0])
    fig.add_trace(
        go.Scatter(
            x=ln_mu,
            y=r_idx,
            mode="markers+lines",
            name="LN μ (per sample)",
            line=dict(color=palette.BLUE),
            marker=dict(size=5),
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter(
            x=ln_sd,
            y=r_idx,
            mode="markers+lines",
            name="LN σ (per sample)",
            line=dict(color=palette.BLUE, dash="dot"),
            marker=dict(size=5, symbol="diamond"),
        ),
        row=1,
        col=2,
    )
    if result.bn is not None:
        bn_mu = to_numpy(result.bn.mean[0, cols])
        bn_sd = to_numpy(result.bn.std[0, cols])
        fig.add_trace(
            go.Scatter(
                x=c_idx,
                y=bn_mu,
                mode="markers+lines",
                name="BN μ (per feature)",
                line=dict(color=palette.VERMILLION),
                marker=dict(size=5),
            ),
            row=2,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=c_idx,
                y=bn_sd,
                mode="markers+lines",
                name="BN σ (per feature)",
                line=dict(color=palette.VERMILLION, dash="dot"),
                marker=dict(size=5, symbol="diamond"),
            ),
            row=2,
            col=1,
        )
    _highlight(fig, rows, cols, cell, 1, 1, "row col")
    fig.update_yaxes(autorange="reversed", row=1, col=1, title_text="sample i (row)")
    fig.update_xaxes(title_text="feature j (column)", row=2, col=1)
    fig.update_xaxes(title_text="LN stats", row=1, col=2)
    fig.update_yaxes(title_text="BN stats", row=2, col=1)
    fig.update_layout(
        height=620,
        margin=dict(l=10, r=10, t=30, b=10),
        font=FONT,
        clickmode="event+select",
        legend=dict(orientation="h", y=1.06, x=0),
        title=None,
    )
    return fig


def fig_outputs(result: Exploration, rows: slice, cols: slice, cell: tuple[int, int], stage: str = "y") -> go.Figure:
    """BN's and LN's output side by side, on one shared diverging colour scale.

    ``stage`` is "y" (after γ and β) or "x_hat" (before). Under BN each column
    has mean 0 and variance 1 (x̂); under LN each row does. The chosen cell's
    column is outlined on BN, its row on LN.
    """
    titles = ("BatchNorm: each column normalized", "LayerNorm: each row normalized")
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.04)
    arrays = []
    for norm in (result.bn, result.ln):
        arrays.append(None if norm is None else to_numpy(getattr(norm, stage)[rows, cols]))
    finite = [a[np.isfinite(a)] for a in arrays if a is not None]
    lim = max((float(np.abs(a).max()) for a in finite if a.size), default=1.0) or 1.0
    label = "y" if stage == "y" else "x̂"
    for k, (norm_name, z) in enumerate(zip(("BN", "LN"), arrays, strict=True), start=1):
        if z is None:
            fig.add_annotation(
                text="No BatchNorm output for B = 1",
                showarrow=False,
                row=1,
                col=k,
                x=0.5,
                y=0.5,
                xref="x domain",
                yref="y domain",
                font=dict(size=16),
            )
            continue
        fig.add_trace(_heatmap(z, rows, cols, f"{norm_name} {label}", coloraxis="coloraxis"), row=1, col=k)
        _highlight(fig, rows, cols, cell, 1, k, "col" if norm_name == "BN" else "row")
    fig.update_yaxes(autorange="reversed", title_text="sample i", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_xaxes(title_text="feature j")
    fig.update_layout(
        coloraxis=dict(colorscale=palette.DIVERGING, cmid=0, cmin=-lim, cmax=lim, colorbar=dict(title=label)),
        height=460,
        margin=dict(l=10, r=10, t=40, b=10),
        font=FONT,
    )
    return fig


def fig_distributions(hists: dict[str, tuple[Tensor, Tensor]]) -> go.Figure:
    """Histograms of every value of x and of each norm's output, overlaid.

    ``hists`` maps a name ("input", "BN", "LN") to (counts, bin centres), as
    :func:`lnviz.explorer.histogram` returns them.
    """
    fig = go.Figure()
    for name, (counts, centres) in hists.items():
        fig.add_trace(
            go.Bar(
                x=to_numpy(centres),
                y=to_numpy(counts),
                name=name,
                opacity=0.55,
                marker_color=palette.NORM_COLORS.get(name, palette.GREY),
                hovertemplate=name + ": %{y:.0f} values near %{x:.3g}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="overlay",
        bargap=0,
        height=300,
        margin=dict(l=10, r=10, t=30, b=10),
        font=FONT,
        xaxis_title="value",
        yaxis_title="count",
        legend=dict(orientation="h", y=1.12, x=0),
    )
    return fig
