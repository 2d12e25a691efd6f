"""Widgets drawn from the state table, bound to the URL.

Every control is a :class:`lnviz.state.Param` rendered with its key as both the
widget key and the query parameter (``bind="query-params"``), so a link
reproduces the view. Streamlit validates a value arriving from a link (it
drops what the widget cannot take); the Param's parser applies the same rules
and says why, and :func:`show_notes` shows it.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

# Every page imports this module before it builds a figure. plotly looks pandas up in
# sys.modules, and on a fresh server a page could otherwise meet it half-imported (by
# another session); importing it here waits until it is complete.
import pandas  # noqa: F401
import streamlit as st
import torch
from streamlit.runtime.scriptrunner import get_script_run_ctx

from lnviz import device, state
from lnviz.state import Param
from ui import mode

device.configure_threads()  # torch's thread count for a shared server, once per process

_NOTES = "_lnviz_url_notes"
_SEEN = "_lnviz_keys_seen"
PARAMS_DRAWN = "_lnviz_params"  # key -> Param of every control drawn in this session (tests read it)


def add_note(note: str) -> None:
    """Queue a note about the link for :func:`show_notes`."""
    st.session_state.setdefault(_NOTES, []).append(note)


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
            add_note(note)


def control(param: Param, widget: str = "slider", where: Any = None, **kwargs: Any) -> Any:
    """Draw ``param`` as ``widget`` in ``where`` (default: the sidebar) and return its value.

    ``widget`` is one of "slider", "number", "select", "radio", "toggle" or
    "select_slider". Extra keyword arguments go to the Streamlit call.
    """
    where = st.sidebar if where is None else where
    st.session_state.setdefault(_SEEN, set()).add(param.key)
    st.session_state.setdefault(PARAMS_DRAWN, {})[param.key] = param
    if param.key in mode.hidden():
        return _hidden_value(param)
    first = param.key not in st.session_state
    if not first:
        # Another page may have left a value under the same key that this control's range can't hold.
        held = st.session_state[param.key]
        if param.coerce(held) != held:
            st.session_state[param.key] = param.coerce(held)
    raw = st.query_params.get_all(param.key) if first else []
    if raw and widget == "number" and param.kind == "int":
        _drop_infinite_link_value(param.key, raw)
    value = _draw(param, widget, where, first, **kwargs)
    if first:
        _note_link_value(param, raw, value)
    return value


def _drop_infinite_link_value(key: str, raw: list[str]) -> None:
    """Keep ``?seed=inf`` from crashing a whole-number input.

    Streamlit 1.67 seeds a bound ``st.number_input`` of integers with
    ``int(float(value))``, and ``int(inf)`` raises an OverflowError that it does
    not catch, so the page would show an exception (found by
    tests/test_fuzz_links.py). Such a value is removed from the link before the
    widget reads it; the widget then starts at its default and the note says so.
    Streamlit keeps the link it seeds from in a private attribute: if that ever
    moves, this does nothing, and the fuzz test fails again.
    """
    try:
        infinite = math.isinf(float(raw[-1]))
    except ValueError:
        return
    if not infinite:
        return
    with contextlib.suppress(Exception):
        del st.query_params[key]
    ctx = get_script_run_ctx()
    state = getattr(getattr(ctx, "session_state", None), "_state", None)
    initial = getattr(getattr(state, "query_params", None), "_initial_query_params", None)
    if isinstance(initial, dict):
        initial.pop(key, None)


def _draw(param: Param, widget: str, where: Any, first: bool, **kwargs: Any) -> Any:
    common = dict(key=param.key, help=param.help or None, bind="query-params")
    common.update(kwargs)
    if first:
        if widget in ("select", "radio"):
            common["index"] = param.options.index(param.default)
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
    if widget == "select_slider":
        return where.select_slider(param.label, options=param.options, format_func=param.format, **common)
    raise ValueError(f"unknown widget {widget!r} for {param.key}")


@dataclass(frozen=True)
class Normalization:
    """The sidebar's Normalization section: γ's and β's scalars, the per-feature switch, ε."""

    gain: float
    bias: float
    affine: bool
    eps: float


def normalization_controls(where: Any = None) -> Normalization:
    """Draw the Normalization section in ``where`` (default: the sidebar); the explorer and the walkthrough share it."""
    where = st.sidebar if where is None else where
    where.header("Normalization")
    return Normalization(
        gain=control(state.GAIN, where=where),
        bias=control(state.BIAS, where=where),
        affine=control(state.AFFINE, "toggle", where=where),
        eps=control(state.EPS, "select_slider", where=where),
    )


def device_picker() -> torch.device:
    """The Device control (in the sidebar) for pages whose torch work runs on the chosen device.

    Its value is kept for the whole session, so it follows the user from page to page.
    """
    pref = control(state.DEVICE, "select", persist_state="session")
    return device.pick(pref)


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
            add_note(note)
        return value
    return st.session_state.get(param.key, param.default)


def show_notes(where: Any = None) -> None:
    """Show, once, what was changed in values that came from the link. Call it after the controls."""
    seen = st.session_state.pop(_SEEN, set())
    unknown = sorted(mode.hidden() - seen)
    if unknown and st.session_state.get("_lnviz_noted_hide") != unknown:
        st.session_state["_lnviz_noted_hide"] = unknown
        add_note(f"hide: {', '.join(map(repr, unknown))} is not a control on this page; ignored.")
    notes = st.session_state.pop(_NOTES, None)
    if notes:
        where = st if where is None else where
        where.info(
            "Some values in the link were adjusted:\n\n" + "\n".join(f"- {n}" for n in notes), icon=":material/link:"
        )


# Link parameters that are not controls but belong to the view.
_LINK_EXTRAS = ("preset", "hide", "present", "embed")


def share_box(params: tuple[Param, ...], where: Any = None, caveat: str | None = None) -> str:
    """A "Share this view" box with the link that reproduces the current view, ready to copy.

    The link is built from the controls' current values (only those that
    differ from the defaults) plus the lesson, hidden-controls and lecture
    parameters of the current link. Returns the link.
    """
    where = st if where is None else where
    values = {p.key: _current(p) for p in params}
    query = state.to_query(params, values)
    for extra in _LINK_EXTRAS:
        if extra in st.query_params:
            query[extra] = st.query_params[extra]
    base = st.context.url or ""
    link = base + ("?" + urlencode(query) if query else "")
    with where.expander("Share this view", icon=":material/share:"):
        st.caption(caveat or "This link opens exactly this view, with the same numbers, on any machine.")
        st.code(link, language=None, wrap_lines=True)
    return link


def _current(param: Param) -> Any:
    if param.key in mode.hidden():
        return _hidden_value(param)
    return st.session_state.get(param.key, param.default)
