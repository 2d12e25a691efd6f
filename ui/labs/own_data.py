"""Your own activations on the main page: upload a .csv/.npy, paste a matrix, or receive one from a page.

The matrix lives in the server's memory, never on disk: once per content, in
the process's :func:`store` (``server.own_store``), counted per session
and in all, and let go when unused for an hour; the session keeps its id. A
file or text that can't be used gets a plain message naming what is wrong and
what is accepted, and the data shown before stays; the message stays while
that file or text is in its box, and the next file or paste replaces it.

Shown, the matrix travels with the link, which carries its id, the hash of
its content: ``own=<id>``. With Redis (``LNVIZ_REDIS_URL``, :mod:`server.process_store`),
its bytes go there under that id (:mod:`server.own_share`), for 24
hours after it was last shown or opened, charged to this browser's quota of
64 MiB an hour; a session that opens the link, on whatever replica, loads it
from there. Without Redis, the id is looked up in :func:`store` itself, which
every session of this process sees and which is bounded in bytes, so a link
opens the data on this server while it is used at least once an hour, until
the server restarts. Either way the page says where the data came from and
how long it is kept. An id that is expired or unknown is said plainly, and so
is a store that can't be reached; the page then shows generated data, and
never echoes the id.

When the store refuses (the hour's quota is used) or can't be reached, the
matrix is shown in this session all the same, the link carries only its
shape, ``own=BxH`` (as links did before), and the share box says why. A
session that finds that marker and no data says the data is gone, instead of
showing generated numbers as if they were yours; the marker is read as two
whole numbers, never echoed.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st
import torch

from lnviz import text
from lnviz.labs import explorer
from lnviz.labs.explorer import Exploration, own_text, upload, upload_worker
from lnviz.maths import device
from server import budget, heavy, limits, own_share, own_store, proved, quota, streamlit_private, upload_room
from server import process_store as shared_store
from server.limits import Full, StoreDown, StoreFull
from ui.kit import boot

# Where a session keeps the matrix the explorer shows: {"id": its id in store(), "source": Markdown}.
KEY = "explorer_activations"
OWN_PARAM = "own"  # the link's own data: its id in the shared store, or "BxH" while it can't be shared
PASTE_KEY = "paste"
_SEEN_FILE = "_lnviz_upload_seen"
_REFUSAL = "_lnviz_upload_refusal"  # {"message": text, "subject": ("file", file id) or ("paste", hash of the text)}
_SHARED = "_lnviz_own_shared"  # {"id", "outcome": "shared", "quota" or "down", "at": time.time() of the try}
_LINK_FAILED = "_lnviz_own_link_failed"  # {"id", "why": "gone", "down" or Full's sentence, "at"}
LINK_SOURCE = "shared by a link"
RETRY_S = 60  # a grid the store refused or couldn't take is offered again after this long, not on every rerun
FILE_NAME_LIMIT = 40  # characters of a file's name shown


@dataclass(frozen=True)
class OwnData:
    """A matrix from the user: x (B, H), float64 on the CPU, where it came from (Markdown, safe to show), its
    id in :func:`store` (the hash of its content: what it is cached by), and whether the link carries it,
    with the sentence that says where it is kept and until when (or why it isn't shared)."""

    x: torch.Tensor
    source: str
    id: str
    shared: bool
    kept: str


@functools.cache
def store() -> budget.Budget[str, np.ndarray]:
    """Every session's matrices, in this process: once per content, bounded per session and in all."""
    lim = limits.current()
    return own_store.new(lim.own_data_bytes, lim.own_data_session_bytes, lim.own_data_ttl_s, lim.own_data_protect_s)


@functools.cache
def share_quota() -> quota.Quota:
    """What each browser may store for links per hour, counted where the shared store is (Redis, or this process)."""
    lim = limits.current()
    return own_share.new_quota(quota.storage_from_env(os.environ), lim.shared_bytes_per_client, int(lim.quota_window_s))


def keeping() -> own_text.Keeping:
    """Where this server keeps a grid shared by a link, and for how long."""
    return own_text.Keeping(shared_store.shared(), shared_store.store().limits.blob_ttl_s, own_store.TTL_S)


def stored(key: str) -> torch.Tensor:
    """The matrix ``key`` (B, H) from :func:`store`; a ``ValueError`` once the server has let it go."""
    values = store().get(key)
    if values is None:
        raise ValueError("your data is no longer in this server's memory. Upload or paste it again.")
    return torch.from_numpy(values)


def normalized(key: str, device_type: str, eps: float) -> Exploration:
    """Both norms of the matrix ``key`` (B, H), before γ and β: sessions showing the same matrix share one
    computation (the page kit's ``compute(..., shared=True)``), cached and bounded like the generated ones."""
    dev = torch.device(device_type)
    return explorer.normalize(stored(key).to(dev, device.compute_dtype(dev)), eps)


def hold(x: torch.Tensor | np.ndarray, source: str, session: str) -> dict[str, object]:
    """Put x (B, H) in the process's :func:`store` for ``session``; what the session keeps of it (its id).

    Raises :class:`~server.limits.Full` when the server has no room for it now.
    """
    values = x.detach().cpu().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=np.float64)
    return {"id": own_store.put(store(), session, values, heavy.client()), "source": source}


def send(x: torch.Tensor, source: str) -> str | None:
    """Hand the matrix x (B, H) to the explorer, as its own data; ``source`` says where it came from, in
    Markdown that is the app's own (a file's name goes through :func:`file_source`).

    Returns None, or why the server can't keep it now (the data shown before stays).
    """
    if (unproved := proved.refusal()) is not None:  # memory the server holds is for a proved browser (server.proved)
        return unproved
    try:
        held = hold(x, source, streamlit_private.session_id())
    except Full as full:
        return str(full)
    _release(keep=held["id"])
    st.session_state[KEY] = held
    st.session_state.pop(_REFUSAL, None)
    return None


def _release(keep: str | None = None) -> None:
    """This session no longer needs the data it held, unless that is ``keep`` (the same matrix, held again)."""
    held = st.session_state.pop(KEY, None)
    if isinstance(held, dict) and isinstance(held.get("id"), str) and held["id"] != keep:
        store().release(streamlit_private.session_id(), held["id"])


def file_source(name: str) -> str:
    """Where a matrix came from when it came as the file ``name``: the name as text, never as Markdown.

    A file's name is the uploader's to choose (``[log in](http://host).csv``,
    ``![x](http://host/px.gif).npy``, ``$\\huge{x}$.csv``); the page shows the
    source in Markdown, so the name goes in a short code span (:func:`lnviz.text.quote`).
    """
    return f"the file {text.quote(name, FILE_NAME_LIMIT)}"


def _mark(marker: str) -> None:
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
    read, so the next rerun tries again. Admitted, it is parsed in a worker
    process (:mod:`lnviz.labs.explorer.upload_worker`), so that the parse does
    not hold this process's interpreter while other sessions rerun.
    """
    refused = None
    try:
        with _reading(file.size) as admitted:
            if not admitted:
                return
            refused = send(upload_worker.parse_bytes(file.name, file.getvalue()), file_source(file.name))
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


def _share(values: np.ndarray, key: str) -> dict[str, Any]:
    """Offer the grid ``key`` to the shared store, once per grid (a refusal again after :data:`RETRY_S`).

    Without Redis, :func:`store` is the store a link's id is looked up in: content-addressed, seen by every
    session of this process and bounded in bytes. Copying the grid to the in-process ``store.MemoryStore``
    as well would keep it for a day outside that bound, and sessions are free to open.
    """
    record = st.session_state.get(_SHARED)
    now = time.time()
    if isinstance(record, dict) and record.get("id") == key:
        if record["outcome"] == "shared" or now - record["at"] < RETRY_S:
            return record
    if not shared_store.shared():
        outcome = "shared"
    else:
        # Counted per browser (its proof), so a reload or a new tab does not start a fresh quota.
        try:
            shared = own_share.share(shared_store.store(), share_quota(), values, heavy.client(), heavy.address())
            outcome = "shared" if shared else "quota"
        except (Full, StoreFull):  # everyone's grids at their cap, or Redis itself full
            outcome = "full"
        except StoreDown:
            outcome = "down"
    record = {"id": key, "outcome": outcome, "at": now}
    st.session_state[_SHARED] = record
    return record


def _kept(record: dict[str, Any]) -> str:
    """Where the data shown is kept and until when, or why the link doesn't carry it (:func:`_share`'s record)."""
    return own_text.kept(record["outcome"], record["at"], keeping(), share_quota().amount)


def caveat(own: OwnData) -> str:
    """What the share box says of a link while ``own`` is shown."""
    return own_text.caveat(own.shared, own.kept, keeping())


def _load(key: str) -> np.ndarray | None:
    """The grid ``key`` from the store links are read from (Redis, renewed for a day; else :func:`store`), or None.

    Raises :class:`~server.limits.StoreDown` when Redis can't be reached.
    """
    if not shared_store.shared():
        return store().get(key)
    values = own_share.load(shared_store.store(), key)
    if values is not None:  # stored again by its opener: free (it is there), and kept for another day from now
        with suppress(StoreFull):  # Redis full: shown all the same, renewed by a later visit
            own_share.share(shared_store.store(), share_quota(), values, heavy.client(), heavy.address())
    return values


def _from_link() -> bool:
    """Load the grid whose id the link carries into this session; whether it came.

    A grid that can't come (expired or unknown, the store down, this server's
    memory full) is noted, for :func:`_say_if_gone`, and tried again after :data:`RETRY_S`.
    """
    key = own_share.valid_id(st.query_params.get(OWN_PARAM))
    if key is None:
        return False
    failed = st.session_state.get(_LINK_FAILED)
    now = time.time()
    if isinstance(failed, dict) and failed["id"] == key and now - failed["at"] < RETRY_S:
        return False
    try:
        values = _load(key)
        if values is None:
            return _failed(key, "gone", now)
        held = hold(values, LINK_SOURCE, streamlit_private.session_id())
    except StoreDown:
        return _failed(key, "down", now)
    except Full as full:
        return _failed(key, str(full), now)
    _release(keep=key)
    st.session_state[KEY] = held
    st.session_state[_SHARED] = {"id": key, "outcome": "shared", "at": now}
    st.session_state.pop(_LINK_FAILED, None)
    return True


def _failed(key: str, why: str, now: float) -> bool:
    """Note that the link's grid ``key`` could not come, and why, for :func:`_say_if_gone`."""
    st.session_state[_LINK_FAILED] = {"id": key, "why": why, "at": now}
    return False


def panel() -> OwnData | None:
    """Draw the "Your own data" expander in the sidebar; return the matrix in use, if any."""
    with st.sidebar.expander("Your own data", icon=":material/upload_file:", expanded=KEY in st.session_state):
        st.caption(
            f"{upload.LIMITS} Shown, it is kept on the server by the hash of its content, "
            f"{own_text.where(keeping())}, and the "
            "link carries that hash: anyone who has the link sees the numbers."
        )
        upload_room.note_address()  # whose files these are, for the fair share of the server's upload ceiling
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
    values = _held()
    if values is None and _from_link():  # none held, or no longer in this server's memory: the link may carry it
        values = _held()
    if values is None:
        st.session_state.pop(KEY, None)
        _say_if_gone()
        return None
    held = st.session_state[KEY]
    record = _share(values, held["id"])
    shared = record["outcome"] == "shared"
    _mark(held["id"] if shared else f"{values.shape[0]}x{values.shape[1]}")
    boot.rerun_on_reconnect()
    x = torch.from_numpy(values)  # (B, H), shared with the store and with other sessions: never modified
    return OwnData(x=x, source=str(held.get("source", "your data")), id=held["id"], shared=shared, kept=_kept(record))


def _held() -> np.ndarray | None:
    """The matrix (B, H) this session holds in :func:`store`, or None: none, or let go by the server."""
    held = st.session_state.get(KEY)
    return store().get(held["id"]) if isinstance(held, dict) and isinstance(held.get("id"), str) else None


def _say_if_gone() -> None:
    """The link says its view showed someone's own data, and this session has none: say so, and why."""
    marker = st.query_params.get(OWN_PARAM)
    if marker is None:
        return
    key = own_share.valid_id(marker)
    if key is not None:
        failed = st.session_state.get(_LINK_FAILED) or {}
        said = own_text.link_gone(failed.get("why") if failed.get("id") == key else "gone", keeping())
    else:
        said = own_text.marker_gone(marker, st.get_option("server.disconnectedSessionTTL"), own_store.TTL_S)
    st.warning(said, icon=":material/cloud_off:")
    st.button("Understood: show generated data", key="own_gone_ok", on_click=_unmark, icon=":material/check:")


def back_button() -> None:
    """Return to the generated presets."""
    st.button("Back to generated data", key="own_data_off", on_click=_back_to_generated, icon=":material/undo:")
