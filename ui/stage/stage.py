"""The stage: x with LayerNorm's and BatchNorm's outputs on one screen, scrubbable in the browser.

A Streamlit custom component (``st.components.v2``: no iframe, state both ways).
Its JavaScript and CSS are files in lnviz/web/stage/, the ``asset_dir`` that
pyproject.toml declares for the component ``lnviz.stage``: the server serves
them under ``/_stcore/bidi-components/lnviz.stage/`` and the browser caches
them, so a rerun carries only the element's data; nothing comes from a CDN.
That needs lnviz installed (``pip install -e . --no-deps``, as ``make run``
does): Streamlit reads the table from installed packages only. Python sends
:func:`lnviz.labs.explorer.stage.payload`, torch's numbers. While γ, β or ε is dragged the
browser previews the outputs from torch's x̂, μ and σ², with no round trip; on
release it reports the three values, and :func:`draw` puts them into the
widgets ``gain``, ``bias`` and ``eps`` (bound to the URL) in a callback, before
the rerun, so torch recomputes and a link reproduces the view. A click on a
cell does the same for ``sample`` and ``feature`` (:func:`pick`, which a chart's click uses too). A control the link hides
(``hide=eps``) has no range on the stage either: the payload says it is locked. B's and H's steppers move
``batch`` and ``features`` one stop of the page's scale (:func:`steppers`, :func:`_on_size`), so that the link and
the note of what a change of B or H kept (:func:`resized`) follow, as from the sidebar.

A new visitor's first screen is the stage (issue 32): until a browser has drawn it once in the session
(:func:`waiting`), the explorer's first run draws the stage alone, at the values its widgets will start at
(:func:`first_values`), and a page that draws its widgets at once leaves out what would make the browser wait
for KaTeX and the code highlighter first. The stage, once drawn, reports it, which reruns the page with the rest. As the page's own γ and β
sliders move, the stage asks :mod:`ui.stage.stage_at`'s route for torch's numbers at their values and draws them
before the rerun the move starts; on the explorer, that route is offered in the payload's ``stage_at``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import streamlit as st

from lnviz.labs.explorer import Exploration, stage
from lnviz.views import state
from lnviz.views.param import Controls, Param
from ui.kit import controls, mode

if TYPE_CHECKING:
    from ui.kit.page import Page

# Its element carries the class st-key-live_stage; "stage" is already a URL parameter.
KEY = "live_stage"


@functools.cache
def _component() -> Any:
    """The stage's component, registered once per process, on the first run that draws it."""
    # Paths relative to the asset_dir: the JS is an ES module that imports its siblings.
    return st.components.v2.component("lnviz.stage", js="index.js", css="stage.css")


def _set(values: dict[Param, Any]) -> None:
    """Give the controls' widgets new values, only those that changed: a value set from code goes into the URL.

    A control whose widget is yet to be drawn in this session (a new visitor's first run draws the stage alone,
    :func:`first_values`) gets the value into the URL here: the widget, drawn after, would leave a value given
    from code out of it, and the link would lose a release made on the stage before the widgets came.
    """
    drawn = st.session_state.get(controls.PARAMS_DRAWN, {})
    for param, value in values.items():
        if st.session_state.get(param.key) != value:
            st.session_state[param.key] = value
            if param.key not in drawn:
                st.query_params[param.key] = param.format(value)


def _on_scrub() -> None:
    """γ, β or ε released on the stage: the values then, clamped and put on their steps as the state table says."""
    scrub = st.session_state[KEY].get("scrub")
    if isinstance(scrub, dict):
        _set({p: p.snap(scrub.get(p.key)) for p in stage.SCRUBBED})


_DRAWN = "_lnviz_stage_drawn"  # the browser has drawn the stage, or a run came after the one that first sent it
_ASKED = "_lnviz_stage_asked"  # the stage has been sent in a run of this session


def _on_drawn() -> None:
    """The browser has painted the stage's cells: the rerun this starts draws what :func:`waiting` held back."""
    st.session_state[_DRAWN] = True


def _browser() -> bool:
    """Streamlit's frontend is on the other end: it sends the browser's time zone with each rerun request; AppTest
    and a script send none."""
    return st.context.timezone is not None


def waiting() -> bool:
    """True until this session's browser has drawn the stage: a page that draws it leaves out, meanwhile, what
    waits for KaTeX and the code highlighter (``st.latex``, ``st.code``), whose chunks and fonts the browser would
    load and run before it painted the stage (issue 32). Only in the first run that sends the stage: any run
    after it holds nothing back, whether or not the stage's report came. A session with no browser paints
    nothing, and gets everything at once."""
    return _browser() and not st.session_state.get(_DRAWN, False)


def first_values(page: Page, keys: Iterable[str]) -> dict[str, Any] | None:
    """The values a page's controls ``keys`` will start at, for a new visitor's first run, which draws the stage
    before any widget (issue 32); None when this run must draw the page whole.

    A page whose stage the browser has yet to draw, in a session that has not yet been sent it, may draw the
    stage alone, from these values: the browser then draws it without first loading, compiling and rendering the
    sidebar's widgets (half a new visitor's wait, measured in docs/benchmarks.md), and the stage's report that it
    is drawn reruns the page whole, widgets and all, at the values they start at. Only where every value is sure
    (:func:`ui.kit.controls.first_value`): a link that a widget would change, and note, gets the whole page at once.
    """
    if not waiting() or st.session_state.get(_ASKED):
        return None
    values = {}
    for key in keys:
        values[key], sure = controls.first_value(page.table[key])
        if not sure:
            return None
    return values


def pick(row: Any, col: Any) -> None:
    """Choose the cell (``row``, ``col``) of x, from the stage or a chart: whatever it is, the sample and feature
    controls get valid values (a page's :meth:`ui.kit.page.Page.index` then keeps them inside its grid)."""
    _set({state.SAMPLE: state.SAMPLE.coerce(row), state.FEATURE: state.FEATURE.coerce(col)})


def _on_pick() -> None:
    """A cell of x chosen on the stage (clicked, or Enter on a focused cell)."""
    chosen = st.session_state[KEY].get("pick")
    if isinstance(chosen, dict):
        pick(chosen.get("row"), chosen.get("col"))


# B and H, which the stage's steppers move, by key.
SIZES = (state.BATCH.key, state.FEATURES.key)
_SIZED = "_lnviz_stage_sized"  # a stepper moved B or H: a page whose stage is in a fragment reruns whole (sized)


@dataclass(frozen=True)
class Steppers:
    """B's and H's steppers on the stage: what the browser shows of each, by key (``shown``: the stops either side
    of its value, ``down`` and ``up``, None at an end; ``why`` the stage can't move it, "" when it can), and the
    page's controls a press may move (``movable``, by key)."""

    shown: dict[str, dict[str, Any]]
    movable: dict[str, Param]


def steppers(table: Controls, hidden: Collection[str], batch: int, features: int, own: bool = False) -> Steppers:
    """B's and H's steppers at ``batch`` and ``features``, on the scale of a page's controls (``table``, their
    stops): fixed where a link hides the control (``hidden``: ``hide=batch``) or the grid is your own data
    (``own``), whose shape B and H are."""
    shown, movable = {}, {}
    for key, value in zip(SIZES, (batch, features), strict=True):
        param = table[key]
        stops = param.options or (param.lo, param.hi)
        symbol = "B" if key == state.BATCH.key else "H"
        why = "your data's shape" if own else f"{symbol} set by the link" if key in hidden else ""
        down, up = [v for v in stops if v < value], [v for v in stops if v > value]
        shown[key] = {"down": down[-1] if down else None, "up": up[0] if up else None, "why": why}
        if not why:
            movable[key] = param
    return Steppers(shown, movable)


def _on_size(movable: Mapping[str, Param]) -> None:
    """B or H moved one stop on the stage: the stop it went to, for a control the stage may move (``movable``, by
    key), put on the page's scale as the state table says."""
    size = st.session_state[KEY].get("size")
    if not isinstance(size, dict):
        return
    name, value = size.get("name"), size.get("value")
    if isinstance(name, str) and name in movable and isinstance(value, int) and not isinstance(value, bool):
        param = movable[name]
        _set({param: param.coerce(value)})
        st.session_state[_SIZED] = True


def sized() -> bool:
    """Whether a stepper on the stage has just moved B or H (once). A stage drawn in a fragment (the explorer's)
    starts a run of the fragment alone, which the callback comes before; the page then reruns whole
    (``st.rerun()``), since the grid is computed outside the fragment."""
    return bool(st.session_state.pop(_SIZED, False))


_BEFORE = "_lnviz_stage_before"  # (what the grid was drawn from but B and H, the result, its shape, the note said)
# The largest grid whose result a session keeps for the resize note: 64 × 64 cells, about 0.3 MB with every
# intermediate, so that a visitor's session can't hold 1024 × 1024 results (16 MB each) past the cache's budget.
RESIZE_CELLS = 64 * 64


def resized(inputs: tuple, result: Exploration) -> str:
    """What the last change of B or H kept (:func:`lnviz.labs.explorer.stage.resized`), for the stage to say.

    ``inputs``: everything ``result`` was computed from but B and H (the page, the data, γ, β, ε). The
    result of the run before is kept in the session; only a run that changed B or H and nothing else
    of ``inputs`` is compared with it, so a γ move after a resize says nothing; a run that changes nothing of
    the grid says again what the run before said (before, any later run hid the note: one the stage's own
    report starts, say). Only grids of at most :data:`RESIZE_CELLS` cells are kept, so a resize from or to a
    larger grid says nothing.
    """
    before = st.session_state.get(_BEFORE)
    shape = tuple(result.x.shape)
    if before is not None and before[0] == inputs and before[2] == shape:
        note = before[3]  # a run that changed nothing of the grid (the stage's report, a chosen cell): still said
    elif before is None or before[1] is None or result.x.numel() > RESIZE_CELLS or before[0] != inputs:
        note = ""
    else:
        note = stage.resized(before[1], result)
    st.session_state[_BEFORE] = (inputs, result if result.x.numel() <= RESIZE_CELLS else None, shape, note)
    return note


def draw(
    payload: dict[str, Any],
    cell: tuple[int, int],
    walk: int | None = None,
    formula: str = "",
    offered: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    sizes: Steppers | None = None,
) -> None:
    """Draw the stage for ``payload`` (:func:`lnviz.labs.explorer.stage.payload`) with ``cell`` (row, col) chosen.

    What the user does on it reaches the widgets before the rerun it starts:
    a release of γ, β or ε sets ``gain``, ``bias`` and ``eps``; a chosen cell
    sets ``sample`` and ``feature``. Its Play runs the app's one step table
    (:func:`lnviz.labs.walkthrough.stage_steps`, which the browser has as a file,
    table.js); ``walk`` (1–12) pins it to
    that step, for the Walkthrough page, whose Back, Next and keys move it, and
    ``formula`` (LaTeX) is typeset on the stage beside what the step lights up. ``offered``
    (:func:`ui.stage.stage_at.offer`): the stage may ask for torch's numbers at another γ and β, as the sidebar's
    move, without a rerun. ``sizes``: B's and H's :func:`steppers`; a press sets ``batch`` or ``features``.
    """
    if st.session_state.get(_ASKED):  # a run after the first that sent the stage: report or not, hold nothing back
        st.session_state[_DRAWN] = True
    st.session_state.pop(_SIZED, None)  # a page whose stage is in a fragment has asked sized() before this
    st.session_state[_ASKED] = True
    row, col = int(cell[0]), int(cell[1])
    shown = None if sizes is None else sizes.shown
    extra = {
        "cell": [row, col],
        "present": mode.presenting(),
        "walk": walk,
        "formula": formula,
        "sizes": shown,
        "x_range": payload["x_range"],  # for the route's answers too, made without the input kind that fixes it
    }
    data = {
        **payload,
        **extra,
        "waiting": waiting(),  # the browser reports once it has drawn the stage
        "stage_at": None if offered is None else offered({**extra, "waiting": False}),
    }
    _component()(
        key=KEY,
        data=data,
        on_scrub_change=_on_scrub,
        on_pick_change=_on_pick,
        on_drawn_change=_on_drawn,
        on_size_change=functools.partial(_on_size, {} if sizes is None else sizes.movable),
    )
