"""Links from older lnviz: what a link made with an earlier state table meant, in today's controls.

Share links carry the version of the state table they were made with
(``v=3``). A link of an earlier version opens the view it opened then: each
control it does not name takes the default of its time, and a control counted
differently then is translated, each with a note.

- Version 1 (before links carried ``v``): the main page's grid was 16 × 32
  before the stage; the walkthrough counted steps from 0 and had γ = 1, β = 0.
  A link without ``v`` is read as today's: the address bar carries ``v`` on
  every page (:func:`ui.kit.page.Page.start`), so a reload or a copied URL has it,
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

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lnviz.text import quote
from lnviz.views import lessons
from lnviz.views.pages import CONTROLS
from lnviz.views.param import Controls, Param
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


def upgrade(
    page: str, query: Mapping[str, Sequence[str]], lesson: Collection[str] = ()
) -> tuple[dict[str, Any], list[str]]:
    """What a link from an earlier version meant on ``page``, as values for today's controls, and notes saying so.

    ``query`` maps each link parameter to its values; ``lesson``: the controls the link's lesson sets, whose
    values come from it. Returns ({}, []) for a link of today's version (see :func:`version`).
    """
    made = version(page, query)
    table = CONTROLS[page]
    given = set(query) | set(lesson)
    values = {
        key: old for key, old in _defaults_then(page, made).items() if key not in given and old != table[key].default
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


# Index controls, each with the control whose value it stays below (sample < batch), on every page with both.
INDEX_SIZES = {"sample": "batch", "feature": "features", "channel": "channels", "position": "positions"}
HIDE_SHOWN = 5  # unknown names a note lists before "and N more"


@dataclass(frozen=True)
class Canonical:
    """A link as the door reads it: its parameters in today's words (``query``, in order), and the notes that say
    what was changed and why. ``changed``: the link differs from ``query`` (the door answers with a redirect)."""

    query: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    changed: bool


def canonical(page: str, pairs: Sequence[tuple[str, str]]) -> Canonical:
    """The link ``pairs`` (its query string's parameters, in order, a key repeated as it came) on ``page``,
    made today's: every control of the page's table (:data:`lnviz.views.pages.CONTROLS`) once, with a value
    its widget takes as it is, written as the table writes it.

    - a link of an earlier version (:func:`upgrade`): the defaults of its time, its controls counted as today;
    - an old name of a control (``old_keys``): the value under today's name;
    - a value the control can't take (:meth:`Param.parse`): text, NaN, out of range, a whole number off a
      select slider's stops (the nearest stop), a key given twice (the last);
    - an index past the end of its grid (:data:`INDEX_SIZES`: sample ≥ B): the last, with B the link's (a
      lesson's or the default); not with ``own=``, whose grid is the data's, unknown here;
    - ``preset=`` that is not one of this page's lessons, and ``hide=`` names that are not its controls: gone.

    Each change has its note. A value that becomes its control's default leaves the link, and a changed link
    carries ``v``; other parameters stay as they came. Pure, and a fixed point: the canonical link of a
    canonical link is itself, unchanged (the door's redirect never loops).
    """
    table = CONTROLS[page]
    query: dict[str, list[str]] = {}
    for key, value in pairs:
        query.setdefault(key, []).append(value)
    found = lessons.find(_last(query.get("preset")))
    lesson = found if found is not None and found.page == page else None  # the lesson whose values the page applies
    upgraded, notes = upgrade(page, query, set(lesson.values) if lesson else set())
    notes = list(notes)
    values: dict[str, Any] = {}  # each control the link sets, by key, with the value it gets
    for p in table:
        name = p.key if query.get(p.key) else next((old for old in p.old_keys if query.get(old)), None)
        if name == p.key and p.key in upgraded:  # counted differently then: upgrade says how, and notes it
            values[p.key] = upgraded[p.key]
        elif name is not None:
            values[p.key], note = p.parse(query[name])
            if name != p.key:
                note = (
                    f"{p.label}: this link calls it {quote(name)}, now {quote(p.key)}; using {p.format(values[p.key])}."
                )
            if note:
                notes.append(note)
        elif p.key in upgraded:
            values[p.key] = upgraded[p.key]
        else:
            continue
    preset, hide = _preset(page, query, found, notes), _hide(table, query, notes)
    if "own" not in query:
        _within_grids(table, values, lesson, notes)

    out: list[tuple[str, str]] = []
    placed: set[str] = set()
    owner = {old: p.key for p in table for old in p.old_keys} | {p.key: p.key for p in table}
    for key, value in pairs:
        if key in owner and owner[key] in values:  # a control: once, where the link first named it
            control = table[owner[key]]
            if control.key not in placed:
                placed.add(control.key)
                written = control.format(values[control.key])
                if key == control.key and query[key] == [written]:
                    out.append((key, written))  # as it came
                elif values[control.key] != control.default:
                    out.append((control.key, written))
        elif key == "preset" and preset is not None:
            if "preset" not in placed:
                placed.add("preset")
                out += [("preset", preset)] if preset else []
        elif key == "hide" and hide is not None:
            if "hide" not in placed:
                placed.add("hide")
                out += [("hide", hide)] if hide else []
        else:
            out.append((key, value))
    out += [(key, table[key].format(value)) for key, value in values.items() if key not in placed]
    today = str(LINK_VERSION)
    if out != list(pairs) or query.get("v", [today]) != [today]:
        out = [(key, value) for key, value in out if key != "v"] + [("v", today)]
    return Canonical(tuple(out), tuple(notes), out != list(pairs))


def _last(raw: Sequence[str] | None) -> str | None:
    return raw[-1] if raw else None


def _preset(
    page: str, query: Mapping[str, Sequence[str]], lesson: lessons.Lesson | None, notes: list[str]
) -> str | None:
    """The link's ``preset`` as the canonical link writes it: None (as it came), or "" (gone, with its note)."""
    name = _last(query.get("preset"))
    if not name:
        return None if "preset" not in query else ""
    if lesson is None:
        notes.append(f"preset: {quote(name)} is not a lesson ({', '.join(lessons.LESSONS)}); ignored.")
        return ""
    if lesson.page != page:
        notes.append(f"preset: {quote(name)} is a lesson of another page (/{lesson.page}); ignored here.")
        return ""
    return None if query["preset"] == [name] else name


def _hide(table: Controls, query: Mapping[str, Sequence[str]], notes: list[str]) -> str | None:
    """The link's ``hide`` as the canonical link writes it: None (as it came), else its names that are controls
    of the page ("" for none), the others noted."""
    if "hide" not in query:
        return None
    names = [k.strip() for k in ",".join(query["hide"]).split(",") if k.strip()]
    unknown = sorted({k for k in names if k not in table.keys()})
    if not unknown and len(query["hide"]) == 1:
        return None
    if unknown:
        shown = ", ".join(map(quote, unknown[:HIDE_SHOWN]))
        more = f" and {len(unknown) - HIDE_SHOWN} more" if len(unknown) > HIDE_SHOWN else ""
        notes.append(f"hide: {shown}{more} {'is' if len(unknown) == 1 else 'are'} not a control on this page; ignored.")
    return ",".join(dict.fromkeys(k for k in names if k in table.keys()))


def _within_grids(table: Controls, values: dict[str, Any], lesson: lessons.Lesson | None, notes: list[str]) -> None:
    """Lower each index of ``values`` past the end of its grid to the last, with its note; the grid's size is the
    link's value, else the lesson's, else the page's default."""
    for key, size_key in INDEX_SIZES.items():
        if key not in values or size_key not in table.keys():
            continue
        size = values.get(size_key, (lesson.values if lesson else {}).get(size_key, table[size_key].default))
        if values[key] > size - 1:
            notes.append(f"{table[key].label}: {values[key]} is past the last of {size}; using {size - 1}.")
            values[key] = size - 1
