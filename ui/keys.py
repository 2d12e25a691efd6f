"""Keyboard steps for a page: ArrowRight/PageDown forward, ArrowLeft/PageUp back (a presenter's clicker).

A Streamlit custom component (``st.components.v2``, no iframe) with a few lines
of inline JavaScript, served by the app. It listens on the whole document and
ignores keys typed into a control (a slider, an input, a select), which keep
their own meaning for those keys. A button keeps the keys: after a click on
Next, the focus stays on it, and the clicker must go on working.
"""

from __future__ import annotations

import functools
from typing import Any

import streamlit as st

_JS = """
export default function (component) {
    const { setTriggerValue } = component;
    const step = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };
    const onKey = (event) => {
        const by = step[event.key];
        if (by === undefined || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
        const target = event.composedPath()[0];
        if (target instanceof Element && target.closest(
            'input, textarea, select, [role="slider"], [role="tab"], [role="radio"], [contenteditable="true"]'
        )) return;
        event.preventDefault();
        setTriggerValue("move", by);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
}
"""


@functools.cache
def _component() -> Any:
    """The listener's component, registered once per process, on the first run that mounts it."""
    return st.components.v2.component("lnviz_step_keys", js=_JS)


def step_keys(key: str) -> int:
    """Mount the listener; the step the keyboard asked for in this run: +1, −1, or 0."""
    result = _component()(key=key, on_move_change=lambda: None)
    return int(getattr(result, "move", None) or 0)
