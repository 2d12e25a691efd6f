"""Train against eval: BatchNorm keeps running statistics, LayerNorm computes the same thing always.

In training mode BN normalizes each feature with the batch's own μ and σ²
(biased), shape (1, H), and updates a running estimate of each, as
``torch.nn.BatchNorm1d`` does:

.. math::

    \\hat\\mu \\leftarrow (1 - m)\\,\\hat\\mu + m\\,\\mu_B, \\qquad
    \\hat\\sigma^2 \\leftarrow (1 - m)\\,\\hat\\sigma^2 + m\\,\\frac{B}{B - 1}\\,\\sigma_B^2

with momentum m, starting from μ̂ = 0, σ̂² = 1: m is the weight of the new
batch, PyTorch's convention (``momentum=0.1`` by default). Keras's momentum is
the weight of the old value, so the same decay is Keras's 1 − m (its default,
0.99, is m = 0.01 here): :func:`momentum_words`. Note the *unbiased* batch
variance in the running estimate, while the normalization itself uses the
biased one. In eval mode BN uses μ̂ and σ̂² instead of the batch's statistics,
so a test batch from a shifted distribution is normalized with stale numbers.
LN reduces over each sample's own H features in both modes: there is nothing
to keep, and train and eval outputs are identical. That does not make LN
immune to the shift: the shift is per feature (shift · scale_j), so it moves
each sample's own μ and σ² and LN's output with them, while BN in training
mode removes it exactly (Ba, Kiros and Hinton 2016, Table 1: dataset
re-centering, ✓ for BN, ✗ for LN).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.maths.data import generator
from lnviz.maths.norms import NormResult, batch_norm, layer_norm

# The running-statistics chart draws this many features, to stay light.
SHOWN_FEATURES = 4


@dataclass(frozen=True)
class RunningStats:
    """BN's running μ̂ and σ̂² over a stream of training batches drawn from N(loc, scale²)."""

    loc: Tensor  # (H,): the stream's true mean per feature
    scale: Tensor  # (H,): the stream's true standard deviation per feature
    momentum: float
    batch: int
    batch_mean: Tensor  # (S, H): each batch's mean
    batch_var: Tensor  # (S, H): each batch's *unbiased* variance, as the running estimate takes it
    running_mean: Tensor  # (S + 1, H): μ̂ before the first step (0) and after each
    running_var: Tensor  # (S + 1, H): σ̂² before the first step (1) and after each
    last_train: NormResult  # BN of the last training batch, in training mode

    @property
    def mean_error(self) -> Tensor:
        """(S + 1,): mean over features of |μ̂ - μ| after each step."""
        return (self.running_mean - self.loc).abs().mean(dim=1)

    @property
    def var_error(self) -> Tensor:
        """(S + 1,): mean over features of |σ̂² - σ²| after each step."""
        return (self.running_var - self.scale.square()).abs().mean(dim=1)


@dataclass(frozen=True)
class TrainEval:
    """The same test batch through BN and LN in training mode and in eval mode."""

    stats: RunningStats
    shift: float
    x_test: Tensor  # (B, H): from N(loc + shift·scale, scale²)
    bn_train: NormResult  # the test batch's own μ, σ²: (1, H)
    bn_eval: NormResult  # μ̂, σ̂² from the stream: (1, H)
    ln_train: NormResult  # μ, σ² per sample: (B, 1)
    ln_eval: NormResult  # the same computation again
    bn_unshifted: NormResult  # BN in training mode of the same batch without the shift: loc + scale·z
    ln_unshifted: NormResult  # LN of the same batch without the shift

    @property
    def bn_gap(self) -> Tensor:
        """(B, H): |BN_train(x) - BN_eval(x)| for every test output."""
        return (self.bn_train.y - self.bn_eval.y).abs()

    @property
    def ln_gap(self) -> Tensor:
        """(B, H): |LN_train(x) - LN_eval(x)|, zero."""
        return (self.ln_train.y - self.ln_eval.y).abs()

    @property
    def ln_shift_delta(self) -> Tensor:
        """(B, H): |LN(x) - LN(x without the shift)|: LN has no mode, yet the per-feature shift moves it."""
        return (self.ln_train.y - self.ln_unshifted.y).abs()

    @property
    def bn_shift_delta(self) -> Tensor:
        """(B, H): |BN_train(x) - BN_train(x without the shift)|: rounding only, BN removes the shift."""
        return (self.bn_train.y - self.bn_unshifted.y).abs()


def momentum_words(momentum: float) -> str:
    """How momentum m reads in PyTorch's convention, and what Keras writes for the same decay (1 − m)."""
    return (
        f"m is the weight of the new batch, PyTorch's convention (its default is 0.1); Keras's momentum is the "
        f"weight of the old value, so Keras writes this decay as {1 - momentum:.4g} (its default, 0.99, is m = 0.01 "
        "here)."
    )


def training_batches(batch: int, features: int, steps: int, seed: int) -> tuple[Tensor, Tensor, Iterator[Tensor]]:
    """The stream's loc (H,) and scale (H,), and an iterator over its ``steps`` batches x (B, H).

    loc ~ 2·N(0, 1) and scale ~ exp(N(0, 1)/2), one per feature, then each
    batch x = loc + scale · z with z ~ N(0, 1), all from ``generator(seed)``.
    The batches are drawn one at a time, so a long stream is never held whole.
    """
    g = generator(seed)
    loc = 2.0 * torch.randn(features, generator=g, dtype=torch.float64)  # (H,)
    scale = torch.exp(0.5 * torch.randn(features, generator=g, dtype=torch.float64))  # (H,)

    def draw() -> Iterator[Tensor]:
        for _ in range(steps):
            yield loc + scale * torch.randn(batch, features, generator=g, dtype=torch.float64)  # (B, H)

    return loc, scale, draw()


def stream(batch: int, features: int, steps: int, momentum: float, seed: int, eps: float = 1e-5) -> RunningStats:
    """Stream ``steps`` batches x (B, H) ~ N(loc, scale²) through BN in training mode.

    The batches come from :func:`training_batches`. Each is normalized by
    :func:`lnviz.maths.norms.batch_norm` (reducing over the B samples, dim 0), and
    the running statistics take its mean and its unbiased variance
    σ²_B · B/(B - 1) with weight ``momentum``. Matches ``nn.BatchNorm1d``.
    """
    if batch < 2:
        raise ValueError(
            "the running variance needs at least 2 samples per batch (its unbiased update divides by B − 1), "
            f"got batch = {batch}"
        )
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if not 0.0 < momentum <= 1.0:
        raise ValueError(f"momentum must be in (0, 1], got {momentum}")
    loc, scale, batches = training_batches(batch, features, steps, seed)
    mean_hat = torch.zeros(features, dtype=torch.float64)  # (H,)
    var_hat = torch.ones(features, dtype=torch.float64)  # (H,)
    means, vars_, run_means, run_vars = [], [], [mean_hat], [var_hat]
    for x in batches:
        bn = batch_norm(x, eps=eps)
        mu = bn.mean[0]  # (H,)
        unbiased = bn.var[0] * batch / (batch - 1)  # (H,): running_var takes the unbiased estimate
        mean_hat = (1.0 - momentum) * mean_hat + momentum * mu
        var_hat = (1.0 - momentum) * var_hat + momentum * unbiased
        means.append(mu)
        vars_.append(unbiased)
        run_means.append(mean_hat)
        run_vars.append(var_hat)
    return RunningStats(
        loc=loc,
        scale=scale,
        momentum=float(momentum),
        batch=batch,
        batch_mean=torch.stack(means),
        batch_var=torch.stack(vars_),
        running_mean=torch.stack(run_means),
        running_var=torch.stack(run_vars),
        last_train=bn,
    )


def train_eval(
    batch: int, features: int, steps: int, momentum: float, shift: float, seed: int, eps: float = 1e-5
) -> TrainEval:
    """Train BN's running statistics with :func:`stream`, then normalize a shifted test batch both ways.

    The test batch x (B, H) ~ N(loc + shift·scale, scale²) comes from its own
    generator (seed + 1), so it does not depend on ``steps``. Training mode
    uses its own μ, σ² over dim 0; eval mode uses the running μ̂, σ̂². LN
    reduces over dim 1 of each sample either way.
    """
    stats = stream(batch, features, steps, momentum, seed, eps)
    g = generator(int(seed) + 1)
    z = torch.randn(batch, features, generator=g, dtype=torch.float64)  # (B, H)
    x_test = stats.loc + stats.scale * (shift + z)  # (B, H)
    x_plain = stats.loc + stats.scale * z  # (B, H): the same batch, unshifted
    return TrainEval(
        stats=stats,
        shift=float(shift),
        x_test=x_test,
        bn_train=batch_norm(x_test, eps=eps, training=True),
        bn_eval=batch_norm(
            x_test, eps=eps, training=False, running_mean=stats.running_mean[-1], running_var=stats.running_var[-1]
        ),
        ln_train=layer_norm(x_test, eps=eps),
        ln_eval=layer_norm(x_test, eps=eps),
        bn_unshifted=batch_norm(x_plain, eps=eps, training=True),
        ln_unshifted=layer_norm(x_plain, eps=eps),
    )


_TITLES = {"BN": "BatchNorm", "LN": "LayerNorm"}


def _legend_top() -> dict:
    """A horizontal legend at the very top of the figure, above the panel titles (the top margin holds both)."""
    return plot.legend_above() | dict(yref="container", y=1, yanchor="top")


def fig_running(stats: RunningStats, shown: int = SHOWN_FEATURES) -> go.Figure:
    """Running μ̂ (left) and σ̂² (right) against the training step, for the first ``shown`` features.

    One solid line per feature in each panel, its true value dotted across the
    steps; the features take :data:`lnviz.figures.theme.SERIES` (not LN's or BN's
    colour) and share one legend, titled "feature".
    """
    steps = np.arange(stats.running_mean.shape[0])  # (S + 1,)
    panels = ((stats.running_mean, stats.loc), (stats.running_var, stats.scale.square()))
    domains = plot.columns(2, gap=0.1)
    traces = []
    for j in range(min(shown, stats.loc.shape[0])):
        color = theme.SERIES[j % len(theme.SERIES)]
        for k, (run, truth) in enumerate(panels, start=1):
            axes = plot.axis_names(k)
            traces.append(  # named by its number alone: the legend's title says "feature", one row on a phone
                plot.line(steps, plot.to_numpy(run[:, j]), str(j), color, axes)
                | dict(
                    legendgroup=f"f{j}",
                    showlegend=k == 1,
                    hovertemplate="step %{x}: %{y:.4f}<extra>feature " + str(j) + "</extra>",
                )
            )
            true_value = np.repeat(plot.to_numpy(truth[j : j + 1]), 2)
            traces.append(
                plot.line(steps[[0, -1]], true_value, f"feature {j}, true value", color, axes, dash="dot", width=1)
                | dict(legendgroup=f"f{j}", showlegend=False, hoverinfo="skip")
            )
    layout = dict(
        annotations=[
            plot.title("running_mean μ̂", sum(domains[0]) / 2),
            plot.title("running_var σ̂²<br>(unbiased)", sum(domains[1]) / 2),  # two lines: fits a phone's half
        ],
        legend=_legend_top() | dict(title=dict(text="feature")),
    )
    for k, domain in enumerate(domains, start=1):
        x_name, y_name = plot.axis_names(k)
        layout[plot.layout_key(x_name)] = dict(domain=domain, anchor=y_name, title=dict(text="training step"))
        layout[plot.layout_key(y_name)] = dict(anchor=x_name)
    return plot.figure(traces, layout, margin=dict(l=55, r=15, t=84, b=50), height=380)


def fig_outputs(result: TrainEval, sample: int = 0) -> go.Figure:
    """One test sample's output (y) per feature j (x): BN in train and eval mode (left), LN in both (right).

    Train mode is solid with filled dots, eval mode dashed with open circles;
    both panels share the y axis. LN's two lines coincide.
    """
    h = result.x_test.shape[1]
    feats = np.arange(h)
    domains = plot.columns(2, gap=0.06)
    traces, annotations, layout = [], [], {}
    for k, (name, train, ev) in enumerate(
        (("BN", result.bn_train, result.bn_eval), ("LN", result.ln_train, result.ln_eval)), start=1
    ):
        color, axes = theme.ROLES[name], plot.axis_names(k)
        traces += [
            plot.line(feats, plot.to_numpy(train.y[sample]), f"{name} train mode", color, axes, markers=dict(size=8)),
            plot.line(
                feats,
                plot.to_numpy(ev.y[sample]),
                f"{name} eval mode",
                color,
                axes,
                dash="dash",
                markers=dict(size=12, symbol="circle-open"),
            ),
        ]
        annotations.append(plot.title(_TITLES[name], sum(domains[k - 1]) / 2, color=color))
        x_name, y_name = (plot.layout_key(a) for a in axes)
        layout[x_name] = dict(domain=domains[k - 1], anchor=axes[1], title=dict(text="feature j"))
        layout[x_name] |= dict(dtick=1) if h < 8 else {}
        # The two panels share the y axis, so only BN's is labelled.
        y_label = dict(title=dict(text=f"output of test sample {sample}")) if k == 1 else dict(matches="y")
        layout[y_name] = dict(anchor=axes[0]) | y_label
    layout |= dict(annotations=annotations, legend=_legend_top())
    return plot.figure(traces, layout, margin=dict(l=65, r=15, t=80, b=50), height=380)
