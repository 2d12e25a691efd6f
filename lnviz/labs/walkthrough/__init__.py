"""A guided walkthrough of one sample's LayerNorm and one feature's BatchNorm, step by step.

Both norms compute

.. math::

    y = \\gamma \\, \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta

on x of shape (B, H). LN reduces over the H features of row i (μ, σ²: one per
sample); BN over the B samples of column j (one per feature). The walkthrough
splits each into six steps: the input, μ, the centred values, σ² (biased, as
PyTorch), x̂, and γ, β.

This is the one step table of the app (issue 22). Each phase names what it
lights up on the stage (:data:`LIGHTS`: how much of its norm, what flies into
place, what the chosen line of x holds), and its words are in
:mod:`lnviz.labs.walkthrough.text`. The stage's Play (:func:`stage_steps`, sent
with the stage's data) and the Walkthrough page (:func:`steps`, which adds the
formula with torch's numbers) both read it. Each :class:`Step` carries the
formula with live numbers, the (B, H) mask of the cells it involves, the values
those cells hold after the step (x, x − μ, x̂, y) and the 1-D vector of those
values. The numbers come from :func:`lnviz.maths.norms.layer_norm` and
:func:`lnviz.maths.norms.batch_norm`, so they are torch's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from lnviz.labs import caveats
from lnviz.labs.explorer.explain import num, term
from lnviz.labs.walkthrough.text import INTRO, OUTRO, OUTRO_ONE, TITLES, texts, variance_notes
from lnviz.maths.norms import AffineValue, NormResult, batch_norm, layer_norm
from lnviz.views.state import STEP

PHASES = ("input", "mean", "centred", "variance", "normalized", "affine")
N_STEPS = STEP.hi  # the Step control's range: LN's six steps (PHASES), then BN's
SHOWN = 4  # a vector longer than this is written with its first two and last entries only


@dataclass(frozen=True)
class Light:
    """What one phase lights up on the stage, for the norm whose step it is.

    ``level``: how much of that norm the stage shows: 0 only the chosen line
    (LN's row, BN's column), 1 and its μ, 2 and its σ, 3 and its output (4,
    everything, is the norm once its steps are done). ``fly``: what moves into
    place as the step begins ("mu", "sd", "out", or ""). ``shows``: what the
    chosen line of x holds at this step ("x − μ", "(x − μ)²", "x̂"; "" for x
    itself), computed in the browser from torch's x, μ and x̂.
    """

    level: int
    fly: str = ""
    shows: str = ""


LIGHTS = {
    "input": Light(0),
    "mean": Light(1, fly="mu"),
    "centred": Light(1, shows="x − μ"),
    "variance": Light(2, fly="sd", shows="(x − μ)²"),
    "normalized": Light(2, shows="x̂"),
    "affine": Light(3, fly="out"),
}
DONE = 4  # a norm whose steps are over: everything of it is shown


@dataclass(frozen=True)
class Step:
    """One step of the walkthrough: what it computes, on which cells, with which numbers.

    Along row ``index`` (LN, vectors of shape (H,)) or down column ``index``
    (BN, shape (B,)): ``cells`` is what the involved cells hold after the step
    (x, x − μ, x̂, y); ``values`` is what the chosen line of x shows on the stage (the same, but
    (x − μ)² at the variance step, whose mean is σ²). ``level`` is the statistic drawn
    by the step (μ, σ²), or None.
    """

    norm: str  # "LN" or "BN"
    phase: str  # one of PHASES: how far along its row or column the step is
    title: str
    text: str  # plain words, markdown: what the step does
    latex: str  # the step's formula with the live numbers
    mask: Tensor  # (B, H) bool: the cells involved
    index: int  # the row (LN) or column (BN)
    cells: Tensor  # (H,) for LN, (B,) for BN: the involved cells after the step
    values: Tensor  # (H,) or (B,): what the chosen line of x shows on the stage
    symbol: str  # what ``values`` holds: "x", "x − μ", "(x − μ)²", "x̂", "y"
    level: float | None  # μ at the mean step, σ² at the variance step
    note: str  # a caveat the step must show, in words ("" when none)
    light: Light  # what the step lights up on the stage

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


def _line_steps(line: _Line, shape: tuple[int, int], caveat: str = "", drawn: bool = True) -> list[Step]:
    """The six steps along row ``line.index`` (LN) or down column ``line.index`` (BN) of a (B, H) grid.

    ``caveat`` is added to the notes of the steps that divide (PyTorch refusing what the formula computes);
    ``drawn`` is False where the stage draws none of the line's outputs (BN at B = 1).
    """
    mask = torch.zeros(shape, dtype=torch.bool)  # (B, H)
    if line.kind == "LN":
        mask[line.index, :] = True
    else:
        mask[:, line.index] = True
    var_note, div_note = variance_notes(line.var, line.eps, drawn)
    div_note = f"{div_note} {caveat}".strip()
    shown = (  # (the cells after the step, the line shown, what it holds, the level, the note)
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
            light=LIGHTS[phase],
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
    x: Tensor, gain: AffineValue = 1.0, bias: AffineValue = 0.0, eps: float = 1e-5, sample: int = 0, feature: int = 0
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
        return tuple(out + _line_steps(line, (batch, features), caveats.BN_SINGLE_SAMPLE, drawn=False))
    gain_j, bias_j = (v[feature : feature + 1] if isinstance(v, Tensor) else v for v in (gain, bias))  # γ_j, β_j
    bn = batch_norm(x[:, feature : feature + 1], gain_j, bias_j, eps, training=True)  # (B, 1)
    caveat = caveats.BN_ZERO_EPS if eps == 0 else ""
    return tuple(out + _line_steps(_Line.of(bn, "BN", feature), (batch, features), caveat))


# The stage's Play -------------------------------------------------------------------------------------------


def stage_table() -> dict[str, Any]:
    """The step table as the stage's JavaScript reads it: each step's light and its words, ``{i}``, ``{j}`` and
    ``{n}`` still to fill (:func:`stage_steps` fills them, and model.js ``steps`` the same way).

    The browser gets it as a file, lnviz/web/stage/table.js, written from this by
    ``python -m lnviz.labs.walkthrough.table_js`` (tests/test_stage_fixtures.py fails when it is stale): cached
    with the stage's other files, not sent again with every run's data. ``BN_ONE``: BN's words for a
    column of one value (B = 1).
    """

    def entries(norm: str, words: tuple[str, ...]) -> list[dict[str, Any]]:
        own = norm.lower()
        return [
            {
                "norm": norm,
                "title": f"{norm} · {TITLES[norm][k]}",
                "text": words[k],  # ** is bold (model.js)
                "ln": LIGHTS[phase].level if norm == "LN" else DONE,
                "bn": LIGHTS[phase].level if norm == "BN" else 0,
                "focus": own,
                "fly": f"{own}-{LIGHTS[phase].fly}" if LIGHTS[phase].fly else "",
                "shows": LIGHTS[phase].shows,
            }
            for k, phase in enumerate(PHASES)
        ]

    return {
        "LN": entries("LN", texts("LN", 2)),
        "BN": entries("BN", texts("BN", 2)),
        "BN_ONE": entries("BN", texts("BN", 1)),
        "intro": INTRO,
        "outro": OUTRO,
        "outro_one": OUTRO_ONE,
        "done": DONE,
    }


def stage_steps(batch: int, features: int, sample: int, feature: int) -> list[dict[str, Any]]:
    """The stage's Play for a (B, H) grid and cell (i, j): everything shown, the table's twelve steps (LN's along
    row i, then BN's down column j), everything again.

    Entry k (1–12) is the walkthrough's step k, so the Walkthrough page lights
    the stage by the same index. Needs no numbers: the browser fills the chosen
    line's values in from torch's x, μ, σ² and x̂ (model.js).
    """
    table = stage_table()

    def fill(entry: dict[str, Any], count: int) -> dict[str, Any]:
        return {**entry, "text": entry["text"].format(i=sample, j=feature, n=count)}

    ends = {"norm": "", "title": "", "ln": DONE, "bn": DONE if batch > 1 else 0, "focus": "", "fly": "", "shows": ""}
    return [
        {**ends, "text": table["intro"]},
        *(fill(entry, features) for entry in table["LN"]),
        *(fill(entry, batch) for entry in table["BN" if batch > 1 else "BN_ONE"]),
        {**ends, "text": table["outro"] if batch > 1 else table["outro_one"]},
    ]
