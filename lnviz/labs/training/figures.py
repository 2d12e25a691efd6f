"""The race's figures: loss and accuracy against the step, and the wall time of one step.

Built with the figure kit (:mod:`lnviz.figures.plot`); each variant is drawn in its
norm's colour (:data:`lnviz.figures.theme.ROLES`, "none" in grey), on every panel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import plotly.graph_objects as go

from lnviz.figures import plot, theme
from lnviz.labs.training.loop import Curve, Race

_TITLE = 26  # px of a panel title


def _downsample(values: tuple[float, ...], points: int) -> tuple[list[float], list[float]]:
    """(steps, means): ``values`` (one per step, from step 1) averaged in at most ``points`` equal blocks."""
    n = len(values)
    if n == 0:
        return [], []
    size = max(1, math.ceil(n / points))
    xs, ys = [], []
    for start in range(0, n, size):
        block = values[start : start + size]
        xs.append(start + (len(block) + 1) / 2)
        ys.append(sum(block) / len(block))
    return xs, ys


def log_ticks(values: Iterable[float]) -> dict[str, list]:
    """Ticks of a log axis over ``values``, labelled as plain numbers: 1, 0.1, 0.01, with 2 and 5 between
    them over two decades or less, 3 over three; empty without a positive finite value."""
    finite = [v for v in values if math.isfinite(v) and v > 0]
    if not finite:
        return {}
    low, high = math.floor(math.log10(min(finite))), math.ceil(math.log10(max(finite)))
    span = high - low
    steps = (1, 2, 5) if span <= 2 else (1, 3) if span == 3 else (1,)
    ticks = [float(f"{m}e{k}") for k in range(low, high + 1) for m in steps]
    return dict(tickvals=ticks, ticktext=[np.format_float_positional(t, trim="-") for t in ticks])


def _losses(c: Curve, train_points: int) -> list[float]:
    """The loss values one variant draws: held-out, and the training loss as downsampled (for the ticks)."""
    return [*c.loss, *_downsample(c.train_loss, train_points)[1]]


def _variant_traces(c: Curve, train_points: int) -> tuple[list[dict[str, Any]], list[float]]:
    """The held-out loss, the training loss (downsampled) and the held-out accuracy of one variant,
    and the loss values drawn (for the ticks)."""
    color = theme.ROLES[c.variant]
    name = c.variant if not c.failed else f"{c.variant} (failed)"
    marker = dict(size=4)
    xs, ys = _downsample(c.train_loss, train_points)
    group = dict(legendgroup=c.variant)
    traces = [
        plot.line(list(c.eval_steps), list(c.loss), name, color, markers=marker) | group,
        plot.line(xs, ys, f"{c.variant} · training", color, dash="dot", width=1)
        | group
        | dict(showlegend=False, opacity=0.6),
        plot.line(list(c.eval_steps), list(c.accuracy), name, color, ("x2", "y2"), markers=marker)
        | group
        | dict(showlegend=False),
    ]
    return traces, [*c.loss, *ys]


def _log_range(values: list[float]) -> list[float] | None:
    """A log axis' range (in decades) around the positive finite ``values``, a little wider than them."""
    finite = [v for v in values if math.isfinite(v) and v > 0]
    if not finite:
        return None
    low, high = math.log10(min(finite)), math.log10(max(finite))
    pad = 0.05 * max(high - low, 0.2)
    return [low - pad, high + pad]


def fig_race(result: Race, train_points: int = 60, whole: Race | None = None) -> go.Figure:
    """Loss (left, log scale) and held-out accuracy (right) against the step, one colour per variant.

    Solid lines: the held-out set of EVAL_SAMPLES samples in eval mode, at the
    race's evaluation steps. Dotted, faint: the training batches' loss, one
    value per step, averaged into at most ``train_points`` points. A failed
    variant is named in the legend. For a replay, ``result`` is ``whole`` cut
    at a step (``whole.at(step)``): the loss axis then spans the whole race, so
    it stays put while the curves draw in, and a line marks the step.
    """
    traces, losses = [], []
    for c in result.curves:
        own, drawn = _variant_traces(c, train_points)
        traces += own
        losses += drawn
    if whole is not None:  # the axis spans the whole race: its values only, no traces built for them
        losses = [v for c in whole.curves for v in _losses(c, train_points)]
    (left, right) = plot.columns(2, gap=0.1)
    height, bottom = 420, 75
    top, legend = plot.legend_in_margin(height, bottom, rows=2, gap=_TITLE)  # the variants: two rows on a phone
    steps = [0, result.steps]
    layout = dict(
        # What the dotted lines are, under the loss panel: a legend title would crowd the legend on a phone.
        xaxis=dict(domain=left, anchor="y", range=steps, title=dict(text="step<br>dotted: training batches")),
        yaxis=dict(anchor="x", type="log", title=dict(text="loss")) | log_ticks(losses),
        xaxis2=dict(domain=right, anchor="y2", range=steps, title=dict(text="step")),
        yaxis2=dict(anchor="x2", range=[0, 1.02]),  # the panel title names it: the gap holds only ticks
        annotations=[plot.title("Held-out loss", sum(left) / 2), plot.title("Held-out accuracy", sum(right) / 2)],
        legend=legend,
        uirevision="race",
    )
    if whole is not None:
        span = _log_range(losses)
        if span:
            layout["yaxis"]["range"] = span
        if result.done < whole.done:
            mark = dict(color=theme.INK, width=1, dash="dash")
            layout["shapes"] = [plot.vline(result.done, **mark), plot.vline(result.done, ("x2", "y2"), **mark)]
    return plot.figure(traces, layout, margin=dict(l=60, r=15, t=top, b=bottom), height=height)


def fig_step_time(result: Race) -> go.Figure:
    """Median wall time of one training step per variant, in ms, on the race's device (bars, one per variant)."""
    variants = [c.variant for c in result.curves if c.step_seconds]
    times = [c.ms_per_step for c in result.curves if c.step_seconds]
    bars = plot.bars(
        times,
        variants,
        "ms per step",
        [theme.ROLES[v] for v in variants],
        orientation="h",
        text=[f"{t:.2f} ms" for t in times],
        textposition="auto",
        hovertemplate="%{y}: %{x:.2f} ms per step<extra></extra>",
    )
    layout = dict(
        title=plot.heading(f"Wall time per step on {result.device} (median)"),
        xaxis=dict(title=dict(text="ms per step"), rangemode="tozero"),
        yaxis=dict(autorange="reversed"),
        showlegend=False,
    )
    return plot.figure([bars], layout, margin=dict(l=75, r=15, t=36, b=45), height=220)
