"""Streamlit's side of server.upload_share: which address each session has, and making room in the file store.

:func:`note_address` records the address of the current session's browser
(``st.context.ip_address``), on each run of a page that takes files.
:func:`make_room` is called by the upload quota (``server.heavy``) before it
admits a file: it evicts the files the fair share names, and returns what all
sessions hold afterwards.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from server import proved, streamlit_private, upload_share

_REMEMBERED = 10_000  # sessions whose address is remembered, the least recently seen forgotten first
_LOCAL = "local"  # a browser on this machine, which Streamlit gives no address
_addresses: OrderedDict[str, str] = OrderedDict()
_lock = threading.Lock()


def note_address() -> None:
    """Remember the address of the current session's browser, for the fair share of the upload ceiling.

    Behind a proxy every session has the proxy's address, and the share is
    fair between sessions alone.
    """
    session = streamlit_private.session_id()
    if not session:
        return
    proved.note()  # whether the session may upload at all: server.heavy's upload hook asks
    address = st.context.ip_address or _LOCAL
    with _lock:
        _addresses[session] = address
        _addresses.move_to_end(session)
        while len(_addresses) > _REMEMBERED:
            _addresses.popitem(last=False)


def make_room(
    storage: Mapping[str, Mapping[str, Any]], session: str, size: int, ceiling: int, remove: Callable[[str, str], None]
) -> int:
    """Evict what the fair share names so that ``size`` more bytes from ``session`` fit under ``ceiling``; the
    bytes all sessions hold afterwards. ``storage``: Streamlit's files, session -> file id -> record (``.data``)."""
    files = [
        upload_share.Held(sid, fid, len(rec.data))
        for sid, held in list(storage.items())
        for fid, rec in list(held.items())
    ]
    with _lock:
        addresses = dict(_addresses)
    evicted = upload_share.make_room(files, addresses, session, size, ceiling)
    for f in evicted:
        remove(f.session, f.file_id)
    return sum(f.nbytes for f in files) - sum(f.nbytes for f in evicted)
