"""The transformer lab's figures: one LayerNorm's input with LN's statistics and output, BN's, γ and β, padding.

Rows are tokens (every token of every sentence, padding included), labelled
with the tokens' own text; columns are a window of the H features
(:func:`lnviz.labs.transformer.window`). Pure builders: each returns a
``go.Figure`` made with the figure kit.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import plotly.graph_objects as go
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.labs.transformer import Run, Site

ROW_PX = 18  # px per token row: the default sentence's 13 rows and the box fit a 1280 × 720 screen


def row_labels(result: Run) -> list[str]:
    """Each row's label, the token as text; in a batch prefixed by its sentence's number ("2: the").

    Plotly reads ``<b>``, ``<a href=…>`` and entities in every text: a token's ``&``, ``<`` and ``>`` are
    written as entities, so that it shows as typed, never as markup.
    """
    many = len(result.tokens) > 1
    return [
        (f"{s + 1}: " if many else "") + html.escape(token, quote=False)
        for s, tokens in enumerate(result.tokens)
        for token in tokens
    ]


def _rows(values: Tensor) -> np.ndarray:
    """(S, T, ...) as (S·T, ...) float32 for plotly: one row per token."""
    return plot.to_numpy(values.reshape(-1, *values.shape[2:]))


def saturation(z: np.ndarray) -> float:
    """Where the colour scale saturates: the 98th percentile of |z|, so that a few huge values (the lesson) do not
    wash every other cell out; the cells beyond it carry their number."""
    return float(np.quantile(np.abs(z), 0.98)) or float(np.abs(z).max()) or 1.0


def _short(value: float) -> str:
    """A cell's number in at most four characters where it can: whole from 10 up, one decimal below."""
    return (f"{value:.0f}" if abs(value) >= 10 else f"{value:.1f}").replace("-", "−")


def _grid(z: np.ndarray, cols: np.ndarray, name: str, axes: plot.Axes, labels: list[str]) -> dict:
    limit = saturation(z)
    # The saturated cells alone (about 2 in 100) carry a number, short enough for a 30 px cell: 223, −8.1.
    numbers = np.array([[_short(v) if abs(v) > limit else "" for v in row] for row in z.tolist()])
    return plot.heatmap(
        z,
        np.arange(len(cols)),
        np.arange(z.shape[0]),
        name,
        axes,
        colorscale=theme.DIVERGING,
        zmin=-limit,
        zmax=limit,
        showscale=False,
        xgap=1,
        ygap=1,
        text=numbers,
        texttemplate="%{text}",
        textfont=dict(size=theme.FONT_SIZE, color="white"),
        customdata=np.array([[f"{labels[r]}, feature {int(c)}" for c in cols] for r in range(z.shape[0])]),
        hovertemplate="%{customdata}<br>" + name + " = %{z:.4g}<extra></extra>",
    )


def _axes(layout: dict[str, Any], k: int, domain: list[float], rows: int, labels: list[str] | None, cols=None) -> None:
    x_key, y_key = (plot.layout_key(a) for a in plot.axis_names(k))
    x_axis: dict[str, Any] = dict(domain=domain, anchor=plot.axis_names(k)[1])
    if cols is not None:
        x_axis |= dict(tickvals=list(range(len(cols))), ticktext=[str(int(c)) for c in cols], tickangle=-90)
    layout[x_key] = x_axis
    # The range fixed, not autoranged: the μ markers would pad it by a band of empty rows above and below.
    y_axis = plot.samples_axis(rows, anchor=plot.axis_names(k)[0], range=[rows - 0.5, -0.5], autorange=False)
    if labels is not None:
        y_axis |= dict(tickvals=list(range(rows)), ticktext=labels)
    else:
        y_axis |= dict(showticklabels=False)
    if k > 1:
        y_axis["matches"] = "y"
    layout[y_key] = y_axis


def _height(rows: int, margins: int) -> int:
    """A figure's height: ``rows`` token rows of :data:`ROW_PX` and ``margins`` px (its own and its titles')."""
    return max(200, min(1400, ROW_PX * rows + margins))


def fig_ln(result: Run, site: Site, cols: Tensor, output: str) -> go.Figure:
    """x (tokens × the window's features) beside LN's σ and μ per token (over all H) and LN's output.

    ``output``: "y" (after the module's γ and β) or "x_hat" (before them).
    """
    labels = row_labels(result)
    rows = len(labels)
    x = _rows(site.x[..., cols])  # (S·T, C)
    out = _rows((site.y if output == "y" else site.x_hat)[..., cols])  # (S·T, C)
    std, mean = _rows(site.ln_std), _rows(site.ln_mean)  # (S·T,)
    ln = theme.ROLES["LN"]
    left, mid, right = [0.0, 0.42], [0.47, 0.6], [0.66, 1.0]
    out_name = "y" if output == "y" else "x̂"
    traces = [
        _grid(x, cols.numpy(), "x", ("x", "y"), labels),
        plot.bars(std, np.arange(rows), "σ per token", ln, ("x2", "y2"), orientation="h")
        | dict(hovertemplate="σ = %{x:.4g}<extra></extra>"),
        plot.points(mean, np.arange(rows), "μ per token", theme.INK, ("x2", "y2"), symbol="line-ns", size=12)
        | dict(marker=dict(color=theme.INK, symbol="line-ns-open", size=12, line=dict(width=2, color=theme.INK))),
        _grid(out, cols.numpy(), f"LN {out_name}", ("x3", "y3"), labels),
    ]
    layout: dict[str, Any] = dict(
        annotations=[
            plot.title("x", x=sum(left) / 2),
            plot.title("LN σ, μ", x=sum(mid) / 2, color=ln),
            plot.title(f"LN {out_name}", x=sum(right) / 2, color=ln),
        ],
        showlegend=False,
        plot_bgcolor="#f2f2f2",
    )
    _axes(layout, 1, left, rows, labels, cols)
    _axes(layout, 2, mid, rows, None)
    _axes(layout, 3, right, rows, None, cols)
    # Short margins, so that the grid fits the first screen: 30 px for the panel titles, 50 for the features'
    # indices (three digits, turned, start 19 px under the plot).
    return plot.figure(traces, layout, margin=dict(l=110, r=10, t=30, b=50), height=_height(rows, 80))


def fig_bn(result: Run, site: Site, cols: Tensor, output: str) -> go.Figure:
    """BN over the tokens, per feature of the window: its σ over real tokens and with padding, and its output."""
    labels = row_labels(result)
    rows = len(labels)
    bn = theme.ROLES["BN"]
    out = _rows((site.bn_y if output == "y" else site.bn_x_hat)[..., cols])  # (S·T, C)
    positions = np.arange(len(cols))
    traces = [
        plot.bars(positions, plot.to_numpy(site.bn_std[cols]), "σ, real tokens", bn, ("x", "y"))
        | dict(hovertemplate="feature %{customdata}: σ = %{y:.4g}<extra></extra>", customdata=cols.numpy()),
        _grid(out, cols.numpy(), "BN " + ("y" if output == "y" else "x̂"), ("x2", "y2"), labels),
    ]
    if bool((~result.mask).any()):
        traces.insert(
            1,
            plot.points(
                positions, plot.to_numpy(site.bn_std_padded[cols]), "σ, padding too", theme.INK, symbol="x", size=9
            )
            | dict(hovertemplate="with padding: σ = %{y:.4g}<extra></extra>"),
        )
    height = _height(rows, 150) + 190
    top_frac = 150 / (height - 140)  # the plot area: height less the margins (t 70, b 70)
    layout: dict[str, Any] = dict(
        xaxis=dict(domain=[0, 1], anchor="y", tickvals=list(positions), ticktext=[str(int(c)) for c in cols]),
        yaxis=dict(domain=[1 - top_frac, 1], anchor="x", title=dict(text="BN's σ")),
        showlegend=bool((~result.mask).any()),
        legend=plot.legend_above(),
        plot_bgcolor="#f2f2f2",
    )
    _axes(layout, 2, [0, 1], rows, labels, cols)
    layout["yaxis2"] |= dict(domain=[0, 1 - top_frac - 0.06])
    layout["yaxis2"].pop("matches", None)
    return plot.figure(traces, layout, margin=dict(l=110, r=10, t=70, b=70), height=height)


def fig_affine(site: Site, marked: int) -> go.Figure:
    """The module's own γ and β for all H features, with feature ``marked`` (the largest |x|) marked."""
    hidden = site.weight.shape[0]
    features = np.arange(hidden)
    ln = theme.ROLES["LN"]
    traces = [
        plot.bars(features, plot.to_numpy(site.weight), "γ", ln, ("x", "y")),
        plot.bars(features, plot.to_numpy(site.bias), "β", theme.SERIES[1], ("x2", "y2")),
    ]
    top, bottom = [0.56, 1.0], [0.0, 0.4]
    layout: dict[str, Any] = dict(
        xaxis=dict(domain=[0, 1], anchor="y", matches="x2", showticklabels=False),
        yaxis=dict(domain=top, anchor="x", title=dict(text="γ")),
        xaxis2=dict(domain=[0, 1], anchor="y2", title=dict(text="feature")),
        yaxis2=dict(domain=bottom, anchor="x2", title=dict(text="β")),
        shapes=[
            plot.vline(marked, ("x", "y"), color=theme.INK, dash="dot"),
            plot.vline(marked, ("x2", "y2"), color=theme.INK, dash="dot"),
        ],
        annotations=[plot.note(f"feature {marked}", marked, 1.02, ("x", "y domain"), yanchor="bottom")],
        showlegend=False,
        bargap=0,
    )
    return plot.figure(traces, layout, margin=dict(l=60, r=10, t=30, b=50), height=360)


def fig_padding(result: Run, site: Site, feature: int) -> go.Figure:
    """Feature ``feature`` of x as a (sentences × tokens) grid, padding marked ×: what BN over the batch pools."""
    sentences = result.mask.shape[0]
    traces = plot.padded_grid(
        site.x[:, :, feature],  # (S, T)
        result.mask,
        rows="sentence",
        steps="token",
        colorbar=f"x[:, :, {feature}]",
        pad="padding",
        fmt=".4g",
    )
    layout = dict(
        xaxis=dict(title=dict(text="token position t")),
        yaxis=plot.samples_axis(
            sentences,
            title=dict(text="sentence"),
            tickvals=list(range(sentences)),
            ticktext=[str(s + 1) for s in range(sentences)],
        ),
        plot_bgcolor="#f2f2f2",
        showlegend=True,
        legend=plot.legend_above(),
    )
    return plot.figure(traces, layout, margin=dict(l=70, r=100, t=40, b=50), height=max(220, 28 * sentences + 120))
