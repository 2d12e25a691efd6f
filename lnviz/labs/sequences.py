"""Padded batches of sequences: why LN suits recurrent models and BN does not.

A batch of B sequences of different lengths is padded to T steps, giving x of
shape (B, T, H) and a mask of shape (B, T) that is True on real tokens. In a
recurrent model BN keeps one μ, σ² per (time step t, feature h), pooled over
the B sequences:

.. math::

    \\mu_{t,h} = \\frac{1}{n_t} \\sum_{b\\,:\\,t < L_b} x_{b,t,h}, \\qquad
    \\sigma^2_{t,h} = \\frac{1}{n_t} \\sum_{b\\,:\\,t < L_b} (x_{b,t,h} - \\mu_{t,h})^2

where n_t counts the sequences still running at step t. Pooled naively over the
padded batch, the pad values enter these sums; pooled over real tokens only,
late steps rest on very few samples, and a test sequence longer than any
training sequence reaches steps with no statistics at all. LN reduces each
token's own H features, shape (B, T, 1), and needs none of this (Ba, Kiros and
Hinton 2016, §1 and §3.1).

This is BN of the whole summed input at each step. Laurent et al. (2016) and
Amodei et al. (2016) normalize only its input-to-hidden term W xₜ, and leave
the recurrent term U hₜ₋₁ unnormalized; Cooijmans et al. (2016) normalize both,
with per-step statistics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.maths.data import generator
from lnviz.maths.norms import NormResult, batch_norm, layer_norm
from lnviz.views.state import EXTRA, LENGTH

# The drift is drawn for this many steps whatever T and the test length are,
# so that changing the test length never changes the training batch.
MAX_LENGTH, MAX_EXTRA = LENGTH.hi, EXTRA.hi  # the ranges of T and of the extra test steps
MAX_STEPS = MAX_LENGTH + MAX_EXTRA
MIN_SAMPLES = 2  # BN in training mode needs two values per feature, as PyTorch
_TITLE = 56  # px of a figure title with a note under it


@dataclass(frozen=True)
class MaskedStepNorm:
    """Per-time-step BN over real tokens only: one μ, σ² per (t, h).

    ``mean`` and ``var`` are NaN at steps with fewer than two real samples,
    where PyTorch's BN refuses to run; ``x_hat`` is NaN there and at padded cells.
    """

    mean: Tensor  # (1, T, H)
    var: Tensor  # (1, T, H), biased
    x_hat: Tensor  # (B, T, H)
    count: Tensor  # (T,): real samples at each step
    eps: float

    @property
    def defined(self) -> Tensor:
        """(T,) bool: the steps that have BN statistics."""
        return self.count >= MIN_SAMPLES


@dataclass(frozen=True)
class SequenceLab:
    """Everything the sequences page shows, for one setting of its controls."""

    x: Tensor  # (B, T, H): the padded training batch
    mask: Tensor  # (B, T) bool: True on real tokens
    lengths: Tensor  # (B,) int64, sorted longest first
    pad: float
    naive: NormResult  # per-step BN over the padded batch; mean, var (1, T, H)
    masked: MaskedStepNorm  # per-step BN over real tokens only
    ln: NormResult  # LN of every token; mean, var (B, T, 1)
    ln_shift: float  # max |LN output in the padded batch - LN of the sequence alone|, real tokens
    bn_shift: float  # max |naive BN output - masked BN output|, real tokens at steps with statistics
    test_x: Tensor  # (T + extra, H): one test sequence, longer than any training sequence
    test_ln: NormResult  # LN of the test tokens; mean, var (T + extra, 1)
    test_bn: NormResult  # BN in eval mode with the per-step statistics; NaN where a step has none

    @property
    def steps(self) -> int:
        """T, the longest training sequence."""
        return self.x.shape[1]


def sequence_lengths(batch: int, steps: int, spread: float, g: torch.Generator) -> Tensor:
    """(B,) lengths in [max(1, round(T·(1 − spread))), T], longest first; the first is exactly T."""
    if not 0.0 <= spread <= 1.0:
        raise ValueError(f"spread must be in [0, 1], got {spread}")
    shortest = max(1, round(steps * (1.0 - spread)))
    lengths = torch.randint(shortest, steps + 1, (batch,), generator=g)  # (B,)
    lengths[0] = steps  # T is the longest training sequence
    return lengths.sort(descending=True).values


def padding_mask(lengths: Tensor, steps: int) -> Tensor:
    """(B, T) bool, True where t < L_b: the real tokens."""
    return torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)  # (B, T)


def make_sequences(
    batch: int, steps: int, features: int, seed: int, spread: float, pad: float, extra: int
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """A seeded padded batch and a longer test sequence, float64.

    Token (b, t) is x = m_t + z with z ~ N(0, I_H) and a drift m_t, shape (H,),
    that wanders with t (a random walk, as a recurrent state might), so each
    step has its own statistics. Returns ``(x, mask, lengths, test_x)``: x of
    shape (B, T, H) holding ``pad`` after each sequence's end, mask (B, T),
    lengths (B,), and test_x of shape (T + extra, H), drawn from the same drift.
    """
    if batch < MIN_SAMPLES:
        raise ValueError(f"batch must be >= {MIN_SAMPLES}, got {batch}")
    if steps < 1 or extra < 1 or steps + extra > MAX_STEPS:
        raise ValueError(f"need steps >= 1, extra >= 1 and steps + extra <= {MAX_STEPS}, got ({steps}, {extra})")
    if features < 2:
        raise ValueError(f"features must be >= 2, got {features}")
    g = generator(seed)
    lengths = sequence_lengths(batch, steps, spread, g)  # (B,)
    start = 2.0 * torch.randn(1, features, generator=g, dtype=torch.float64)  # (1, H)
    walk = 0.5 * torch.randn(MAX_STEPS, features, generator=g, dtype=torch.float64)  # (T_max, H)
    drift = start + walk.cumsum(dim=0)  # (T_max, H)
    z = torch.randn(batch, steps, features, generator=g, dtype=torch.float64)  # (B, T, H)
    mask = padding_mask(lengths, steps)  # (B, T)
    x = torch.where(mask.unsqueeze(-1), drift[:steps] + z, torch.tensor(float(pad), dtype=torch.float64))  # (B, T, H)
    z_test = torch.randn(steps + extra, features, generator=g, dtype=torch.float64)  # (T + extra, H)
    test_x = drift[: steps + extra] + z_test  # (T + extra, H)
    return x, mask, lengths, test_x


def per_step_batch_norm(x: Tensor, eps: float = 1e-5) -> NormResult:
    """Per-time-step BN over the whole padded batch, padding included.

    μ_{t,h} = mean over all B rows of x[:, t, h], biased σ² likewise: each
    (t, h) is one BN channel. x is (B, T, H); the result's ``mean`` and ``var``
    are (1, T, H), ``x_hat`` and ``y`` (B, T, H). Computed by
    :func:`lnviz.maths.norms.batch_norm` on the (B, T·H) view.
    """
    b, t, h = x.shape
    flat = batch_norm(x.reshape(b, t * h), eps=eps)  # channels are the (t, h) pairs
    return NormResult(
        x=x,
        mean=flat.mean.reshape(1, t, h),
        var=flat.var.reshape(1, t, h),
        x_hat=flat.x_hat.reshape(b, t, h),
        y=flat.y.reshape(b, t, h),
        weight=flat.weight.reshape(1, t, h),
        bias=flat.bias.reshape(1, t, h),
        eps=flat.eps,
        dims=(0,),
        count=flat.count,
    )


def masked_batch_norm(x: Tensor, mask: Tensor, eps: float = 1e-5) -> MaskedStepNorm:
    """Per-time-step BN over real tokens only.

    μ_{t,h} = Σ_b m_{b,t} x_{b,t,h} / n_t and σ²_{t,h} = Σ_b m_{b,t} (x_{b,t,h} − μ_{t,h})² / n_t
    (biased), with n_t = Σ_b m_{b,t}; x̂ = (x − μ) / sqrt(σ² + ε). Reduces over
    the real rows of dim 0 at each step. x is (B, T, H), mask (B, T); ``mean``
    and ``var`` are (1, T, H). Equals ``F.batch_norm(x[mask[:, t], t], training=True)``
    at every step with n_t >= 2; steps with fewer real samples get NaN.
    """
    if x.dim() != 3 or tuple(mask.shape) != tuple(x.shape[:2]):
        raise ValueError(f"x must be (B, T, H) and mask (B, T); got {tuple(x.shape)} and {tuple(mask.shape)}")
    m = mask.unsqueeze(-1).to(x.dtype)  # (B, T, 1): 1 on real tokens
    count = mask.sum(dim=0)  # (T,)
    n = count.to(x.dtype).clamp(min=1).view(1, -1, 1)  # (1, T, 1)
    real = torch.where(mask.unsqueeze(-1), x, torch.zeros((), dtype=x.dtype))  # (B, T, H): pads can be inf
    mean = real.sum(dim=0, keepdim=True) / n  # (1, T, H)
    var = ((real - mean).square() * m).sum(dim=0, keepdim=True) / n  # (1, T, H), biased
    undefined = (count < MIN_SAMPLES).view(1, -1, 1)  # (1, T, 1)
    nan = torch.tensor(float("nan"), dtype=x.dtype)
    mean = torch.where(undefined, nan, mean)
    var = torch.where(undefined, nan, var)
    x_hat = torch.where(mask.unsqueeze(-1), (x - mean) * torch.rsqrt(var + eps), nan)  # (B, T, H)
    return MaskedStepNorm(mean=mean, var=var, x_hat=x_hat, count=count, eps=float(eps))


def sequence_lab(
    batch: int, steps: int, features: int, seed: int, spread: float, pad: float, extra: int, eps: float = 1e-5
) -> SequenceLab:
    """Build the padded batch and compute per-step BN (naive and masked), LN, and the test sequence.

    The test sequence (T + extra, H) is normalized by LN token by token, and by
    BN in eval mode with the masked per-step statistics as running statistics:
    those exist for t < T only (and only where n_t >= 2), so BN's output is NaN
    at every other step.
    """
    x, mask, lengths, test_x = make_sequences(batch, steps, features, seed, spread, pad, extra)
    naive = per_step_batch_norm(x, eps)
    masked = masked_batch_norm(x, mask, eps)
    ln = layer_norm(x, eps=eps)  # reduces the last dim: one μ, σ² per token, (B, T, 1)

    ln_shift = 0.0
    for b, length in enumerate(lengths.tolist()):
        alone = layer_norm(x[b, :length], eps=eps).y  # (L_b, H): the sequence without its padding
        ln_shift = max(ln_shift, (ln.y[b, :length] - alone).abs().max().item())
    scored = mask & masked.defined.unsqueeze(0)  # (B, T): real tokens at steps with statistics
    bn_shift = (naive.x_hat - masked.x_hat)[scored].abs().max().item() if scored.any() else 0.0

    total = test_x.shape[0]
    nan = torch.full((total - steps, features), float("nan"), dtype=test_x.dtype)
    running_mean = torch.cat([masked.mean[0], nan]).reshape(-1)  # (T_test · H,): none past T
    running_var = torch.cat([masked.var[0], nan]).reshape(-1)  # (T_test · H,)
    flat = batch_norm(
        test_x.reshape(1, -1), eps=eps, training=False, running_mean=running_mean, running_var=running_var
    )  # one channel per (t, h), as in training
    test_bn = NormResult(
        x=test_x,
        mean=flat.mean.reshape(total, features),
        var=flat.var.reshape(total, features),
        x_hat=flat.x_hat.reshape(total, features),
        y=flat.y.reshape(total, features),
        weight=flat.weight.reshape(total, features),
        bias=flat.bias.reshape(total, features),
        eps=flat.eps,
        dims=(),
        count=0,
    )
    return SequenceLab(
        x=x,
        mask=mask,
        lengths=lengths,
        pad=float(pad),
        naive=naive,
        masked=masked,
        ln=ln,
        ln_shift=ln_shift,
        bn_shift=bn_shift,
        test_x=test_x,
        test_ln=layer_norm(test_x, eps=eps),
        test_bn=test_bn,
    )


def _undefined_spans(defined: Tensor) -> list[tuple[int, int]]:
    """[(first, last)] runs of steps where ``defined`` is False."""
    spans: list[tuple[int, int]] = []
    for t, ok in enumerate(defined.tolist()):
        if ok:
            continue
        if spans and spans[-1][1] == t - 1:
            spans[-1] = (spans[-1][0], t)
        else:
            spans.append((t, t))
    return spans


def _rows(n: int, gap: float) -> list[list[float]]:
    """y domains of ``n`` stacked panels, top first, ``gap`` apart (paper coordinates)."""
    height = (1 - gap * (n - 1)) / n
    tops = [1 - k * (height + gap) for k in range(n)]
    return [[max(0.0, round(top - height, 9)), round(top, 9)] for top in tops]


def _bands(defined: Tensor, axes: plot.Axes) -> list[dict[str, Any]]:
    """Grey bands over the steps where ``defined`` (T,) is False: BN has no statistics there."""
    return [plot.band(first - 0.5, last + 0.5, axes) for first, last in _undefined_spans(defined)]


def fig_batch(lab: SequenceLab, col: int) -> go.Figure:
    """The padded batch as a (B, T) grid for feature ``col``: real tokens coloured, padding marked ×.

    The heatmap holds x[:, :, col] of shape (B, T), NaN at padded cells (left
    grey); a marker on every padded cell names the pad value.
    """
    batch, steps = lab.mask.shape
    traces = plot.padded_grid(
        lab.x[:, :, col],  # (B, T)
        lab.mask,
        rows="sequence",
        steps="step",
        colorbar=f"x[:, t, {col}]",
        pad=f"padding (x = {lab.pad:g})",
        fmt=".3f",
    )
    layout = dict(
        title=plot.heading(f"Padded batch, B = {batch}, T = {steps} (feature {col})"),
        xaxis=dict(title=dict(text="time step t")),
        yaxis=plot.samples_axis(batch, title=dict(text="sequence b")),
        plot_bgcolor="#f2f2f2",
        showlegend=True,  # the padding's entry alone: plotly would hide a legend of one
        legend=plot.legend_above(),
    )
    height = min(640, max(280, 22 * batch + 130))
    return plot.figure(traces, layout, margin=dict(l=60, r=100, t=64, b=50), height=height)


def _stats_traces(lab: SequenceLab, col: int) -> list[dict[str, Any]]:
    """Per-step μ and σ² of feature ``col``, naive (dashed) and masked (solid), and the real-sample counts (T,)."""
    steps = np.arange(lab.steps)
    bn = theme.ROLES["BN"]
    traces = []
    for k, naive, masked in (
        (1, lab.naive.mean[0, :, col], lab.masked.mean[0, :, col]),  # (T,) each
        (2, lab.naive.var[0, :, col], lab.masked.var[0, :, col]),
    ):
        axes, legend = plot.axis_names(k), dict(showlegend=k == 1)
        dots = dict(size=5, symbol="circle-open")
        traces.append(
            plot.line(steps, plot.to_numpy(naive), "over the padded batch", bn, axes, dash="dash", markers=dots)
            | dict(legendgroup="naive")
            | legend
        )
        traces.append(
            plot.line(steps, plot.to_numpy(masked), "over real tokens only", bn, axes, markers=dict(size=5))
            | dict(legendgroup="masked", connectgaps=False)
            | legend
        )
    count = plot.to_numpy(lab.masked.count)  # (T,)
    traces.append(plot.bars(steps, count, "real samples", theme.SERIES[0], ("x3", "y3"), showlegend=False))
    return traces


def fig_step_stats(lab: SequenceLab, col: int) -> go.Figure:
    """Per-step BN mean and variance of feature ``col``, naive vs masked, over the real-sample count.

    Three stacked panels share the step axis t: μ_{t, col} and σ²_{t, col}
    (each reduced over the B sequences at step t, (T,)), over the padded batch
    and over the real tokens only, and n_t, the real samples at step t. Grey
    bands cover the steps with fewer than MIN_SAMPLES real samples.
    """
    height, bottom = 600, 50
    top, legend = plot.legend_in_margin(height, bottom, rows=2, gap=26, head=_TITLE)  # two rows on a phone
    domains = _rows(3, gap=0.1)
    titles = ("BN mean μ at step t", "BN variance σ² at step t", "real samples at step t")
    layout: dict[str, Any] = dict(
        title=plot.heading(
            f"Per-step BN statistics of feature {col}", f"grey: under {MIN_SAMPLES} real samples, no statistics"
        ),
        annotations=[plot.title(text, 0.5, domain[1]) for text, domain in zip(titles, domains, strict=True)],
        legend=legend,  # above the first panel's title
    )
    shapes = []
    for k, domain in enumerate(domains, start=1):
        axes = plot.axis_names(k)
        shapes += _bands(lab.masked.defined, axes)
        if k < len(domains):  # the step axis is drawn once, under the last panel
            layout[plot.layout_key(axes[0])] = dict(anchor=axes[1], matches="x3", showticklabels=False)
        else:
            layout[plot.layout_key(axes[0])] = dict(anchor=axes[1], title=dict(text="time step t"))
        layout[plot.layout_key(axes[1])] = dict(domain=domain, anchor=axes[0])
    shapes.append(plot.hline(MIN_SAMPLES, ("x3", "y3"), color=theme.ROLES["BN"], dash="dot"))
    layout["shapes"] = shapes
    return plot.figure(_stats_traces(lab, col), layout, margin=dict(l=60, r=20, t=top, b=bottom), height=height)


def fig_test(lab: SequenceLab, col: int) -> go.Figure:
    """The longer test sequence, feature ``col``: input, LN output, BN output (NaN where BN has no statistics).

    Each line has T + extra points, one per step. LN normalizes each token
    over its own H features; BN uses the per-step statistics of training,
    which exist only for t < T with at least MIN_SAMPLES real samples (the
    grey bands cover the rest). The dashed line marks T.
    """
    total = lab.test_x.shape[0]
    steps = np.arange(total)
    traces = [
        plot.line(steps, plot.to_numpy(values[:, col]), name, color, markers=dict(size=5))
        for name, values, color in (
            ("input x", lab.test_x, theme.ROLES["input"]),
            ("LN output", lab.test_ln.y, theme.ROLES["LN"]),
            ("BN output", lab.test_bn.y, theme.ROLES["BN"]),
        )
    ]
    defined = torch.cat([lab.masked.defined, torch.zeros(total - lab.steps, dtype=torch.bool)])  # (T + extra,)
    end = lab.steps - 0.5
    height, bottom = 420, 50
    top, legend = plot.legend_in_margin(height, bottom, rows=2, gap=24, head=_TITLE)  # two rows on a phone
    layout = dict(
        title=plot.heading(
            f"A test sequence of {total} steps, feature {col}", "grey: steps where BN has no statistics"
        ),
        xaxis=dict(title=dict(text="time step t")),
        yaxis=dict(title=dict(text="value")),
        shapes=[*_bands(defined, ("x", "y")), plot.vline(end, color=theme.SERIES[0], dash="dash")],
        annotations=[plot.note(f"T = {lab.steps}", end, 1, xref="x", xanchor="left", yanchor="bottom")],
        legend=legend,  # above the note on the T line
    )
    return plot.figure(traces, layout, margin=dict(l=60, r=20, t=top, b=bottom), height=height)
