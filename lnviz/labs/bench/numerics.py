"""Where LayerNorm's arithmetic loses precision: variance formulas, low-precision dtypes, a tiny ε.

Three lessons, each checked against float64:

1. The variance of a row x (H,) can be computed as

   .. math::

       \\sigma^2 = E[x^2] - E[x]^2 \\quad\\text{(single pass)}, \\qquad
       \\sigma^2 = E[(x - E[x])^2] \\quad\\text{(two passes)},

   or by Welford's running update (one pass, stable). When the mean is large
   next to the spread, E[x²] and E[x]² are two nearly equal large numbers and
   their float32 difference is mostly rounding error (catastrophic
   cancellation); it can even come out negative.
2. float16 keeps 11 significant bits and bfloat16 8, so an LN output in them
   carries a relative error of about 2⁻¹¹ or 2⁻⁸.
3. float16's smallest positive number is 2⁻²⁴ ≈ 6·10⁻⁸, so ε = 1e-12 rounds
   to 0 in float16; a constant row then gives 0 / sqrt(0) = NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import torch
import torch.nn.functional as F
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.maths import norms
from lnviz.maths.data import make_activations
from lnviz.text import format_number
from lnviz.views.state import OFFSET

OFFSETS = OFFSET.options  # the Mean offset control's: 0, then 1 to 1e6 by decades
METHODS = ("single-pass", "two-pass", "Welford")
# Not LN's or BN's colours, which mean those norms everywhere else. Two-pass and Welford often coincide,
# so each line has its own dash and marker too.
METHOD_COLORS = dict(zip(METHODS, theme.SERIES, strict=False))
METHOD_STYLES = {
    "single-pass": dict(dash=None, symbol="circle"),
    "two-pass": dict(dash="dash", symbol="square"),
    "Welford": dict(dash="dot", symbol="diamond-open"),
}
LOW_PRECISION = ("float32", "float16", "bfloat16")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}
EPS_VALUES = (1e-12, 1e-8, 1e-6, 1e-5)


def single_pass_var(x: Tensor) -> Tensor:
    """E[x²] − E[x]² over the last dim of x (B, H), in x's dtype: shape (B,). Cancels when |E[x]| ≫ σ."""
    return x.square().mean(dim=-1) - x.mean(dim=-1).square()  # (B,)


def two_pass_var(x: Tensor) -> Tensor:
    """E[(x − E[x])²] over the last dim of x (B, H), in x's dtype: shape (B,). The mean is removed first."""
    centred = x - x.mean(dim=-1, keepdim=True)  # (B, H)
    return centred.square().mean(dim=-1)  # (B,)


def welford_var(x: Tensor) -> Tensor:
    """Welford's running update over the last dim of x (B, H), in x's dtype: shape (B,), biased.

    For k = 1..H: δ = x_k − m; m += δ / k; M₂ += δ (x_k − m); then σ² = M₂ / H.
    One pass, and never subtracts two large sums. All B rows advance together.
    """
    batch, features = x.shape
    mean = torch.zeros(batch, dtype=x.dtype, device=x.device)  # (B,)
    m2 = torch.zeros(batch, dtype=x.dtype, device=x.device)  # (B,)
    for k in range(features):
        value = x[:, k]  # (B,)
        delta = value - mean  # (B,)
        mean = mean + delta / (k + 1)
        m2 = m2 + delta * (value - mean)
    return m2 / features  # (B,)


@dataclass(frozen=True)
class VarianceResult:
    """The three float32 variances of each row of x (B, H) = offset + N(0, 1), and the exact one.

    ``exact`` is the float64 two-pass variance of the same float32 values, so
    every error below comes from the arithmetic, not from rounding the input.
    """

    offset: float
    x: Tensor  # (B, H), float32
    exact: Tensor  # (B,), float64
    estimates: dict[str, Tensor]  # method -> (B,), float32

    def relative_error(self, method: str) -> Tensor:
        """|σ̂² − σ²| / σ² per row, float64, shape (B,)."""
        return (self.estimates[method].double() - self.exact).abs() / self.exact

    def negative(self, method: str) -> int:
        """How many rows got a negative variance (impossible in exact arithmetic)."""
        return int((self.estimates[method] < 0).sum())


def variance_under_offset(offset: float, batch: int = 64, features: int = 256, seed: int = 0) -> VarianceResult:
    """Each method's variance of x = offset + z, z ~ N(0, 1) seeded, x of shape (batch, features) in float32."""
    if not offset >= 0 or offset == float("inf"):
        raise ValueError(f"offset must be a finite number >= 0, got {offset}")
    z = make_activations("standard normal", batch, features, seed, draw="whole")  # (B, H), float64, as kernels.py draws
    x = (offset + z).float()  # (B, H), float32
    exact = two_pass_var(x.double())  # (B,)
    estimates = {"single-pass": single_pass_var(x), "two-pass": two_pass_var(x), "Welford": welford_var(x)}
    return VarianceResult(offset=float(offset), x=x, exact=exact, estimates=estimates)


@dataclass(frozen=True)
class VarianceCurve:
    """Median relative error of each method at each offset (for the figure)."""

    offsets: tuple[float, ...]
    median_error: dict[str, tuple[float, ...]]  # method -> one per offset
    negative: dict[str, tuple[int, ...]]  # method -> rows with σ̂² < 0, one per offset
    batch: int


def variance_curve(
    offsets: Sequence[float] = OFFSETS, batch: int = 64, features: int = 256, seed: int = 0
) -> VarianceCurve:
    """:func:`variance_under_offset` at every offset, summarised per method."""
    results = [variance_under_offset(o, batch, features, seed) for o in offsets]
    return VarianceCurve(
        offsets=tuple(float(o) for o in offsets),
        median_error={m: tuple(r.relative_error(m).median().item() for r in results) for m in METHODS},
        negative={m: tuple(r.negative(m) for r in results) for m in METHODS},
        batch=batch,
    )


@dataclass(frozen=True)
class PrecisionError:
    """LN's output error in one dtype against float64 on the same rounded input.

    ``fused`` is ``F.layer_norm`` (float32 accumulation inside, one rounding of
    y); ``op_by_op`` is :func:`lnviz.maths.norms.layer_norm` run in the dtype, where
    μ, x − μ and σ² are each rounded. Errors are max |y − y₆₄| and are compared
    with the unit roundoff u = 2⁻ᵖ (p significant bits) times max |y₆₄|.
    """

    dtype: str
    unit_roundoff: float
    max_abs_y: float
    fused: float
    op_by_op: float


def precision_errors(
    dtypes: Sequence[str] = LOW_PRECISION, batch: int = 64, features: int = 1024, seed: int = 0, eps: float = 1e-5
) -> list[PrecisionError]:
    """LN (γ = 1, β = 0) output error in each dtype on seeded "heterogeneous samples" x (batch, features)."""
    base = make_activations("heterogeneous samples", batch, features, seed, draw="whole")  # (B, H), as kernels.py draws
    out = []
    for name in dtypes:
        dtype = DTYPES[name]
        x = base.to(dtype)  # (B, H): the rounded input both sides see
        ref = F.layer_norm(x.double(), (features,), eps=eps)  # (B, H), float64
        fused = F.layer_norm(x, (features,), eps=eps).double()  # (B, H)
        op_by_op = norms.layer_norm(x, eps=eps).y.double()  # (B, H)
        out.append(
            PrecisionError(
                dtype=name,
                unit_roundoff=torch.finfo(dtype).eps / 2,
                max_abs_y=ref.abs().max().item(),
                fused=(fused - ref).abs().max().item(),
                op_by_op=(op_by_op - ref).abs().max().item(),
            )
        )
    return out


@dataclass(frozen=True)
class EpsRounding:
    """What ε becomes when stored in a dtype, and what LN then does to a constant row.

    ``op_by_op`` is the first output of :func:`lnviz.maths.norms.layer_norm` on a
    constant row in that dtype (σ² = 0, so y = 0 · rsqrt(ε)): NaN once ε rounds
    to 0. ``fused`` is ``F.layer_norm``'s, which adds ε in float32 inside.
    """

    eps: float
    dtype: str
    stored: float  # torch.tensor(eps, dtype=dtype).item()
    op_by_op: float
    fused: float

    @property
    def vanishes(self) -> bool:
        return self.stored == 0.0


def eps_rounding(eps: float, dtype: str, features: int = 8, value: float = 0.5) -> EpsRounding:
    """ε stored in ``dtype``, and LN of one constant row (1, features) of ``value`` in that dtype."""
    torch_dtype = DTYPES[dtype]
    row = torch.full((1, features), value, dtype=torch_dtype)  # (1, H), σ² = 0
    return EpsRounding(
        eps=float(eps),
        dtype=dtype,
        stored=torch.tensor(eps, dtype=torch_dtype).item(),
        op_by_op=norms.layer_norm(row, eps=eps).y[0, 0].item(),
        fused=F.layer_norm(row, (features,), eps=eps)[0, 0].item(),
    )


def eps_table(eps_values: Sequence[float] = EPS_VALUES, dtypes: Sequence[str] = LOW_PRECISION) -> list[EpsRounding]:
    """:func:`eps_rounding` for every ε and dtype, ε-major."""
    return [eps_rounding(e, d) for e in eps_values for d in dtypes]


def eps_rows(table: Sequence[EpsRounding]) -> list[dict[str, str]]:
    """One row per ε for display: ε as stored and the op-by-op y in each dtype, and F.layer_norm's y in all."""
    rows: dict[float, dict[str, str]] = {}
    fused: dict[float, set[str]] = {}
    for e in table:
        row = rows.setdefault(e.eps, {"ε": format_number(e.eps)})
        row[f"{e.dtype}: ε stored"] = f"{e.stored:.4g}"
        row[f"{e.dtype}: y op by op"] = f"{e.op_by_op:g}"
        fused.setdefault(e.eps, set()).add(f"{e.fused:g}")
    for eps, row in rows.items():
        row["F.layer_norm y, every dtype"] = ", ".join(sorted(fused[eps]))
    return list(rows.values())


# Figures ---------------------------------------------------------------------------------------------------------

ERROR_FLOOR = 1e-9  # exact zeros would vanish from a log axis


def fig_variance(curve: VarianceCurve, offset: float) -> go.Figure:
    """Median relative error of σ² (y, log) against the mean offset (x, log), one line per method.

    A dotted vertical line marks the chosen ``offset``; a dashed horizontal one
    marks 100% error, where the variance is entirely rounding noise. Errors
    of exactly 0 are drawn at :data:`ERROR_FLOOR`, an offset of 0 at 0.1.
    """
    xs = [max(o, 0.1) for o in curve.offsets]  # 0 drawn at 0.1 on the log axis
    traces = []
    for method in METHODS:
        style = METHOD_STYLES[method]
        traces.append(
            plot.line(
                xs,
                [max(e, ERROR_FLOOR) for e in curve.median_error[method]],
                method,
                METHOD_COLORS[method],
                dash=style["dash"],
                markers=dict(size=8, symbol=style["symbol"]),
            )
            | dict(
                customdata=[[format_number(o), n] for o, n in zip(curve.offsets, curve.negative[method], strict=True)],
                hovertemplate=f"{method}<br>offset %{{customdata[0]}}: median error %{{y:.2e}}"
                f"<br>%{{customdata[1]}} of {curve.batch} rows negative<extra></extra>",
            )
        )
    layout = dict(
        xaxis=dict(
            type="log",
            title=dict(text="mean offset |E[x]| / σ (0 drawn at 0.1)"),
            tickvals=xs,
            ticktext=[format_number(o) for o in curve.offsets],
        ),
        # Two lines: one would outrun the plot's height in lecture mode.
        yaxis=dict(type="log", title=dict(text="median relative error<br>of σ² (float32)"), exponentformat="power"),
        shapes=[
            plot.hline(1.0, color=theme.GREY, dash="dash"),
            plot.vline(max(offset, 0.1), color=theme.INK, dash="dot"),
        ],
        # On a log axis an annotation's y is the value's log10: 0 for 100%.
        annotations=[plot.note("100% error", 1, 0, ("x domain", "y"), xanchor="right", yanchor="bottom")],
        legend=plot.legend_above(),
    )
    return plot.figure(traces, layout, margin=dict(l=88, r=30, t=60, b=55), height=400)
