"""Keyboard steps for a page: ArrowRight/PageDown forward, ArrowLeft/PageUp back (a presenter's clicker).

A Streamlit custom component (``st.components.v2``, no iframe) with a few lines
of inline JavaScript, served by the app. It listens on the whole document and
ignores keys typed into a control (a slider, an input, a select), which keep
their own meaning for those keys. A button keeps the keys: after a click on
Next, the focus stays on it, and the clicker must go on working.

Every press counts, however fast they come (issue 46): a clicker's four PageDowns 150 ms apart are four steps.
The listener asks for a step, not a move: the step the page last drew (:func:`listen` tells it, with the last
press that step includes) plus every press since, numbered. The page sets the step a press's number asks for
once (:func:`asked`). A move would be applied to the step widget's value, and a rerun started while the browser
still had the old one got the old one back (Streamlit gives a widget the browser's value over the one the page
set): four presses 150 ms apart made three steps, and with a trigger value, which keeps one press per run, two.
A step asked for is right whichever step the widget says, and asked for again it changes nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import streamlit as st

# What the listener knows lives with the element it was mounted in: Streamlit calls the function again each rerun.
_JS = """
const mounts = new WeakMap(); // parentElement -> { id, sum, seq, sums, drawn }

export default function (component) {
    const { data, setStateValue, parentElement } = component;
    if (!mounts.has(parentElement)) {
        const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
        mounts.set(parentElement, { id, sum: 0, seq: 0, sums: new Map([[0, 0]]) });
    }
    const m = mounts.get(parentElement);
    // The step the page drew, and the last of this mount's presses it includes (0: none).
    m.drawn = { step: data.step, last: data.last, seq: data.id === m.id ? data.seq : 0 };
    const step = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };
    const onKey = (event) => {
        const by = step[event.key];
        if (by === undefined || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
        const target = event.composedPath()[0];
        if (target instanceof Element && target.closest(
            'input, textarea, select, [role="slider"], [role="tab"], [role="radio"], [contenteditable="true"]'
        )) return;
        event.preventDefault();
        m.sum += by;
        m.sums.set(++m.seq, m.sum);
        const { step: at, last, seq } = m.drawn;
        const to = Math.min(Math.max(at + m.sum - m.sums.get(seq), 1), last);
        setStateValue("presses", { id: m.id, seq: m.seq, step: to });
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
}
"""

_APPLIED = "_lnviz_keys_applied"  # by the listener's key: (its mount's id, the number of its last press applied)


@functools.cache
def _component() -> Any:
    """The listener's component, registered once per process, on the first run that mounts it."""
    return st.components.v2.component("lnviz_step_keys", js=_JS)


def asked(key: str) -> int | None:
    """The step the listener ``key``'s last press asks for, read before the step's widget is drawn; None when that
    press has been applied already, or none came. The page keeps it inside its steps."""
    state = st.session_state.get(key)
    presses = state.get("presses") if isinstance(state, Mapping) else None
    if not isinstance(presses, Mapping):
        return None
    mount, seq, step = presses.get("id"), presses.get("seq"), presses.get("step")
    if not isinstance(mount, str) or type(seq) is not int or type(step) is not int:
        return None
    applied = st.session_state.setdefault(_APPLIED, {})
    if applied.get(key) == (mount, seq):
        return None
    applied[key] = (mount, seq)
    return step


def listen(key: str, step: int, last: int) -> None:
    """Mount the listener ``key`` for a page on ``step`` of 1…``last``, with the last press that step includes."""
    mount, seq = st.session_state.get(_APPLIED, {}).get(key, (None, 0))
    _component()(key=key, data={"id": mount, "seq": seq, "step": step, "last": last}, on_presses_change=lambda: None)
