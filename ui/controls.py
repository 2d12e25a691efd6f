"""Widgets drawn from the state table, bound to the URL.

Every control is a :class:`lnviz.views.param.Param` rendered with its key as both the
widget key and the query parameter (``bind="query-params"``), so a link
reproduces the view. Streamlit validates a value arriving from a link (it
drops what the widget cannot take); the Param's parser applies the same rules
and says why, and the page kit (:mod:`ui.page`) shows the notes. A control
that older links named differently (``old_keys``) still reads them.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitAPIException

from lnviz.text import quote
from lnviz.views.param import Param
from ui import mode, streamlit_private

PARAMS_DRAWN = "_lnviz_params"  # key -> Param of every control drawn in this session (tests read it)


def _note_link_value(param: Param, raw: list[str], used: Any) -> None:
    """On a page's first run, note what the widget did with the link's value.

    Streamlit seeds a bound widget from the URL and drops a value it cannot
    take, without a word. The note compares what the link said with what the
    widget took, and says why (:meth:`Param.note`). The value and the URL stay
    Streamlit's, so the address bar always reproduces the view. ``raw`` must be
    read before the widget is drawn: Streamlit removes a refused value from
    the URL as it draws.
    """
    if raw:
        note = param.note(raw, used)
        if note:
            mode.add_note(note)


def control(param: Param, where: Any = None, **kwargs: Any) -> Any:
    """Draw ``param`` as its widget (:attr:`Param.widget`) in ``where`` (default: the sidebar); its value.

    Extra keyword arguments go to the Streamlit call.
    """
    where = st.sidebar if where is None else where
    st.session_state.setdefault(PARAMS_DRAWN, {})[param.key] = param
    if param.key in mode.hidden():
        return _hidden_value(param)
    if param.key not in st.session_state:
        _read_old_key(param)
    first = param.key not in st.session_state
    if not first:
        # Another page may have left a value under the same key that this control's range can't hold.
        held = st.session_state[param.key]
        if param.coerce(held) != held:
            st.session_state[param.key] = param.coerce(held)
    raw = st.query_params.get_all(param.key) if first else []
    if raw and _mishandled(param, raw):
        _drop_link_value(param.key)
    elif raw and param.widget == "select_slider" and param.kind == "int":
        _link_value_to_stop(param, raw)
    value = _draw(param, where, **kwargs)
    if first:
        _note_link_value(param, raw, value)
    return value


def first_value(param: Param) -> tuple[Any, bool]:
    """The value ``param``'s widget will start at, without drawing it, and whether that is sure.

    For a page's first run that draws its stage before any widget (:func:`ui.stage.first_values`). Sure: the
    session alone holds a value (a lesson's, an upgraded link's, another page's, coerced as :func:`control`
    does), or the link gives none, or one the control takes as it is written (:meth:`Param.parse` says
    nothing). Not sure: a link's value that the widget would change and note, one under an old name, or one
    beside a value the session holds; the page then draws its widgets at once, and with them the notes.
    """
    raw = st.query_params.get_all(param.key)
    if param.key in mode.hidden():
        value, note = param.parse(raw)
        return (value, note is None) if raw else (st.session_state.get(param.key, param.default), True)
    if param.key in st.session_state:  # and the link's too: which one the widget takes is Streamlit's to say
        return param.coerce(st.session_state[param.key]), not raw
    if any(old in st.query_params for old in param.old_keys):
        return param.default, False
    if not raw:
        return param.default, True
    value, note = param.parse(raw)
    return value, note is None


def lower_link_index(param: Param, last: int) -> int | None:
    """On a page's first run, lower a link's index past ``last`` to ``last`` before the widget reads it.

    The widget then starts at ``last`` and the address bar says so, as a
    reload or a copied URL must; returns the link's value, or None when it was
    in range (or the control isn't from the link).
    """
    if param.key in st.session_state or param.key in mode.hidden():
        return None
    raw = st.query_params.get_all(param.key)
    if not raw:
        return None
    value, _ = param.parse(raw)
    if not isinstance(value, int) or value <= last:
        return None
    text = param.format(last)
    try:
        st.query_params[param.key] = text  # not yet bound to the widget: it is drawn after this
    except StreamlitAPIException:  # bound by an earlier run: the page lowers the value after drawing
        return None
    streamlit_private.replace_initial_link_value(param.key, text)
    return value


def _read_old_key(param: Param) -> None:
    """A link that still uses one of the control's old names: take its value, under the new name.

    The value is checked by the control's own rules and given to the widget
    before it is drawn; the old name leaves the URL, the new one enters it,
    and a note says so.
    """
    if param.key in st.query_params:
        return
    for old in param.old_keys:
        raw = st.query_params.get_all(old)
        if raw:
            value, _ = param.parse(raw)
            st.session_state[param.key] = value
            with contextlib.suppress(Exception):
                del st.query_params[old]
            mode.add_note(
                f"{param.label}: this link calls it {quote(old)}, now {quote(param.key)}; using {param.format(value)}."
            )
            return


def _link_value_to_stop(param: Param, raw: list[str]) -> None:
    """A link's whole number between a select slider's stops (``?batch=100``): the nearest stop, not the default.

    Streamlit knows a select slider's value only by an option's text and drops any other for the
    default; the control's own rules (:meth:`Param.parse`) take it to the nearest stop instead, given
    to the widget before it is drawn and written into the address bar, and the note about the link says which.
    """
    value, _ = param.parse(raw)
    if param.format(value) != raw[-1]:
        _drop_link_value(param.key)
        st.session_state[param.key] = value
        st.query_params[param.key] = param.format(value)  # the address bar says the stop, as the widget shows


def _mishandled(param: Param, raw: list[str]) -> bool:
    """Whether the link's value is one that Streamlit 1.67 mishandles in this widget (docs/upstream.md).

    - ``?seed=inf`` in a whole-number input: it raises an OverflowError and the page crashes.
    - ``?view=`` (empty) in a segmented control: it leaves no option chosen, although the control is
      ``required``; the page would get None.
    """
    if param.widget == "segmented":
        return raw[-1] == ""
    if param.widget != "number" or param.kind != "int":
        return False
    try:
        return math.isinf(float(raw[-1]))
    except ValueError:
        return False


def _drop_link_value(key: str) -> None:
    """Remove a value from the link before the widget reads it (see :mod:`ui.streamlit_private`): the widget
    then starts at its default, and the note about the link says so."""
    with contextlib.suppress(Exception):
        del st.query_params[key]
    streamlit_private.forget_initial_link_value(key)


def _draw(param: Param, where: Any, **kwargs: Any) -> Any:
    # The default goes to the widget on every run, not only the first: a URL-bound widget leaves out of
    # the link a value equal to its default, and without one Streamlit takes the first option (γ = −5,
    # ε = 0), so such a value set from code (the stage's release) would drop out of the link.
    common = dict(key=param.key, help=param.help or None, bind="query-params")
    common.update(kwargs)
    widget = param.widget
    if widget in ("select", "radio"):
        common["index"] = param.options.index(param.default)
    elif widget == "segmented":
        common["default"] = param.default
    else:
        common["value"] = param.default
    if widget == "slider":
        return where.slider(param.label, min_value=param.lo, max_value=param.hi, step=param.step, **common)
    if widget == "number":
        return where.number_input(param.label, min_value=param.lo, max_value=param.hi, step=param.step, **common)
    if widget == "toggle":
        return where.toggle(param.label, **common)
    if widget in ("select", "radio"):
        draw = where.selectbox if widget == "select" else where.radio
        return draw(param.label, options=param.options, format_func=param.format, **common)
    if widget == "segmented":  # one of a few options, always one chosen: a row of buttons, like tabs
        return where.segmented_control(
            param.label, options=param.options, format_func=param.format, required=True, **common
        )
    if widget == "select_slider":
        return where.select_slider(param.label, options=param.options, format_func=param.format, **common)
    if widget == "text_area":  # the box cuts a longer text, a link's too; the page says what it takes
        return where.text_area(param.label, max_chars=int(param.hi), **common)
    raise ValueError(f"unknown widget {widget!r} for {param.key}")  # Param refuses one; a new kind lands here


@dataclass(frozen=True)
class Normalization:
    """The sidebar's Normalization section: γ's and β's scalars, the per-feature switch, ε."""

    gain: float
    bias: float
    affine: bool
    eps: float


def normalization_controls(draw: Callable[..., Any], where: Any = None) -> Normalization:
    """The Normalization section, drawn by ``draw`` (a page's ``control``) in ``where`` (default: the sidebar).

    The explorer and the walkthrough share it.
    """
    where = st.sidebar if where is None else where
    where.header("Normalization")
    return Normalization(
        gain=draw("gain", where=where),
        bias=draw("bias", where=where),
        affine=draw("affine", where=where),
        eps=draw("eps", where=where),
    )


def _hidden_value(param: Param) -> Any:
    """A hidden control's value: the link's (validated), else a lesson's, else the default.

    No widget is drawn, so the value is not bound to the URL: whatever the link
    says stays in it, and the view stays reproducible.
    """
    raw = st.query_params.get_all(param.key)
    if raw:
        value, note = param.parse(raw)
        if note and st.session_state.get(f"_lnviz_noted_{param.key}") != raw:
            st.session_state[f"_lnviz_noted_{param.key}"] = raw
            mode.add_note(note)
        return value
    return st.session_state.get(param.key, param.default)


def current(param: Param) -> Any:
    """The control's value now: the widget's, or a hidden control's."""
    if param.key in mode.hidden():
        return _hidden_value(param)
    return st.session_state.get(param.key, param.default)
