"""Streamlit's side of lnviz.serving.limits: one gate and one upload quota per server process.

A page wraps a heavy action in :func:`heavy`::

    with heavy.heavy("the training race") as ticket:
        if ticket is not None:  # None: a "Busy, try again in N s" warning is already on the page
            for step in ...:
                ticket.check()  # stops the action, with a message, once its CPU budget is used
                ...

A download built when clicked (``st.download_button(data=callable)``) wraps its
callable in :func:`deferred`. :func:`install_upload_quota` puts the per-session
upload quota in front of Streamlit's store of uploaded files; the router
(``app.py``) calls it before any page can take a file. ``LNVIZ_LIMITS=off`` lifts every limit (:mod:`lnviz.serving.limits`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from lnviz.serving import limits
from ui import upload_share

T = TypeVar("T")

_install_lock = threading.Lock()


@st.cache_resource(show_spinner=False)
def gate() -> limits.HeavyGate:
    """The process's gate for heavy actions, from the environment (``LNVIZ_LIMITS``)."""
    from lnviz.maths import device  # torch: imported when a page first asks, not when the router installs the quota

    return limits.HeavyGate(limits.Limits.from_env(os.environ, os.cpu_count() or 1, device.server_threads()))


def session_id() -> str:
    """The current Streamlit session's id ("" outside a script run)."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""


@contextlib.contextmanager
def heavy(action: str, where: Any = None) -> Iterator[limits.Ticket | None]:
    """Run a heavy action under the gate: yields its :class:`~lnviz.serving.limits.Ticket`, or None when refused.

    Refused, a warning "Busy: … Try again in N s." is drawn in ``where``
    (default: the main area) and the block should skip its work. An action
    that runs out of CPU budget (:meth:`~lnviz.serving.limits.Ticket.check` raises)
    ends with a warning that says so; anything else propagates. The slot is
    freed however the block ends, a Streamlit rerun or stop included.
    """
    where = st if where is None else where
    got = gate().begin(session_id(), action)
    if isinstance(got, limits.Busy):
        where.warning(got.message, icon=":material/hourglass_top:")
        yield None
        return
    try:
        yield got
    except limits.OverBudget as stopped:
        where.warning(str(stopped), icon=":material/timer_off:")
    finally:
        gate().end(got)


def deferred(action: str, build: Callable[[], T]) -> Callable[[], T]:
    """``build`` for ``st.download_button(data=...)``, run under the gate when the button is clicked.

    Streamlit runs a download's callable outside the script, where nothing
    can be drawn: a refusal raises :class:`~lnviz.serving.limits.BusyError`, and the
    browser shows Streamlit's "Failed to generate file for download".
    """
    who, g = session_id(), gate()

    def run() -> T:
        got = g.begin(who, action)
        if isinstance(got, limits.Busy):
            raise limits.BusyError(got)
        try:
            return build()
        finally:
            g.end(got)

    return run


def thread_control() -> bool:
    """Whether this server lets a visitor change torch's thread count (only with the limits off)."""
    return gate().limits.thread_control


@st.cache_resource(show_spinner=False)
def _upload_quota() -> limits.UploadQuota:
    return limits.UploadQuota(limits.Limits.from_env(os.environ, os.cpu_count() or 1))


def install_upload_quota() -> bool:
    """Put the upload quota in front of Streamlit's in-memory file store, once per process.

    Streamlit stores every file a browser PUTs to ``/_stcore/upload_file``,
    with no limit per session: 40 files of 30 MB in 4 s grew a server by
    1.1 GB. Wrapped here, a session keeps its newest files only (the older ones
    are dropped first), and a refused upload answers HTTP 429 with the reason.
    Returns whether the quota is in place (False without a running server,
    as under AppTest).
    """
    from streamlit import runtime

    if not runtime.exists():
        return False
    mgr = runtime.get_instance().uploaded_file_mgr
    with _install_lock:
        if getattr(mgr, "_lnviz_quota", False):
            return True
        storage = getattr(mgr, "file_storage", None)
        if not isinstance(storage, dict):
            return False  # not the in-memory store this knows how to count
        quota, add_file, remove_file = _upload_quota(), mgr.add_file, mgr.remove_file

        def add_file_within_quota(session_id: str, file: Any) -> None:
            held = [(fid, len(rec.data)) for fid, rec in storage.get(session_id, {}).items()]
            total = upload_share.make_room(
                storage, session_id, len(file.data), quota.limits.upload_total_bytes, remove_file
            )
            try:
                drop = quota.admit(session_id, len(file.data), held, total)
            except limits.QuotaExceeded as refused:
                from starlette.exceptions import HTTPException

                wait = f" Try again in {refused.retry_after_s} s." if refused.retry_after_s else ""
                raise HTTPException(status_code=429, detail=f"{refused}{wait}") from None
            for fid in drop:
                remove_file(session_id, fid)
            add_file(session_id, file)

        mgr.add_file = add_file_within_quota
        mgr._lnviz_quota = True
    return True
