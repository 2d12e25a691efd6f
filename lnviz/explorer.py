"""The main explorer's computation: LN and BN of one grid x (B, H), side by side.

:func:`explore` runs both norms in torch on x's device and times them. BN in
training mode is undefined for a batch of one; the result then carries the
reason in words instead of a BN result, so the page can explain it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch
from torch import Tensor

from lnviz import device as devices
from lnviz.norms import NormResult, batch_norm, layer_norm

# The largest window of cells a heatmap shows; larger grids are shown as a
# window of exact values around the chosen cell, and the page says so.
WINDOW = 64

BN_SINGLE_SAMPLE = (
    "BatchNorm in training mode needs at least two samples: with B = 1 each feature's "
    "batch has one value, so its variance over the batch is undefined. PyTorch refuses "
    '("Expected more than 1 value per channel when training"). LayerNorm is fine: it '
    "normalizes each sample over its own features."
)


@dataclass(frozen=True)
class Exploration:
    """LN and BN of the same x (B, H), with how long torch took and where."""

    x: Tensor  # (B, H)
    ln: NormResult  # mean, var: (B, 1): one per sample
    bn: NormResult | None  # mean, var: (1, H): one per feature; None when B = 1
    bn_error: str | None  # why there is no BN result, in words
    seconds: float  # wall time of both norms, synchronised on a GPU
    device: torch.device


def explore(x: Tensor, gain: Tensor | float = 1.0, bias: Tensor | float = 0.0, eps: float = 1e-5) -> Exploration:
    """LayerNorm (one μ, σ² per row of x) and BatchNorm (one per column), timed.

    ``x`` has shape (B, H); ``gain`` and ``bias`` are scalars or tensors of
    shape (H,), applied by both norms. Runs on ``x.device``.
    """
    if x.dim() != 2:
        raise ValueError(f"explore: x must have shape (B, H), got {tuple(x.shape)}")
    dev = x.device

    def both() -> tuple[NormResult, NormResult | None, str | None]:
        ln = layer_norm(x, gain, bias, eps)
        if x.shape[0] < 2:
            return ln, None, BN_SINGLE_SAMPLE
        return ln, batch_norm(x, gain, bias, eps, training=True), None

    (ln, bn, bn_error), seconds = devices.timed(both, dev)
    return Exploration(x=x, ln=ln, bn=bn, bn_error=bn_error, seconds=seconds, device=dev)


def window(batch: int, features: int, row: int, col: int, size: int = WINDOW) -> tuple[slice, slice]:
    """The rows and columns of a ``size`` × ``size`` window that contains (row, col).

    The window is centred on the cell where it can be and clipped to the
    grid; a grid no larger than ``size`` is shown whole.
    """

    def span(n: int, at: int) -> slice:
        if n <= size:
            return slice(0, n)
        start = min(max(at - size // 2, 0), n - size)
        return slice(start, start + size)

    return span(batch, row), span(features, col)


@dataclass(frozen=True)
class Degenerate:
    """Rows (LN) or columns (BN) where σ² + ε = 0, so x̂ = 0/0 is undefined."""

    ln_rows: tuple[int, ...]
    bn_cols: tuple[int, ...]

    def __bool__(self) -> bool:
        return bool(self.ln_rows or self.bn_cols)


def degenerate(result: Exploration) -> Degenerate:
    """Which statistics divide by zero: σ² = 0 with ε = 0."""

    def zero(norm: NormResult | None) -> tuple[int, ...]:
        if norm is None:
            return ()
        return tuple(int(i) for i in torch.nonzero((norm.var + norm.eps).flatten() == 0).flatten())

    return Degenerate(ln_rows=zero(result.ln), bn_cols=zero(result.bn))


def histogram(values: Tensor, lo: float, hi: float, bins: int = 60) -> tuple[Tensor, Tensor]:
    """Counts of the finite ``values`` in ``bins`` equal bins over [lo, hi], and the bin centres.

    Computed in torch on the values' device, so a 1024 × 1024 grid sends 60
    numbers to the browser, not a million.
    """
    finite = values[torch.isfinite(values)].to(torch.float64)
    if hi <= lo:
        hi = lo + 1.0
    counts = torch.histc(finite, bins=bins, min=lo, max=hi)  # (bins,)
    edges = torch.linspace(lo, hi, bins + 1, dtype=torch.float64)  # (bins + 1,)
    return counts.cpu(), ((edges[:-1] + edges[1:]) / 2)


def table(values: Tensor, rows: slice, cols: slice) -> pd.DataFrame:
    """The window ``rows`` × ``cols`` of a (B, H) tensor as a table: samples by features."""
    block = values[rows, cols].detach().to("cpu", torch.float64).numpy()
    return pd.DataFrame(
        block,
        index=pd.Index(range(rows.start, rows.stop), name="sample"),
        columns=[f"f{j}" for j in range(cols.start, cols.stop)],
    )
