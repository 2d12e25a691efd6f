"""Widgets drawn from the state table, bound to the URL.

Every control is a :class:`lnviz.views.param.Param` rendered with its key as both the
widget key and the query parameter (``bind="query-params"``), so a link
reproduces the view. A link's values were read at the door (:mod:`server.door`), through the same table: an old
name, an earlier version's meaning, a value the widget can't take, each made today's with a note, so a widget
starts from what the link says, seeded by Streamlit's own binding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from lnviz.views.param import Param
from ui.kit import mode

PARAMS_DRAWN = "_lnviz_params"  # key -> Param of every control drawn in this session (tests read it)


def control(param: Param, where: Any = None, **kwargs: Any) -> Any:
    """Draw ``param`` as its widget (:attr:`Param.widget`) in ``where`` (default: the sidebar); its value.

    The link's value has been read at the door (:mod:`server.door`): the widget takes it as it is. Extra keyword
    arguments go to the Streamlit call.
    """
    where = st.sidebar if where is None else where
    st.session_state.setdefault(PARAMS_DRAWN, {})[param.key] = param
    if param.key in mode.hidden():
        return _hidden_value(param)
    if param.key in st.session_state:
        # Another page may have left a value under the same key that this control's range can't hold.
        held = st.session_state[param.key]
        if param.coerce(held) != held:
            st.session_state[param.key] = param.coerce(held)
    return _draw(param, where, **kwargs)


def first_value(param: Param) -> tuple[Any, bool]:
    """The value ``param``'s widget will start at, without drawing it, and whether that is sure.

    For a page's first run that draws its stage before any widget (:func:`ui.stage.stage.first_values`). The link's
    value, the door's (:mod:`server.door`), which the widget takes as it is; else the session's (a lesson's, another
    page's, coerced as :func:`control` does); else the default. Not sure: a link's value beside one the session
    holds (which the widget takes is Streamlit's to say), or one the control would not take as it is (a link
    that did not come through the door); the page then draws its widgets at once.
    """
    raw = st.query_params.get_all(param.key)
    held = param.key in st.session_state
    if raw:
        value, note = param.parse(raw)
        return value, note is None and (not held or param.key in mode.hidden())
    return (param.coerce(st.session_state[param.key]) if held else param.default), True


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
    """A hidden control's value: the link's, else a lesson's, else the default.

    No widget is drawn, so the value is not bound to the URL: whatever the link
    says stays in it, and the view stays reproducible.
    """
    raw = st.query_params.get_all(param.key)
    return param.parse(raw)[0] if raw else st.session_state.get(param.key, param.default)


def current(param: Param) -> Any:
    """The control's value now: the widget's, or a hidden control's."""
    if param.key in mode.hidden():
        return _hidden_value(param)
    return st.session_state.get(param.key, param.default)
