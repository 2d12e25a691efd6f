"""A guided walkthrough of one sample's LayerNorm and one feature's BatchNorm, step by step.

Both norms compute

.. math::

    y = \\gamma \\, \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta

on x of shape (B, H). LN reduces over the H features of row i (μ, σ²: one per
sample); BN over the B samples of column j (one per feature). The walkthrough
splits each into six steps: the input, μ, the centred values, σ² (biased, as
PyTorch), x̂, and γ, β. Each :class:`Step` carries the formula with live
numbers, the (B, H) mask of the cells it involves and the 1-D vector it shows.
The numbers come from :func:`lnviz.norms.layer_norm` and
:func:`lnviz.norms.batch_norm`, so they are torch's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots
from torch import Tensor

from lnviz import theme
from lnviz.explain import num
from lnviz.explorer import BN_SINGLE_SAMPLE
from lnviz.norms import Affine, NormResult, batch_norm, layer_norm
from lnviz.plot import to_numpy

STAGES = ("input", "mean", "centred", "variance", "normalized", "affine")
N_STEPS = 2 * len(STAGES)  # LN's six steps, then BN's


BN_ZERO_EPS = (
    'F.batch_norm refuses ε = 0 in training mode ("eps must be positive"); these numbers are the '
    "formula's, the value it approaches as ε → 0."
)

SINGLE_SAMPLE_NOTE = (
    "BatchNorm is undefined for B = 1: each feature's batch holds one value, so it has no batch statistics."
)

SHOWN = 6  # a vector longer than this is written with its first and last entries only

TITLES = {
    "LN": ("the input row", "the row's mean", "centre the row", "the row's variance", "normalize the row", "γ and β"),
    "BN": (
        "the input column",
        "the column's mean",
        "centre the column",
        "the column's variance",
        "normalize the column",
        "γ and β",
    ),
}

TEXTS = {
    "LN": (
        "LayerNorm works on **one sample at a time**: row {i}, its {n} features. No other row is used, "
        "so the result is the same at training and test time and for any batch size.",
        "The mean of the row: add its {n} values and divide by {n}.",
        "Subtract μ from every value of the row. The centred row sums to 0.",
        "The variance is the mean of the squared centred values (the bars). It divides by {n}, not {n} − 1: "
        "the biased estimate, as PyTorch.",
        "Divide the centred row by √(σ² + ε). The row now has mean 0 and variance σ²/(σ² + ε), just under 1. "
        "ε keeps the division finite when σ² is 0.",
        "Scale by γ and shift by β, **one pair per feature** (γₖ, βₖ along the row), so the network can "
        "undo the normalization where that helps.",
    ),
    "BN": (
        "BatchNorm works on **one feature at a time**: column {j}, its value in each of the {n} samples. "
        "Every sample's output depends on the rest of the batch.",
        "The mean of the column: add its {n} values, one per sample, and divide by {n}.",
        "Subtract μ from every value of the column. The centred column sums to 0.",
        "The variance is the mean of the squared centred values (the bars). It divides by {n}, not {n} − 1: "
        "the biased estimate PyTorch uses to normalize in training mode.",
        "Divide the centred column by √(σ² + ε). The column now has mean 0 and variance σ²/(σ² + ε), just "
        "under 1, across the batch.",
        "Scale by γ and shift by β of feature {j}: the whole column shares **one** γ and one β, since they belong "
        "to the feature.",
    ),
}


@dataclass(frozen=True)
class Step:
    """One step of the walkthrough: what it computes, on which cells, with which numbers.

    ``values`` is the vector the step shows, along row ``index`` (LN, shape
    (H,)) or down column ``index`` (BN, shape (B,)): x at the input and mean
    steps, x − μ when centred, (x − μ)² at the variance step (their mean is
    σ²), x̂ when normalized and y after γ, β. It is None where the step is
    undefined (BN with B = 1). ``level`` is the statistic drawn across the
    bars (μ, σ²), or None.
    """

    norm: str  # "LN" or "BN"
    stage: str  # one of STAGES
    title: str
    text: str  # plain words, markdown: what the step does
    latex: str  # the step's formula with the live numbers
    mask: Tensor  # (B, H) bool: the cells involved
    index: int  # the row (LN) or column (BN)
    values: Tensor | None  # (H,) for LN, (B,) for BN; None when undefined
    symbol: str  # what ``values`` holds: "x", "x − μ", "(x − μ)²", "x̂", "y"
    level: float | None  # μ at the mean step, σ² at the variance step
    note: str  # a caveat the step must show, in words ("" when none)

    @property
    def label(self) -> str:
        """The step's name for the indicator: "LN · centre the row"."""
        return f"{self.norm} · {self.title}"


def vector(values: Tensor, shown: int = SHOWN) -> str:
    """LaTeX for a vector of numbers: all of them when short, else the first three, ⋯, the last two."""
    nums = [num(v) for v in values.tolist()]
    if len(nums) > shown:
        nums = [*nums[:3], r"\ldots", *nums[-2:]]
    return r"\left(" + r",\ ".join(nums) + r"\right)"


def term(value: float) -> str:
    """A number as a term after an operator: negative numbers in parentheses, so "- (-1.5)" never reads "- -1.5"."""
    text = num(value)
    return rf"\left({text}\right)" if text.startswith("-") else text


def _scalar_or_vector(values: Tensor) -> str:
    """One number when every entry is equal (a scalar γ or β), else the vector."""
    flat = values.flatten()
    return num(flat[0]) if bool((flat == flat[0]).all()) else vector(flat)


def _notes(var: float, eps: float) -> tuple[str, str]:
    """(the note at the variance step, the note at the normalize and γ, β steps) for one σ² and ε."""
    if var + eps == 0:
        undefined = (
            "σ² = 0 and ε = 0: every value equals μ, so x̂ = (x − μ)/√(σ² + ε) = 0/0, which is undefined "
            "(NaN): the bars are missing. Any ε > 0 makes x̂ = 0 instead; that is what ε is for."
        )
        return "σ² = 0: every value equals μ. With ε = 0 the next step divides by 0.", undefined
    if var == 0:
        return "σ² = 0: every value equals μ.", "σ² = 0, so x̂ = 0/√ε = 0: ε turns what would be 0/0 into 0."
    if var < eps:
        shrink = var / (var + eps)
        return "", (
            f"σ² = {var:.3g} is smaller than ε = {eps:g}: ε dominates √(σ² + ε), so x̂ stays small "
            f"(its variance is σ²/(σ² + ε) = {shrink:.3g}, not 1)."
        )
    return "", ""


def _line_steps(norm: NormResult, kind: str, index: int, shape: tuple[int, int]) -> list[Step]:
    """The six steps along row ``index`` (``kind="LN"``) or down column ``index`` (``kind="BN"``).

    ``norm`` is the norm of that row, x[index : index + 1] of shape (1, H),
    or of that column, x[:, index : index + 1] of shape (B, 1); ``shape`` is
    the whole grid's (B, H).
    """
    mask = torch.zeros(shape, dtype=torch.bool)  # (B, H)
    line = norm.x.flatten().cpu()  # (n,): the row (n = H) or the column (n = B)
    mu = float(norm.mean.flatten()[0])
    var = float(norm.var.flatten()[0])
    x_hat, y = norm.x_hat.flatten().cpu(), norm.y.flatten().cpu()  # (n,), (n,)
    n = line.numel()
    if kind == "LN":
        mask[index, :] = True
        big = "H"
        whole, cell = rf"x_{{{index},:}}", rf"x_{{{index},k}}"
        hat, out = rf"\hat x_{{{index},k}}", rf"y_{{{index},k}}"
        gamma, beta = r"\gamma_k", r"\beta_k"
        g_val, b_val = _scalar_or_vector(norm.weight.cpu()), _scalar_or_vector(norm.bias.cpu())
    else:
        mask[:, index] = True
        big = "B"
        whole, cell = rf"x_{{:,{index}}}", rf"x_{{k,{index}}}"
        hat, out = rf"\hat x_{{k,{index}}}", rf"y_{{k,{index}}}"
        gamma, beta = rf"\gamma_{{{index}}}", rf"\beta_{{{index}}}"
        g_val, b_val = num(norm.weight.flatten()[0]), term(float(norm.bias.flatten()[0]))  # β after a "+"
    sub = f"{index}"
    centred = line - norm.mean.flatten().cpu()  # (n,): x − μ, μ as torch computed it
    squares = centred.square()  # (n,): their mean is σ²
    mu_s, var_s = rf"\mu_{{{sub}}}", rf"\sigma^2_{{{sub}}}"
    mean_of = rf"\tfrac{{1}}{{{big}}}\textstyle\sum_{{k}}"
    denom = (var + norm.eps) ** 0.5
    var_note, div_note = _notes(var, norm.eps)
    if kind == "BN" and norm.eps == 0:
        div_note = (div_note + " " + BN_ZERO_EPS).strip()
    latex = (
        rf"{whole} = {vector(line)}, \quad {big} = {n}",
        rf"{mu_s} = {mean_of} {cell} = \tfrac{{1}}{{{n}}} \cdot {term(line.sum())} = {num(mu)}",
        rf"\begin{{aligned}}{cell} - {mu_s} &= {vector(line)} - {term(mu)} \\ &= {vector(centred)}\end{{aligned}}",
        rf"{var_s} = {mean_of} ({cell} - {mu_s})^2 = \tfrac{{1}}{{{n}}} \cdot {num(squares.sum())} = {num(var)}",
        r"\begin{aligned}"
        rf"{hat} &= \frac{{{cell} - {mu_s}}}{{\sqrt{{{var_s} + \epsilon}}}}"
        rf" = \frac{{{cell} - {mu_s}}}{{\sqrt{{{num(var)} + {num(norm.eps)}}}}}"
        rf" = \frac{{{cell} - {mu_s}}}{{{num(denom)}}} \\ \hat {whole} &= {vector(x_hat)}"
        r"\end{aligned}",
        r"\begin{aligned}"
        + (
            rf"{out} &= {gamma}\,{hat} + {beta} \\ \gamma &= {g_val} \\ \beta &= {b_val}"
            if kind == "LN"
            else rf"{out} &= {gamma}\,{hat} + {beta} = {g_val}\,{hat} + {b_val}"
        )
        + rf" \\ {whole.replace('x', 'y', 1)} &= {vector(y)}"
        r"\end{aligned}",
    )
    shown = (
        (line, "x", None, ""),
        (line, "x", mu, ""),
        (centred, "x − μ", None, ""),
        (squares, "(x − μ)²", var, var_note),
        (x_hat, "x̂", None, div_note),
        (y, "y", None, div_note),
    )
    words = {"i": index, "j": index, "n": n}
    return [
        Step(
            norm=kind,
            stage=stage,
            title=TITLES[kind][k],
            text=TEXTS[kind][k].format(**words),
            latex=latex[k],
            mask=mask,
            index=index,
            values=values,
            symbol=symbol,
            level=level,
            note=note,
        )
        for k, (stage, (values, symbol, level, note)) in enumerate(zip(STAGES, shown, strict=True))
    ]


def _single_sample_steps(x: Tensor, col: int, gain_col: float, bias_col: float) -> list[Step]:
    """BN's steps for B = 1: the input column, then each step says why BN is undefined."""
    mask = torch.zeros(x.shape, dtype=torch.bool)  # (1, H)
    mask[:, col] = True
    column = x[:, col].cpu()  # (1,)
    symbolic = (
        rf"x_{{:,{col}}} = {vector(column)}, \quad B = 1",
        rf"\mu_{{{col}}} = \tfrac{{1}}{{B}}\textstyle\sum_k x_{{k,{col}}}",
        rf"x_{{k,{col}}} - \mu_{{{col}}}",
        rf"\sigma^2_{{{col}}} = \tfrac{{1}}{{B}}\textstyle\sum_k (x_{{k,{col}}} - \mu_{{{col}}})^2",
        rf"\hat x_{{k,{col}}} = \frac{{x_{{k,{col}}} - \mu_{{{col}}}}}{{\sqrt{{\sigma^2_{{{col}}} + \epsilon}}}}",
        rf"y_{{k,{col}}} = {num(gain_col)}\,\hat x_{{k,{col}}} + {num(bias_col)}",
    )
    undefined = r"\quad \text{(undefined for } B = 1\text{)}"
    return [
        Step(
            norm="BN",
            stage=stage,
            title=TITLES["BN"][k],
            text=BN_SINGLE_SAMPLE,
            latex=symbolic[k] + ("" if k == 0 else undefined),
            mask=mask,
            index=col,
            values=column if k == 0 else None,
            symbol="x" if k == 0 else "",
            level=None,
            note=SINGLE_SAMPLE_NOTE,
        )
        for k, stage in enumerate(STAGES)
    ]


def steps(
    x: Tensor, gain: Affine = 1.0, bias: Affine = 0.0, eps: float = 1e-5, row: int = 0, col: int = 0
) -> tuple[Step, ...]:
    """The walkthrough's twelve steps: LN along row ``row``, then BN down column ``col``.

    ``x`` has shape (B, H); ``gain`` (γ) and ``bias`` (β) are scalars or
    tensors of shape (H,), as for :func:`lnviz.norms.layer_norm`. LN's steps
    reduce the H features of row ``row`` (one μ, σ²); BN's the B samples of
    column ``col`` (one μ, σ²; γ_col, β_col). With B = 1 BN is undefined in
    training mode, and its steps say so instead of raising. Raises ValueError
    for a bad shape, ε or cell.
    """
    if x.dim() != 2:
        raise ValueError(f"the walkthrough needs x of shape (B, H), got {tuple(x.shape)}")
    batch, features = x.shape
    if not (0 <= row < batch and 0 <= col < features):
        raise ValueError(f"cell ({row}, {col}) is outside the {batch} × {features} grid")
    # Each row's LN involves that row alone and each column's BN that column alone,
    # so only the chosen row and column are normalized: the same numbers, O(B + H).
    ln = layer_norm(x[row : row + 1], gain, bias, eps)  # (1, H)
    out = _line_steps(ln, "LN", row, (batch, features))
    gain_j, bias_j = (v[col : col + 1] if isinstance(v, Tensor) else v for v in (gain, bias))  # γ_j, β_j
    if batch < 2:
        out += _single_sample_steps(x, col, float(ln.weight.flatten()[col]), float(ln.bias.flatten()[col]))
    else:
        bn = batch_norm(x[:, col : col + 1], gain_j, bias_j, eps, training=True)  # (B, 1)
        out += _line_steps(bn, "BN", col, (batch, features))
    return tuple(out)


def _tick(count: int) -> int:
    """A whole-number tick step that puts at most about ten labels on an axis of ``count`` cells."""
    return max(1, -(-count // 10))


def fig_step(x: Tensor, step: Step, rows: slice, cols: slice) -> go.Figure:
    """The grid x with ``step``'s cells highlighted, over a bar chart of ``step.values``.

    Top: the window ``rows`` × ``cols`` of x (B, H) on the diverging scale,
    the cells outside ``step.mask`` dimmed and the involved row (LN) or column
    (BN) outlined in the norm's colour. Bottom: ``step.values`` as bars, one per
    feature (LN) or sample (BN), with the step's statistic (μ or σ²) as a line.
    """
    color = theme.ROLES[step.norm]
    z = to_numpy(x[rows, cols])  # (window B, window H)
    dim = (~step.mask[rows, cols]).to(torch.float32).numpy()  # 1 where dimmed
    r_idx, c_idx = np.arange(rows.start, rows.stop), np.arange(cols.start, cols.stop)
    finite = z[np.isfinite(z)]
    lim = float(np.abs(finite).max()) if finite.size else 1.0
    fig = make_subplots(rows=2, cols=1, row_heights=[0.62, 0.38], vertical_spacing=0.12)
    small = z.size <= 256
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=c_idx,
            y=r_idx,
            name="x",
            colorscale=theme.DIVERGING,
            zmid=0,
            zmin=-(lim or 1.0),
            zmax=lim or 1.0,
            colorbar=dict(title="x", len=0.6, y=0.72),
            texttemplate="%{z:.2f}" if small else None,
            hovertemplate="sample %{y}, feature %{x}<br>x = %{z:.4g}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Heatmap(
            z=dim,
            x=c_idx,
            y=r_idx,
            name="dimmed",
            colorscale=[[0.0, "rgba(255,255,255,0)"], [1.0, "rgba(255,255,255,0.8)"]],
            zmin=0,
            zmax=1,
            showscale=False,
            hoverinfo="skip",
        ),
        row=1,
        col=1,
    )
    if step.norm == "LN" and rows.start <= step.index < rows.stop:
        box = dict(x0=cols.start - 0.5, x1=cols.stop - 0.5, y0=step.index - 0.5, y1=step.index + 0.5, name="LN row")
    elif step.norm == "BN" and cols.start <= step.index < cols.stop:
        box = dict(x0=step.index - 0.5, x1=step.index + 0.5, y0=rows.start - 0.5, y1=rows.stop - 0.5, name="BN column")
    else:
        box = None
    if box is not None:
        fig.add_shape(type="rect", line=dict(color=color, width=3), row=1, col=1, **box)
    along = "feature k" if step.norm == "LN" else "sample k"
    if step.values is None:
        low, high = fig.layout.yaxis2.domain  # paper coordinates: an axis with no trace is not drawn
        fig.add_annotation(
            text="Undefined for B = 1",
            showarrow=False,
            x=0.5,
            y=(low + high) / 2,
            xref="paper",
            yref="paper",
            font=dict(size=16),
        )
    else:
        fig.add_trace(
            go.Bar(
                x=np.arange(step.values.numel()),
                y=to_numpy(step.values),
                name=step.symbol,
                marker_color=color,
                hovertemplate=along + " = %{x}<br>" + step.symbol + " = %{y:.4g}<extra></extra>",
            ),
            row=2,
            col=1,
        )
    if step.level is not None:
        name = "μ" if step.stage == "mean" else "σ²"
        fig.add_hline(
            y=step.level,
            line=dict(color=theme.BLACK, dash="dash", width=2),
            annotation_text=f"{name} = {step.level:.4g}",
            annotation_position="top left",
            row=2,
            col=1,
        )
    where = f"row {step.index}" if step.norm == "LN" else f"column {step.index}"
    fig.update_yaxes(autorange="reversed", title_text="sample i", dtick=_tick(r_idx.size), row=1, col=1)
    fig.update_xaxes(title_text="feature j", dtick=_tick(c_idx.size), row=1, col=1)
    fig.update_xaxes(title_text=f"{along} ({where})", row=2, col=1)
    fig.update_yaxes(title_text=step.symbol or "value", row=2, col=1)
    fig.update_layout(
        height=620,
        margin=dict(l=10, r=10, t=30, b=10),
        font=dict(family=theme.FONT_FAMILY, size=theme.FONT_SIZE),
        showlegend=False,
        title=dict(text=f"{step.norm}: {step.title}", font=dict(color=color)),
    )
    return fig
