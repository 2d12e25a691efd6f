"""The reveal: the class's answers to one question beside torch's, as a figure and as plain text.

``rounds`` holds one tally per round of voting (:func:`.poll.tally`), the
first round first; a second round is drawn beside it. With ``answer`` False
(a round revealed before the presenter shows torch's answer: peer
instruction) nothing marks which answer is right, and torch's answer is not
read (a live question's is computed only when it is shown). Rounds take
:data:`lnviz.figures.theme.SERIES` colours, never a norm's: blue and
vermillion mean LN and BN on every page. The second round's bars are also
hatched, and the right answer is written out, so nothing rests on colour.
A "cells" question's reveal is :func:`.cells_figure.fig_cells`, one grid per round.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from lnviz.figures import plot, theme
from lnviz.labs.classroom.cells_figure import fig_cells
from lnviz.labs.classroom.question import Question, unmask

ROUND_COLOURS = (theme.SERIES[0], theme.SERIES[1])  # black, wine
RIGHT = "✓ right"
LABEL_CHARS = 56  # an option's label, above its bars: characters per line (a lecture-sized line across the chart)
_PATTERNS = ("", "/")  # round 2 hatched: a second cue beside its colour


def _round_name(k: int) -> str:
    return f"round {k + 1}"


def _style(k: int) -> dict[str, Any]:
    """Round k's bar colour and hatching."""
    colour = ROUND_COLOURS[k % len(ROUND_COLOURS)]
    return dict(color=colour, pattern=dict(shape=_PATTERNS[k % len(_PATTERNS)], fgcolor="white", bgcolor=colour))


def fig_results(
    question: Question, rounds: Sequence[Mapping[str, int]], *, presenting: bool = False, answer: bool = True
) -> go.Figure:
    """The votes of each round: bars per option ("choice"), per guess with torch's value as a line ("number"), or
    each cell's share in a grid per round ("cells": :func:`.cells_figure.fig_cells`).

    A choice question draws each option's letter and whole text above its bars
    (one per round, the count written on each), so a long option wraps across
    the chart's width instead of squeezing the bars, and outlines the right
    option, labelled "✓ right". A number question draws the count of each
    stored guess, a dashed vertical line at torch's value labelled "torch: …",
    and a grey band over the guesses that count as right. ``presenting``
    scales every text for a projector (:func:`lnviz.figures.plot.lecture`)
    and keeps the chart short enough to sit under the question and the
    presenter's buttons on a 1280 × 720 screen. Without ``answer``: the bars
    alone, no option outlined, no line, band or label of torch's.
    """
    if question.kind == "cells":
        return fig_cells(question, rounds, answer=answer, presenting=presenting)
    if question.kind == "choice":
        fig, height = _choice(question, rounds, theme.LECTURE_SCALE if presenting else 1.0, answer)
    else:
        fig, height = _number(question, rounds, answer), NUMBER_HEIGHT
    if not presenting:
        return fig
    fig = plot.lecture(fig)
    fig.layout.height = height if question.kind == "choice" else LECTURE_NUMBER_HEIGHT
    return fig


# A label's line (times the font size); a round's bar, alone or beside the second round's; the air between options.
LINE_PX, BAR_PX, BARS_PX, GAP_PX = 1.4, 16, 10, 8
NUMBER_HEIGHT, LECTURE_NUMBER_HEIGHT = 360, 340


def _choice(
    question: Question, rounds: Sequence[Mapping[str, int]], scale: float, answer: bool
) -> tuple[go.Figure, int]:
    """The bars, and the figure's height in px at ``scale``: each option is a slot of one unit down the y axis,
    its label in the slot's top part, its bars (one per round) under it."""
    n, k_rounds = len(question.choices), max(1, len(rounds))
    right = question.answer if answer else None
    labels = [_label(i, c, i == right) for i, c in enumerate(question.choices)]
    lines = max(label.count("<br>") + 1 for label in labels)
    label_px = lines * LINE_PX * theme.FONT_SIZE * scale
    slot_px = label_px + (k_rounds * (BAR_PX if k_rounds == 1 else BARS_PX) + GAP_PX) * scale
    top = (label_px + 2 * scale) / slot_px  # the part of a slot its label takes, in units of y
    width = (1 - top - GAP_PX * scale / slot_px) / k_rounds  # one round's bar, in units of y
    traces = []
    for k, tally in enumerate(rounds):
        counts = [int(tally.get(str(i), 0)) for i in range(n)]
        traces.append(
            plot.bars(
                counts,
                np.arange(n) - 0.5 + top + (k + 0.5) * width,
                _round_name(k),
                ROUND_COLOURS[k % len(ROUND_COLOURS)],
                orientation="h",
                marker=_style(k),
                width=width,
                text=[str(c) for c in counts],
                textposition="outside",
                constraintext="none",  # a count beside a thin bar keeps the lecture size
                cliponaxis=False,
                hovertemplate=_round_name(k) + ": %{x} votes<extra></extra>",
            )
        )
    most = max([int(v) for tally in rounds for v in tally.values()] or [0])
    margin = dict(l=8, r=24, t=30 if len(rounds) > 1 else 8, b=8)
    layout = dict(
        barmode="overlay",  # each bar has its own place in its option's slot
        xaxis=dict(visible=False, rangemode="tozero", range=[0, max(1, most) * 1.15]),
        yaxis=dict(visible=False, range=[n - 0.5, -0.5]),  # option A on top
        annotations=[
            plot.note(
                label,
                0,
                i - 0.5,
                ("x domain", "y"),
                xanchor="left",
                yanchor="top",
                align="left",
                yshift=-scale,
                font=dict(color=theme.INK, size=theme.FONT_SIZE),
            )
            for i, label in enumerate(labels)
        ],
        shapes=[plot.rect(0, 1, right - 0.5, right + 0.5, color=theme.INK, width=3) | dict(xref="x domain", name=RIGHT)]
        if answer
        else [],
        legend=plot.legend_above(),
        showlegend=len(rounds) > 1,  # one round needs no key: its bars are the only ones
    )
    height = round(n * slot_px + (margin["t"] + margin["b"]) * scale)
    return plot.figure(traces, layout, margin=margin, height=height), height


def _label(i: int, choice: str, right: bool) -> str:
    """Option ``i``'s letter and text, "✓ right" in bold on the right one, in lines of at most :data:`LABEL_CHARS`
    characters (counted as shown, without the tags): one line across the chart, mostly."""
    mark = RIGHT.replace(" ", "\u00a0")  # textwrap breaks at ASCII spaces only: the mark stays whole
    text = f"{chr(65 + i)}. {mark}: {choice}" if right else f"{chr(65 + i)}. {choice}"
    wrapped = "<br>".join(textwrap.wrap(text, LABEL_CHARS, break_on_hyphens=False))
    return wrapped.replace(f"{mark}:", f"<b>{mark}:</b>", 1)


def _number(question: Question, rounds: Sequence[Mapping[str, int]], answer: bool) -> go.Figure:
    step = 10.0**-question.decimals
    values = sorted({float(v) for tally in rounds for v in tally})
    shown = [*values, question.answer] if answer else values or [question.lo, question.hi]
    span = max(max(shown) - min(shown), step)
    width = max(step, span / 60)  # a bar stays visible where the guesses spread widely
    traces = []
    for k, tally in enumerate(rounds):
        xs = [float(v) for v in tally]
        counts = [int(c) for c in tally.values()]
        traces.append(
            plot.bars(
                np.asarray(xs, dtype=np.float64),
                counts,
                _round_name(k),
                ROUND_COLOURS[k % len(ROUND_COLOURS)],
                marker=_style(k),
                width=width,
                text=[str(c) for c in counts],
                textposition="outside",
                cliponaxis=False,
                hovertemplate=_round_name(k) + ": %{y} guesses of %{x}<extra></extra>",
            )
        )
    pad = span * 0.15 + width
    most = max([int(c) for tally in rounds for c in tally.values()] or [0])
    layout = dict(
        barmode="group",
        xaxis=dict(title=dict(text="guess"), range=[min(shown) - pad, max(shown) + pad]),
        # Headroom above the tallest bar for torch's label, inside the plot: above it, the legend.
        yaxis=dict(title=dict(text="votes"), rangemode="tozero", range=[0, max(1, most) * 1.5], dtick=_dtick(most)),
        legend=plot.legend_above(1.12),
        showlegend=True,
    )
    if answer:
        layout |= _torch_line(question, shown)
    return plot.figure(traces, layout, margin=dict(l=60, r=20, t=56, b=45), height=NUMBER_HEIGHT)


def _torch_line(question: Question, shown: Sequence[float]) -> dict[str, Any]:
    """torch's value on a number question's chart: a dashed line labelled "torch: …", over a grey band of the
    guesses that count as right."""
    answer = question.answer
    label = f"torch: {question.answer_text}"
    leans_right = answer > (min(shown) + max(shown)) / 2
    return dict(
        shapes=[
            plot.band(answer - question.tolerance, answer + question.tolerance, color=theme.GREY, opacity=0.25)
            | dict(name="counted right"),
            plot.vline(answer, color=theme.INK, width=3, dash="dash") | dict(name=label),
        ],
        annotations=[
            plot.note(
                label,
                answer,
                0.98,
                ("x", "y domain"),
                yanchor="top",
                # On the side of the line with room: past the middle of the range, a left-anchored label ran
                # off the plot's right edge (a projector showed "torch: 1" of 1.969).
                xanchor="right" if leans_right else "left",
                xshift=-6 if leans_right else 6,
                font=dict(size=theme.TITLE_SIZE),
            )
        ],
    )


def _dtick(most: int) -> int | None:
    """Whole-vote ticks while counts are small (plotly would write 0.5 steps)."""
    return 1 if most < 8 else None


def results_text(question: Question, rounds: Sequence[Mapping[str, int]], answer: bool = True) -> str:
    """The same counts as plain text, one line per option (or guess) per round, the right one marked.

    For a screen reader, and for tests; shown under the question, so it does not repeat it. A number question
    ends with torch's value. Without ``answer``, the counts alone. A cells question: :func:`_cells_text`.
    """
    if question.kind == "cells":
        return _cells_text(question, rounds, answer)
    lines: list[str] = []
    for k, tally in enumerate(rounds):
        total = sum(int(c) for c in tally.values())
        lines.append(f"Round {k + 1}: {_votes(total)}.")
        if question.kind == "choice":
            entries = [(str(i), c) for i, c in enumerate(question.choices)]
        else:
            entries = [(v, v) for v in tally]
        for key, text in entries:
            mark = f" ({RIGHT})" if answer and question.right(key) else ""
            lines.append(f"  {_votes(int(tally.get(key, 0)))}: {text}{mark}")
    if answer and question.kind == "choice":
        lines.append(f"Right answer: {question.answer_text}")
    elif answer:
        lines.append(f"torch: {question.answer_text}; guesses within {question.tolerance:g} count as right.")
    return "\n".join(lines)


def _cells_text(question: Question, rounds: Sequence[Mapping[str, int]], answer: bool) -> str:
    """Each round's votes, then each cell that was tapped with its taps, row-major; with ``answer``, how many
    tapped exactly torch's cells, torch's cells marked, and torch's cells in words."""
    row, col = question.axes
    right = set(question.answer) if answer else set()
    lines: list[str] = []
    for k, tally in enumerate(rounds):
        votes = int(tally.get("votes", 0))
        exactly = f", {int(tally.get('right', 0))} exactly torch's cells" if answer else ""
        lines.append(f"Round {k + 1}: {_votes(votes)}{exactly}.")
        for cell in range(question.cells):
            taps = int(tally.get(str(cell), 0))
            if taps or cell in right:
                r, c = divmod(cell, question.cols)
                mark = " (torch's)" if cell in right else ""
                where = f"{row} {question.row_names[r]}, {col} {question.col_names[c]}"
                lines.append(f"  {where}: {taps} of {votes} tapped it{mark}")
    if answer:
        lines.append(f"torch's cells: {question.where(unmask(question.parse(question.answer)))}.")
    return "\n".join(lines)


def _votes(n: int) -> str:
    return f"{n} vote" if n == 1 else f"{n} votes"
