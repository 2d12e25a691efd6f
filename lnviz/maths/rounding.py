"""When two computed values count as the same: the one rule for "unchanged", to floating-point rounding.

Two computations of one norm on the same numbers can differ in their last bits: a reduction of n values
adds them in an order that depends on the tensor's layout (its strides, the vector width, the threads),
so the μ of one column of x (B, H) can round differently for H = 12 and H = 16 while the column itself is
the same. Comparing bit for bit would call that a change; a fixed threshold (say 1e-9) would be wrong for
float32 and for an ill-conditioned group. The rule here follows from the dtype's rounding instead.

A norm's output y = γ (x − μ) / √(σ² + ε) + β, computed in a floating type with unit roundoff
u = ``torch.finfo(dtype).eps`` / 2 from a group of n pooled values (its ``count``), is off from the exact
value by at most, to first order (summation error ≤ n u Σ|x_k|, Higham 2002, §4.2):

.. math::

    |\\delta y| \\le u \\left( (2n + 8)\\, |\\gamma| \\, \\kappa + |y| \\right), \\qquad
    \\kappa = \\frac{\\max_{k \\in S} |x_k| + |\\mu|}{\\sqrt{\\sigma^2 + \\epsilon}}

μ's sum contributes n u max|x| / √(σ² + ε) (times |γ|); σ²'s sum of squares shifts the root by at most
(n + 4) u / 2 in relative terms, which x̂ = (x − μ)/√(σ² + ε) ≤ 2κ carries into y; the elementwise steps add a
few u more. κ, the group's largest input in units of its deviation, is the condition number: a column
far from 0 with a small spread (large κ) loses more digits when its mean is taken away. The bound is
:func:`slack`, written eps · ((n + 4) |γ| κ + |y|) with eps = 2u.

Two computed outputs are the same, **unchanged**, when every |Δ| is within the sum of their slacks,
and NaN (0/0) sits in the same places in both. At the state table's sizes up to 64 × 64 cells, for every
input kind, lnviz's own reductions of the same numbers laid out differently stay below 5 % of the slack,
and a genuine change (BN's outputs after B 8 → 7, LN's after H 12 → 11) is more than 10¹² times it in
float64 and 10³ times in float32 (tests/test_rounding.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from lnviz.maths.norms import NormResult


def slack(result: NormResult) -> Tensor:
    """The most rounding can move each output of ``result``: eps · ((n + 4) |γ| κ + |y|), shaped like y.

    n is the count of values pooled into one μ, σ² (1 for eval mode's running statistics), κ the group's
    (max |x| + |μ|) / √(σ² + ε), reduced over the result's ``dims`` (see the module's docstring). A group
    whose σ² + ε is 0 has infinite κ: its outputs are NaN, which :func:`compare` matches by place.
    """
    eps = torch.finfo(result.y.dtype).eps
    n = max(result.count, 1)
    largest = result.x.abs().amax(dim=result.dims, keepdim=True)  # one per group, as mean
    kappa = (largest + result.mean.abs()) * result.rstd  # one per group
    return eps * ((n + 4) * result.weight.abs() * kappa + result.y.abs())  # like y


@dataclass(frozen=True)
class Change:
    """What a comparison of two tensors found: the largest |Δ| and whether it is rounding or a change."""

    delta: float  # max |Δ| over the compared values: 0.0 where all are equal, ∞ where a NaN meets a number
    exact: bool  # bit for bit the same (NaN where the other has NaN)
    unchanged: bool  # every |Δ| within the slack, NaN where the other has NaN

    def words(self) -> str:
        """ "unchanged", "unchanged (to rounding: max |Δ| = 4e−15)" or "changed"."""
        if self.exact:
            return "unchanged"
        if self.unchanged:
            return f"unchanged (to rounding: max |Δ| = {self.delta:.0e})".replace("-", "−")  # a real minus sign
        return "changed"


def _within(before: Tensor, after: Tensor, slack: Tensor | float) -> tuple[Tensor, Tensor, Tensor]:
    """Elementwise: equal (NaN matching NaN), |Δ| (0 where equal; NaN where only one is NaN), within the slack."""
    equal = (before == after) | (before.isnan() & after.isnan())
    delta = (before - after).abs().masked_fill(equal, 0.0)
    return equal, delta, equal | (delta <= slack)


def compare(before: Tensor, after: Tensor, slack: Tensor | float = 0.0) -> Change:
    """``before`` against ``after`` (the same shape), each |Δ| against ``slack`` (a tensor that broadcasts, or
    a number; 0: only the same values count as unchanged). NaN matches NaN; a NaN against a number is a change."""
    if before.shape != after.shape:
        raise ValueError(f"compare: shapes {tuple(before.shape)} and {tuple(after.shape)} differ")
    before, after = before.detach().cpu(), after.detach().cpu()
    equal, delta, within = _within(before, after, slack.detach().cpu() if isinstance(slack, Tensor) else slack)
    largest = float(delta.nan_to_num(nan=float("inf")).max()) if delta.numel() else 0.0
    return Change(largest, bool(equal.all()), bool(within.all()))


def outputs(before: NormResult, after: NormResult, cells: tuple[slice, ...] = ()) -> Change:
    """Two results' outputs y compared under the rule, on ``cells`` (an index into y; all of y by default): the
    slack is the sum of both results' (:func:`slack`)."""
    return compare(before.y[cells], after.y[cells], slack(before)[cells] + slack(after)[cells])


def moved(before: NormResult, after: NormResult) -> Tensor:
    """Where y moved by more than the rule allows (bool, like y): past the sum of both slacks, or NaN in one only."""
    return ~_within(before.y, after.y, slack(before) + slack(after))[2]
