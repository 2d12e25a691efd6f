"""The main explorer's computation: LN and BN of one grid x (B, H), side by side.

:func:`normalize` runs both norms in torch on x's device and times them, before γ and β;
:func:`with_affine` applies the controls' γ and β, the cheap step redone when they move. PyTorch
refuses BN in training mode for a batch of one (its output would be β for ε > 0); the
result then carries the reason in words instead of a BN result, so the page
can explain it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pandas as pd
import torch
from torch import Tensor

from lnviz.labs.caveats import BN_SINGLE_SAMPLE, BN_ZERO_EPS, BN_ZERO_EPS_BADGE  # noqa: F401  (said once)
from lnviz.maths import data, norms
from lnviz.maths import device as devices
from lnviz.maths.norms import NormResult, batch_norm, layer_norm

# The largest window of cells a heatmap shows; larger grids are shown as a
# window of exact values around the chosen cell, and the page says so.
WINDOW = 64


@dataclass(frozen=True)
class Affine:
    """How the gain and bias controls make γ and β: γ = gain·g and β = bias + b.

    ``g`` and ``b`` are (H,), one per feature (:func:`lnviz.maths.data.random_affine`),
    or None for scalars (g = 1, b = 0). Kept with the result that applied
    them, so the stage reads them instead of deriving them a second time.
    """

    gain: float = 1.0
    bias: float = 0.0
    g: Tensor | None = None  # (H,)
    b: Tensor | None = None  # (H,)

    @property
    def gamma(self) -> Tensor | float:
        """γ = gain·g: (H,), or the scalar gain."""
        return self.gain if self.g is None else self.gain * self.g

    @property
    def beta(self) -> Tensor | float:
        """β = bias + b: (H,), or the scalar bias."""
        return self.bias if self.b is None else self.bias + self.b


@dataclass(frozen=True)
class Exploration:
    """LN and BN of the same x (B, H), with how long torch took and where, and the γ, β they applied."""

    x: Tensor  # (B, H)
    ln: NormResult  # mean, var: (B, 1): one per sample
    bn: NormResult | None  # mean, var: (1, H): one per feature; None when B = 1
    bn_error: str | None  # why there is no BN result, in words
    seconds: float  # wall time of both norms, synchronised on a GPU
    device: torch.device
    affine: Affine = Affine()  # γ = gain·g, β = bias + b, as applied to ln.y and bn.y


def normalize(x: Tensor, eps: float = 1e-5) -> Exploration:
    """LayerNorm (one μ, σ² per row of x) and BatchNorm (one per column), with γ = 1, β = 0, timed.

    ``x`` has shape (B, H). This is the heavy part: the statistics and x̂.
    Runs on ``x.device``; the wall time is synchronised on a GPU.
    """
    if x.dim() != 2:
        raise ValueError(f"normalize: x must have shape (B, H), got {tuple(x.shape)}")
    dev = x.device

    def both() -> tuple[NormResult, NormResult | None, str | None]:
        ln = layer_norm(x, eps=eps)
        if x.shape[0] < 2:
            return ln, None, BN_SINGLE_SAMPLE
        return ln, batch_norm(x, eps=eps, training=True), None

    (ln, bn, bn_error), seconds = devices.timed(both, dev)
    return Exploration(x=x, ln=ln, bn=bn, bn_error=bn_error, seconds=seconds, device=dev)


def generated(
    dist: str, batch: int, features: int, seed: int, device_type: str, eps: float, draw: str = "stable"
) -> Exploration:
    """Both norms, before γ and β, of the generated x (B, H) that these controls name, on ``device_type``.

    ``draw`` is how x is drawn from the seed (the Draw control, :data:`lnviz.views.state.DRAW`).

    What the explorer and the walkthrough cache and share between sessions
    (never mutated): moving γ or β redoes only the elementwise affine step.
    """
    dev = torch.device(device_type)
    x = data.make_activations(dist, batch, features, seed, dev, devices.compute_dtype(dev), draw)  # (B, H)
    return normalize(x, eps)


def with_affine(
    result: Exploration, gain: float = 1.0, bias: float = 0.0, g: Tensor | None = None, b: Tensor | None = None
) -> Exploration:
    """Both norms' y = γ x̂ + β for γ = gain·g and β = bias + b, reusing the statistics; the time includes this step.

    ``gain`` and ``bias`` are the controls' values and ``g``, ``b`` the (H,)
    per-feature parts (:func:`lnviz.maths.data.random_affine`; None: γ, β are
    the scalars). The result carries them as its :class:`Affine`.
    """
    affine = Affine(float(gain), float(bias), g, b)
    gamma, beta = affine.gamma, affine.beta

    def both() -> tuple[NormResult, NormResult | None]:
        bn = None if result.bn is None else norms.apply_affine(result.bn, gamma, beta)
        return norms.apply_affine(result.ln, gamma, beta), bn

    (ln, bn), seconds = devices.timed(both, result.device)
    return replace(result, ln=ln, bn=bn, seconds=result.seconds + seconds, affine=affine)


def window(
    batch: int, features: int, row: int, col: int, size: int = WINDOW, cols: int | None = None
) -> tuple[slice, slice]:
    """The rows and columns of a ``size`` × ``cols`` window (``cols`` defaults to ``size``) that contains
    (row, col).

    The window is centred on the cell where it can be and clipped to the
    grid; a side no longer than the window's is shown whole.
    """

    def span(n: int, at: int, size: int) -> slice:
        if n <= size:
            return slice(0, n)
        start = min(max(at - size // 2, 0), n - size)
        return slice(start, start + size)

    return span(batch, row, size), span(features, col, size if cols is None else cols)


@dataclass(frozen=True)
class Degenerate:
    """Rows (LN) or columns (BN) where σ² + ε = 0, so x̂ = 0/0 is undefined."""

    ln_rows: tuple[int, ...]
    bn_cols: tuple[int, ...]

    def __bool__(self) -> bool:
        return bool(self.ln_rows or self.bn_cols)


def listed(noun: str, indices: tuple[int, ...], most: int = 8) -> str:
    """Indices in words: "sample 3", "features 0, 2, 5", or the first ``most`` and how many more."""
    shown = ", ".join(map(str, indices[:most]))
    more = f" and {len(indices) - most} more" if len(indices) > most else ""
    return f"{noun}{'s' if len(indices) > 1 else ''} {shown}{more}"


def degenerate(result: Exploration) -> Degenerate:
    """Which statistics divide by zero: σ² = 0 with ε = 0."""

    def zero(norm: NormResult | None) -> tuple[int, ...]:
        if norm is None:
            return ()
        return tuple(int(i) for i in torch.nonzero((norm.var + norm.eps).flatten() == 0).flatten())

    return Degenerate(ln_rows=zero(result.ln), bn_cols=zero(result.bn))


def _finite(values: Tensor) -> Tensor:
    """``values`` without NaN and ±inf, copying only when there are any."""
    return values if bool(torch.isfinite(values).all()) else values[torch.isfinite(values)]


def finite_range(*tensors: Tensor) -> tuple[float, float]:
    """The smallest and largest finite value over all ``tensors`` ((-1, 1) if there is none)."""
    ends = [torch.aminmax(f) for f in map(_finite, tensors) if f.numel()]
    if not ends:
        return -1.0, 1.0
    return min(float(e.min) for e in ends), max(float(e.max) for e in ends)


def histogram(
    values: Tensor, lo: float | None = None, hi: float | None = None, bins: int = 60
) -> tuple[Tensor, Tensor]:
    """Counts of the finite ``values`` in ``bins`` equal bins over [lo, hi], and the bin centres.

    ``values`` has any shape; every element counts once. Without ``lo`` and
    ``hi`` the range is the values' own finite range, so the bins spread over
    what is there. A single value (lo = hi) gets a bin of width 1 around it.
    Computed in torch on the values' device, so a 1024 × 1024 grid sends 60
    numbers to the browser, not a million.
    """
    finite = _finite(values)
    if lo is None or hi is None:
        own_lo, own_hi = finite_range(finite)
        lo, hi = own_lo if lo is None else lo, own_hi if hi is None else hi
    if hi <= lo:
        lo, hi = lo - 0.5, lo + 0.5
    counts = torch.histc(finite, bins=bins, min=lo, max=hi)  # (bins,)
    edges = torch.linspace(lo, hi, bins + 1, dtype=torch.float64)  # (bins + 1,)
    return counts.cpu(), ((edges[:-1] + edges[1:]) / 2)


def bins_for(count: int, most: int = 60) -> int:
    """How many bins a histogram of ``count`` values gets: Rice's rule, ⌈2 · count^(1/3)⌉, from 8 to ``most``.

    96 values get 10 bins rather than 60 mostly empty ones; 65,536 get ``most``.
    """
    return min(max(math.ceil(2 * count ** (1 / 3)), 8), most)


@dataclass(frozen=True)
class Unit:
    """What one norm pools for the chosen cell (i, j), before and after: LN's row i or BN's column j."""

    norm: str  # "LN" or "BN"
    line: str  # "row" (LN: one sample's H features) or "column" (BN: one feature's B samples)
    index: int  # i for LN's row, j for BN's column
    x: Tensor  # (H,) = x[i, :] for LN, (B,) = x[:, j] for BN: the values one μ and σ² are taken over
    y: Tensor  # the same shape: the norm's output there, y = γ x̂ + β
    mean: float  # μ of the row or column

    @property
    def name(self) -> str:
        """ "row 2" or "column 5", as the stage names it."""
        return f"{self.line} {self.index}"


def unit(result: Exploration, norm: str, cell: tuple[int, int]) -> Unit | None:
    """LN's row i (``norm="LN"``) or BN's column j (``"BN"``) of x (B, H) for ``cell`` = (i, j); None without BN."""
    i, j = cell
    if norm == "LN":
        r, at, line, index = result.ln, (i, slice(None)), "row", i  # r.mean, r.var: (B, 1)
    elif norm == "BN":
        r, at, line, index = result.bn, (slice(None), j), "column", j  # r.mean, r.var: (1, H)
    else:
        raise ValueError(f"norm must be 'LN' or 'BN', got {norm!r}")
    if r is None:
        return None
    stat = (i, 0) if norm == "LN" else (0, j)
    return Unit(
        norm=norm,
        line=line,
        index=index,
        x=result.x[at],
        y=r.y[at],
        mean=float(r.mean[stat]),
    )


@dataclass(frozen=True)
class Distributions:
    """The chosen cell's row (LN's unit) against its column (BN's), before (x) and after (y) each norm.

    ``hists[(norm, stage)]`` is (counts, bin centres), each (bins,), for
    ``norm`` "LN" or "BN" and ``stage`` "x" or "y". The two histograms of one
    stage share their range, so that a row and a column compare on one value
    axis; each has :func:`bins_for` its own count of values.
    """

    cell: tuple[int, int]
    units: dict[str, Unit]  # "LN": row i, "BN": column j (absent when B = 1)
    hists: dict[tuple[str, str], tuple[Tensor, Tensor]]


def distributions(result: Exploration, cell: tuple[int, int]) -> Distributions:
    """Histograms of row i of x and of LN's y there, and of column j of x and of BN's y there.

    ``cell`` = (i, j) is the chosen cell of x (B, H). LN normalizes the row's H
    values by their own μ and σ, BN the column's B values by theirs: these are
    the two sets of values each norm sees for that cell. Computed in torch on
    the values' device; at most 2 · 60 bins per histogram reach the browser.
    """
    units = {name: u for name in ("LN", "BN") if (u := unit(result, name, cell)) is not None}
    hists = {}
    for stage in ("x", "y"):
        lo, hi = finite_range(*(getattr(u, stage) for u in units.values()))
        for name, u in units.items():
            hists[(name, stage)] = histogram(getattr(u, stage), lo, hi, bins=bins_for(u.x.numel()))
    return Distributions(cell=cell, units=units, hists=hists)


def table(values: Tensor, rows: slice, cols: slice) -> pd.DataFrame:
    """The window ``rows`` × ``cols`` of a (B, H) tensor as a table: samples by features."""
    block = values[rows, cols].detach().to("cpu", torch.float64).numpy()
    return pd.DataFrame(
        block,
        index=pd.Index(range(rows.start, rows.stop), name="sample"),
        columns=[f"f{j}" for j in range(cols.start, cols.stop)],
    )
