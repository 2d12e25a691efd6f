"""Batch coupling: BatchNorm ties the samples of a batch together, LayerNorm does not.

BN in training mode normalizes each feature over the B samples of the batch,
so its μ and σ², shape (1, H), depend on every sample, and changing one sample
changes every output. LN normalizes each sample over its own H features, with
μ and σ² of shape (B, 1), so a sample's output depends on that sample alone.

:func:`couple` changes one row of x (B, H) and returns |Δy| for both norms;
:func:`batch_sweep` follows one fixed sample's BN output while the batch around
it is redrawn at several sizes. The data are standard normal
(:func:`lnviz.maths.data.make_activations`, preset "standard normal").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.maths import rounding
from lnviz.maths.data import generator, line, make_activations
from lnviz.maths.norms import NormResult, batch_norm, layer_norm
from lnviz.views.state import PERTURB

PERTURBATIONS: dict[str, str] = dict(PERTURB.meanings)  # what each does, as the state table says

# The batch sizes of the sweep, and how many batches are drawn at each.
SWEEP_SIZES = (2, 4, 8, 16, 32, 64, 128, 256)
SWEEP_DRAWS = 12
# |Δy| below this is drawn as this (log colour scale; 0 itself has no logarithm).
FLOOR = 1e-12


@dataclass(frozen=True)
class Coupling:
    """BN and LN of x before and after one row changed, and |Δy| for every output."""

    x: Tensor  # (B, H) before
    x_new: Tensor  # (B, H) after: only row ``sample`` differs
    sample: int
    perturb: str
    amount: float
    bn: NormResult  # of x; mean, var: (1, H), one per feature
    bn_new: NormResult  # of x_new
    ln: NormResult  # of x; mean, var: (B, 1), one per sample
    ln_new: NormResult  # of x_new
    bn_delta: Tensor  # (B, H): |BN(x_new) - BN(x)|
    ln_delta: Tensor  # (B, H): |LN(x_new) - LN(x)|

    @property
    def bn_rows_changed(self) -> tuple[int, ...]:
        """The rows where some BN output moved by more than rounding can (:func:`lnviz.maths.rounding.moved`)."""
        return _rows_moved(self.bn, self.bn_new)

    @property
    def ln_rows_changed(self) -> tuple[int, ...]:
        """The rows where some LN output moved by more than rounding can (:func:`lnviz.maths.rounding.moved`)."""
        return _rows_moved(self.ln, self.ln_new)


def _rows_moved(before: NormResult, after: NormResult) -> tuple[int, ...]:
    return tuple(int(i) for i in torch.nonzero(rounding.moved(before, after).any(dim=1)).flatten())


@dataclass(frozen=True)
class BatchSweep:
    """One fixed sample x★'s outputs among R sets of batch-mates, at several batch sizes."""

    star: Tensor  # (H,): the fixed sample
    sizes: tuple[int, ...]  # (S,) batch sizes, x★ included
    feature: int  # the feature shown
    bn_y: Tensor  # (S, R, H): x★'s BN output among the first B - 1 of R sets of batch-mates
    ln_y: Tensor  # (H,): LN(x★), the same in every batch
    bn_limit: Tensor  # (H,): (x★ - 0) / sqrt(1 + ε), BN with the population's μ = 0, σ² = 1 (B → ∞)


def base(batch: int, features: int, seed: int, draw: str = "stable") -> Tensor:
    """The unperturbed x (B, H): seeded standard normal, float64, drawn as ``draw`` says
    (:data:`lnviz.views.state.DRAW`: in the stable draw a smaller B or H keeps the rest of x)."""
    return make_activations("standard normal", batch, features, seed, draw=draw)


def perturb_row(x: Tensor, sample: int, perturb: str, amount: float, seed: int, draw: str = "stable") -> Tensor:
    """A copy of x (B, H) with row ``sample`` changed as :data:`PERTURBATIONS` says.

    The outlier's fresh row u (H,) is drawn apart from x, so it does not change
    x's other rows: in the stable draw the line "outlier row" (its feature j
    whatever H), in the whole draw a generator of its own (seed + 1).
    """
    b, h = x.shape
    if perturb not in PERTURBATIONS:
        raise ValueError(f"perturb must be one of {list(PERTURBATIONS)}, got {perturb!r}")
    if not 0 <= sample < b:
        raise ValueError(f"sample must be a row of the batch, 0 to {b - 1}, got {sample}")
    x_new = x.clone()  # (B, H)
    if perturb == "scale":
        x_new[sample] = amount * x[sample]
    elif perturb == "shift":
        x_new[sample] = x[sample] + amount
    elif perturb == "outlier":
        if draw == "stable":
            u = line(seed, "outlier row", 0, h)  # (H,)
        else:
            u = torch.randn(h, generator=generator(int(seed) + 1), dtype=torch.float64)  # (H,)
        x_new[sample] = amount * u.to(dtype=x.dtype, device=x.device)
    else:
        raise ValueError(f"perturb {perturb!r} is in the table but not implemented here")
    return x_new


def couple(
    batch: int,
    features: int,
    seed: int,
    sample: int,
    perturb: str,
    amount: float,
    eps: float = 1e-5,
    draw: str = "stable",
) -> Coupling:
    """|Δy| = |norm(x with row i changed) - norm(x)| for BN (training mode) and LN, shape (B, H).

    x (B, H) is seeded standard normal. BN reduces over the B rows of each
    column, so a change in row i moves μ and σ² of every column and |Δy| is
    non-zero in every row; LN reduces over the H features of each row, so
    |Δy| is exactly 0 outside row i. Both with γ = 1, β = 0 and the biased variance.
    """
    if batch < 2:
        raise ValueError(
            "the coupling needs at least 2 samples (with one, BN's output is β for ε > 0, and PyTorch refuses it in "
            f"training mode), got batch = {batch}"
        )
    x = base(batch, features, seed, draw)  # (B, H)
    x_new = perturb_row(x, sample, perturb, amount, seed, draw)  # (B, H)
    bn, bn_new = batch_norm(x, eps=eps), batch_norm(x_new, eps=eps)
    ln, ln_new = layer_norm(x, eps=eps), layer_norm(x_new, eps=eps)
    return Coupling(
        x=x,
        x_new=x_new,
        sample=sample,
        perturb=perturb,
        amount=float(amount),
        bn=bn,
        bn_new=bn_new,
        ln=ln,
        ln_new=ln_new,
        bn_delta=(bn_new.y - bn.y).abs(),
        ln_delta=(ln_new.y - ln.y).abs(),
    )


def why_ln_row_moves(perturb: str, amount: float, sample: int) -> str | None:
    """What LN does to the changed row i itself, for a shift or a scaling by ``amount``; None when nothing to say.

    A shift leaves σ² unchanged, so LN's row i moves by rounding only (about
    1e-15). A positive scale moves it by ε's share of √(σ² + ε) only (about
    1e-5 at a = 0.5); a negative one flips its sign; 0 makes the row constant.
    BN moves every row in each case, a = 1 and shift 0 (nothing changes) aside.
    """
    i = sample
    if perturb == "shift" and amount != 0:
        return (
            f"LN removes each sample's own mean, and a shift leaves σ² unchanged, so row {i}'s LN output does not "
            "move (|Δy| is rounding, about 1e-15). BN still moves every row."
        )
    if perturb != "scale" or amount == 1:
        return None
    if amount > 0:
        return (
            f"LN divides each sample by its own σ, so scaling sample {i} by a > 0 barely moves row {i}: only ε's "
            "share of √(σ² + ε) changes. BN still moves every row."
        )
    if amount < 0:
        return f"Scaling by a < 0 flips row {i}: its LN output changes sign, up to ε. BN moves every row."
    return (
        f"Scaling by 0 makes row {i} constant: σ² = 0, so its LN output is x̂ = 0/√ε = 0 (here γ = 1, β = 0). "
        "BN moves every row."
    )


def companions(features: int, seed: int, draws: int = SWEEP_DRAWS, most: int = max(SWEEP_SIZES)) -> Tensor:
    """(R, most - 1, H): ``draws`` sets of standard-normal batch-mates, from their own generator (seed + 2)."""
    g = generator(int(seed) + 2)
    return torch.randn(draws, most - 1, features, generator=g, dtype=torch.float64)  # (R, most-1, H)


def batch_sweep(
    star: Tensor,
    seed: int,
    sizes: tuple[int, ...] = SWEEP_SIZES,
    draws: int = SWEEP_DRAWS,
    eps: float = 1e-5,
    feature: int = 0,
) -> BatchSweep:
    """BN(x★) for x★ (H,) in batches of each size in ``sizes``, ``draws`` times over.

    Batch (B, r) is x★ in row 0 and the first B - 1 rows of :func:`companions`
    set r, so each set's batches grow by adding samples. BN reduces over the
    batch (dim 0), so x★'s output moves with its batch-mates, less as B grows,
    towards (x★ - μ)/√(σ² + ε) with the population's μ = 0, σ² = 1. LN reduces
    over x★'s own H features: one output for every batch.
    """
    if min(sizes) < 2:
        raise ValueError(
            "the sweep needs batches of at least 2 (PyTorch refuses BN on one value per feature in training "
            f"mode), got sizes {sizes}"
        )
    h = star.shape[0]
    if not 0 <= feature < h:
        raise ValueError(f"feature must be 0 to {h - 1}, got {feature}")
    mates = companions(h, seed, draws, max(sizes)).to(star.dtype)  # (R, most-1, H)
    bn_y = torch.empty(len(sizes), draws, h, dtype=star.dtype)  # (S, R, H)
    for s, size in enumerate(sizes):
        for r in range(draws):
            batch = torch.cat([star[None], mates[r, : size - 1]])  # (B, H), x★ in row 0
            bn_y[s, r] = batch_norm(batch, eps=eps).y[0]
    ln_y = layer_norm(star[None], eps=eps).y[0]  # (H,)
    bn_limit = star / (1.0 + eps) ** 0.5  # (H,)
    return BatchSweep(star=star, sizes=tuple(sizes), feature=feature, bn_y=bn_y, ln_y=ln_y, bn_limit=bn_limit)


def sweep_for(batch: int, features: int, seed: int, sample: int, draw: str = "stable") -> BatchSweep:
    """:func:`batch_sweep` of row ``sample`` of the unperturbed x (B, H) that :func:`couple` starts from."""
    return batch_sweep(base(batch, features, seed, draw)[sample], seed)


_TITLES = {"BN": "BatchNorm", "LN": "LayerNorm"}


def _whole(count: int) -> dict[str, int]:
    """Whole-number ticks on an index axis with few positions (plotly would otherwise write 0.5 steps)."""
    return dict(dtick=1) if count < 8 else {}


def fig_delta(result: Coupling) -> go.Figure:
    """Two heatmaps of |Δy| (B, H), BN left and LN right: samples down, features across; row i outlined.

    Both share one log colour scale: the colour is log10 |Δy|, floored at
    :data:`FLOOR` (exact zeros land there), and ``customdata`` holds |Δy|
    itself. The changed row is outlined in each norm's colour.
    """
    b, h = result.x.shape
    top = max(float(result.bn_delta.max()), float(result.ln_delta.max()), FLOOR * 10)
    rows, feats = np.arange(b), np.arange(h)
    traces, shapes, annotations, layout = [], [], [], {}
    for k, (name, delta, domain) in enumerate(
        zip(("BN", "LN"), (result.bn_delta, result.ln_delta), plot.columns(2, gap=0.08), strict=True), start=1
    ):
        axes = plot.axis_names(k)
        raw = plot.to_numpy(delta)  # (B, H)
        traces.append(
            plot.heatmap(np.log10(np.maximum(raw, FLOOR)), feats, rows, name, axes, coloraxis="coloraxis")
            | dict(
                customdata=raw,
                hovertemplate="sample %{y}, feature %{x}<br>|Δy| = %{customdata:.3g}<extra>" + name + "</extra>",
            )
        )
        color = theme.ROLES[name]
        shapes += plot.outline(
            -0.5, h - 0.5, result.sample - 0.5, result.sample + 0.5, axes, f"{name} row", color=color
        )
        annotations.append(plot.title(_TITLES[name], sum(domain) / 2, color=color))
        x_name, y_name = (plot.layout_key(a) for a in axes)
        layout[x_name] = dict(domain=domain, anchor=axes[1], title=dict(text="feature j"), **_whole(h))
        # LN's panel shares BN's rows, so only BN's axis is labelled.
        y_label = dict(title=dict(text="sample i")) if k == 1 else dict(matches="y", showticklabels=False)
        layout[y_name] = plot.samples_axis(b, anchor=axes[0], **y_label)
    lo, hi = int(np.log10(FLOOR)), int(np.ceil(np.log10(top)))
    ticks = list(range(lo, hi + 1, 2))
    # At x = 1 (not plotly's 1.02, a share of the width) the bar keeps its place in the fixed right margin.
    colorbar = dict(x=1, title=dict(text="|Δy|"), tickvals=ticks, ticktext=[f"1e{t}" for t in ticks])
    layout |= dict(
        coloraxis=dict(colorscale=theme.SEQUENTIAL, cmin=lo, cmax=hi, colorbar=colorbar),
        shapes=shapes,
        annotations=annotations,
    )
    return plot.figure(traces, layout, margin=dict(l=60, r=90, t=36, b=50), height=420)


def fig_sweep(sweep: BatchSweep) -> go.Figure:
    """x★'s output on one feature (y) against batch size B (x, log): BN one path per set of batch-mates, LN one line.

    The BN trace holds R paths of S points, each path followed by a NaN gap;
    LN's level line and BN's limit as B → ∞ (dotted) span the sizes.
    """
    j = sweep.feature
    r = sweep.bn_y.shape[1]
    # One path per set of batch-mates, as one trace: the paths are separated by NaN.
    gap = np.full((r, 1), np.nan, dtype=np.float32)
    sizes = np.hstack([np.tile(np.asarray(sweep.sizes, dtype=np.float32), (r, 1)), gap]).reshape(-1)  # (R·(S+1),)
    values = np.hstack([plot.to_numpy(sweep.bn_y[:, :, j].T), gap]).reshape(-1)  # (R·(S+1),)
    ends = np.asarray([sweep.sizes[0], sweep.sizes[-1]], dtype=np.float32)
    traces = [
        # Nearly opaque: paler, BN's vermillion would read as GroupNorm's orange. Legend names of at most
        # 14 characters: plotly lays a wrapped legend out in columns as wide as the widest entry.
        plot.line(sizes, values, f"BN, {r} batches", theme.ROLES["BN"], width=1, markers=dict(size=5))
        | dict(opacity=0.8, hovertemplate="B = %{x}<br>BN y = %{y:.4f}<extra></extra>"),
        plot.line(
            ends, np.repeat(plot.to_numpy(sweep.ln_y[j : j + 1]), 2), "LN, any batch", theme.ROLES["LN"], width=3
        ),
        plot.line(ends, np.repeat(plot.to_numpy(sweep.bn_limit[j : j + 1]), 2), "BN, B → ∞", theme.GREY, dash="dot"),
    ]
    layout = dict(
        xaxis=dict(type="log", title=dict(text="batch size B"), tickvals=list(sweep.sizes)),
        yaxis=dict(title=dict(text=f"output of x★, feature {j}")),
        legend=plot.legend_above(),
    )
    return plot.figure(traces, layout, margin=dict(l=70, r=20, t=60, b=50), height=380)
