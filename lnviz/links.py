"""Links from older lnviz: what a link without a version meant, in today's controls.

Share links carry the version of the state table they were made with
(``v=2``). A link without ``v`` that names some of a page's controls was made
before, when some defaults and counts were different (the main page's grid was
16 × 32 before the stage; the walkthrough counted steps from 0 and had γ = 1,
β = 0): :func:`upgrade` says what it meant, so it opens the view it opened
then. A visit with no controls in its link gets today's defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lnviz import walkthrough
from lnviz.param import Param
from lnviz.state import PAGES, STEP

LINK_VERSION = 2
# The defaults a page had before: a control an old link does not name takes these.
LEGACY_DEFAULTS: dict[str, dict[str, Any]] = {
    "explorer": {"batch": 16, "features": 32},
    "walkthrough": {"batch": 16, "features": 32, "gain": 1.0, "bias": 0.0},
}
# Controls counted differently before: (the control as it was, what to add to its value).
LEGACY_COUNTS: dict[str, dict[str, tuple[Param, int]]] = {
    "walkthrough": {"step": (STEP.but(lo=0, hi=walkthrough.N_STEPS - 1, default=0), 1)},
}


def upgrade(page: str, query: Mapping[str, Sequence[str]]) -> tuple[dict[str, Any], list[str]]:
    """What an old link (no ``v``) meant on ``page``, as values for today's controls, and notes saying so.

    ``query`` maps each link parameter to its values. Returns ({}, []) for a
    link that carries ``v`` or names none of the page's controls.
    """
    table = PAGES[page]
    names = {p.key for p in table} | {old for p in table for old in p.old_keys}
    if "v" in query or not names & set(query):
        return {}, []
    values = {
        key: old for key, old in LEGACY_DEFAULTS.get(page, {}).items() if key not in query and old != table[key].default
    }
    notes = []
    for key, (before, shift) in LEGACY_COUNTS.get(page, {}).items():
        raw = list(query.get(key, ()))
        if raw and before.note(raw, before.parse(raw)[0]) is None:
            values[key] = before.parse(raw)[0] + shift
            notes.append(
                f"{table[key].label}: this link counts from 0, as lnviz did before; its {raw[-1]} is {values[key]}."
            )
    if set(values) - set(LEGACY_COUNTS.get(page, {})):
        changed = ", ".join(f"{table[k].label} = {table[k].format(v)}" for k, v in values.items() if k not in query)
        notes.append(f"This link is from an earlier lnviz, whose defaults it keeps: {changed}.")
    return values, notes
