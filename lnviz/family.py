"""The norm family on one tensor: which elements share a μ and σ².

A batch of feature maps is drawn as x of shape (N, C, H·W), as in Figure 2 of
Wu and He, *Group Normalization* (2018). Every norm here computes

.. math::

    \\hat{x}_i = \\frac{x_i - \\mu_i}{\\sqrt{\\sigma_i^2 + \\epsilon}}, \\qquad
    \\mu_i = \\frac{1}{|S_i|} \\sum_{k \\in S_i} x_k, \\quad
    \\sigma_i^2 = \\frac{1}{|S_i|} \\sum_{k \\in S_i} (x_k - \\mu_i)^2

and they differ only in the pooled set S_i of element i = (n, c, p):

============  ==========================================  ===========
norm          S_i                                          |S_i|
============  ==========================================  ===========
BN            every (n', c, p'): channel c, all samples    N · H·W
LN            every (n, c', p'): sample n, all channels    C · H·W
InstanceNorm  every (n, c, p'): sample n, channel c        H·W
GroupNorm     sample n, the C/G channels of c's group      C/G · H·W
RMSNorm       as LN, with μ fixed at 0 (Zhang and Sennrich)  C · H·W
============  ==========================================  ===========

The norms themselves are :mod:`lnviz.norms`; this module picks the sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots
from torch import Tensor

from lnviz.data import generator
from lnviz.norms import NormResult, batch_norm, group_norm, instance_norm, layer_norm, rms_norm
from lnviz.theme import BLACK, GREY, ROLES

NORMS = ("BN", "LN", "InstanceNorm", "GroupNorm", "RMSNorm")  # Wu and He's order, then RMSNorm


Pick = tuple[int, int, int]  # (n, c, pos)


@dataclass(frozen=True)
class CellStats:
    """One norm's view of the picked element: its μ, σ², pooled count and output."""

    norm: str
    count: int  # |S|, the elements pooled into this μ and σ²
    x: float
    mean: float  # μ (0 for RMSNorm)
    var: float  # σ² (E[x²] for RMSNorm)
    x_hat: float


def make_tensor(batch: int, channels: int, positions: int, seed: int) -> Tensor:
    """x of shape (N, C, H·W), float64, seeded.

    x = a_c + s_n · z with z ~ N(0, 1): each channel has its own offset a_c and
    each sample its own scale s_n, so the norms' statistics visibly differ.
    """
    if batch < 1 or channels < 1 or positions < 2:
        raise ValueError(f"need N >= 1, C >= 1 and H·W >= 2, got ({batch}, {channels}, {positions})")
    g = generator(seed)
    offset = 2.0 * torch.randn(1, channels, 1, generator=g, dtype=torch.float64)  # (1, C, 1)
    scale = torch.exp(0.5 * torch.randn(batch, 1, 1, generator=g, dtype=torch.float64))  # (N, 1, 1)
    z = torch.randn(batch, channels, positions, generator=g, dtype=torch.float64)  # (N, C, H·W)
    return offset + scale * z


def divisors(channels: int) -> tuple[int, ...]:
    """The group counts GroupNorm accepts for C channels."""
    return tuple(g for g in range(1, channels + 1) if channels % g == 0)


def check_groups(channels: int, groups: int) -> None:
    """Raise ValueError, in words, unless ``groups`` divides ``channels``."""
    if groups < 1 or channels % groups != 0:
        choices = ", ".join(str(d) for d in divisors(channels))
        raise ValueError(
            f"GroupNorm splits the C = {channels} channels into G groups of equal size, so G must divide {channels}. "
            f"G = {groups} does not; choose one of {choices}."
        )


def check_pick(shape: tuple[int, ...], pick: Pick) -> None:
    """Raise ValueError unless ``pick`` = (n, c, pos) indexes an element of a tensor of ``shape`` (N, C, H·W)."""
    for name, index, size in zip(("n", "c", "pos"), pick, shape, strict=True):
        if not 0 <= index < size:
            raise ValueError(f"{name} = {index} is outside 0 to {size - 1}")


def clamp_pick(shape: tuple[int, ...], pick: Pick) -> tuple[Pick, list[str]]:
    """``pick`` moved inside a tensor of ``shape`` (N, C, H·W), and a note for each index moved."""
    fixed, notes = [], []
    for name, index, size in zip(("n", "c", "pos"), pick, shape, strict=True):
        value = min(max(index, 0), size - 1)
        if value != index:
            notes.append(f"{name} = {index} is outside 0 to {size - 1}; using {value}.")
        fixed.append(value)
    return (fixed[0], fixed[1], fixed[2]), notes


def normalize(x: Tensor, norm: str, groups: int = 1, eps: float = 1e-5) -> NormResult:
    """``norm`` applied to x of shape (N, C, H·W), by :mod:`lnviz.norms`.

    BN reduces (N, H·W) per channel, mean (1, C, 1); LN and RMSNorm reduce
    (C, H·W) per sample, mean (N, 1, 1); InstanceNorm reduces H·W per (n, c),
    mean (N, C, 1); GroupNorm reduces (C/G, H·W) per (n, group), mean expanded
    to (N, C, 1). Raises ValueError for an unknown norm or a G that does not divide C.
    """
    if x.dim() != 3:
        raise ValueError(f"x must have shape (N, C, H·W), got {tuple(x.shape)}")
    if norm == "BN":
        return batch_norm(x, eps=eps)
    if norm == "LN":
        return layer_norm(x, eps=eps, normalized_ndim=2)
    if norm == "InstanceNorm":
        return instance_norm(x, eps=eps)
    if norm == "GroupNorm":
        check_groups(x.shape[1], groups)
        return group_norm(x, groups, eps=eps)
    if norm == "RMSNorm":
        return rms_norm(x, eps=eps, normalized_ndim=2)
    raise ValueError(f"unknown norm {norm!r}; choose one of {', '.join(NORMS)}")


def pooled_mask(shape: tuple[int, ...], norm: str, pick: Pick, groups: int = 1) -> Tensor:
    """(N, C, H·W) bool: the elements whose values enter the μ, σ² that normalize element ``pick``.

    Its size is the norm's ``count``; see the module's table.
    """
    check_pick(shape, pick)
    n, c, _ = pick
    mask = torch.zeros(shape, dtype=torch.bool)  # (N, C, H·W)
    if norm == "BN":
        mask[:, c, :] = True
    elif norm in ("LN", "RMSNorm"):
        mask[n] = True
    elif norm == "InstanceNorm":
        mask[n, c] = True
    elif norm == "GroupNorm":
        check_groups(shape[1], groups)
        size = shape[1] // groups  # channels per group
        first = (c // size) * size
        mask[n, first : first + size] = True
    else:
        raise ValueError(f"unknown norm {norm!r}; choose one of {', '.join(NORMS)}")
    return mask


def cell_stats(norm: str, result: NormResult, pick: Pick) -> CellStats:
    """The picked element's statistics under ``result``, one norm's output on x (N, C, H·W)."""
    check_pick(tuple(result.x.shape), pick)
    n, c, p = pick

    def at(t: Tensor) -> float:
        return t.expand_as(result.x)[n, c, p].item()

    return CellStats(
        norm=norm,
        count=result.count,
        x=at(result.x),
        mean=at(result.mean),
        var=at(result.var),
        x_hat=at(result.x_hat),
    )


def fig_cube(x: Tensor, mask: Tensor, pick: Pick, norm: str) -> go.Figure:
    """x (N, C, H·W) as a 3-D block of markers: the pooled set in the norm's colour, the pick in black."""
    n_idx, c_idx, p_idx = torch.meshgrid(
        torch.arange(x.shape[0]), torch.arange(x.shape[1]), torch.arange(x.shape[2]), indexing="ij"
    )  # each (N, C, H·W)
    is_pick = torch.zeros_like(mask)
    is_pick[pick] = True
    fig = go.Figure()
    for name, select, color, size, opacity in (
        ("not pooled", ~mask, GREY, 5, 0.3),
        (f"pooled by {norm} ({int(mask.sum())} elements)", mask & ~is_pick, ROLES[norm], 8, 0.95),
        (f"picked (n={pick[0]}, c={pick[1]}, pos={pick[2]})", is_pick, BLACK, 12, 1.0),
    ):
        fig.add_trace(
            go.Scatter3d(
                x=c_idx[select].tolist(),
                y=n_idx[select].tolist(),
                z=p_idx[select].tolist(),
                mode="markers",
                marker=dict(symbol="square", size=size, color=color, line=dict(width=0)),
                opacity=opacity,
                name=name,
                customdata=x[select].to(torch.float32).tolist(),
                hovertemplate="n=%{y}, c=%{x}, pos=%{z}<br>x = %{customdata:.3f}<extra></extra>",
            )
        )
    fig.update_layout(
        title=f"{norm}: the elements that share the picked element's statistics",
        scene=dict(
            xaxis=dict(title="C", dtick=1),
            yaxis=dict(title="N", dtick=1, autorange="reversed"),
            zaxis=dict(title="H·W", dtick=2),
            aspectmode="cube",
            camera=dict(eye=dict(x=1.2, y=-1.7, z=0.8)),
        ),
        height=520,
        legend=dict(orientation="h", y=-0.05),
        margin=dict(l=0, r=0, t=50, b=0),
    )
    return fig


def fig_family(masks: dict[str, Tensor | None], pick: Pick, chosen: str, note: str = "") -> go.Figure:
    """One small (N, C) panel per norm: the share of each (n, c) row of H·W positions that is pooled.

    ``masks`` maps each name in :data:`NORMS` to its (N, C, H·W) pooled mask,
    or None when that norm cannot be computed (``note`` says why, on its panel).
    """
    titles = [f"<b>{name}</b>" if name == chosen else name for name in NORMS]
    fig = make_subplots(rows=1, cols=len(NORMS), subplot_titles=titles, horizontal_spacing=0.03)
    missing = []
    for i, name in enumerate(NORMS, start=1):
        mask = masks.get(name)
        if mask is None:
            left, right = fig.get_subplot(1, i).xaxis.domain
            fig.add_annotation(
                text=note or "not computed",
                x=(left + right) / 2,
                y=0.5,
                xref="paper",
                yref="paper",
                showarrow=False,
                font=dict(color=ROLES[name]),
            )
            missing.append(i)
            continue
        share = mask.to(torch.float32).mean(dim=2)  # (N, C): fraction of the H·W positions pooled
        fig.add_trace(
            go.Heatmap(
                z=share.tolist(),
                zmin=0,
                zmax=1,
                colorscale=[[0, "#f2f2f2"], [1, ROLES[name]]],
                showscale=False,
                xgap=2,
                ygap=2,
                name=name,
                hovertemplate="n=%{y}, c=%{x}: %{z:.0%} of H·W pooled<extra>" + name + "</extra>",
            ),
            row=1,
            col=i,
        )
        fig.add_trace(
            go.Scatter(
                x=[pick[1]],
                y=[pick[0]],
                mode="markers",
                marker=dict(symbol="x", size=12, color=BLACK),
                name="picked",
                showlegend=False,
                hoverinfo="skip",
            ),
            row=1,
            col=i,
        )
    fig.update_xaxes(title_text="C", dtick=1, showgrid=False, zeroline=False)
    fig.update_yaxes(autorange="reversed", dtick=1, showgrid=False, zeroline=False)
    fig.update_yaxes(title_text="N", col=1)
    for i in missing:
        fig.update_xaxes(visible=False, row=1, col=i)
        fig.update_yaxes(visible=False, row=1, col=i)
    fig.update_layout(
        title="Each norm's pooled set, seen from the front: one cell is a whole row of H·W positions",
        height=300,
        margin=dict(t=80, b=40),
    )
    return fig
