"""The stage's data: one window of x (B, H) with both norms' statistics and outputs, as plain JSON.

.. math::

    y = \\gamma \\, \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta

LayerNorm reduces over each row's H features (μ, σ²: one per sample, shape
(B, 1)); BatchNorm over each column's B samples (one per feature, shape
(1, H)); σ² is the biased variance and ε sits inside the square root, as in
PyTorch. Every number here is torch's: the browser only redoes the cheap
elementwise steps (y = γ x̂ + β, and x̂ from x, μ, σ² for another ε) while a
control is dragged, and torch recomputes on release.

The payload (:func:`payload`) is the contract between lnviz and the stage's
JavaScript (lnviz/web/stage/). Grids are flat, row-major lists of the
window's R × C cells; numbers are float64 sent as JSON numbers, and a value
that is not finite is the string ``"NaN"``, ``"Infinity"`` or
``"-Infinity"`` (JSON has no such numbers; ``Number()`` and ``float()`` both
read these strings back). Keys:

=================  =====================================================
``B``, ``H``       the full grid's samples and features
``r0``, ``c0``     the window's first row and column in the full grid
``R``, ``C``       the window's rows and columns
``x``              (R·C,) the input
``ln``             ``mean``, ``var``: (R,) one per shown row, over all H
                   features; ``x_hat``, ``y``: (R·C,); ``count``: H
``bn``             the same per shown column: ``mean``, ``var``: (C,),
                   over all B samples; ``count``: B. ``None`` when B = 1
``bn_error``       why there is no BN (B = 1), in words; else ``None``
``gamma``,         (C,) γ and β that torch applied to each shown feature
``beta``
``g``, ``b``       (C,) how the gain and bias controls make them:
                   γ_j = gain·g_j and β_j = bias + b_j (g = 1, b = 0 for
                   scalars), as the result's :class:`~lnviz.labs.explorer.Affine`
                   says
``controls``       the controls the stage scrubs (:data:`SCRUBBED`), each
                   from the state table: ``name`` (its key: ``gain``,
                   ``bias``, ``eps``), ``label``, ``symbol``, ``value``
                   (torch's: ε is also the one both norms used), ``locked``
                   (the link hides it: no range on the stage), and
                   ``min``, ``max``, ``step`` for a number or ``options``
                   for a choice (ε's log-scale steps)
``colors``         the theme's colours (:mod:`lnviz.figures.theme`) the
                   stage's CSS takes as variables: ``ln``, ``bn``,
                   ``accent``, and ``scale`` (the value scale's stops)
``undefined``      ``ln_rows`` and ``bn_cols`` (full-grid indices, within
                   the window) where σ² + ε = 0, so x̂ = 0/0
``dtype``          torch's dtype for x, such as ``"float64"``
``caveat``,        at ε = 0 with a BN drawn: what its badge adds, and why
``caveat_note``    (BN's numbers are the formula's, as ``F.batch_norm``
                   refuses ε = 0 in training); else ``""``
``resized``        after a change of B or H, what stayed, compared with
                   the grid before (:func:`resized`); else ``""``
=================  =====================================================
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import torch
from torch import Tensor

from lnviz.figures import theme
from lnviz.labs import explorer
from lnviz.labs.explorer import Exploration
from lnviz.maths import data, rounding
from lnviz.maths.norms import NormResult
from lnviz.text import format_number
from lnviz.views import state
from lnviz.views.param import Param

# The stage's window: few cells, large enough to read their numbers. Lecture mode shows the same
# window (issue 22): at the default grid (8 × 12) every cell behind a shown μ or σ is on screen.
ROWS = 8
COLS = 12


# The controls the stage scrubs, in its order. Each is the state table's entry; the browser previews
# it with its formula (model.js preview) and builds its range from the payload (view/controls.js).
SCRUBBED = (state.GAIN, state.BIAS, state.EPS)

# The theme's colours the stage's CSS uses, by the name of its variable (--ln, --bn, ...).
COLORS = {"ln": theme.ROLES["LN"], "bn": theme.ROLES["BN"], "accent": theme.ACCENT}


def window(batch: int, features: int, row: int, col: int, rows: int = ROWS, cols: int = COLS) -> tuple[slice, slice]:
    """The ``rows`` × ``cols`` window of a (B, H) grid that contains (row, col), as :func:`explorer.window`."""
    return explorer.window(batch, features, row, col, size=rows, cols=cols)


def _number(value: float) -> float | str:
    """``value`` as JSON can carry it: itself, or "NaN", "Infinity", "-Infinity"."""
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _numbers(values: Tensor) -> list[float | str]:
    """A tensor's values, flattened row-major, as float64 JSON numbers."""
    return [_number(v) for v in values.detach().to("cpu", torch.float64).reshape(-1).tolist()]


def _per_feature(value: Tensor | float, features: int, cols: slice) -> Tensor:
    """γ- or β-like ``value`` (a scalar or (H,)) for the window's columns: (C,)."""
    if isinstance(value, Tensor):
        return value.reshape(features)[cols]  # (C,)
    return torch.full((cols.stop - cols.start,), float(value), dtype=torch.float64)  # (C,)


def _norm(result: NormResult, rows: slice, cols: slice, stats: slice, axis: int) -> dict[str, Any]:
    """One norm's window: its statistics along ``axis`` (0: per row, 1: per column) and x̂, y."""
    return {
        "mean": _numbers(result.mean.select(axis, 0)[stats]),  # (R,) or (C,)
        "var": _numbers(result.var.select(axis, 0)[stats]),  # (R,) or (C,)
        "x_hat": _numbers(result.x_hat[rows, cols]),  # (R·C,)
        "y": _numbers(result.y[rows, cols]),  # (R·C,)
        "count": result.count,
    }


def control(param: Param, value: Any, locked: bool = False) -> dict[str, Any]:
    """One scrubbed control as the stage builds its range: the state table's range and step, or its options."""
    spec = {
        "name": param.key,
        "label": param.label,
        "symbol": param.label.split()[-1],  # "Gain γ": γ
        "value": value,
        "locked": locked,
    }
    if param.kind == "choice":
        return spec | {"options": list(param.options)}
    return spec | {"min": param.lo, "max": param.hi, "step": param.step}


def colors() -> dict[str, Any]:
    """The theme's colours for the stage's CSS variables, with the value scale's stops (``scale``)."""
    return COLORS | {"scale": [color for _, color in theme.DIVERGING]}


# x's colour scale, ±r, per input kind (state.DIST): from the distribution lnviz.maths.data draws each kind
# from, not from the grid drawn, so that a change of B or H alone leaves every colour of x as it was (issue 46).
# Each r holds at least 99 values in 100 of its kind (tests/test_stage_lib.py counts them); the rare |x| beyond
# take the scale's end colours.
X_RANGES = {
    "heterogeneous features": 15.0,  # 3a + e^s·z with a, s, z ~ N(0, 1): 99.46% within ±15
    "heterogeneous samples": 15.0,  # the same, per sample
    "standard normal": 3.0,  # z ~ N(0, 1): 99.7% within ±3
    "outlier feature": 4 * data.OUTLIER_SCALE,  # the outlier, 25·(1 + |z|), up to |z| = 3; the rest are z
    "near-constant row": 3.0,  # z, and row 0 at 0.5 ± 0.001·z
    "constant row": 3.0,  # z, and row 0 at 0.5
}


def x_range(x: Tensor, dist: str | None) -> dict[str, Any]:
    """x's colour scale on the stage, −r to +r, with what fixes it in words (the payload's ``x_range``); an |x|
    beyond r takes the scale's end colour, as on any colour bar, and its cell's number says it.

    ``dist``: the input kind x was drawn as (:data:`X_RANGES`), the same r whatever B, H and the seed; None for
    your own data, whose B and H do not change: its largest finite |x| over the whole (B, H) grid, not the
    window's, so that another chosen cell keeps the colours too (1 when there is none).
    """
    if dist is not None:
        r = X_RANGES[dist]
        return {"r": r, "says": f"x: colours fixed at ±{format_number(r)} for this input, whatever B and H."}
    finite = x[torch.isfinite(x)].abs()  # (n,): the values that have a colour
    r = float(finite.max()) if finite.numel() and float(finite.max()) > 0 else 1.0
    return {"r": r, "says": "x: colours up to your data's largest |x|."}


def _span(what: str, n: int) -> str:
    """ "row 0" or "rows 0–3": the first ``n`` rows (or columns)."""
    return f"{what} 0" if n == 1 else f"{what}s 0–{n - 1}"


def resized(before: Exploration, after: Exploration) -> str:
    """What a change of B or H kept, found by comparing the grid before with the one after.

    Both are results of the same inputs but for B and H. On the cells the two grids share (the first
    min(B) rows by the first min(H) columns) it compares x, bit for bit, and LN's and BN's outputs under
    the rule for "unchanged" (:mod:`lnviz.maths.rounding`): for example "B 8 → 4: rows 0–3 of x and of
    LN's output unchanged; BN's changed.", and where an output is within rounding but not bit for bit the
    same, "H 12 → 16: columns 0–11 of x unchanged, and of BN's output unchanged (to rounding: max |Δ| =
    4e−15); LN's changed." "" when neither B nor H moved.
    """
    (b0, h0), (b1, h1) = before.x.shape, after.x.shape
    if (b0, h0) == (b1, h1):
        return ""
    b, h = min(b0, b1), min(h0, h1)
    moved = [f"{name} {n0} → {n1}" for name, n0, n1 in (("B", b0, b1), ("H", h0, h1)) if n0 != n1]
    if b0 != b1 and h0 != h1:
        where = f"the {b} × {h} cells they share"
    else:
        where = _span("row", b) if b0 != b1 else _span("column", h)
    if not rounding.compare(before.x[:b, :h], after.x[:b, :h]).exact:
        return f"{', '.join(moved)}: x was drawn again, every value ({where} too)."
    exact, near, changed = [], [], []  # each norm's output, by what the rule says of it
    for name, u, v in (("LN", before.ln, after.ln), ("BN", before.bn, after.bn)):
        if u is not None and v is not None:
            change = rounding.outputs(u, v, (slice(0, b), slice(0, h)))
            if change.exact:
                exact.append(f" and of {name}'s output")
            elif change.unchanged:
                near.append(f", and of {name}'s output {change.words()}")
            else:
                changed.append(f"{name}'s")
    kept = "".join(exact) + " unchanged" + "".join(near)
    tail = f"; {' and '.join(changed)} changed" if changed else ""
    return f"{', '.join(moved)}: {where} of x{kept}{tail}."


def payload(
    result: Exploration,
    rows: slice,
    cols: slice,
    locked: Collection[str] = (),
    resized: str = "",
    dist: str | None = None,
) -> dict[str, Any]:
    """The stage's JSON for the ``rows`` × ``cols`` window of ``result`` (x: (B, H)).

    LN's μ, σ² (reduced over the H features of each row) come for the window's
    R rows, BN's (reduced over the B samples of each column) for its C
    columns; both are over the full grid, not the window. γ and β, and the
    gain, bias and per-feature (g, b) that made them, are the ones ``result``
    applied (its :class:`~lnviz.labs.explorer.Affine`), so the browser's
    preview at these values is torch's output. ``locked``: the keys of the
    controls a link hides; ``resized``: what a change of B or H kept (:func:`resized`); ``dist``: the input
    kind x was drawn as, which fixes x's colours (:func:`x_range`), or None for your own data. See the module
    docstring for the keys.
    """
    batch, features = result.x.shape
    if not (0 <= rows.start < rows.stop <= batch and 0 <= cols.start < cols.stop <= features):
        raise ValueError(f"stage: window {rows} × {cols} is not inside the grid ({batch}, {features})")
    affine = result.affine
    g = 1.0 if affine.g is None else affine.g  # (H,) or a scalar
    b = 0.0 if affine.b is None else affine.b
    values = {state.GAIN.key: affine.gain, state.BIAS.key: affine.bias, state.EPS.key: result.ln.eps}
    bad = explorer.degenerate(result)
    formula = result.bn is not None and result.bn.eps == 0  # F.batch_norm refuses ε = 0 in training
    return {
        "B": batch,
        "H": features,
        "r0": rows.start,
        "c0": cols.start,
        "R": rows.stop - rows.start,
        "C": cols.stop - cols.start,
        "x": _numbers(result.x[rows, cols]),  # (R·C,)
        "ln": _norm(result.ln, rows, cols, rows, axis=1),  # mean, var: (B, 1) -> (R,)
        "bn": None if result.bn is None else _norm(result.bn, rows, cols, cols, axis=0),  # (1, H) -> (C,)
        "bn_error": result.bn_error,
        "gamma": _numbers(result.ln.weight.reshape(features)[cols]),  # (C,): the γ torch applied
        "beta": _numbers(result.ln.bias.reshape(features)[cols]),  # (C,)
        "g": _numbers(_per_feature(g, features, cols)),  # (C,)
        "b": _numbers(_per_feature(b, features, cols)),  # (C,)
        "controls": [control(p, values[p.key], p.key in locked) for p in SCRUBBED],
        "colors": colors(),
        "undefined": {
            "ln_rows": [i for i in bad.ln_rows if rows.start <= i < rows.stop],
            "bn_cols": [j for j in bad.bn_cols if cols.start <= j < cols.stop],
        },
        "dtype": str(result.x.dtype).removeprefix("torch."),
        "caveat": explorer.BN_ZERO_EPS_BADGE if formula else "",
        "caveat_note": explorer.BN_ZERO_EPS if formula else "",
        "resized": resized,
        "x_range": x_range(result.x, dist),
    }
