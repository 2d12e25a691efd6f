"""Widgets drawn from the state table, bound to the URL.

Every control is a :class:`lnviz.state.Param` rendered with its key as both the
widget key and the query parameter (``bind="query-params"``), so a link
reproduces the view. A value arriving from a link is parsed by the Param
first, as strictly as the widget itself: what was clamped or dropped is noted
and shown by :func:`show_notes`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from lnviz.state import Param

_NOTES = "_lnviz_url_notes"


def _seed_from_url(param: Param) -> None:
    """On a page's first run, put the link's validated value into session state.

    Streamlit seeds a bound widget from the URL itself, but drops a value it
    cannot read and says nothing. Parsing it here first means a junk value is
    clamped or replaced by the default the same way on every path, and noted.
    """
    if param.key in st.session_state:
        return
    raw = st.query_params.get_all(param.key)
    if not raw:
        return
    value, note = param.parse(raw)
    st.session_state[param.key] = value
    if note:
        st.session_state.setdefault(_NOTES, []).append(note)


def control(param: Param, widget: str = "slider", where: Any = None, **kwargs: Any) -> Any:
    """Draw ``param`` as ``widget`` in ``where`` (default: the sidebar) and return its value.

    ``widget`` is one of "slider", "number", "select", "radio", "toggle" or
    "select_slider". Extra keyword arguments go to the Streamlit call.
    """
    where = st.sidebar if where is None else where
    _seed_from_url(param)
    common = dict(key=param.key, help=param.help or None, bind="query-params", **kwargs)
    if param.key not in st.session_state:
        common["value" if widget not in ("select", "radio") else "index"] = (
            param.options.index(param.default) if widget in ("select", "radio") else param.default
        )
    if widget == "slider":
        return where.slider(param.label, min_value=param.lo, max_value=param.hi, step=param.step, **common)
    if widget == "number":
        return where.number_input(param.label, min_value=param.lo, max_value=param.hi, step=param.step, **common)
    if widget == "toggle":
        return where.toggle(param.label, **common)
    if widget in ("select", "radio"):
        draw = where.selectbox if widget == "select" else where.radio
        return draw(param.label, options=param.options, format_func=param.format, **common)
    if widget == "select_slider":
        return where.select_slider(param.label, options=param.options, format_func=param.format, **common)
    raise ValueError(f"unknown widget {widget!r} for {param.key}")


def show_notes(where: Any = None) -> None:
    """Show, once, what was changed in values that came from the link."""
    notes = st.session_state.pop(_NOTES, None)
    if notes:
        where = st if where is None else where
        where.info("Some values in the link were adjusted:\n\n" + "\n".join(f"- {n}" for n in notes), icon="🔗")
