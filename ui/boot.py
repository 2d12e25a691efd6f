"""Once per process and once per run: what the app sets up before a page draws, called explicitly.

Nothing in ``ui`` does work when it is imported. The router (``app.py``) calls
:func:`router` before anything else, and every page's :meth:`ui.page.Page.start`
calls it again, for the one run that does not go through the router (below).
The page kit calls :func:`before_controls` before a page's first control.
"""

from __future__ import annotations

import streamlit as st

from ui import streamlit_private

_router_checked = False


def router() -> None:
    """Once per process: make sure the first run goes through the router.

    The first run of a fresh server may be in Streamlit's legacy ``pages/``
    folder mode, which would run a deep-linked page without ``app.py``. That
    run switches the mode off and reruns, which goes through ``app.py`` as
    intended (see :mod:`ui.streamlit_private`). Once per process, as the
    mode is: a later rerun here would drop the button press that started it.
    """
    global _router_checked
    if _router_checked:
        return
    _router_checked = True
    if streamlit_private.leave_legacy_pages_mode():
        st.rerun()


def before_controls() -> None:
    """Before a page's first control: torch's thread count for a shared server, and pandas fully imported.

    Both once per process. plotly looks pandas up in ``sys.modules``, and on a
    fresh server a page could otherwise meet it half-imported (by another
    session); importing it here waits until it is complete. By a page's first
    control the page has imported torch, or is about to.
    """
    import pandas  # noqa: F401

    from lnviz.maths import device

    device.configure_threads()
