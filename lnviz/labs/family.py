"""The norm family on one tensor: which elements share a μ and σ² (RMSNorm: a mean square, no μ).

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

LN's set is that of Wu and He's figure of a convolutional network: a sample's every channel and position. A
transformer's LN pools one token's C features instead (:func:`ln_here`). The papers: BN, Ioffe and Szegedy
(2015); LN, Ba, Kiros and Hinton (2016); InstanceNorm, Ulyanov, Vedaldi and Lempitsky (2016); GroupNorm, Wu and
He (2018); RMSNorm, Zhang and Sennrich (2019).

The norms themselves are :mod:`lnviz.maths.norms`; this module picks the sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.maths.data import generator, line
from lnviz.maths.norms import NormResult, batch_norm, group_norm, instance_norm, layer_norm, rms_norm
from lnviz.views.state import NORM

NORMS = NORM.options  # the Norm control's: Wu and He's order (BN, LN, InstanceNorm, GroupNorm), then RMSNorm

# Where RMSNorm's formula is shown: its ε is torch's, not the paper's.
RMS_EPS = "ε inside the root, as `F.rms_norm` puts it; Zhang and Sennrich's RMS(a) (2019) has no ε."


def ln_here(channels: int, positions: int) -> str:
    """What LN pools on this page, and what it pools in a transformer, for x of shape (N, C, H·W)."""
    return (
        f"LN here pools one sample's {channels} channels at all its {positions} positions: "
        f"{channels * positions} values share one μ and σ², as in Wu and He's figure of a convolutional network. "
        "In a transformer LN pools one token's features only (the explorer's rows, *Inside a transformer*): "
        f"were these positions tokens, each would get its own μ and σ², from its {channels} channels."
    )


Pick = tuple[int, int, int]  # (sample, channel, position): (n, c, p)
PICK_NAMES = ("sample", "channel", "position")  # the indices of a pick, as the controls and links name them


@dataclass(frozen=True)
class CellStats:
    """One norm's view of the picked element: its μ, σ², pooled count and output."""

    norm: str
    count: int  # |S|, the elements pooled into this μ and σ²
    x: float
    mean: float  # μ (0 for RMSNorm)
    var: float  # σ² (E[x²] for RMSNorm)
    x_hat: float


def make_tensor(batch: int, channels: int, positions: int, seed: int, draw: str = "stable") -> Tensor:
    """x of shape (N, C, H·W), float64, seeded.

    x = a_c + s_n · z with z ~ N(0, 1): each channel has its own offset a_c and
    each sample its own scale s_n, so the norms' statistics visibly differ.
    In the stable draw (:data:`lnviz.views.state.DRAW`) a_c, s_n and each
    (n, c)'s H·W values are lines of their own (:func:`lnviz.maths.data.line`),
    so a smaller N, C or H·W keeps the rest of x; in the whole draw they come
    from one generator, as before version 4's links.
    """
    if batch < 1 or channels < 1 or positions < 2:
        raise ValueError(f"need N >= 1, C >= 1 and H·W >= 2, got ({batch}, {channels}, {positions})")
    if draw == "stable":
        offset = 2.0 * line(seed, "channel offset", 0, channels)[None, :, None]  # (1, C, 1)
        scale = torch.exp(0.5 * line(seed, "sample scale", 0, batch))[:, None, None]  # (N, 1, 1)
        z = torch.stack(
            [torch.stack([line(seed, f"x/{c}", n, positions) for c in range(channels)]) for n in range(batch)]
        )  # (N, C, H·W): sample n's channel c is the line ("x/c", n)
        return offset + scale * z
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
    """Raise ValueError unless ``pick`` = (sample, channel, position) indexes a tensor of ``shape`` (N, C, H·W)."""
    for name, index, size in zip(PICK_NAMES, pick, shape, strict=True):
        if not 0 <= index < size:
            raise ValueError(f"{name} = {index} is outside 0 to {size - 1}")


def normalize(x: Tensor, norm: str, groups: int = 1, eps: float = 1e-5) -> NormResult:
    """``norm`` applied to x of shape (N, C, H·W), by :mod:`lnviz.maths.norms`.

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


def _aspect(shape: tuple[int, ...], zoom: float = 1.2) -> dict[str, float]:
    """The cube's proportions: one unit per element along each axis, no axis under a third of the longest.

    In orthographic projection the ratios also set the zoom: ``zoom`` times
    plotly's unit box for the longest axis fills the scene without cutting it.
    """
    n, c, p = shape
    longest = max(shape)
    return {axis: zoom * max(size, longest / 3) / longest for axis, size in (("x", c), ("y", n), ("z", p))}


def _cube_traces(x: Tensor, mask: Tensor, pick: Pick, norm: str) -> list[dict[str, Any]]:
    """Three marker sets over x (N, C, H·W): the elements not pooled, the pooled set less the pick, the pick."""
    n_idx, c_idx, p_idx = torch.meshgrid(
        torch.arange(x.shape[0]), torch.arange(x.shape[1]), torch.arange(x.shape[2]), indexing="ij"
    )  # each (N, C, H·W)
    is_pick = torch.zeros_like(mask)  # (N, C, H·W)
    is_pick[pick] = True
    traces = []
    for name, select, color, marker in (
        ("not pooled", ~mask, theme.GREY, dict(size=3, opacity=0.35)),
        ("pooled", mask & ~is_pick, theme.ROLES[norm], dict(size=7, symbol="square")),
        ("picked", is_pick, theme.INK, dict(size=13, symbol="diamond", line=dict(width=2, color="white"))),
    ):
        traces.append(
            dict(
                type="scatter3d",
                x=c_idx[select].tolist(),
                y=n_idx[select].tolist(),
                z=p_idx[select].tolist(),
                mode="markers",
                name=name,
                marker=dict(color=color) | marker,
                customdata=plot.to_numpy(x[select]),
                hovertemplate="sample %{y}, channel %{x}, position %{z}<br>x = %{customdata:.3f}<extra></extra>",
            )
        )
    return traces


def fig_cube(x: Tensor, mask: Tensor, pick: Pick, norm: str, wide: bool = False) -> go.Figure:
    """x (N, C, H·W) as a 3-D block of markers: the pooled set in the norm's colour, the pick in black.

    ``mask`` (N, C, H·W) is the pooled set of element ``pick`` = (sample,
    channel, position) under ``norm`` (:func:`pooled_mask`): the elements its
    μ and σ² (RMSNorm's mean square) reduce over. The others are small grey dots, so the set stands
    out as a solid block; the pick is a large black diamond. Channel runs
    across, sample into the page, position up, as in Wu and He's Figure 2,
    seen in orthographic projection so that equal blocks look equal.

    ``wide`` is for lecture mode's picture beside the controls at 1280 × 720:
    no legend (the page says what the marks are, beside the figure), a
    shorter figure (400 px, 510 once :func:`lnviz.figures.plot.lecture` scales it)
    and a larger block in it, so that the cube, not its title, fills the
    first screen.
    """
    n, c, p = pick
    count = int(mask.sum())
    font = dict(family=theme.FONT_FAMILY)
    axis = dict(showbackground=False, gridcolor="#e5e5e5", zeroline=False, tickfont=font)
    scene = dict(
        xaxis=axis | dict(title=dict(text="channel", font=font), dtick=2 if x.shape[1] > 8 else 1),
        yaxis=axis | dict(title=dict(text="sample", font=font), dtick=1, autorange="reversed"),
        zaxis=axis | dict(title=dict(text="position", font=font), dtick=2 if x.shape[2] > 8 else 1),
        aspectmode="manual",
        aspectratio=_aspect(tuple(x.shape), zoom=1.3 if wide else 1.2),
        camera=dict(eye=dict(x=0.9, y=-1.6, z=0.8), projection=dict(type="orthographic")),
    )
    shared = "its E[x²] (no μ)" if norm == "RMSNorm" else "its μ and σ²"  # short enough for a phone
    layout = dict(
        title=plot.heading(f"{norm} pools {count} elements", f"for the picked x[{n}, {c}, {p}]: they share {shared}"),
        scene=scene,
        legend=plot.legend_above(),
        showlegend=not wide,
    )
    margin, height = (dict(l=0, r=0, t=70, b=0), 400) if wide else (dict(l=0, r=0, t=110, b=0), 540)
    return plot.figure(_cube_traces(x, mask, pick, norm), layout, margin=margin, height=height)


def _panel_axes(k: int, domain: list[float], channels: int, shown: bool) -> dict[str, dict[str, Any]]:
    """The axes of panel ``k`` of the small multiples: channel across, sample down; titled on the first only."""
    x, y = plot.axis_names(k)
    grid = dict(showgrid=False, zeroline=False, visible=shown)
    # At most about six channel ticks, so that they stay apart on a phone.
    across = grid | dict(domain=domain, anchor=y, dtick=max(1, -(-channels // 6)), tickangle=0)
    down = grid | dict(anchor=x, autorange="reversed", dtick=1)
    if k == 1:
        across["title"], down["title"] = dict(text="channel"), dict(text="sample")
    return {plot.layout_key(x): across, plot.layout_key(y): down}


def fig_family(masks: dict[str, Tensor | None], pick: Pick, chosen: str, note: str = "") -> go.Figure:
    """One small (N, C) panel per norm: the share of each (n, c) row of H·W positions that is pooled.

    ``masks`` maps each name in :data:`NORMS` to its (N, C, H·W) pooled mask,
    or None when that norm cannot be computed (``note`` says why, across its
    empty panel). Each panel's cell (n, c) is the mean of its mask over H·W,
    in [0, 1]; the pick is an ×. The chosen norm's title is bold. Panel k's
    title is annotation k - 1.
    """
    channels = next((m.shape[1] for m in masks.values() if m is not None), 1)
    domains = plot.columns(len(NORMS), gap=0.03)
    traces, titles, notes, layout = [], [], [], {}
    for k, (name, domain) in enumerate(zip(NORMS, domains, strict=True), start=1):
        title = name.replace("Norm", "<br>Norm") if len(name) > 2 else name  # five titles side by side fit a phone
        titles.append(plot.title(f"<b>{title}</b>" if name == chosen else title, sum(domain) / 2, size=theme.FONT_SIZE))
        mask = masks.get(name)
        layout |= _panel_axes(k, domain, channels, shown=mask is not None)
        if mask is None:  # written upwards, to fit the panel's width on a phone
            font = dict(color=theme.ROLES[name])
            notes.append(plot.note(note or "not computed", sum(domain) / 2, 0.5, font=font, textangle=-90))
            continue
        traces += _family_panel(mask, pick, name, plot.axis_names(k))
    layout |= dict(
        title=plot.heading(
            "Each norm's pooled set, seen from the front", "a cell is a sample's channel: its H·W positions"
        ),
        annotations=titles + notes,
        showlegend=False,
    )
    return plot.figure(traces, layout, margin=dict(l=55, r=10, t=100, b=45), height=340)


def _family_panel(mask: Tensor, pick: Pick, name: str, axes: plot.Axes) -> list[dict[str, Any]]:
    """One norm's panel: its pooled share per (n, c), (N, C), from white to its colour, and the pick's ×."""
    share = mask.to(torch.float32).mean(dim=2)  # (N, C): fraction of the H·W positions pooled
    n, c = share.shape
    heat = plot.heatmap(
        plot.to_numpy(share),
        np.arange(c),
        np.arange(n),
        name,
        axes,
        zmin=0,
        zmax=1,
        colorscale=[[0, "#f2f2f2"], [1, theme.ROLES[name]]],
        showscale=False,
        xgap=2,
        ygap=2,
        hovertemplate="sample %{y}, channel %{x}: %{z:.0%} of H·W pooled<extra>" + name + "</extra>",
    )
    cross = plot.points([pick[1]], [pick[0]], "picked", theme.INK, axes, symbol="x", size=12)
    return [heat, cross | dict(showlegend=False, hoverinfo="skip")]
