"""A figure's data read back as one long table: what a chart shows, for a screen reader and the keyboard.

The page kit (:meth:`ui.kit.page.Page.chart`) shows it under every chart. It reads a built ``go.Figure``,
also the compact binary arrays that :mod:`lnviz.figures.plot` writes.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

TABLE_COLUMNS = ("trace", "x", "y", "z", "value", "text")  # table()'s columns, in order, where the figure has them
_TAG = re.compile(r"<[^>]+>")


def table(fig: go.Figure) -> pd.DataFrame:
    """The data a figure shows, as one long table: a row per point of every visible trace, in trace order.

    Columns, each only where some trace has it: ``trace`` (its name), ``x``
    and ``y`` (a point's position; a heatmap cell's column and row), ``z`` (a
    3-D point's third coordinate), ``value`` (a heatmap cell's value, its z)
    and ``text`` (the text written on a point, without markup). A heatmap
    (R, C) gives R · C rows, row by row. NaN stays NaN. Traces that draw
    nothing (``visible=False``, or fully transparent like the explorer's
    click targets) are left out. For a screen reader and the keyboard:
    :meth:`ui.kit.page.Page.chart` shows it under every chart.
    """
    parts = [_trace_table(trace) for trace in fig.data if _drawn(trace)]
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame({"trace": []})
    return frame[[c for c in TABLE_COLUMNS if c in frame]]


def _drawn(trace: Any) -> bool:
    """Whether ``trace`` shows anything: not hidden, and not fully transparent."""
    opacities = (trace.opacity, getattr(getattr(trace, "marker", None), "opacity", None))
    transparent = any(o is not None and bool(np.all(np.asarray(o) == 0)) for o in opacities)
    return trace.visible is not False and not transparent


def _trace_table(trace: Any) -> pd.DataFrame:
    """One trace's rows for :func:`table`."""
    if trace.type == "heatmap":
        z = _array(trace.z).astype(np.float64)  # (R, C)
        rows, cols = z.shape
        x, y = _coords(trace.x, cols), _coords(trace.y, rows)
        columns = {"x": np.tile(x, rows), "y": np.repeat(y, cols), "value": z.ravel()}
        count = z.size
    else:
        count = max(len(_array(v)) for v in (trace.x, trace.y) if v is not None)
        columns = {"x": _coords(trace.x, count), "y": _coords(trace.y, count)}
        if getattr(trace, "z", None) is not None:
            columns["z"] = _array(trace.z).ravel()
    text = getattr(trace, "text", None)
    if text is not None and not isinstance(text, str):
        columns["text"] = [" ".join(_TAG.sub(" ", str(t)).split()) for t in _array(text).ravel()]
    return pd.DataFrame({"trace": [trace.name] * count} | columns)


def _array(values: Any) -> np.ndarray:
    """A trace's array as numpy, also from the compact form of a figure's dict (``{"dtype", "bdata", "shape"}``)."""
    if isinstance(values, dict) and "bdata" in values:
        flat = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
        shape = values.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat
    return np.asarray(values)


def _coords(values: Any, n: int) -> np.ndarray:
    """A trace's x or y as ``n`` positions: plotly's default 0, 1, ... where it has none; a heatmap's
    n + 1 cell edges become the n cell centres."""
    if values is None:
        return np.arange(n)
    array = _array(values)
    if array.dtype.kind in "iuf" and len(array) == n + 1:
        array = array.astype(np.float64)
        return (array[:-1] + array[1:]) / 2
    return array.astype(np.float64) if array.dtype.kind == "f" else array
