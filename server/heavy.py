"""Streamlit's side of server.slots and limits: heavy work and downloads in their lanes, an upload quota.

A page wraps a heavy action in :func:`heavy`::

    with heavy.heavy("the training race") as ticket:
        if ticket is not None:  # None: a "Busy, try again in N s" warning is already on the page
            for step in ...:
                ticket.check()  # stops the action, with a message, past its CPU budget or its share
                ...

While every slot is taken the page waits its turn and says its place in the
queue. A download built when clicked (``st.download_button(data=callable)``)
wraps its callable in :func:`deferred`, which runs it in the downloads' lane.
The router (``router.py``) calls :func:`install` before any page can take a
file or draw the stage. The scheduler and the quota exist once per process
(``functools.cache``), where a cache clear cannot reach them.
``LNVIZ_LIMITS=off`` lifts every limit (:func:`server.limits.current`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import streamlit as st

from server import limits, proved, quota, slots, streamlit_private, upload_room, who

T = TypeVar("T")

PAGE_WAIT_S = 300.0  # how long a page waits in the queue for a heavy action's turn, telling its place


@functools.cache
def gate() -> slots.Slots:
    """The process's scheduler: heavy actions (a race, the sweep) in its heavy lane, and downloads built when
    clicked in a lane of their own, so that a download never waits behind a race.

    Not ``st.cache_resource``: a browser's ``clear_cache`` message clears every such cache, and a
    cleared gate would admit a second race beside the first. :func:`install`
    makes it before any page can ask, so that two first sessions can't build two.
    """
    return slots.Slots.from_limits(limits.current())


def client() -> str:
    """Whom the current run's work is counted against: its proved browser (:func:`server.proved.client`), so that tabs
    share one share; else (it may only read) its session (:func:`server.who.session`)."""
    browser = proved.client()
    return browser if browser is not None else who.session(streamlit_private.session_id())


def address() -> str:
    """The current run's address as the limits count it (:func:`server.who.address`): hashed when it
    is a public one (``st.context.ip_address``: the connection's, or the visitor's as the documented nginx
    block forwards it), else ""."""
    try:
        ip = st.context.ip_address
    except Exception:  # no request behind this run
        ip = None
    return who.address(ip)


@contextlib.contextmanager
def heavy(action: str, where: Any = None) -> Iterator[slots.Ticket | None]:
    """Run a heavy action under the gate: yields its :class:`~server.slots.Ticket`, or None when refused.

    With every slot taken, the action waits its turn (up to :data:`PAGE_WAIT_S`),
    and the page says its place in the queue meanwhile; a rerun (Stop, or any
    other control) gives the place up. Refused, a warning "Busy: … Try again in
    N s." is drawn in ``where`` (default: the main area) and the block should
    skip its work. An action that runs out of CPU budget, or out of its share
    while another waits (:meth:`~server.slots.Ticket.check` raises), ends with
    a warning that says so; anything else propagates. The slot is freed however
    the block ends, a Streamlit rerun or stop included.
    """
    where = st if where is None else where
    if not proved.require(where):  # a place in the queue is for a proved browser
        yield None
        return
    note = where.empty()

    def show(waiting: limits.Waiting) -> None:
        note.info(waiting.message, icon=":material/hourglass_top:")

    got = gate().begin(client(), action, wait_s=PAGE_WAIT_S, on_wait=show)
    if isinstance(got, limits.Busy):
        note.empty()
        where.warning(got.message, icon=":material/hourglass_top:")
        yield None
        return
    try:
        note.empty()  # a rerun may interrupt any Streamlit call: the slot is freed below, whatever happens
        yield got
    except limits.OverBudget as stopped:
        where.warning(str(stopped), icon=":material/timer_off:")
    finally:
        gate().end(got)


def _refusal_in(error: BaseException | None) -> limits.BusyError | None:
    """The refusal ``error`` is, or was raised from (its chain of causes), if any."""
    seen = 0
    while error is not None and not isinstance(error, limits.BusyError) and seen < 16:
        error, seen = error.__cause__, seen + 1
    return error if isinstance(error, limits.BusyError) else None


@functools.cache  # once per process, as the page kit's other installs: install() runs on every rerun
def quiet_refused_downloads() -> None:
    """Log a download whose build was refused (:class:`~server.limits.BusyError`) as one line, not a 1.6 KB traceback.

    Streamlit logs a deferred download's failure with its traceback, on a
    logger of its own that no option quiets. The standard library's record
    factory (``logging.setLogRecordFactory``) makes every record, whichever
    logger asks: a record whose exception is a refusal, or was raised from
    one, is written as one line. Any other record is left as it is.
    """
    make = logging.getLogRecordFactory()

    def one_line(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        refused = _refusal_in(record.exc_info[1]) if record.exc_info else None
        if refused is not None:
            record.msg, record.args = "A download was refused: %s", (refused,)
            record.exc_info = record.exc_text = None
        return record

    logging.setLogRecordFactory(one_line)


def deferred(action: str, build: Callable[[], T]) -> Callable[[], T]:
    """``build`` for ``st.download_button(data=...)``, run under the download gate when the button is clicked.

    Streamlit runs a download's callable outside the script, where nothing
    can be drawn. The build waits its turn for up to ``Limits.download_wait_s``;
    refused, it raises :class:`~server.limits.BusyError`, the browser shows
    Streamlit's "Failed to generate file for download", and the server logs
    one line (:func:`quiet_refused_downloads`), not a traceback.
    """
    who, g = client(), gate()

    def run() -> T:
        got = g.begin(who, action, wait_s=limits.current().download_wait_s, lane=slots.DOWNLOADS)
        if isinstance(got, limits.Busy):
            raise limits.BusyError(got)
        try:
            return build()
        finally:
            g.end(got)

    return run


def thread_control() -> bool:
    """Whether this server lets a visitor change torch's thread count (only with the limits off)."""
    return limits.current().thread_control


@functools.cache
def _upload_quota() -> quota.UploadQuota:
    return quota.UploadQuota(limits.current())


def install() -> None:
    """Once per process, before any page: the upload quota, uploaded files drawn without copying their bytes
    (:func:`server.streamlit_private.share_uploaded_bytes_on_copy`), and the protocol a viewer never needs closed.

    A component's event list is bounded (:func:`server.streamlit_private.bound_component_events`), and a refused
    download logs one line. A browser's ``clear_cache`` clears nothing but its own session: no computation
    lives in an ``st.cache_*`` (:meth:`ui.kit.page.Page.compute`, :func:`gate`).
    """
    gate()
    install_upload_quota()
    streamlit_private.share_uploaded_bytes_on_copy()
    streamlit_private.bound_component_events(limits.current().component_events_chars)
    quiet_refused_downloads()


def install_upload_quota() -> bool:
    """Put the upload quota in front of Streamlit's in-memory file store, once per process.

    Streamlit stores every file a browser PUTs to ``/_stcore/upload_file``,
    with no limit per session: 40 files of 30 MB in 4 s grew a server by
    1.1 GB. Wrapped here, a session keeps its newest files only (the older ones
    are dropped first), and a refused upload answers HTTP 429 with the reason.
    Returns whether the quota is in place (False without a running server,
    as under AppTest).
    """
    uploaded = streamlit_private.uploads()
    if uploaded is None:
        return False
    files_quota, storage, remove_file = _upload_quota(), uploaded.files, uploaded.remove

    def admit(session_id: str, file: Any) -> None:
        if not proved.noted(session_id):  # an upload is for a proved browser (server.upload_room.note_address notes it)
            from starlette.exceptions import HTTPException

            raise HTTPException(status_code=403, detail=proved.NEEDS)
        held = [(fid, len(rec.data)) for fid, rec in storage.get(session_id, {}).items()]
        total = upload_room.make_room(
            storage, session_id, len(file.data), files_quota.limits.upload_total_bytes, remove_file
        )
        try:
            drop = files_quota.admit(session_id, len(file.data), held, total)
        except limits.QuotaExceeded as refused:
            from starlette.exceptions import HTTPException

            wait = f" Try again in {refused.retry_after_s} s." if refused.retry_after_s else ""
            raise HTTPException(status_code=429, detail=f"{refused}{wait}") from None
        for fid in drop:
            remove_file(session_id, fid)

    return streamlit_private.before_each_upload(admit)
