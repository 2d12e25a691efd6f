"""The only two places lnviz reads or writes Streamlit's private state (Streamlit 1.67).

Both are workarounds for Streamlit behaviour that has no public switch. If a
Streamlit upgrade moves either attribute, :func:`check` says which, and
``tests/test_streamlit_private.py`` fails on it, instead of the workaround
silently doing nothing.
"""

from __future__ import annotations

from typing import Any

from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.state.query_params import QueryParams


def leave_legacy_pages_mode() -> bool:
    """Turn off Streamlit's legacy ``pages/`` folder mode; True if it was on.

    A server whose main script has a ``pages/`` folder beside it runs its first
    session in that mode until ``st.navigation`` has been called once, so a deep
    link such as ``/sequences`` would run that page without the router
    (``app.py``). The caller reruns when this returns True.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        return True
    return False


def forget_initial_link_value(key: str) -> None:
    """Remove ``key`` from the link snapshot Streamlit seeds URL-bound widgets from.

    Streamlit 1.67 mishandles some link values (:func:`ui.controls._mishandled`):
    it seeds a bound integer ``st.number_input`` with ``int(float(value))``,
    and for ``?seed=inf`` that raises an OverflowError it does not catch; an
    empty value leaves a required ``st.segmented_control`` with nothing chosen.
    Removing the value from the current URL is not enough: the widget reads a
    snapshot taken when the page was opened.
    """
    ctx = get_script_run_ctx()
    state = getattr(getattr(ctx, "session_state", None), "_state", None)
    initial = getattr(getattr(state, "query_params", None), "_initial_query_params", None)
    if isinstance(initial, dict):
        initial.pop(key, None)


def check() -> list[str]:
    """The private attributes above that this Streamlit no longer has (empty when all are there)."""
    missing = []
    if not hasattr(PagesManager, "uses_pages_directory"):
        missing.append("PagesManager.uses_pages_directory")
    fields: dict[str, Any] = getattr(QueryParams, "__dataclass_fields__", {})
    if "_initial_query_params" not in fields:
        missing.append("QueryParams._initial_query_params")
    return missing
