"""A guided walkthrough of one sample's LayerNorm and one feature's BatchNorm, step by step.

Both norms compute

.. math::

    y = \\gamma \\, \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta

on x of shape (B, H). LN reduces over the H features of row i (μ, σ²: one per
sample); BN over the B samples of column j (one per feature). The walkthrough
splits each into six steps: the input, μ, the centred values, σ² (biased, as
PyTorch), x̂, and γ, β. Each :class:`Step` carries the formula with live
numbers, the (B, H) mask of the cells it involves, the values those cells hold
after the step (x, x − μ, x̂, y) and the 1-D vector its bars show. The numbers
come from :func:`lnviz.maths.norms.layer_norm` and :func:`lnviz.maths.norms.batch_norm`, so
they are torch's. The words are in :mod:`lnviz.labs.walkthrough.text`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.labs.explorer.explain import num, term
from lnviz.labs.walkthrough.text import BN_ZERO_EPS, SINGLE_SAMPLE_NOTE, TITLES, texts, variance_notes
from lnviz.maths.norms import Affine, NormResult, batch_norm, layer_norm

PHASES = ("input", "mean", "centred", "variance", "normalized", "affine")
N_STEPS = 2 * len(PHASES)  # LN's six steps, then BN's
SHOWN = 4  # a vector longer than this is written with its first two and last entries only


@dataclass(frozen=True)
class Step:
    """One step of the walkthrough: what it computes, on which cells, with which numbers.

    Along row ``index`` (LN, vectors of shape (H,)) or down column ``index``
    (BN, shape (B,)): ``cells`` is what the involved cells hold after the step
    (x, x − μ, x̂, y); ``values`` is what the bars show (the same, but (x − μ)²
    at the variance step, whose mean is σ²). ``level`` is the statistic drawn
    across the bars (μ, σ²), or None.
    """

    norm: str  # "LN" or "BN"
    phase: str  # one of PHASES: how far along its row or column the step is
    title: str
    text: str  # plain words, markdown: what the step does
    latex: str  # the step's formula with the live numbers
    mask: Tensor  # (B, H) bool: the cells involved
    index: int  # the row (LN) or column (BN)
    cells: Tensor  # (H,) for LN, (B,) for BN: the involved cells after the step
    values: Tensor  # (H,) or (B,): what the bars show
    symbol: str  # what ``values`` holds: "x", "x − μ", "(x − μ)²", "x̂", "y"
    level: float | None  # μ at the mean step, σ² at the variance step
    note: str  # a caveat the step must show, in words ("" when none)

    @property
    def label(self) -> str:
        """The step's name for the indicator: "LN · centre the row"."""
        return f"{self.norm} · {self.title}"


def vector(values: Tensor, shown: int = SHOWN) -> str:
    """LaTeX for a vector of numbers: all of them when short, else the first two, ⋯, the last one."""
    nums = [num(v) for v in values.tolist()]
    if len(nums) > shown:
        nums = [*nums[:2], r"\ldots", nums[-1]]
    return r"\left(" + r",\ ".join(nums) + r"\right)"


def _scalar_or_vector(values: Tensor) -> str:
    """One number when every entry is equal (a scalar γ or β), else the vector."""
    flat = values.flatten()
    return num(flat[0]) if bool((flat == flat[0]).all()) else vector(flat)


@dataclass(frozen=True)
class _Line:
    """One row (LN) or column (BN) and every intermediate of its normalization, as 1-D tensors."""

    kind: str
    index: int
    x: Tensor  # (n,)
    mean: float
    var: float
    eps: float
    centred: Tensor  # (n,): x − μ, μ as torch computed it
    x_hat: Tensor  # (n,)
    y: Tensor  # (n,)
    gain: str  # γ as LaTeX: one number, or the vector along a row
    bias: str  # β as LaTeX, after a "+"

    @classmethod
    def of(cls, norm: NormResult, kind: str, index: int) -> _Line:
        x = norm.x.flatten().cpu()  # (n,): the row (n = H) or the column (n = B)
        if kind == "LN":
            gain, bias = _scalar_or_vector(norm.weight.cpu()), _scalar_or_vector(norm.bias.cpu())
        else:
            gain, bias = num(norm.weight.flatten()[0]), term(float(norm.bias.flatten()[0]))
        return cls(
            kind=kind,
            index=index,
            x=x,
            mean=float(norm.mean.flatten()[0]),
            var=float(norm.var.flatten()[0]),
            eps=norm.eps,
            centred=x - norm.mean.flatten().cpu(),
            x_hat=norm.x_hat.flatten().cpu(),
            y=norm.y.flatten().cpu(),
            gain=gain,
            bias=bias,
        )


def _formulas(line: _Line) -> tuple[str, ...]:
    """The six steps' LaTeX for ``line``, every number filled in."""
    i, n = line.index, line.x.numel()
    if line.kind == "LN":
        big, whole, cell = "H", rf"x_{{{i},:}}", rf"x_{{{i},k}}"
        hat, out, gamma, beta = rf"\hat x_{{{i},k}}", rf"y_{{{i},k}}", r"\gamma_k", r"\beta_k"
        affine = rf"{out} &= {gamma}\,{hat} + {beta} \\ \gamma &= {line.gain} \\ \beta &= {line.bias}"
    else:
        big, whole, cell = "B", rf"x_{{:,{i}}}", rf"x_{{k,{i}}}"
        hat, out, gamma, beta = rf"\hat x_{{k,{i}}}", rf"y_{{k,{i}}}", rf"\gamma_{{{i}}}", rf"\beta_{{{i}}}"
        affine = rf"{out} &= {gamma}\,{hat} + {beta} = {line.gain}\,{hat} + {line.bias}"
    mu, var = rf"\mu_{{{i}}}", rf"\sigma^2_{{{i}}}"
    mean_of = rf"\tfrac{{1}}{{{big}}}\textstyle\sum_{{k}}"
    denom = (line.var + line.eps) ** 0.5
    return (
        rf"{whole} = {vector(line.x)}, \quad {big} = {n}",
        rf"{mu} = {mean_of} {cell} = \tfrac{{1}}{{{n}}} \cdot {term(line.x.sum())} = {num(line.mean)}",
        rf"\begin{{aligned}}{cell} - {mu} &= {vector(line.x)} - {term(line.mean)} \\ &= {vector(line.centred)}"
        r"\end{aligned}",
        rf"{var} = {mean_of} ({cell} - {mu})^2 = \tfrac{{1}}{{{n}}} \cdot {num(line.centred.square().sum())}"
        rf" = {num(line.var)}",
        rf"\begin{{aligned}}{hat} &= \frac{{{cell} - {mu}}}{{\sqrt{{{var} + \epsilon}}}}"
        rf" = \frac{{{cell} - {mu}}}{{\sqrt{{{num(line.var)} + {num(line.eps)}}}}} \\"
        rf" &= \frac{{{cell} - {mu}}}{{{num(denom)}}} \\ \hat {whole} &= {vector(line.x_hat)}\end{{aligned}}",
        rf"\begin{{aligned}}{affine} \\ {whole.replace('x', 'y', 1)} &= {vector(line.y)}\end{{aligned}}",
    )


def _line_steps(line: _Line, shape: tuple[int, int], caveat: str = "") -> list[Step]:
    """The six steps along row ``line.index`` (LN) or down column ``line.index`` (BN) of a (B, H) grid.

    ``caveat`` is added to the notes of the steps that divide (PyTorch refusing what the formula computes).
    """
    mask = torch.zeros(shape, dtype=torch.bool)  # (B, H)
    if line.kind == "LN":
        mask[line.index, :] = True
    else:
        mask[:, line.index] = True
    var_note, div_note = variance_notes(line.var, line.eps)
    div_note = f"{div_note} {caveat}".strip()
    shown = (  # (the cells after the step, the bars, what they hold, the level, the note)
        (line.x, line.x, "x", None, ""),
        (line.x, line.x, "x", line.mean, ""),
        (line.centred, line.centred, "x − μ", None, ""),
        (line.centred, line.centred.square(), "(x − μ)²", line.var, var_note),
        (line.x_hat, line.x_hat, "x̂", None, div_note),
        (line.y, line.y, "y", None, div_note),
    )
    words = {"i": line.index, "j": line.index, "n": line.x.numel()}
    return [
        Step(
            norm=line.kind,
            phase=phase,
            title=TITLES[line.kind][k],
            text=texts(line.kind, line.x.numel())[k].format(**words),
            latex=latex,
            mask=mask,
            index=line.index,
            cells=cells,
            values=values,
            symbol=symbol,
            level=level,
            note=note,
        )
        for k, (phase, latex, (cells, values, symbol, level, note)) in enumerate(
            zip(PHASES, _formulas(line), shown, strict=True)
        )
    ]


def _single_sample_line(x: Tensor, feature: int, gain: float, bias: float, eps: float) -> _Line:
    """BN's column when B = 1: the formula's numbers, which PyTorch refuses.

    μ = x and σ² = 0; for ε > 0, x̂ = 0/√ε = 0 and y = β; at ε = 0, x̂ = 0/0 = NaN.
    """
    column = x[:, feature].cpu()  # (1,)
    mean = column.mean()
    var = (column - mean).square().mean()  # 0: the biased variance of one value
    x_hat = (column - mean) / torch.sqrt(var + eps)  # (1,): 0, or 0/0 = NaN with ε = 0
    return _Line(
        kind="BN",
        index=feature,
        x=column,
        mean=float(mean),
        var=float(var),
        eps=eps,
        centred=column - mean,
        x_hat=x_hat,
        y=gain * x_hat + bias,
        gain=num(gain),
        bias=term(bias),
    )


def steps(
    x: Tensor, gain: Affine = 1.0, bias: Affine = 0.0, eps: float = 1e-5, sample: int = 0, feature: int = 0
) -> tuple[Step, ...]:
    """The walkthrough's twelve steps: LN along row ``sample``, then BN down column ``feature``.

    ``x`` has shape (B, H); ``gain`` (γ) and ``bias`` (β) are scalars or
    tensors of shape (H,), as for :func:`lnviz.maths.norms.layer_norm`. LN's steps
    reduce the H features of row ``sample`` (one μ, σ²); BN's the B samples of
    column ``feature`` (one μ, σ²; γ_j, β_j). With B = 1 PyTorch refuses BN in
    training mode; its steps show what the formula gives (y = β for ε > 0, NaN at ε = 0) and say so.
    Raises ValueError for a bad shape, ε or cell.
    """
    if x.dim() != 2:
        raise ValueError(f"the walkthrough needs x of shape (B, H), got {tuple(x.shape)}")
    batch, features = x.shape
    if not (0 <= sample < batch and 0 <= feature < features):
        raise ValueError(f"cell ({sample}, {feature}) is outside the {batch} × {features} grid")
    # Each row's LN involves that row alone and each column's BN that column alone,
    # so only the chosen row and column are normalized: the same numbers, O(B + H).
    ln = layer_norm(x[sample : sample + 1], gain, bias, eps)  # (1, H)
    out = _line_steps(_Line.of(ln, "LN", sample), (batch, features))
    if batch < 2:
        gain_j, bias_j = float(ln.weight.flatten()[feature]), float(ln.bias.flatten()[feature])
        line = _single_sample_line(x, feature, gain_j, bias_j, eps)
        return tuple(out + _line_steps(line, (batch, features), SINGLE_SAMPLE_NOTE))
    gain_j, bias_j = (v[feature : feature + 1] if isinstance(v, Tensor) else v for v in (gain, bias))  # γ_j, β_j
    bn = batch_norm(x[:, feature : feature + 1], gain_j, bias_j, eps, training=True)  # (B, 1)
    caveat = BN_ZERO_EPS if eps == 0 else ""
    return tuple(out + _line_steps(_Line.of(bn, "BN", feature), (batch, features), caveat))


# The figure ---------------------------------------------------------------------------------------------------


def _tick(count: int) -> int:
    """A whole-number tick step that puts at most about ten labels on an axis of ``count`` cells."""
    return max(1, -(-count // 10))


def _grid(x: Tensor, step: Step, rows: slice, cols: slice) -> tuple[np.ndarray, np.ndarray]:
    """The window of the grid after ``step`` (its row or column rewritten), and 1 where a cell is dimmed."""
    z = x[rows, cols].detach().to("cpu", torch.float64).clone()  # (window B, window H)
    if step.norm == "LN" and rows.start <= step.index < rows.stop:
        z[step.index - rows.start] = step.cells[cols]
    elif step.norm == "BN" and cols.start <= step.index < cols.stop:
        z[:, step.index - cols.start] = step.cells[rows]
    dim = (~step.mask[rows, cols]).to(torch.float32).numpy()
    return z.float().numpy(), dim


def _bars(step: Step, color: str, axes: plot.Axes) -> list[dict]:
    """The step's values as bars: under the grid, one per feature (LN); beside it, one per sample (BN)."""
    at = plot.to_numpy(torch.arange(step.values.numel()))
    values = plot.to_numpy(step.values)
    along = "feature" if step.norm == "LN" else "sample"
    hover = along + " %{" + ("x" if step.norm == "LN" else "y") + "}<br>" + step.symbol
    hover += " = %{" + ("y" if step.norm == "LN" else "x") + ":.4g}<extra></extra>"
    if step.norm == "LN":
        return [plot.bars(at, values, step.symbol, color, axes, hovertemplate=hover)]
    return [plot.bars(values, at, step.symbol, color, axes, orientation="h", hovertemplate=hover)]


def _level(step: Step, axes: plot.Axes) -> tuple[list[dict], list[dict]]:
    """The step's statistic (μ or σ²) as a dashed line across the bars, with its label: (shapes, annotations)."""
    if step.level is None:
        return [], []
    name = "μ" if step.phase == "mean" else "σ²"
    line = dict(color=theme.BLACK, dash="dash", width=2)
    label = f"{name} = {step.level:.4g}"
    if step.norm == "LN":
        note = plot.note(label, 0, step.level, (f"{axes[0]} domain", axes[1]), xanchor="left", yanchor="bottom")
        return [plot.hline(step.level, axes, **line)], [note]
    note = plot.note(label, step.level, 1.0, (axes[0], f"{axes[1]} domain"), xanchor="left", yanchor="bottom")
    return [plot.vline(step.level, axes, **line)], [note]


def fig_step(x: Tensor, step: Step, rows: slice, cols: slice, height: int = 460) -> go.Figure:
    """The grid after ``step``, its row or column in line with bars of ``step.values``.

    The window ``rows`` × ``cols`` of x (B, H) on the diverging scale, with the
    involved row (LN) or column (BN) holding the step's values (x, x − μ, x̂,
    y), the other cells dimmed and the line outlined in the norm's colour.
    LN's bars sit under the grid, one per feature; BN's beside it, one per
    sample, on the grid's rows. The statistic (μ or σ²) is a dashed line.
    """
    color = theme.ROLES[step.norm]
    z, dim = _grid(x, step, rows, cols)
    finite = z[np.isfinite(z)]
    lim = float(np.abs(finite).max()) if finite.size else 1.0
    r_idx, c_idx = plot.index(rows), plot.index(cols)
    small = z.size <= 256
    heat = dict(colorscale=theme.DIVERGING, zmid=0, zmin=-(lim or 1.0), zmax=lim or 1.0, showscale=not small)
    bar_at = 1.02 if step.norm == "LN" else 0.68  # BN's bars are right of the grid
    heat |= dict(texttemplate="%{z:.2f}" if small else None, colorbar=dict(title=dict(text="value"), len=0.6, x=bar_at))
    veil = [[0.0, "rgba(255,255,255,0)"], [1.0, "rgba(255,255,255,0.8)"]]
    traces = [
        plot.heatmap(z, c_idx, r_idx, "x", **heat),
        plot.heatmap(dim, c_idx, r_idx, "dimmed", colorscale=veil, zmin=0, zmax=1, showscale=False, hoverinfo="skip"),
        *_bars(step, color, ("x2", "y2")),
    ]
    shapes, notes = _level(step, ("x2", "y2"))
    if step.norm == "LN":
        box = (cols.start - 0.5, cols.stop - 0.5, step.index - 0.5, step.index + 0.5)
        # The bars under the grid share its features: their axis, at the bottom, carries the title.
        layout = dict(
            xaxis=dict(domain=[0, 1], anchor="y", dtick=_tick(c_idx.size)),
            yaxis=plot.samples_axis(r_idx.size, domain=[0.36, 1], title=dict(text="sample i"), dtick=_tick(r_idx.size)),
            xaxis2=dict(domain=[0, 1], anchor="y2", matches="x", title=dict(text="feature j")),
            yaxis2=dict(domain=[0, 0.27], anchor="x2", title=dict(text=step.symbol)),
        )
    else:
        box = (step.index - 0.5, step.index + 0.5, rows.start - 0.5, rows.stop - 0.5)
        layout = dict(
            xaxis=dict(domain=[0, 0.66], anchor="y", title=dict(text="feature j"), dtick=_tick(c_idx.size)),
            yaxis=plot.samples_axis(r_idx.size, domain=[0, 1], title=dict(text="sample i"), dtick=_tick(r_idx.size)),
            xaxis2=dict(domain=[0.76, 1], anchor="y2", title=dict(text=step.symbol)),
            yaxis2=dict(domain=[0, 1], anchor="x2", matches="y", showticklabels=False),
        )
    inside = rows.start <= step.index < rows.stop if step.norm == "LN" else cols.start <= step.index < cols.stop
    name = f"{step.norm} {'row' if step.norm == 'LN' else 'column'}"
    boxes = plot.outline(*box, name=name, color=color) if inside else []
    layout |= dict(shapes=boxes + shapes, annotations=notes, showlegend=False)
    return plot.figure(traces, layout, margin=dict(l=60, r=30 if small else 90, t=30, b=50), height=height)
