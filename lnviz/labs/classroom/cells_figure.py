"""The reveal of a "cells" question: per cell, the share of the class that tapped it, torch's cells outlined.

``rounds`` holds one :func:`~lnviz.labs.classroom.question.tally` per round, the first round first: for each
cell "0" to "n-1" how many votes tapped it, "right" how many tapped exactly torch's cells, and "votes" how
many voted. Each round is one grid, laid out as the phone's (row 0 on top), its cells coloured by share on
:data:`~lnviz.figures.theme.SEQUENTIAL` and each share written in its cell as a percentage, so nothing rests on
colour. torch's cells are outlined twice inside their edges, in ink and within it in white, so that one of the two
stands out on every fill, and the marked cell carries a star in its corner, over the outline and clear of its share;
peer instruction's first reveal can leave torch's cells out (``answer=False``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from lnviz.figures import plot, theme
from lnviz.labs.classroom.question import Question

CELL_PX = 34  # a cell's height on a screen; the lecture scale makes it 43 px on a projector
# The grid's most height on a projector, before the lecture scale: 8 rows of 22 px, so that the chart fits under a
# three-line question and the presenter's buttons on a 1280 × 720 screen (tests/test_browser_classroom.py).
LECTURE_GRID_PX = 176
TORCH = "outlined: torch's cells"
MARKED = "the marked cell"
# A share's text, 17 px on a projector: "100" fits a cell at 1280 × 720 of an 8 columns' grid beside another round's
# ("100%" did not, nor at 20 px); the round's note says what the numbers are, "% of n votes".
TEXT_SIZE = 11
GAP = 2  # px between cells
INK, WHITE = 3, 2  # px: torch's outline, an ink ring just inside a cell's edge and a white ring just inside the ink
STAR = 12  # px: the marked cell's star


def shares(question: Question, tally: Mapping[str, int]) -> np.ndarray:
    """(rows, cols): each cell's share of the round's votes that tapped it, 0 where nobody voted."""
    votes = int(tally.get("votes", 0))
    counts = np.array([int(tally.get(str(k), 0)) for k in range(question.cells)], dtype=np.float64)
    return (counts / max(votes, 1)).reshape(question.rows, question.cols)


def _caption(tally: Mapping[str, int], k: int, rounds: int, answer: bool) -> str:
    votes = int(tally.get("votes", 0))
    head = f"round {k + 1}: " if rounds > 1 else ""
    said = f"% of {votes} vote" if votes == 1 else f"% of {votes} votes"
    return head + said + (f", {int(tally.get('right', 0))} right" if answer else "")


def fig_cells(
    question: Question, rounds: Sequence[Mapping[str, int]], *, answer: bool = True, presenting: bool = False
) -> go.Figure:
    """One grid per round: each cell's share of the votes that tapped it, written as a percentage in the cell.

    ``answer`` outlines torch's cells and says how many votes were exactly them; ``presenting`` scales every
    text for a projector (:func:`lnviz.figures.plot.lecture`).
    """
    if question.kind != "cells":
        raise ValueError(f"{question.id} is a {question.kind} question, not a cells one")
    rows, cols = question.rows, question.cols
    domains = plot.columns(max(1, len(rounds)), gap=0.08)
    traces, annotations, layout, grids = [], [], {}, []
    x, y = np.arange(cols), np.arange(rows)
    for k, tally in enumerate(rounds or [{}]):
        axes = plot.axis_names(k + 1)
        grids.append(axes)
        share = shares(question, tally)  # (rows, cols)
        counts = (share * int(tally.get("votes", 0))).round().astype(int)  # (rows, cols): the taps themselves
        traces.append(
            plot.heatmap(
                share,
                x,
                y,
                f"round {k + 1}",
                axes,
                colorscale=theme.SEQUENTIAL,
                zmin=0.0,
                zmax=1.0,
                showscale=False,
                xgap=GAP,
                ygap=GAP,
                customdata=counts,
                text=np.round(100 * share).astype(int).astype(str),  # the note above says "% of n votes"
                texttemplate="%{text}",
                textfont=dict(size=TEXT_SIZE),
                hovertemplate=f"{question.axes[0]} %{{y}}, {question.axes[1]} %{{x}}: %{{customdata}} tapped it "
                "(%{z:.0%})<extra></extra>",
            )
        )
        annotations.append(
            plot.note(
                _caption(tally, k, len(rounds), answer), domains[k][0], 1.0, xanchor="left", yanchor="bottom", yshift=4
            )
        )
        layout[plot.layout_key(axes[0])] = dict(
            domain=domains[k],
            tickvals=x.tolist(),
            ticktext=list(question.col_names),
            title=dict(text=question.axes[1]),
            side="bottom",
            anchor=axes[1],
            showgrid=False,
            zeroline=False,
        )
        layout[plot.layout_key(axes[1])] = dict(
            tickvals=y.tolist(),
            ticktext=list(question.row_names) if k == 0 else [""] * rows,
            title=dict(text=question.axes[0] if k == 0 else ""),
            range=[rows - 0.5, -0.5],  # row 0 on top, as on the phone
            anchor=axes[0],
            showgrid=False,
            zeroline=False,
        )
    left = 16 + 8 * max(len(name) for name in question.row_names) + 22
    margin = dict(l=left, r=12, t=30, b=70)
    # The legend at the figure's foot, under the columns' names and titles, however short the grid is.
    legend = dict(orientation="h", x=0, xanchor="left", yref="container", y=0, yanchor="bottom")
    layout |= dict(annotations=annotations, legend=legend)
    cell_px = min(CELL_PX, LECTURE_GRID_PX // rows) if presenting else CELL_PX
    fig = plot.figure(traces, layout, margin=margin, height=rows * cell_px + margin["t"] + margin["b"])
    fig = plot.lecture(fig) if presenting else fig
    # torch's rings and the star are drawn last, as traces: plotly draws a shape over every trace, the star too.
    high = (fig.layout.height - fig.layout.margin.t - fig.layout.margin.b) / rows  # a row's px, as drawn
    if answer:
        fig.add_traces([ring for axes in grids for ring in _rings(question, axes, high)])
    fig.add_traces([_star(question, axes, high, k == 0) for k, axes in enumerate(grids)])
    if answer:  # a legend entry for the outline, whose rings have none
        fig.add_trace(
            dict(type="scatter", x=[None], y=[None], mode="markers", name=TORCH, showlegend=True)
            | dict(marker=dict(symbol="square", size=12, color="white", line=dict(color=theme.INK, width=3)))
        )
    return fig


def _rings(question: Question, axes: plot.Axes, high: float) -> list[dict]:
    """torch's outline of its cells on one round's grid: an ink ring just inside each cell's drawn edge and a white
    ring just inside the ink, one trace each. A white casing over the edge matched the white gaps between cells, and
    the ink vanished on the darkest fills; inside, the ink stands out on a pale cell and the white on a dark one.
    Insets in data units from a row's height in px, ``high``: a cell as wide as tall or wider has them as far in or
    a little farther."""

    def ring(inset: float, name: str, color: str, width: float) -> dict:  # ``inset`` px inside the drawn edge
        d = (GAP / 2 + inset) / high
        xs, ys = [], []
        for cell in question.answer:
            r, c = divmod(cell, question.cols)
            xs += [c - 0.5 + d, c + 0.5 - d, c + 0.5 - d, c - 0.5 + d, c - 0.5 + d, None]
            ys += [r - 0.5 + d, r - 0.5 + d, r + 0.5 - d, r + 0.5 - d, r - 0.5 + d, None]
        return plot.line(xs, ys, name, color, axes, width=width, showlegend=False, hoverinfo="skip")

    return [ring(INK / 2, TORCH, theme.INK, INK), ring(INK + WHITE / 2, f"{TORCH}, inner", "white", WHITE)]


def _star(question: Question, axes: plot.Axes, high: float, legend: bool) -> dict:
    """The marked cell's star, its centre half its size and a pixel in from the cell's drawn top-left corner."""
    row, col = divmod(question.marked, question.cols)
    d = (GAP + STAR) / 2 / high
    star = dict(symbol="star", size=STAR, line=dict(color=theme.INK, width=1.5))
    return plot.points([col - 0.5 + d], [row - 0.5 + d], MARKED, "white", axes, **star) | dict(
        mode="markers", showlegend=legend, hoverinfo="skip"
    )
