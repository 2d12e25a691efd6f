"""The fixtures of the stage's JavaScript tests (tests/js/), written by torch in float64 and by lnviz's Python.

``python -m harness.stage_fixtures`` writes tests/js/fixtures/*.json; tests/test_stage_fixtures.py
regenerates them and fails when the committed files differ, so they cannot go stale.

- ``preview.json``: payloads (:func:`lnviz.labs.explorer.stage.payload`, through strict JSON as the
  browser reads them) at the controls torch computed, the other controls a drag reaches, and what
  torch gives there: the outputs of ``F.layer_norm`` and ``F.batch_norm`` (x: (B, H); LN over each
  row's H features, BN over each column's B samples; biased σ², ε inside the root) for the window,
  and the x̂ and y of the payload the release brings back. At ε = 0 ``F.batch_norm`` refuses to run in training, so
  BN's oracle there is the formula, as the payload's is. ``centred``: torch's x − μ along the chosen cell's row
  (LN, the window's columns) and column (BN, the window's rows), what a step of the walkthrough shows there.
- ``steps.json``: Python's stage steps (:func:`lnviz.labs.walkthrough.stage_steps`) for a few grids and cells,
  which model.js ``steps`` must build from table.js the same way.
- lnviz/web/stage/table.js (not a fixture: the stage loads it): the step table itself, written by its
  generator in lnviz, :mod:`lnviz.labs.walkthrough.table_js`, which this calls.
- ``colours.json``: for every input kind (:data:`lnviz.views.state.DIST`), the stable draw's payloads (their
  window's place, x and x's colour scale) at the default 8 × 12 grid and at grids that differ from it in B alone or
  in H alone, with the theme's colours: a cell two of them share has the same x, and must be painted the same.
- ``numbers.json``: the number formats both languages share, each value as the payload carries it
  (a JSON number, or "NaN", "Infinity", "-Infinity") with its text: ``format_number`` (a URL, the ε
  range), ``short`` (a cell, with 2 or 1 decimals), ``exact`` (a tooltip) and ``control`` (γ's and β's
  value at their step), all from :mod:`lnviz.text`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from lnviz import text
from lnviz.labs import explorer, walkthrough
from lnviz.labs.explorer import stage
from lnviz.labs.walkthrough import table_js
from lnviz.maths import data
from lnviz.text import format_number
from lnviz.views import state

FOLDER = Path(__file__).resolve().parents[1] / "tests" / "js" / "fixtures"


def _strict(value: Any) -> Any:
    """``value`` through strict JSON (no bare NaN), as the browser's JSON.parse reads it."""
    return json.loads(json.dumps(value, allow_nan=False))


def _payload(x: torch.Tensor, window: tuple[slice, slice], gain: float, bias: float, eps: float, seed: int | None):
    """The stage's payload for x (B, H) at these controls; ``seed``: γ and β per feature from it, else scalars."""
    g, b = data.random_affine(x.shape[1], seed) if seed is not None else (None, None)  # (H,) each
    result = explorer.with_affine(explorer.normalize(x, eps), gain, bias, g, b)
    return _strict(stage.payload(result, *window))


def _oracle(x: torch.Tensor, window: tuple[slice, slice], gain: float, bias: float, eps: float, seed: int | None):
    """torch's x̂ and y for the window at these controls, each (R·C,), from torch.nn.functional in float64."""
    batch, features = x.shape
    rows, cols = window
    per_feature = data.random_affine(features, seed) if seed is not None else (None, None)  # g, b: (H,) each
    affine = explorer.Affine(gain, bias, *per_feature)  # γ = gain·g, β = bias + b, as the page makes them
    gamma = torch.as_tensor(affine.gamma, dtype=torch.float64).expand(features)  # (H,)
    beta = torch.as_tensor(affine.beta, dtype=torch.float64).expand(features)  # (H,)
    ln = (F.layer_norm(x, (features,), eps=eps), F.layer_norm(x, (features,), gamma, beta, eps))  # (B, H) each
    if batch == 1:
        bn = None
    elif eps > 0:
        bn = (
            F.batch_norm(x, None, None, training=True, eps=eps),
            F.batch_norm(x, None, None, gamma, beta, training=True, eps=eps),
        )  # (B, H) each
    else:  # F.batch_norm refuses ε = 0 in training: the formula, over each column's B samples
        var, mean = torch.var_mean(x, dim=0, keepdim=True, unbiased=False)  # (1, H) each
        x_hat = (x - mean) / torch.sqrt(var + eps)  # (B, H)
        bn = (x_hat, gamma * x_hat + beta)

    def flat(t: torch.Tensor) -> list[float | str]:
        return stage._numbers(t[rows, cols])  # (R·C,)

    return {
        "ln": {"x_hat": flat(ln[0]), "y": flat(ln[1])},
        "bn": None if bn is None else {"x_hat": flat(bn[0]), "y": flat(bn[1])},
    }


def _centred(x: torch.Tensor, window: tuple[slice, slice], cell: tuple[int, int]) -> dict:
    """torch's x − μ along row i over its H features (LN) and down column j over its B samples (BN), windowed."""
    (rows, cols), (i, j) = window, cell
    ln = x[i] - x[i].mean()  # (H,)
    bn = None if x.shape[0] == 1 else x[:, j] - x[:, j].mean()  # (B,)
    return {"ln": stage._numbers(ln[cols]), "bn": None if bn is None else stage._numbers(bn[rows])}


def _case(name: str, x: torch.Tensor, cell: tuple[int, int], torch_at: dict, drag_to: dict, seed: int | None) -> dict:
    window = stage.window(*x.shape, *cell)
    released = _payload(x, window, **drag_to, seed=seed)  # what the release brings back: torch's, at drag_to
    return {
        "name": name,
        "payload": {**_payload(x, window, **torch_at, seed=seed), "cell": list(cell)},
        "at": drag_to,
        "torch": _oracle(x, window, **drag_to, seed=seed),
        "released": {key: released[key] and {f: released[key][f] for f in ("x_hat", "y")} for key in ("ln", "bn")},
        "centred": _centred(x, window, cell),
    }


def preview_cases() -> list[dict]:
    """Grids with their windows, the controls torch computed and those a drag reaches."""
    cases = []
    for seed in range(4):
        g = torch.Generator().manual_seed(seed)
        batch, features = (int(n) for n in torch.randint(2, 14, (2,), generator=g))
        x = torch.randn(batch, features, generator=g, dtype=torch.float64) * 3 + 1  # (B, H)
        cell = (int(torch.randint(0, batch, (1,), generator=g)), int(torch.randint(0, features, (1,), generator=g)))
        per_feature = seed if seed % 2 else None
        cases.append(
            _case(
                f"random {batch}×{features}, seed {seed}"
                + (", γ and β per feature" if per_feature is not None else ""),
                x,
                cell,
                {"gain": 1.0, "bias": 0.0, "eps": 1e-5},
                {"gain": -1.35, "bias": 2.4, "eps": 0.2},
                per_feature,
            )
        )
    one = data.make_activations("standard normal", 1, 20, seed=3)  # (1, H): no BN
    cases.append(_case("one sample", one, (0, 15), {"gain": 1.5, "bias": 0.5, "eps": 1e-5},
                       {"gain": 0.5, "bias": -1.0, "eps": 1e-3}, None))  # fmt: skip
    constant = data.make_activations("constant row", 6, 10, seed=0)  # row 0 is constant: 0/0 at ε = 0
    cases.append(_case("a constant row, ε to 0", constant, (0, 0), {"gain": 1.0, "bias": 0.0, "eps": 1e-5},
                       {"gain": 1.0, "bias": 0.0, "eps": 0.0}, None))  # fmt: skip
    return cases


def number_values() -> list[float]:
    """Values whose text both languages must agree on: the controls' steps and the formats' edges."""
    values = list(state.EPS.options)
    values += [round(k * 0.05, 2) for k in range(-100, 101)]  # γ and β: −5 to 5 by 0.05
    values += [0.1 + 0.2, 1 / 3, -2 / 3, 0.5, 2.5, 1e-4, 1.2345e-4, 9.99999e-5, 3e-7, 123456.0, 999999.0,
               999999.5, 1e6, 1234567.0, 1e15, 1e16, 1.5e16, 2.0**53, 1e21, 1e22, 1.7976931348623157e308, 5e-324,
               -0.0, math.nan, math.inf, -math.inf]  # fmt: skip
    return values


def cell_values() -> list[float]:
    """Values whose cell and tooltip texts both languages must agree on: each format's edges and ties."""
    ties = [1.25, -1.25, 0.125, 0.375, 2.5, 9.95, 9.995, 99.5, 99.95, 0.0625, -0.0005, 0.00125, 1e-3, 9.99995e-4]
    edges = [9.994999, 9.995001, 99.949999, 99.95, 100.0, 149.9, 150.0, 950.0, 999.9, 1e-7, -3.14159e-5, 5e-324]
    edges += [-0.04, -0.049, -0.004, -0.0049, -1e-9, -5e-324]  # negatives that round to zero: "0.0", never "−0.0"
    return number_values() + ties + edges + [k / 7 for k in range(-30, 31)]


def number_formats() -> dict[str, list]:
    """Each value as the payload carries it with its texts in :mod:`lnviz.text`, the browser's twins."""
    n = stage._number
    return {
        "format_number": [[n(v), format_number(v)] for v in number_values()],
        "short": [[n(v), places, text.short(v, places)] for v in cell_values() for places in (2, 1)],
        "exact": [[n(v), text.exact(v)] for v in cell_values()],
        "control": [
            [n(v), p.step, text.control_text(v, p.step)]
            for p in stage.SCRUBBED
            if p.step
            for v in [p.lo + k * p.step for k in range(round((p.hi - p.lo) / p.step) + 1)] + [-0.0, 0.125, 1.005]
        ],
    }


def step_cases() -> list[dict[str, Any]]:
    """Python's stage steps (:func:`lnviz.labs.walkthrough.stage_steps`) for grids with and without a batch:
    model.js ``steps`` must fill the table's words in the same way."""
    return [
        {"B": b, "H": h, "cell": [i, j], "steps": walkthrough.stage_steps(b, h, i, j)}
        for b, h, i, j in ((8, 12, 3, 5), (2, 40, 1, 39), (1, 7, 0, 6))
    ]


# The grids colours.json holds per input kind, the default first: B alone, then H alone, changed.
COLOUR_GRIDS = ((8, 12), (1, 12), (4, 12), (16, 12), (1024, 12), (8, 2), (8, 24), (8, 1024))


def colour_cases() -> dict[str, Any]:
    """Payloads of the stable draw (seed 0) for each input kind at :data:`COLOUR_GRIDS`, around cell (5, 9) kept
    inside the grid as the page keeps it, with only what x's colours need: the window's place, x, ``x_range``."""
    cases = []
    for dist in state.DIST.options:
        for batch, features in COLOUR_GRIDS:
            cell = (min(5, batch - 1), min(9, features - 1))
            result = explorer.generated(dist, batch, features, 0, "cpu", 1e-5, "stable")
            p = _strict(stage.payload(result, *stage.window(batch, features, *cell), dist=dist))
            keep = ("B", "H", "r0", "c0", "R", "C", "x", "x_range")
            cases.append({"dist": dist, "payload": {k: p[k] for k in keep}})
    return {"colors": stage.colors(), "cases": cases}


def build() -> dict[str, Any]:
    """Every fixture, by file name."""
    return {
        "preview.json": {"cases": preview_cases()},
        "steps.json": {"cases": step_cases()},
        "numbers.json": number_formats(),
        "colours.json": colour_cases(),
    }


def dumps(value: Any) -> str:
    """A fixture's text: strict JSON, compact (float64 numbers as repr writes them, which JSON.parse reads exactly)."""
    return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":")) + "\n"


def main() -> None:
    print(f"wrote {table_js.write()}")
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name, value in build().items():
        (FOLDER / name).write_text(dumps(value), encoding="utf-8")
        print(f"wrote {FOLDER / name}")


if __name__ == "__main__":
    main()
