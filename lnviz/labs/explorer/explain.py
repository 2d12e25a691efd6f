"""The formulas with the live numbers filled in, for one chosen cell (i, j).

Pure text building: LaTeX for ``st.latex`` and the one line of PyTorch that
reproduces the number. LN's statistics for cell (i, j) come from row i (the
sample, over its H features); BN's from column j (the feature, over the B
samples of the batch).
"""

from __future__ import annotations

import math

from lnviz.maths.norms import NormResult


def num(value: float) -> str:
    """A number for LaTeX: four significant digits, NaN and ∞ spelled out."""
    value = float(value)
    if math.isnan(value):
        return r"\text{NaN}"
    if math.isinf(value):
        return r"\infty" if value > 0 else r"-\infty"
    text = f"{value:.4g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return text


def term(value: float) -> str:
    """A number as a term after an operator: negative numbers in parentheses, so "- (-1.5)" never reads "- -1.5"."""
    text = num(value)
    return rf"\left({text}\right)" if text.startswith("-") else text


def cell_values(norm: NormResult, i: int, j: int) -> dict[str, float]:
    """The numbers of one cell's normalization: x, μ, σ², ε, x̂, γ, β, y."""
    mean = norm.mean.expand_as(norm.x)[i, j]
    var = norm.var.expand_as(norm.x)[i, j]
    weight = norm.weight.expand_as(norm.x)[i, j]
    bias = norm.bias.expand_as(norm.x)[i, j]
    return {
        "x": float(norm.x[i, j]),
        "mean": float(mean),
        "var": float(var),
        "eps": norm.eps,
        "x_hat": float(norm.x_hat[i, j]),
        "gain": float(weight),
        "bias": float(bias),
        "y": float(norm.y[i, j]),
    }


def latex(norm: NormResult, i: int, j: int, kind: str) -> str:
    """LN's (``kind="LN"``) or BN's (``kind="BN"``) formulas for cell (i, j), numbers filled in.

    LN sums over k = 0 … H − 1, the features of sample i (row i); BN over
    k = 0 … B − 1, the samples in feature j's column: 0-based, as the indices
    shown, with H and B as numbers. The statistics are named after what they pool (μ of row i, μ of
    column j), so that LN's and BN's never read alike; x̂ and y carry the norm's
    name. The variance is biased (divide by H or B), as PyTorch.
    """
    v = cell_values(norm, i, j)
    if kind == "LN":
        count, unit = norm.x.shape[1], rf"\text{{row}}\,{i}"  # H features
        pooled = rf"x_{{{i},k}}"
    elif kind == "BN":
        count, unit = norm.x.shape[0], rf"\text{{column}}\,{j}"  # B samples
        pooled = rf"x_{{k,{j}}}"
    else:
        raise ValueError(f"kind must be 'LN' or 'BN', got {kind!r}")
    mu, var = rf"\mu_{{{unit}}}", rf"\sigma^2_{{{unit}}}"
    total = rf"\tfrac{{1}}{{{count}}}\textstyle\sum_{{k=0}}^{{{count - 1}}}"
    x_hat, y = rf"\hat x^{{\text{{{kind}}}}}_{{{i},{j}}}", rf"y^{{\text{{{kind}}}}}_{{{i},{j}}}"
    return "\n".join(
        [
            r"\begin{aligned}",
            rf"{mu} &= {total} {pooled} = {num(v['mean'])} \\",
            rf"{var} &= {total} ({pooled} - {mu})^2 = {num(v['var'])} \\",
            # x̂ and y: the formula, then its numbers on a line of their own, so that each fits a phone's width.
            rf"{x_hat} &= \frac{{x_{{{i},{j}}} - {mu}}}{{\sqrt{{{var} + \epsilon}}}} \\",
            rf"&= \frac{{{num(v['x'])} - {term(v['mean'])}}}{{\sqrt{{{num(v['var'])} + {num(v['eps'])}}}}}"
            rf" = {num(v['x_hat'])} \\",
            rf"{y} &= \gamma_{{{j}}}\,{x_hat} + \beta_{{{j}}} \\",
            rf"&= {num(v['gain'])} \cdot {term(v['x_hat'])} + {term(v['bias'])} = {num(v['y'])}",
            r"\end{aligned}",
        ]
    )


def pytorch_line(kind: str, i: int, j: int, features: int, eps: float) -> str:
    """The one line of PyTorch that gives y[i, j] for x, weight (γ), bias (β) and eps, and runs at this ε.

    ``F.batch_norm`` raises ValueError for ε = 0 in training mode ("eps must be
    positive"), so there BN's line is its formula over column j, in torch (the page says why, under it).
    """
    if kind == "LN":
        return f"F.layer_norm(x, ({features},), weight, bias, eps)[{i}, {j}]"
    if kind == "BN" and eps == 0:
        column = f"x[:, {j}]"  # (B,): feature j over the batch; the biased σ, as F.batch_norm's
        return f"(x[{i}, {j}] - {column}.mean()) / {column}.std(correction=0) * weight[{j}] + bias[{j}]"
    if kind == "BN":
        return f"F.batch_norm(x, None, None, weight, bias, training=True, eps=eps)[{i}, {j}]"
    raise ValueError(f"kind must be 'LN' or 'BN', got {kind!r}")
