"""Which cells a norm's statistic reads: torch's answer to a "cells" question, from the gradient.

For the element ``at`` of x, a norm normalizes with

.. math::

    \\mu = \\frac{1}{|S|} \\sum_{k \\in S} x_k, \\qquad
    \\sigma = \\sqrt{\\frac{1}{|S|} \\sum_{k \\in S} (x_k - \\mu)^2 + \\epsilon}

over its pooled set S (biased variance, ε inside the root): the μ and σ that
``F.batch_norm`` (training mode), ``F.layer_norm``, ``F.group_norm`` and
``F.instance_norm`` subtract and divide by, y = (x − μ) / σ. The set is:

=============  ===========  ==========================================================
norm           x            S of element ``at``
=============  ===========  ==========================================================
BN             (B, H)       its column: feature j of every sample
LN             (B, H)       its row: every feature of sample i
GroupNorm      (N, C, *)    sample n's channels in c's group of C/G, at every position
InstanceNorm   (N, C, L)    sample n's channel c, at every position
LN per token   (T, H)       its token's H features, no other token's (a transformer's LN)
=============  ===========  ==========================================================

:func:`support` finds S as torch does, without being told it: the cells k where
∂μ/∂x_k or ∂σ/∂x_k, by autograd in float64, is non-zero. The phone's grid is x
with its leading dimensions flattened into rows (:func:`grid`), so a cell's
row-major index is the element's index in x.flatten().
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

NORMS = ("BN", "LN", "GroupNorm", "InstanceNorm", "LN per token")
STATISTICS = ("mu", "sigma")


def _pooled_dims(norm: str, x: Tensor, groups: int) -> tuple[Tensor, tuple[int, ...]]:
    """x viewed so that one entry of its leading dimensions is one statistic, and the dimensions it pools.

    Returns ``(view, dims)``: BN (H, B) pooling dim 1; LN and LN per token (B, H) pooling dim 1; GroupNorm
    (N, G, C/G · L) pooling dim 2; InstanceNorm (N, C, L) pooling dim 2.
    """
    if norm == "BN":
        if x.dim() != 2:
            raise ValueError(f"BN here takes x of shape (B, H), got {tuple(x.shape)}")
        return x.T, (1,)  # (H, B): one column per feature
    if norm in ("LN", "LN per token"):
        if x.dim() != 2:
            raise ValueError(f"{norm} takes x of shape (B, H) or (T, H), got {tuple(x.shape)}")
        return x, (1,)  # (B, H): one row per sample (token)
    if norm == "GroupNorm":
        if x.dim() < 2 or x.shape[1] % groups:
            raise ValueError(f"GroupNorm takes x of shape (N, C, *) with G = {groups} dividing C, got {tuple(x.shape)}")
        return x.reshape(x.shape[0], groups, -1), (2,)  # (N, G, C/G · L): a group's channels are adjacent in memory
    if norm == "InstanceNorm":
        if x.dim() != 3:
            raise ValueError(f"InstanceNorm here takes x of shape (N, C, L), got {tuple(x.shape)}")
        return x, (2,)  # (N, C, L): one statistic per (sample, channel)
    raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")


def statistics(norm: str, x: Tensor, groups: int = 1, eps: float = 1e-5) -> tuple[Tensor, Tensor]:
    """Every μ and σ = √(σ² + ε) of ``norm`` on x, biased variance, as the ``F.*`` function normalizes with.

    Shapes: BN (H,), one per feature; LN and LN per token (B,), one per row; GroupNorm (N, G); InstanceNorm
    (N, C).
    """
    view, dims = _pooled_dims(norm, x, groups)
    mu = view.mean(dim=dims)
    var = view.var(dim=dims, unbiased=False)
    return mu, torch.sqrt(var + eps)


def statistic(norm: str, x: Tensor, at: tuple[int, ...], stat: str, groups: int = 1, eps: float = 1e-5) -> Tensor:
    """The μ (``stat`` "mu") or σ ("sigma") that ``norm`` normalizes element ``at`` of x with: a 0-dim tensor."""
    if stat not in STATISTICS:
        raise ValueError(f"stat must be one of {STATISTICS}, got {stat!r}")
    if len(at) != x.dim() or not all(0 <= i < n for i, n in zip(at, x.shape, strict=True)):
        raise ValueError(f"{at} is no element of x of shape {tuple(x.shape)}")
    mu, sigma = statistics(norm, x, groups, eps)
    if norm == "BN":
        which = (at[1],)  # feature j
    elif norm == "GroupNorm":
        which = (at[0], at[1] // (x.shape[1] // groups))  # sample n, c's group
    else:
        which = at[:-1]  # the row; InstanceNorm's (n, c)
    return (mu if stat == "mu" else sigma)[which]


def gradient(norm: str, x: Tensor, at: tuple[int, ...], stat: str, groups: int = 1, eps: float = 1e-5) -> Tensor:
    """∂statistic/∂x for element ``at``, by autograd, shaped as x."""
    leaf = x.detach().to(torch.float64).requires_grad_(True)
    (grad,) = torch.autograd.grad(statistic(norm, leaf, at, stat, groups, eps), leaf)
    return grad


def support(
    norm: str, x: Tensor, at: tuple[int, ...], stat: str, groups: int = 1, eps: float = 1e-5
) -> tuple[int, ...]:
    """The cells (indices into x.flatten(), increasing) where ∂statistic/∂x for element ``at`` is non-zero.

    μ's gradient is 1/|S| on its set, never 0 by accident. σ's is (x_k − μ)/(|S| σ): 0 where a value equals
    μ exactly, though σ reads it. Such an x would shrink the set, so σ's set must equal μ's, else this raises:
    draw other data.
    """
    cells = tuple(gradient(norm, x, at, stat, groups, eps).flatten().nonzero().flatten().tolist())
    if stat == "sigma":
        pooled = support(norm, x, at, "mu", groups, eps)
        if cells != pooled:
            raise RuntimeError(f"{norm}: σ's gradient is 0 at cells {sorted(set(pooled) - set(cells))} of μ's set")
    return cells


def grid(shape: tuple[int, ...]) -> tuple[int, int]:
    """The phone's grid for x of ``shape``: (rows, cols), every leading dimension flattened into the rows."""
    return math.prod(shape[:-1]), shape[-1]


def flat(shape: tuple[int, ...], at: tuple[int, ...]) -> int:
    """Element ``at``'s cell: its row-major index in x of ``shape``."""
    return sum(i * math.prod(shape[d + 1 :]) for d, i in enumerate(at))
