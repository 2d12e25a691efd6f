"""Your own activations on the main page: upload a .csv/.npy, paste a matrix, or receive one from a page.

The matrix lives in the server's memory only, never on disk and never in the
link: once per content, in the process's :data:`STORE` (``lnviz.serving.own_store``),
counted per session and in all, and let go when unused for an hour; the
session keeps its id. A file or text that can't be used gets a plain
message naming what is wrong and what is accepted, and the data shown before
stays; the message stays while that file or text is in its box, and the next
file or paste replaces it.

The link does carry a marker, ``own=BxH``, while your own data is shown. The
data is in the server's memory, for the session of one browser tab, and a
session ends (the server restarts, the tab is away longer than
``server.disconnectedSessionTTL``, or the link is opened in another browser),
or the store lets the data go (unused for an hour, or to make room).
A new session that finds the marker but no data says so, instead of showing
generated numbers as if they were yours. The marker is the only trace the
browser keeps: it holds the shape and nothing else, and it is read as two
whole numbers, never echoed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st
import torch

from lnviz import text
from lnviz.serving import own_store, upload
from ui import heavy, upload_share

# Where a session keeps the matrix the explorer shows: {"id": its id in STORE, "source": Markdown}.
KEY = "explorer_activations"
# Every session's matrices, in this process: once per content, bounded per visitor and in all (lnviz.serving.own_store).
STORE = own_store.OwnStore.from_env(os.environ)
OWN_PARAM = "own"  # the link's marker while the explorer shows your own data: "BxH"
PASTE_KEY = "paste"
_SEEN_FILE = "_lnviz_upload_seen"
_REFUSAL = "_lnviz_upload_refusal"  # {"message": text, "subject": ("file", file id) or ("paste", hash of the text)}
_MARKER = re.compile(r"(\d{1,4})x(\d{1,4})")
FILE_NAME_LIMIT = 40  # characters of a file's name shown
RECONNECT_TIMER_S = 3600  # see _rerun_whole_page_on_reconnect: the timer only has to exist


@dataclass(frozen=True)
class OwnData:
    """A matrix from the user: x (B, H), float64 on the CPU, where it came from (Markdown, safe to show), and its
    id in :data:`STORE` (the hash of its content: what it is cached by)."""

    x: torch.Tensor
    source: str
    id: str


def stored(key: str) -> torch.Tensor:
    """The matrix ``key`` (B, H) from :data:`STORE`; a ``ValueError`` once the server has let it go."""
    values = STORE.get(key)
    if values is None:
        raise ValueError("your data is no longer in this server's memory. Upload or paste it again.")
    return torch.from_numpy(values)


def hold(x: torch.Tensor | np.ndarray, source: str, visitor: str) -> dict[str, object]:
    """Put x (B, H) in the process's :data:`STORE` for ``visitor``; what a session keeps of it (its id).

    Raises :class:`~lnviz.serving.own_store.StoreFull` when the server has no room for it now.
    """
    values = x.detach().cpu().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=np.float64)
    return {"id": STORE.put(visitor, values), "source": source}


def send(x: torch.Tensor, source: str) -> str | None:
    """Hand the matrix x (B, H) to the explorer, as its own data; ``source`` says where it came from, in
    Markdown that is the app's own (a file's name goes through :func:`file_source`).

    Returns None, or why the server can't keep it now (the data shown before stays).
    """
    try:
        held = hold(x, source, heavy.session_id())
    except own_store.StoreFull as full:
        return str(full)
    _release()
    st.session_state[KEY] = held
    st.session_state.pop(_REFUSAL, None)
    return None


def _release() -> None:
    """This session no longer needs the data it held."""
    held = st.session_state.pop(KEY, None)
    if isinstance(held, dict) and isinstance(held.get("id"), str):
        STORE.release(heavy.session_id(), held["id"])


def file_source(name: str) -> str:
    """Where a matrix came from when it came as the file ``name``: the name as text, never as Markdown.

    A file's name is the uploader's to choose (``[log in](http://host).csv``,
    ``![x](http://host/px.gif).npy``, ``$\\huge{x}$.csv``); the page shows the
    source in Markdown, so the name goes in a short code span (:func:`lnviz.text.quote`).
    """
    return f"the file {text.quote(name, FILE_NAME_LIMIT)}"


def _mark(shape: tuple[int, ...]) -> None:
    marker = f"{shape[0]}x{shape[1]}"
    if st.query_params.get(OWN_PARAM) != marker:
        st.query_params[OWN_PARAM] = marker


def _unmark() -> None:
    if OWN_PARAM in st.query_params:
        del st.query_params[OWN_PARAM]


def _refuse(error: Exception | str, subject: tuple[str, object]) -> None:
    st.session_state[_REFUSAL] = {"message": str(error), "subject": subject}


def _use_pasted() -> None:
    text = st.session_state.get(PASTE_KEY, "")
    try:
        x = upload.parse_pasted(text)
    except upload.UploadError as e:
        _refuse(e, ("paste", hash(text)))
        return
    refused = send(x, "pasted text")
    if refused:
        _refuse(refused, ("paste", hash(text)))
        return
    st.session_state[PASTE_KEY] = ""  # the box's text goes back to the server with every rerun: empty it


@contextmanager
def _reading(size: int) -> Iterator[bool]:
    """Whether a file of ``size`` bytes may be read now: a small one always; a large one under the heavy-work
    gate, which shares the server's CPU fairly and otherwise draws "Busy: … Try again in N s." here."""
    if size <= upload.LIGHT_BYTES:
        yield True
        return
    with heavy.heavy("reading your file") as ticket:
        yield ticket is not None


def _read(file: Any, file_id: str) -> None:
    """Read the uploaded ``file`` and send it to the explorer, or say why not.

    A large file (over 4 MiB) waits for the heavy-work gate: eight 31 MiB CSV files read at
    once took a bystander's rerun from 14 to 520 ms and the server's memory
    from 446 to 1,343 MiB. Refused by the gate, the file is not marked as
    read, so the next rerun tries again.
    """
    refused = None
    try:
        with _reading(file.size) as admitted:
            if not admitted:
                return
            refused = send(upload.parse_bytes(file.name, file.getvalue()), file_source(file.name))
    except upload.UploadError as e:
        refused = str(e)
    st.session_state[_SEEN_FILE] = file_id
    if refused:
        _refuse(refused, ("file", file_id))


def _back_to_generated() -> None:
    _release()
    st.session_state.pop(_REFUSAL, None)
    _unmark()


def _current(subject: tuple[str, object], file_id: str | None) -> bool:
    """Whether the file or text a refusal was about is still in its box."""
    kind, what = subject
    if kind == "file":
        return what == file_id
    return what == hash(st.session_state.get(PASTE_KEY, ""))


def panel() -> OwnData | None:
    """Draw the "Your own data" expander in the sidebar; return the matrix in use, if any."""
    with st.sidebar.expander("Your own data", icon=":material/upload_file:", expanded=KEY in st.session_state):
        st.caption(
            upload.LIMITS
            + " It stays in this browser session only: never saved, and never in the link, which notes only its shape."
        )
        upload_share.note_client()  # whose files these are, for the fair share of the server's upload ceiling
        file = st.file_uploader(
            "Upload x (.csv or .npy)",
            type=["csv", "txt", "npy"],
            key="upload",
            max_upload_size=max(1, upload.MAX_BYTES // 2**20),
        )
        file_id = file.file_id if file is not None else None
        if file is not None and st.session_state.get(_SEEN_FILE) != file_id:
            _read(file, file_id)
        st.text_area(
            "…or paste a matrix",
            key=PASTE_KEY,
            height=90,
            placeholder="1, 2, 3\n4, 5, 6",
            max_chars=upload.MAX_PASTE_CHARS,
        )
        st.button("Use the pasted matrix", key="use_paste", on_click=_use_pasted, icon=":material/content_paste:")
    refusal = st.session_state.get(_REFUSAL)
    if refusal is not None and not _current(refusal["subject"], file_id):
        st.session_state.pop(_REFUSAL)
        refusal = None
    if refusal is not None:
        kept = "your previous data" if KEY in st.session_state else "the generated data"
        st.warning(f"{refusal['message']} Still showing {kept}.", icon=":material/error:")
    held = st.session_state.get(KEY)
    values = STORE.get(held["id"]) if isinstance(held, dict) and isinstance(held.get("id"), str) else None
    if values is None:  # none, or no longer in the server's memory
        st.session_state.pop(KEY, None)
        _say_if_gone()
        return None
    x = torch.from_numpy(values)  # (B, H), shared with the store and with other sessions: never modified
    _mark(tuple(x.shape))
    _rerun_whole_page_on_reconnect()
    return OwnData(x=x, source=str(held.get("source", "your data")), id=held["id"])


def _nothing() -> None:
    """An empty fragment: it draws nothing, and its timer is what :func:`_rerun_whole_page_on_reconnect` needs."""


def _rerun_whole_page_on_reconnect() -> None:
    """After the server restarts, the tab's next move reruns the whole page, which then says the data is gone.

    A tab reconnects to a restarted server by itself, into a new session that
    holds none of the old one's data, and keeps what it drew. Streamlit's
    frontend asks the new session for a run of the whole page on reconnecting
    only if the page has a fragment on a timer (``run_every``); without one,
    the explorer's moves below the input (a fragment) went to a session that
    never drew that fragment and were dropped ("The fragment with id … does
    not exist anymore"), and the tab kept saying "Showing your data". This
    fragment's timer (an empty run once an hour) is that one.
    """
    st.fragment(_nothing, run_every=RECONNECT_TIMER_S)()


def _say_if_gone() -> None:
    """The link says its view showed someone's own data, and this session has none: say so."""
    marker = st.query_params.get(OWN_PARAM)
    if marker is None:
        return
    found = _MARKER.fullmatch(marker)
    shape = f" ({found[1]} × {found[2]})" if found else ""
    ttl = st.get_option("server.disconnectedSessionTTL")
    st.warning(
        f"This view was showing someone's own data{shape}, which the server keeps only in its memory, for the "
        "browser session that uploaded or pasted it: never saved, never in the link. The server restarted, the "
        f"page was away for more than {ttl} s or unused for {own_store.TTL_S / 3600:.0f} hour, the server needed "
        "the room, or the link was opened elsewhere, so the data is gone and this is **generated data**. Upload "
        "or paste it again to see it.",
        icon=":material/cloud_off:",
    )
    st.button("Understood: show generated data", key="own_gone_ok", on_click=_unmark, icon=":material/check:")


def back_button() -> None:
    """Return to the generated presets."""
    st.button("Back to generated data", key="own_data_off", on_click=_back_to_generated, icon=":material/undo:")
