"""Once per process and once per run: what the app sets up before a page draws, called explicitly.

Nothing in ``ui`` does work when it is imported: what exists once per process is a
zero-argument ``functools.cache`` function, built on its first call (tests/test_purity.py
imports every ``ui`` module in a fresh interpreter to check). The server (``app.py``) calls
:func:`no_pages_folder_mode` when it starts, the router (``router.py``) :func:`router` before anything else.
The page kit calls :func:`before_controls` before a page's first control.
"""

from __future__ import annotations

import gc
import logging
import sys

import streamlit as st

from server import streamlit_private

_router_checked = False
_frozen = False


def router() -> None:
    """Once per process: say which private Streamlit uses this Streamlit lacks.

    A lacking use (:func:`server.streamlit_private.check`) is logged as a warning: its workaround does nothing here.
    """
    global _router_checked
    if _router_checked:
        return
    _router_checked = True
    for use in streamlit_private.check():
        logging.getLogger(__name__).warning("This Streamlit lacks a private use lnviz relies on: %s", use)


def no_pages_folder_mode() -> None:
    """Before the server's first session: switch Streamlit's legacy ``pages/`` folder mode off, with ``st.navigation``.

    A main script with a ``pages/`` folder beside it (``router.py``) runs a
    fresh server's first sessions in that mode until ``st.navigation`` is
    called once, and in it a deep link such as ``/sequences`` runs its page
    without the router. Calling ``st.navigation`` turns the mode off for the
    process, whatever it is given (Streamlit 1.67, commands/navigation.py, its
    first statement); outside a script run it does nothing else, and Streamlit's
    warning that no script is running, expected here, is held back.
    """
    logging.disable(logging.WARNING)
    try:
        st.navigation([st.Page(_no_page, title="lnviz", url_path="lnviz")], position="hidden")
    finally:
        logging.disable(logging.NOTSET)


def _no_page() -> None:
    """The page :func:`no_pages_folder_mode` names, never run."""


def before_controls() -> None:
    """Before a page's first control: torch's thread count for a shared server, and pandas fully imported.

    Both once per process. plotly looks pandas up in ``sys.modules``, and on a
    fresh server a page could otherwise meet it half-imported (by another
    session); importing it here waits until it is complete. By a page's first
    control the page has imported torch, or is about to.
    """
    import pandas  # noqa: F401

    from server import cpus

    cpus.configure_threads()


RECONNECT_TIMER_S = 3600  # see rerun_on_reconnect: the timer only has to exist


def _nothing() -> None:
    """An empty fragment: it draws nothing, and its timer is what :func:`rerun_on_reconnect` needs."""


def rerun_on_reconnect() -> None:
    """After the server restarts (or a replica goes), the tab's next connection reruns the whole page.

    A tab reconnects by itself, into a new session (on another replica behind
    a balancer) that holds none of the old one's state, and keeps what it drew.
    Streamlit's frontend asks the new session for a run of the whole page on
    reconnecting only if the page has a fragment on a timer (``run_every``);
    without one, the explorer's moves below the input (a fragment) went to a
    session that never drew that fragment and were dropped ("The fragment with
    id … does not exist anymore"), and a class's phone kept a question the room
    had left. This fragment's timer (an empty run once an hour) is that one.
    """
    st.fragment(_nothing, run_every=RECONNECT_TIMER_S)()


def freeze_long_lived() -> None:
    """Once per process, after a page has imported torch: move what is loaded for good out of the collector.

    Streamlit's server runs a full garbage collection after every script run
    (runner.postScriptGC). With torch, pandas and plotly loaded that walks about
    250,000 objects: 250-700 ms per slider move on a 2-core CPU. Those modules
    live as long as the process, so once a page has loaded them they are moved
    out of the collector's sight; what the pages create afterwards is still
    collected as usual. Known by a flag: asking ``gc.get_freeze_count()`` walks
    the frozen objects, about 20 ms on every full run here.
    """
    global _frozen
    if _frozen or "torch" not in sys.modules:
        return
    _frozen = True
    gc.collect()
    gc.freeze()
