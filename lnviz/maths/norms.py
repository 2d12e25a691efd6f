"""The normalizations, computed step by step in torch.

Every function here returns a :class:`NormResult` that keeps each intermediate
(``mean``, ``var``, ``x_hat``, ``y``), shaped to broadcast against the input, so
a chart can show every step. All of them follow PyTorch exactly:

.. math::

    y = \\gamma \\, \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta

with the *biased* variance (divide by the number of pooled elements, as
``torch.var(..., unbiased=False)``) and ε inside the square root. The norms
differ only in which elements share one μ and one σ²:

=============  ==========================  ==================================
norm           input shape                 one (μ, σ²) per
=============  ==========================  ==================================
layer_norm     (B, H) or (B, T, H) ...     sample (token): reduce the last dims
batch_norm     (B, H) or (N, C, *)         feature / channel: reduce all but dim 1
instance_norm  (N, C, *)                   (sample, channel): reduce the spatial dims
group_norm     (N, C, *)                   (sample, group of C/G channels)
rms_norm       (..., H)                    sample, with μ fixed at 0 (no centring)
=============  ==========================  ==================================

The reference for each is in ``torch.nn.functional``; the tests compare them in
float64.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor

AffineValue = Tensor | float | None  # γ or β as a norm takes it: a scalar, one per feature or channel, or None


@dataclass(frozen=True)
class NormResult:
    """Every step of one normalization.

    ``mean`` and ``var`` keep the reduced dimensions (size 1), so
    ``(x - mean) / sqrt(var + eps)`` broadcasts. ``weight`` and ``bias`` are
    the γ and β actually applied, also shaped to broadcast against ``x``.
    """

    x: Tensor  # the input, unchanged
    mean: Tensor  # μ, one per group of pooled elements (0 for RMSNorm)
    var: Tensor  # σ², biased (for RMSNorm: the mean square E[x²])
    x_hat: Tensor  # (x - μ) / sqrt(σ² + ε), before the affine step
    y: Tensor  # γ x_hat + β
    weight: Tensor  # γ, broadcastable against x
    bias: Tensor  # β, broadcastable against x
    eps: float
    dims: tuple[int, ...]  # the dimensions reduced over
    count: int  # how many elements share one μ and σ² (0: running statistics, in eval mode)

    @property
    def rstd(self) -> Tensor:
        """1 / sqrt(σ² + ε), the factor that scales the centred input."""
        return torch.rsqrt(self.var + self.eps)

    @property
    def std(self) -> Tensor:
        """sqrt(σ²), the biased standard deviation, without ε."""
        return self.var.sqrt()


def _check_input(x: Tensor, min_ndim: int, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: x must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise ValueError(f"{name}: x must be a floating-point tensor, got {x.dtype}")
    if x.dim() < min_ndim:
        raise ValueError(f"{name}: x must have at least {min_ndim} dimensions, got shape {tuple(x.shape)}")
    if x.numel() == 0:
        raise ValueError(f"{name}: x is empty (shape {tuple(x.shape)})")


def _check_eps(eps: float, name: str) -> float:
    eps = float(eps)
    if not eps >= 0.0 or eps == float("inf"):
        raise ValueError(f"{name}: eps must be a finite number >= 0, got {eps}")
    return eps


def _affine(
    value: AffineValue, fill: float, shape: tuple[int, ...], view: tuple[int, ...], like: Tensor, what: str, name: str
) -> Tensor:
    """γ or β as a tensor of ``shape``, reshaped to ``view`` to broadcast against x."""
    if value is None:
        value = fill
    if not isinstance(value, Tensor):
        return torch.full(shape, float(value), dtype=like.dtype, device=like.device).view(view)
    if tuple(value.shape) != shape:
        raise ValueError(
            f"{name}: {what} must have shape {shape} (one per normalized element), got {tuple(value.shape)}"
        )
    return value.to(dtype=like.dtype, device=like.device).view(view)


def _normalize(
    x: Tensor,
    dims: tuple[int, ...],
    weight: Tensor,
    bias: Tensor,
    eps: float,
    center: bool = True,
    identity: bool = False,
) -> NormResult:
    """The shared steps. ``identity``: the caller gave no γ and no β, so y is x̂ itself.

    That saves two passes over x where it matters most: the explorer caches
    exactly this, then applies its own γ and β.
    """
    if center:
        mean = x.mean(dim=dims, keepdim=True)  # one μ per group
        var = x.var(dim=dims, keepdim=True, unbiased=False)  # biased, as PyTorch
    else:
        mean = torch.zeros_like(x.mean(dim=dims, keepdim=True))  # RMSNorm: μ is 0
        var = x.square().mean(dim=dims, keepdim=True)  # E[x²]
    x_hat = (x - mean) * torch.rsqrt(var + eps)
    y = x_hat if identity else torch.addcmul(bias, x_hat, weight)
    count = 1
    for d in dims:
        count *= x.shape[d]
    return NormResult(
        x=x, mean=mean, var=var, x_hat=x_hat, y=y, weight=weight, bias=bias, eps=eps, dims=dims, count=count
    )


def layer_norm(
    x: Tensor, weight: AffineValue = None, bias: AffineValue = None, eps: float = 1e-5, normalized_ndim: int = 1
) -> NormResult:
    """Layer normalization (Ba, Kiros, Hinton 2016): one μ, σ² per sample.

    Reduces over the last ``normalized_ndim`` dimensions: for x of shape (B, H)
    that is each row's H features, giving ``mean`` and ``var`` of shape (B, 1).
    For a sequence (B, T, H) each token is normalized on its own. The same
    computation runs at training and test time; no other sample is involved.

    ``weight`` (γ) and ``bias`` (β) are a scalar, ``None`` (γ = 1, β = 0) or a
    tensor of shape ``x.shape[-normalized_ndim:]``. Matches
    ``F.layer_norm(x, x.shape[-normalized_ndim:], weight, bias, eps)``.
    """
    name = "layer_norm"
    if normalized_ndim < 1:
        raise ValueError(f"{name}: normalized_ndim must be >= 1, got {normalized_ndim}")
    _check_input(x, normalized_ndim + 1, name)
    eps = _check_eps(eps, name)
    shape = tuple(x.shape[-normalized_ndim:])
    view = (1,) * (x.dim() - normalized_ndim) + shape
    dims = tuple(range(x.dim() - normalized_ndim, x.dim()))
    w = _affine(weight, 1.0, shape, view, x, "weight", name)
    b = _affine(bias, 0.0, shape, view, x, "bias", name)
    return _normalize(x, dims, w, b, eps, identity=weight is None and bias is None)


def rms_norm(x: Tensor, weight: AffineValue = None, eps: float = 1e-5, normalized_ndim: int = 1) -> NormResult:
    """RMSNorm (Zhang and Sennrich 2019): LN without centring.

    y = γ x / sqrt(E[x²] + ε), E over the last ``normalized_ndim`` dimensions;
    for x of shape (B, H), one mean square per row, shape (B, 1). ε inside the
    root is ``F.rms_norm``'s convention: the paper's RMS(a) = sqrt(E[a²]) has none. In the result
    ``mean`` is 0 and ``var`` holds E[x²], so the one formula above still reads
    right. There is no β. Matches ``F.rms_norm(x, shape, weight, eps)``.
    """
    name = "rms_norm"
    if normalized_ndim < 1:
        raise ValueError(f"{name}: normalized_ndim must be >= 1, got {normalized_ndim}")
    _check_input(x, normalized_ndim, name)
    eps = _check_eps(eps, name)
    shape = tuple(x.shape[-normalized_ndim:])
    view = (1,) * (x.dim() - normalized_ndim) + shape
    dims = tuple(range(x.dim() - normalized_ndim, x.dim()))
    w = _affine(weight, 1.0, shape, view, x, "weight", name)
    b = _affine(None, 0.0, shape, view, x, "bias", name)
    return _normalize(x, dims, w, b, eps, center=False, identity=weight is None)


def batch_norm(
    x: Tensor,
    weight: AffineValue = None,
    bias: AffineValue = None,
    eps: float = 1e-5,
    training: bool = True,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
) -> NormResult:
    """Batch normalization (Ioffe and Szegedy 2015): one μ, σ² per feature.

    For x of shape (B, H) it reduces over the B samples of each column, giving
    ``mean`` and ``var`` of shape (1, H); for (N, C, *) over every dimension
    but the channel dimension 1. In training mode the statistics come from the
    batch itself, so every sample's output depends on the others; with one
    value per channel the biased variance is 0 and y would be β (for ε > 0); this raises
    ``ValueError``, as PyTorch's ``F.batch_norm`` does in training mode, with or
    without running statistics. With ``training=False`` the given ``running_mean`` and
    ``running_var`` (shape (C,)) are used instead. Matches ``F.batch_norm``.
    """
    name = "batch_norm"
    _check_input(x, 2, name)
    eps = _check_eps(eps, name)
    channels = x.shape[1]
    dims = (0, *range(2, x.dim()))
    view = (1, channels) + (1,) * (x.dim() - 2)
    w = _affine(weight, 1.0, (channels,), view, x, "weight", name)
    b = _affine(bias, 0.0, (channels,), view, x, "bias", name)
    if training:
        per_channel = x.numel() // channels
        if per_channel < 2:
            raise ValueError(
                f"{name}: Expected more than 1 value per channel when training, got input of shape {tuple(x.shape)}"
            )
        return _normalize(x, dims, w, b, eps, identity=weight is None and bias is None)
    if running_mean is None or running_var is None:
        raise ValueError(f"{name}: eval mode (training=False) needs running_mean and running_var")
    for stat, what in ((running_mean, "running_mean"), (running_var, "running_var")):
        if tuple(stat.shape) != (channels,):
            raise ValueError(f"{name}: {what} must have shape ({channels},), got {tuple(stat.shape)}")
    mean = running_mean.to(dtype=x.dtype, device=x.device).view(view)
    var = running_var.to(dtype=x.dtype, device=x.device).view(view)
    x_hat = (x - mean) * torch.rsqrt(var + eps)
    return NormResult(
        x=x, mean=mean, var=var, x_hat=x_hat, y=x_hat * w + b, weight=w, bias=b, eps=eps, dims=dims, count=0
    )


def instance_norm(x: Tensor, weight: AffineValue = None, bias: AffineValue = None, eps: float = 1e-5) -> NormResult:
    """Instance normalization (Ulyanov et al. 2016): one μ, σ² per (sample, channel).

    For x of shape (N, C, *) it reduces over the spatial dimensions 2..,
    giving ``mean`` of shape (N, C, 1, ...). γ and β are per channel, shape
    (C,). Matches ``F.instance_norm`` with ``use_input_stats=True``.
    """
    name = "instance_norm"
    _check_input(x, 3, name)
    eps = _check_eps(eps, name)
    channels = x.shape[1]
    dims = tuple(range(2, x.dim()))
    view = (1, channels) + (1,) * (x.dim() - 2)
    w = _affine(weight, 1.0, (channels,), view, x, "weight", name)
    b = _affine(bias, 0.0, (channels,), view, x, "bias", name)
    return _normalize(x, dims, w, b, eps, identity=weight is None and bias is None)


def group_norm(
    x: Tensor, groups: int, weight: AffineValue = None, bias: AffineValue = None, eps: float = 1e-5
) -> NormResult:
    """Group normalization (Wu and He 2018): one μ, σ² per (sample, group).

    For x of shape (N, C, *), the C channels are split into ``groups`` groups
    of C/G consecutive channels, and each sample's group is reduced over its
    channels and spatial positions. G = 1 is LN over (C, *); G = C is
    InstanceNorm. The result's ``mean`` and ``var`` are expanded back to shape
    (N, C, 1, ...), one value per channel (shared within a group). γ and β are
    per channel, shape (C,). Matches ``F.group_norm(x, groups, weight, bias, eps)``.
    """
    name = "group_norm"
    _check_input(x, 2, name)
    eps = _check_eps(eps, name)
    n, channels = x.shape[0], x.shape[1]
    if not isinstance(groups, int) or groups < 1 or channels % groups != 0:
        raise ValueError(f"{name}: groups must be a positive divisor of C={channels}, got {groups}")
    view = (1, channels) + (1,) * (x.dim() - 2)
    w = _affine(weight, 1.0, (channels,), view, x, "weight", name)
    b = _affine(bias, 0.0, (channels,), view, x, "bias", name)
    grouped = x.reshape(n, groups, -1)  # (N, G, C/G * spatial)
    mean_g = grouped.mean(dim=2, keepdim=True)  # (N, G, 1)
    var_g = grouped.var(dim=2, keepdim=True, unbiased=False)  # (N, G, 1)
    stat_shape = (n, channels) + (1,) * (x.dim() - 2)
    per_group = channels // groups
    mean = mean_g.repeat_interleave(per_group, dim=1).reshape(stat_shape)  # (N, C, 1, ...)
    var = var_g.repeat_interleave(per_group, dim=1).reshape(stat_shape)  # (N, C, 1, ...)
    x_hat = (x - mean) * torch.rsqrt(var + eps)
    dims = (1, *range(2, x.dim()))  # the group's channels and the spatial dims
    return NormResult(
        x=x,
        mean=mean,
        var=var,
        x_hat=x_hat,
        y=x_hat * w + b,
        weight=w,
        bias=b,
        eps=eps,
        dims=dims,
        count=grouped.shape[2],
    )


def apply_affine(result: NormResult, weight: AffineValue = None, bias: AffineValue = None) -> NormResult:
    """The same normalization with another γ and β: y = γ x̂ + β, reusing x̂.

    The affine step is elementwise and cheap; the statistics are not
    recomputed. ``weight`` and ``bias`` are scalars, ``None`` (γ = 1, β = 0),
    or tensors with as many elements as the result's γ (one per normalized
    feature or channel), reshaped to broadcast like it.
    """

    def like(value: AffineValue, fill: float, current: Tensor, what: str) -> Tensor:
        if value is None:
            value = fill
        if not isinstance(value, Tensor):
            return torch.full_like(current, float(value))
        if value.numel() != current.numel():
            raise ValueError(f"apply_affine: {what} must have {current.numel()} elements, got {value.numel()}")
        return value.to(dtype=current.dtype, device=current.device).reshape(current.shape)

    w = like(weight, 1.0, result.weight, "weight")
    b = like(bias, 0.0, result.bias, "bias")
    return replace(result, weight=w, bias=b, y=torch.addcmul(b, result.x_hat, w))  # one pass: β + x̂·γ
