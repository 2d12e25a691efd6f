"""Links from older lnviz: what a link made with an earlier state table meant, in today's controls.

Share links carry the version of the state table they were made with
(``v=3``). A link of an earlier version opens the view it opened then: each
control it does not name takes the default of its time, and a control counted
differently then is translated, each with a note.

- Version 1 (before links carried ``v``): the main page's grid was 16 × 32
  before the stage; the walkthrough counted steps from 0 and had γ = 1, β = 0.
  A link without ``v`` is read as today's: the address bar carries ``v`` on
  every page (:func:`ui.page.Page.start`), so a reload or a copied URL has it,
  and a hand-typed link means today's controls. Only a link that names a
  parameter no version since the first has used (:data:`VERSION_1_ONLY`) is
  unambiguously from then.
- Version 2: the explorer drew every chart below the stage at once; now it
  shows one view of the details at a time, the chosen cell's first, and a
  version-2 link opens its charts.
- Version 3: x was drawn as one grid from one generator, so every value
  changed with B and H; now each sample and feature has seeded streams of its
  own (:mod:`lnviz.maths.data`). A link of version 3 or before opens with
  ``draw=whole``, the old draw, and so its old numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lnviz.views.pages import CONTROLS
from lnviz.views.param import Param
from lnviz.views.state import STEP

LINK_VERSION = 4
# For each version, the defaults it changed, as they were before it: {version: {page: {key: old default}}}.
DEFAULTS_BEFORE: dict[int, dict[str, dict[str, Any]]] = {
    2: {
        "explorer": {"batch": 16, "features": 32},
        "walkthrough": {"batch": 16, "features": 32, "gain": 1.0, "bias": 0.0},
    },
    3: {"explorer": {"view": "charts"}},
    4: {page: {"draw": "whole"} for page in ("explorer", "walkthrough", "coupling", "family")},
}
# For each version, the controls it counts differently: (the control as it was, what to add to its value).
COUNTS_BEFORE: dict[int, dict[str, dict[str, tuple[Param, int]]]] = {
    2: {"walkthrough": {"step": (STEP.but(lo=0, hi=STEP.hi - 1, default=0), 1)}},
}
# The link parameters that only version 1 used, by page: the old names of controls renamed when links began
# to carry v (each control's ``old_until`` says the last version that used its ``old_keys``). A link without v
# that names one of them is of version 1.
VERSION_1_ONLY: dict[str, frozenset[str]] = {
    page: names
    for page, controls in CONTROLS.items()
    if (names := frozenset(old for p in controls if p.old_until == 1 for old in p.old_keys))
}


def version(page: str, query: Mapping[str, Sequence[str]]) -> int:
    """The state table's version a link was made with: its ``v``; 1 for a link without one that names a
    parameter only version 1 used on ``page``; else today's (a ``v`` that is not a version included)."""
    if "v" not in query:
        return 1 if VERSION_1_ONLY.get(page, frozenset()) & set(query) else LINK_VERSION
    raw = list(query["v"])
    text = raw[-1].strip() if raw else ""
    return int(text) if text.isdigit() and 1 <= int(text) < LINK_VERSION else LINK_VERSION


def _defaults_then(page: str, made: int) -> dict[str, Any]:
    """The defaults a link of version ``made`` had on ``page``, where they differ from today's."""
    then: dict[str, Any] = {}
    for changed in sorted(DEFAULTS_BEFORE, reverse=True):  # the oldest change after ``made`` wins
        if changed > made:
            then.update(DEFAULTS_BEFORE[changed].get(page, {}))
    return then


def upgrade(page: str, query: Mapping[str, Sequence[str]]) -> tuple[dict[str, Any], list[str]]:
    """What a link from an earlier version meant on ``page``, as values for today's controls, and notes saying so.

    ``query`` maps each link parameter to its values. Returns ({}, []) for a
    link of today's version (see :func:`version`).
    """
    made = version(page, query)
    table = CONTROLS[page]
    values = {
        key: old for key, old in _defaults_then(page, made).items() if key not in query and old != table[key].default
    }
    notes = []
    counted = {
        k: c for changed, pages in COUNTS_BEFORE.items() if changed > made for k, c in pages.get(page, {}).items()
    }
    for key, (before, shift) in counted.items():
        raw = list(query.get(key, ()))
        if raw and before.note(raw, before.parse(raw)[0]) is None:
            values[key] = before.parse(raw)[0] + shift
            notes.append(
                f"{table[key].label}: this link counts from 0, as lnviz did before; its {raw[-1]} is {values[key]}."
            )
    if set(values) - set(counted):
        changed = ", ".join(f"{table[k].label} = {table[k].format(v)}" for k, v in values.items() if k not in query)
        notes.append(f"This link is from an earlier lnviz, whose defaults it keeps: {changed}.")
    return values, notes
