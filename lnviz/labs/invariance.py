"""Invariance under re-scaling and re-centering: Table 1 of Ba, Kiros and Hinton (2016), computed.

RMSNorm's row is Table 1 of Zhang and Sennrich (2019), *Root Mean Square Layer Normalization*.

A random layer has summed inputs a = x Wᵀ, shape (N, H), for N cases x (N, D)
and weights W (H, D), one row w_i per hidden unit. Each norm turns a into a
normalized output, with gain 1 and bias 0 (the paper applies g and b *after*
normalizing and leaves them untouched, so they cancel in any difference):

=========  ==================================================  ====================
norm       normalized output                                   reduces over
=========  ==================================================  ====================
BN         (a - μ) / √(σ² + ε)                                 the N cases (dim 0)
WN         x (W / ‖w_i‖)ᵀ, i.e. a_i / ‖w_i‖                    w_i's D inputs
LN         (a - μ) / √(σ² + ε)                                 the H units (dim 1)
RMSNorm    a / √(mean(a²) + ε)  (Zhang and Sennrich 2019)      the H units (dim 1)
=========  ==================================================  ====================

RMSNorm's ε inside the root is ``F.rms_norm``'s; the paper's RMS(a) has none.

Each transformation of Table 1 changes W or x; the table reports max |Δ| of the
normalized output over all N × H entries. Every scale factor is δ = 3 > 0:
a negative δ would flip signs, which no norm undoes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.maths.data import generator
from lnviz.maths.norms import batch_norm, layer_norm, rms_norm

CASES, INPUTS, UNITS = 16, 10, 12  # N, D, H
FACTOR = 3.0  # δ: every re-scaling multiplies by this positive number
# max |Δ| at most this counts as invariant (✓). The outputs are of order 1: at
# ε = 0 an invariance holds to float64 rounding (~1e-15) and a broken one moves
# them by ~1, while ε > 0 leaves about ε / σ² in between, past TOL once ε ≳ 1e-2.
TOL = 1e-3

NORMS = ("BN", "WN", "LN", "RMSNorm")

TRANSFORMS: dict[str, str] = {
    "weight_matrix_rescale": "W → δ W",
    "weight_matrix_recenter": "W → W + 1 vᵀ (the same vector v added to every unit's weights)",
    "weight_vector_rescale": "w₀ → δ w₀ (one unit's incoming weights)",
    "dataset_rescale": "x → δ x (every case)",
    "dataset_recenter": "x → x + v (the same vector added to every case)",
    "case_rescale": "x₀ → δ x₀ (one training case)",
}

TRANSFORM_LABELS = {
    "weight_matrix_rescale": "weight matrix<br>re-scaling",
    "weight_matrix_recenter": "weight matrix<br>re-centering",
    "weight_vector_rescale": "weight vector<br>re-scaling",
    "dataset_rescale": "dataset<br>re-scaling",
    "dataset_recenter": "dataset<br>re-centering",
    "case_rescale": "single training<br>case re-scaling",
}

# Table 1 of the paper (True: invariant). RMSNorm's row is Table 1 of Zhang and
# Sennrich (2019): a / rms(a) per case survives any positive scaling of a case's
# whole vector a (weight matrix, dataset, single case) but no shift, and scaling
# one unit changes the case's rms.
PAPER: dict[str, dict[str, bool]] = {
    "BN": dict(zip(TRANSFORMS, (True, False, True, True, True, False), strict=True)),
    "WN": dict(zip(TRANSFORMS, (True, False, True, False, False, False), strict=True)),
    "LN": dict(zip(TRANSFORMS, (True, True, False, True, False, True), strict=True)),
    "RMSNorm": dict(zip(TRANSFORMS, (True, False, False, True, False, True), strict=True)),
}

CELLS = len(PAPER) * len(TRANSFORMS)


@dataclass(frozen=True)
class Layer:
    """The random layer and the vectors v the re-centerings add, all float64 (Ba, Kiros and Hinton write v as γ,
    their gain as g; here γ is the gain everywhere else, so the re-centering vector is v)."""

    x: Tensor  # (N, D): the cases
    weight: Tensor  # (H, D): one row w_i per unit
    recenter_w: Tensor  # (D,): v, added to every row of W
    recenter_x: Tensor  # (D,): v, added to every case


@dataclass(frozen=True)
class Invariance:
    """Every norm's output before and after every transformation, and max |Δ|."""

    layer: Layer
    eps: float
    before: dict[str, Tensor]  # norm -> (N, H)
    after: dict[str, dict[str, Tensor]]  # norm -> transform -> (N, H)
    table: dict[str, dict[str, float]]  # norm -> transform -> max |Δ|


def make_layer(seed: int, cases: int = CASES, inputs: int = INPUTS, units: int = UNITS) -> Layer:
    """x (N, D), W (H, D) and the two v (D,), standard normal from ``generator(seed)``."""
    g = generator(seed)
    x = torch.randn(cases, inputs, generator=g, dtype=torch.float64)  # (N, D)
    weight = torch.randn(units, inputs, generator=g, dtype=torch.float64)  # (H, D)
    recenter_w = torch.randn(inputs, generator=g, dtype=torch.float64)  # (D,)
    recenter_x = torch.randn(inputs, generator=g, dtype=torch.float64)  # (D,)
    return Layer(x=x, weight=weight, recenter_w=recenter_w, recenter_x=recenter_x)


def transform(layer: Layer, name: str, factor: float = FACTOR) -> tuple[Tensor, Tensor]:
    """(W', x') after the transformation ``name`` of :data:`TRANSFORMS`, shapes (H, D) and (N, D)."""
    w, x = layer.weight, layer.x
    if name == "weight_matrix_rescale":
        return factor * w, x
    if name == "weight_matrix_recenter":
        return w + layer.recenter_w[None, :], x  # every a_n shifts by vᵀx_n: the same for all units, its own per case
    if name == "weight_vector_rescale":
        w = w.clone()
        w[0] = factor * w[0]
        return w, x
    if name == "dataset_rescale":
        return w, factor * x
    if name == "dataset_recenter":
        return w, x + layer.recenter_x[None, :]  # every a_i shifts by w_iᵀv, the same for all cases
    if name == "case_rescale":
        x = x.clone()
        x[0] = factor * x[0]
        return w, x
    raise ValueError(f"unknown transformation {name!r}; choose one of {list(TRANSFORMS)}")


def normalized(norm: str, weight: Tensor, x: Tensor, eps: float) -> Tensor:
    """The normalized summed inputs (N, H) of a = x Wᵀ under ``norm``, gain 1, bias 0.

    WN has no ε: it divides by ‖w_i‖, which is not 0 for a random W.
    """
    if norm == "WN":
        return x @ (weight / weight.norm(dim=1, keepdim=True)).T  # (N, H)
    a = x @ weight.T  # (N, H)
    methods: dict[str, Callable[[], Tensor]] = {
        "BN": lambda: batch_norm(a, eps=eps).y,
        "LN": lambda: layer_norm(a, eps=eps).y,
        "RMSNorm": lambda: rms_norm(a, eps=eps).y,
    }
    if norm not in methods:
        raise ValueError(f"unknown norm {norm!r}; choose one of {list(NORMS)}")
    return methods[norm]()


def invariance(eps: float, seed: int, factor: float = FACTOR) -> Invariance:
    """Every norm's output before and after each transformation, for the layer of ``seed``.

    ``factor`` is δ, which must be > 0 (sign-preserving).
    """
    if not factor > 0:
        raise ValueError(f"the scale factor must be positive (sign-preserving), got {factor}")
    eps = float(eps)
    if not 0.0 <= eps < float("inf"):
        raise ValueError(f"eps must be a finite number >= 0, got {eps}")
    layer = make_layer(seed)
    before, after, table = {}, {}, {}
    for norm in NORMS:
        before[norm] = normalized(norm, layer.weight, layer.x, eps)
        after[norm], table[norm] = {}, {}
        for name in TRANSFORMS:
            out = normalized(norm, *transform(layer, name, factor), eps)
            after[norm][name] = out
            table[norm][name] = float((out - before[norm]).abs().max())
    return Invariance(layer=layer, eps=eps, before=before, after=after, table=table)


def invariance_table(eps: float, seed: int) -> dict[str, dict[str, float]]:
    """max |Δ| of the normalized output, by norm ("BN", "WN", "LN", "RMSNorm") then transformation."""
    return invariance(eps, seed).table


def marks(table: dict[str, dict[str, float]], tol: float = TOL) -> dict[str, dict[str, bool]]:
    """True (invariant, ✓) where max |Δ| ≤ ``tol``."""
    return {norm: {name: delta <= tol for name, delta in row.items()} for norm, row in table.items()}


def agreement(table: dict[str, dict[str, float]], tol: float = TOL) -> int:
    """How many of the :data:`CELLS` cells get the same ✓/✗ as :data:`PAPER`."""
    ok = marks(table, tol)
    return sum(ok[norm][name] == PAPER[norm][name] for norm in NORMS for name in TRANSFORMS)


# Cell fills: a check's colours (lnviz.figures.theme), white for ✓ and gold for ✗, not the value scale's green and
# purple, which mean a value's sign on other pages. The gaps between cells take GRID.
HOLDS, BREAKS = theme.HOLDS, theme.BREAKS
GRID = "#BBBBBB"
FLOOR = 1e-17  # max |Δ| below this is drawn as this (log scale; 0 has no logarithm)
Z_RANGE = (-17.0, 1.0)  # log10 max |Δ| from FLOOR to 10


def _cell(glyph: str, delta: float, off_paper: bool) -> str:
    """A cell's text: the large ✓ or ✗, then max |Δ| and any "≠ paper" small under it."""
    # One digit (the hover has the full value): six columns of these fit a phone's width. The rows are
    # 90 px tall to hold a third line.
    small = f"<br><span style='font-size:50%;font-weight:normal'>{delta:.0e}</span>"
    if off_paper:
        small += "<br><span style='font-size:50%;font-weight:normal'>≠ paper</span>"
    return glyph + small


def fig_table(table: dict[str, dict[str, float]], tol: float = TOL) -> go.Figure:
    """The table as a heatmap: norms down (rows), transformations across; each cell ✓ or ✗ with max |Δ|.

    ``z`` is log10 max |Δ| (floored at :data:`FLOOR`, ``customdata`` holds the
    value itself), on a two-colour scale that changes at ``tol``: ✓ cells
    white, ✗ cells gold (:data:`lnviz.figures.theme.HOLDS`, :data:`~lnviz.figures.theme.BREAKS`). A cell whose mark differs from :data:`PAPER`
    gets a "≠ paper" note. Row labels take each norm's colour.
    """
    norms, names = list(table), list(TRANSFORMS)
    raw = np.array([[table[n][t] for t in names] for n in norms], dtype=np.float64)  # (norms, transforms)
    z = np.log10(np.maximum(raw, FLOOR)).astype(np.float32)
    ok = marks(table, tol)
    text = [
        [_cell("✓" if ok[n][t] else "✗", table[n][t], n in PAPER and ok[n][t] != PAPER[n][t]) for t in names]
        for n in norms
    ]
    lo, hi = Z_RANGE
    step = min(max((np.log10(tol) - lo) / (hi - lo), 0.0), 1.0)  # where the fill turns from ✓ to ✗
    heat = plot.heatmap(z, [TRANSFORM_LABELS[t] for t in names], norms, "max |Δ|") | dict(
        text=text,
        texttemplate="%{text}",
        # An explicit size: plotly's default shrinks heatmap text to fit the cell, to nothing on a phone.
        textfont=dict(size=22, color=theme.BLACK, weight="bold"),
        colorscale=[[0.0, HOLDS], [step, HOLDS], [step, BREAKS], [1.0, BREAKS]],
        zmin=lo,
        zmax=hi,
        showscale=False,
        xgap=2,
        ygap=2,
        customdata=raw.astype(np.float32),
        hovertemplate="%{y}, %{x}<br>max |Δ| = %{customdata:.3g}<extra></extra>",
    )
    key = f"✓ max |Δ| ≤ {tol:g}    <span style='color:{BREAKS}'>■</span> ✗ larger"  # ✓ cells are white
    layout = dict(
        # Level where the columns are wide enough, else on end (a phone): the top margin holds either.
        xaxis=dict(side="top", showgrid=False, autotickangles=[0, 90]),
        yaxis=dict(
            autorange="reversed",
            showgrid=False,
            tickvals=norms,
            ticktext=[f"<b><span style='color:{theme.ROLES.get(n, theme.INK)}'>{n}</span></b>" for n in norms],
            tickfont=dict(size=theme.TITLE_SIZE),
        ),
        annotations=[plot.note(key, 0, 0, xanchor="left", yanchor="top", yshift=-8)],
        plot_bgcolor=GRID,  # shows in the gaps: white cells keep their edges
    )
    return plot.figure([heat], layout, margin=dict(l=110, r=10, t=110, b=40), height=510)
