"""The figure kit: every figure in lnviz is built from these helpers, as plain dicts.

A builder (``fig_*`` in each module) returns a ``go.Figure`` and never renders.
The kit writes traces and layouts as plain dicts and wraps them in
:func:`figure` without plotly's per-property validation: building figures
through ``make_subplots`` and ``update_*`` cost 20 to 150 ms each on every
slider move, most of a rerun. ``tests/test_figures.py`` validates every
builder's output against plotly instead.

Margins are fixed and plotly.js's automatic margins are off: measuring every
label and redrawing to fit them was the largest part of a redraw. Each
builder says how much room its labels need (``margin``).

Arrays go to plotly as float32 numpy arrays, which plotly sends as compact
binary. The look (colour roles, value scales, type) is :mod:`lnviz.figures.theme`;
:func:`lecture` scales every text of a built figure for a projector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from torch import Tensor

from lnviz.figures import theme

Axes = tuple[str, str]  # ("x2", "y2"): the axes a trace or shape is drawn on


def figure(
    traces: list[dict[str, Any]], layout: dict[str, Any], margin: dict[str, int], height: int | None = None
) -> go.Figure:
    """A figure from plain trace and layout dicts, with the theme's type and fixed ``margin`` (l, r, t, b px)."""
    layout = {"font": {"family": theme.FONT_FAMILY, "size": theme.FONT_SIZE}} | layout
    layout["margin"] = margin | {"autoexpand": False}
    if height is not None:
        layout["height"] = height
    # Every text size is set here, not left to a template: Streamlit's chart theme sizes ticks, legends and
    # axis titles itself, which would win over the figure's font and escape the lecture scale.
    # (lecture() scales each font dict once, even one shared by several axes.)
    layout.setdefault("legend", {}).setdefault("font", {"size": theme.FONT_SIZE})
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            axis.setdefault("automargin", False)
            axis.setdefault("tickfont", {"size": theme.FONT_SIZE})
            if isinstance(axis.get("title"), dict):
                axis["title"].setdefault("font", {"size": theme.FONT_SIZE})
    # A 3D scene's axes: each a tick font of its own with the size (a font dict shared with its titles is left as is).
    for name, scene in layout.items():
        if name.startswith("scene"):
            for axis in (scene.get(a) for a in ("xaxis", "yaxis", "zaxis")):
                if isinstance(axis, dict):
                    axis["tickfont"] = {"size": theme.FONT_SIZE} | axis.get("tickfont", {})
    for bar in _colorbars(traces, layout):
        bar.setdefault("tickfont", {"size": theme.FONT_SIZE})
        if isinstance(bar.get("title"), dict):
            bar["title"].setdefault("font", {"size": theme.FONT_SIZE})
    return go.Figure({"data": traces, "layout": layout}, _validate=False)


def _colorbars(traces: list[dict[str, Any]], layout: dict[str, Any]) -> list[dict[str, Any]]:
    """The colour bars of a figure: on its traces, and on its shared colour axes."""
    bars = [t["colorbar"] for t in traces if isinstance(t.get("colorbar"), dict)]
    bars += [
        a["colorbar"] for k, a in layout.items() if k.startswith("coloraxis") and isinstance(a.get("colorbar"), dict)
    ]
    return bars


def to_numpy(t: Tensor | np.ndarray | Sequence[float]) -> np.ndarray:
    """A float32 numpy copy of ``t`` (a tensor on any device, an array or a list), for plotly."""
    if isinstance(t, Tensor):
        return t.detach().to("cpu").float().numpy()
    return np.asarray(t, dtype=np.float32)


def index(s: slice) -> np.ndarray:
    """The integer positions of a window ``s`` (a slice with start and stop), for an axis."""
    return np.arange(s.start, s.stop)


def columns(n: int, gap: float = 0.06, start: float = 0.0, end: float = 1.0) -> list[list[float]]:
    """Domains of ``n`` side-by-side panels between ``start`` and ``end`` (paper coordinates)."""
    width = (end - start - gap * (n - 1)) / n
    return [[start + k * (width + gap), start + k * (width + gap) + width] for k in range(n)]


def axis_names(k: int) -> Axes:
    """The axes of the ``k``-th panel, counted from 1: ("x", "y"), ("x2", "y2"), ..."""
    return ("x", "y") if k == 1 else (f"x{k}", f"y{k}")


def layout_key(axis: str) -> str:
    """The layout key of a trace's axis name: "x2" -> "xaxis2", "y" -> "yaxis"."""
    return axis[0] + "axis" + axis[1:]


def title(text: str, x: float, y: float = 1.0, **font: Any) -> dict[str, Any]:
    """A panel title centred at paper coordinate ``x`` above the plot area (an annotation)."""
    return dict(
        text=text,
        x=x,
        y=y,
        xref="paper",
        yref="paper",
        xanchor="center",
        yanchor="bottom",
        showarrow=False,
        font={"size": theme.TITLE_SIZE} | font,
    )


def heading(text: str, note: str = "") -> dict[str, Any]:
    """A figure title at the figure's top left (``layout.title``), with a smaller ``note`` under it."""
    at = dict(x=0, xref="container", y=1, yref="container", yanchor="top", pad=dict(t=8, l=8))
    sub = dict(subtitle=dict(text=note, font=dict(size=theme.FONT_SIZE))) if note else {}
    return at | dict(text=text, font=dict(size=theme.TITLE_SIZE)) | sub


def note(text: str, x: float, y: float, axes: Axes | None = None, **kw: Any) -> dict[str, Any]:
    """A free-standing text at (x, y): in paper coordinates, or on ``axes``."""
    xref, yref = (f"{axes[0]}", f"{axes[1]}") if axes else ("paper", "paper")
    return dict(text=text, x=x, y=y, xref=xref, yref=yref, showarrow=False) | kw


def heatmap(z: np.ndarray, x: np.ndarray, y: np.ndarray, name: str, axes: Axes = ("x", "y"), **kw: Any) -> dict:
    """A heatmap trace of ``z`` (rows along y, columns along x), with a hover naming the cell."""
    return (
        dict(
            type="heatmap",
            z=z,
            x=x,
            y=y,
            name=name,
            xaxis=axes[0],
            yaxis=axes[1],
            hovertemplate="sample %{y}, feature %{x}<br>" + name + " = %{z:.4g}<extra></extra>",
        )
        | kw
    )


def line(
    x: Any,
    y: Any,
    name: str,
    color: str,
    axes: Axes = ("x", "y"),
    dash: str | None = None,
    width: float = 2,
    markers: dict | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """A line trace in ``color``; with ``markers`` (a marker dict), markers on its points too."""
    trace = dict(
        type="scatter",
        x=x,
        y=y,
        name=name,
        mode="lines+markers" if markers is not None else "lines",
        line=dict(color=color, width=width) | (dict(dash=dash) if dash else {}),
        xaxis=axes[0],
        yaxis=axes[1],
    )
    if markers is not None:
        trace["marker"] = dict(color=color) | markers
    return trace | kw


def points(x: Any, y: Any, name: str, color: str, axes: Axes = ("x", "y"), **marker: Any) -> dict[str, Any]:
    """A markers-only scatter trace."""
    return dict(
        type="scatter",
        x=x,
        y=y,
        name=name,
        mode="markers",
        marker=dict(color=color) | marker,
        xaxis=axes[0],
        yaxis=axes[1],
    )


def padded_grid(
    values: Tensor, mask: Tensor, *, rows: str, steps: str, colorbar: str, pad: str, fmt: str
) -> list[dict]:
    """A padded batch's heatmap: ``values`` (N, T) where ``mask`` (N, T) is True, left grey (NaN) elsewhere,
    and an × on every padded cell. ``rows`` and ``steps`` name a row and a position in the hover text
    ("sequence", "step"), ``pad`` the ×'s legend entry, ``fmt`` the hover's number format (".3f")."""
    n, t = mask.shape
    pad_n, pad_t = (~mask).nonzero(as_tuple=True)  # (P,), (P,): the padded cells
    heat = heatmap(
        to_numpy(values.masked_fill(~mask, float("nan"))),
        np.arange(t),
        np.arange(n),
        "real tokens",
        colorscale=theme.DIVERGING,
        zmid=0,
        xgap=1,
        ygap=1,
        colorbar=dict(title=dict(text=colorbar)),
        hovertemplate=f"{rows} %{{y}}, {steps} %{{x}}<br>x = %{{z:{fmt}}}<extra></extra>",
    )
    crosses = points(
        pad_t.tolist(), pad_n.tolist(), pad, theme.INK, symbol="x-thin", size=7, line=dict(width=1.5, color=theme.INK)
    ) | dict(hovertemplate=f"{rows} %{{y}}, {steps} %{{x}}: padding<extra></extra>")
    return [heat, crosses]


def bars(x: Any, y: Any, name: str, color: str | list[str], axes: Axes = ("x", "y"), **kw: Any) -> dict[str, Any]:
    """A bar trace in ``color`` (one colour, or one per bar)."""
    return dict(type="bar", x=x, y=y, name=name, marker=dict(color=color), xaxis=axes[0], yaxis=axes[1]) | kw


def histogram(counts: Tensor, centres: Tensor, name: str, color: str, axes: Axes = ("x", "y")) -> dict[str, Any]:
    """Counts already binned (by :func:`lnviz.labs.explorer.histogram`) as touching bars."""
    return bars(
        to_numpy(centres),
        to_numpy(counts),
        name,
        color,
        axes,
        hovertemplate=name + ": %{y:.0f} values near %{x:.3g}<extra></extra>",
    )


def rect(x0: float, x1: float, y0: float, y1: float, axes: Axes = ("x", "y"), **line: Any) -> dict[str, Any]:
    """An outline (a shape) from (x0, y0) to (x1, y1) on ``axes``; ``line`` sets colour, width, dash."""
    return dict(
        type="rect", x0=x0, x1=x1, y0=y0, y1=y1, xref=axes[0], yref=axes[1], line=dict(width=3) | line, layer="above"
    )


def outline(
    x0: float, x1: float, y0: float, y1: float, axes: Axes = ("x", "y"), name: str = "", **line: Any
) -> list[dict[str, Any]]:
    """A coloured outline over data on a value scale: the line on a wider white casing.

    Under protanopia and deuteranopia LN's blue and BN's vermillion fall close to the ends of the
    value scale, where a bare line would vanish; the casing keeps it apart from any cell colour.
    """
    casing = rect(x0, x1, y0, y1, axes, color="white", width=line.get("width", 3) + 3) | {"name": f"{name} casing"}
    return [casing, rect(x0, x1, y0, y1, axes, **line) | {"name": name}]


def band(x0: float, x1: float, axes: Axes = ("x", "y"), color: str = theme.GREY, opacity: float = 0.25) -> dict:
    """A shaded vertical band from x0 to x1 across the whole height of ``axes``' plot area."""
    return dict(
        type="rect",
        x0=x0,
        x1=x1,
        y0=0,
        y1=1,
        xref=axes[0],
        yref=f"{axes[1]} domain",
        fillcolor=color,
        opacity=opacity,
        line=dict(width=0),
        layer="below",
    )


def vline(x: float, axes: Axes = ("x", "y"), **line: Any) -> dict[str, Any]:
    """A vertical line at x across the whole height of ``axes``' plot area (a shape)."""
    return dict(type="line", x0=x, x1=x, y0=0, y1=1, xref=axes[0], yref=f"{axes[1]} domain", line=line)


def hline(y: float, axes: Axes = ("x", "y"), **line: Any) -> dict[str, Any]:
    """A horizontal line at y across the whole width of ``axes``' plot area (a shape)."""
    return dict(type="line", x0=0, x1=1, y0=y, y1=y, xref=f"{axes[0]} domain", yref=axes[1], line=line)


def samples_axis(count: int, **kw: Any) -> dict[str, Any]:
    """A samples axis: top to bottom like a matrix, with whole-number ticks when there are few."""
    return dict(autorange="reversed") | (dict(dtick=1) if count < 8 else {}) | kw


def legend_above(y: float = 1.02) -> dict[str, Any]:
    """A horizontal legend above the plot area, left-aligned (it never covers the data)."""
    return dict(orientation="h", x=0, xanchor="left", y=y, yanchor="bottom")


LEGEND_ROW = 30  # px of one row of a horizontal legend


def legend_in_margin(height: int, bottom: int, rows: int, gap: int, head: int = 8) -> tuple[int, dict[str, Any]]:
    """(top margin, legend): :func:`legend_above` in a top margin that holds ``rows`` rows of it.

    From the figure's top down: ``head`` px (a figure title, or a little
    air), the legend's rows, then ``gap`` px over the plot area for what
    sits there (panel titles, a note). The legend's y is in units of the plot
    area's height, ``height - top - bottom`` px, so its bottom edge lands
    ``gap`` px above the plot area.
    """
    top = head + rows * LEGEND_ROW + gap
    return top, legend_above(1 + gap / (height - top - bottom))


# A cell number's characters' widths in ems, as the widest of the fonts a chart's text falls back to draws them
# (DejaVu Sans, where the theme's Source Sans is not installed under its name: a digit 0.64, the minus sign 0.84);
# any other character counts as 1.
_EMS = {**dict.fromkeys("0123456789", 0.64), "\u2212": 0.84, "-": 0.84, ".": 0.32, " ": 0.32}


def text_em(text: str) -> float:
    """``text``'s width in ems, at most (:data:`_EMS`)."""
    return sum(_EMS.get(c, 1.0) for c in text)


def numbers_fit(fig: go.Figure) -> int:
    """The least width, in px, of a chart drawn from ``fig`` at which each heatmap's cell text fits inside its cell.

    A heatmap's cells share the plot area's width (the chart's, less the margins) in its x axis's domain: a
    cell is ``(W - l - r) · (d1 - d0) / C`` px wide, less its ``xgap``, and its text at the trace's font size
    (else the figure's) must be no wider. 0 where no heatmap has text. Plotly never hides a heatmap's text that
    its cell can't hold: the page hides them below this width (``ui.kit.mode.fit_numbers``).
    """
    layout = fig.layout
    size = layout.font.size or theme.FONT_SIZE
    sides = (layout.margin.l or 0) + (layout.margin.r or 0)
    least = 0.0
    for trace in fig.data:
        if trace.type != "heatmap" or trace.text is None or not trace.texttemplate:
            continue
        texts = np.asarray(trace.text, dtype=str)
        widest = max(map(text_em, texts.ravel()), default=0.0) * (trace.textfont.size or size)
        if not widest:
            continue
        d0, d1 = layout[layout_key(trace.xaxis or "x")].domain or (0, 1)
        least = max(least, (widest + (trace.xgap or 0)) * texts.shape[-1] / (d1 - d0) + sides)
    return int(np.ceil(round(least, 6)))  # 1362.0000000000002 is 1362


def lecture(fig: go.Figure, scale: float = theme.LECTURE_SCALE) -> go.Figure:
    """``fig`` for a projector: every font size and margin times ``scale``.

    Text that inherits the figure's font (ticks, legends, colour bars, hover
    labels) grows with it; every explicit size (titles, annotations, a
    trace's ``textfont``) is scaled too, wherever it sits. A figure scaled
    already (a builder that laid itself out for the projector, then placed by
    the page kit's chart) comes back as it is: its layout's ``meta`` says so.
    """
    spec = fig.to_dict()
    layout = spec["layout"]
    if "lecture" in (layout.get("meta") or {}):
        return fig
    layout["meta"] = {"lecture": scale}
    seen: set[int] = set()
    _scale_sizes(layout, scale, seen=seen)
    _scale_sizes(spec["data"], scale, seen=seen)
    layout["margin"] = {k: round(v * scale) if k in "lrtb" else v for k, v in layout.get("margin", {}).items()}
    if "height" in layout:
        layout["height"] = round(layout["height"] * (1 + (scale - 1) / 2))
    return go.Figure(spec, _validate=False)


def _scale_sizes(node: Any, scale: float, in_font: bool = False, seen: set[int] | None = None) -> None:
    """Multiply every ``size`` inside a font dict of ``node``, in place, once per dict even if it is shared."""
    seen = set() if seen is None else seen
    if isinstance(node, dict | list):
        if id(node) in seen:
            return
        seen.add(id(node))
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "size" and in_font and isinstance(value, int | float):
                node[key] = round(value * scale, 1)
            else:
                _scale_sizes(value, scale, key.endswith("font"), seen)
    elif isinstance(node, list):
        for item in node:
            _scale_sizes(item, scale, in_font, seen)
