"""The only places lnviz reads or writes Streamlit's private state (Streamlit 1.67).

Each is a workaround for Streamlit behaviour that has no public switch; :data:`USES` names each use, with why no
public API serves and the Streamlit source read for it, beside its probe. If a Streamlit upgrade moves an
attribute, :func:`check` says which (from the objects themselves), the server logs it on its first run
(:func:`ui.kit.boot.router`) and ``tests/test_streamlit_private.py`` fails on it, instead of the workaround silently
doing nothing; that test also finds no private Streamlit name outside this file.

Three uses are left: the session's id, the upload store, and a component's event list. What needed one before
uses public APIs now: a link's values (the door, :mod:`server.door`), the pages/ folder mode (``st.navigation``
in ``app.py``), a refused download's log line (the standard library's record factory, :mod:`server.heavy`) and
whom an unproved browser is counted as (its session, :func:`server.who.session`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import io
import threading
from collections.abc import Callable
from typing import Any

from streamlit.components.v2.bidi_component import main as bidi_component
from streamlit.components.v2.bidi_component import serialization as bidi_serialization
from streamlit.runtime.scriptrunner import get_script_run_ctx


def session_id() -> str:
    """The current Streamlit session's id ("" outside a script run): what Streamlit keys a session's uploads by
    (:func:`uploads`), and lnviz its proof, its address and its own data."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""


def last_of_each_event(events: list[Any]) -> list[Any]:
    """A component's event list with the last event of each name only, in the order they last came.

    Streamlit calls a component's ``on_<event>_change`` once per event in the
    list it received, and its callbacks read the value of the last one of each
    name anyway: one call per name does the same work once.
    """
    last: dict[str, Any] = {}
    for event in events:
        name = event.get("event") if isinstance(event, dict) else None
        if isinstance(name, str):
            last.pop(name, None)
            last[name] = event
    return list(last.values())


def bound_component_events(max_chars: int) -> None:
    """Bound what a components-v2 event list (a trigger list) from a browser can cost, for every session.

    A list over ``max_chars`` characters of JSON is dropped before it is
    decoded, as if no event had come; a shorter one keeps the last event of
    each name (:func:`last_of_each_event`). Without this, a 0.67 MB list of
    10,000 events cost 12 s of server CPU (Streamlit decodes the list again
    for every callback it calls).
    """
    decode = bidi_serialization.deserialize_trigger_list

    def bounded(text: str | None) -> list[Any] | None:
        if text is not None and len(text) > max_chars:
            return None
        events = decode(text)
        return None if events is None else last_of_each_event(events)

    bidi_component.deserialize_trigger_list = bounded


@dataclasses.dataclass(frozen=True)
class Uploads:
    """Streamlit's in-memory store of the files browsers uploaded, and how one is removed from it."""

    files: dict[str, dict[str, Any]]  # session id -> file id -> its record (UploadedFileRec: .data, the bytes)
    remove: Callable[[str, str], None]  # remove(session_id, file_id)


def uploads() -> Uploads | None:
    """The server's uploaded files; None without a running server (AppTest), or with another store than the
    in-memory one whose ``file_storage`` this reads."""
    from streamlit import runtime

    if not runtime.exists():
        return None
    mgr = runtime.get_instance().uploaded_file_mgr
    files = getattr(mgr, "file_storage", None)
    return Uploads(files, mgr.remove_file) if isinstance(files, dict) else None


_upload_lock = threading.Lock()


def before_each_upload(admit: Callable[[str, Any], None]) -> bool:
    """Call ``admit(session_id, file)`` before the server stores each file a browser PUTs, once per process.

    Streamlit has no hook there: this wraps the store's ``add_file``. ``admit``
    may remove files (:attr:`Uploads.remove`) and raises to refuse the file (a
    Starlette ``HTTPException`` is the browser's answer). Returns whether it is
    in place: False where :func:`uploads` is None. A second call keeps the first ``admit``.
    """
    from streamlit import runtime

    if uploads() is None:
        return False
    mgr = runtime.get_instance().uploaded_file_mgr
    with _upload_lock:
        if getattr(mgr, "_lnviz_admit", None) is None:
            add_file = mgr.add_file

            def add_file_admitted(session_id: str, file: Any) -> None:
                admit(session_id, file)
                add_file(session_id, file)

            mgr.add_file = add_file_admitted
            mgr._lnviz_admit = admit
    return True


def _shared_copy(self: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of an uploaded file that shares its bytes: they are immutable, and BytesIO copies them only
    when written to, so the copy is as independent as one that copied them."""
    twin = type(self).__new__(type(self))
    io.BytesIO.__init__(twin, self.getvalue())  # the same bytes object while neither is written to
    twin.__dict__.update(copy.deepcopy(self.__dict__, memo))  # its id, name, type, size and URLs
    twin.seek(self.tell())
    return twin


def share_uploaded_bytes_on_copy() -> None:
    """Let ``copy.deepcopy`` of an ``UploadedFile`` share the file's bytes instead of copying them.

    Streamlit deep-copies a widget's value each time the widget is drawn
    (``SessionState.register_widget``), so every full run of a page whose
    uploader holds a 31 MiB file copied the 31 MiB, holding the interpreter
    for 30 to 170 ms while every other session's rerun waited (issue 30,
    attack 8). Only the public class and the copy protocol are used: should
    Streamlit stop copying, this changes nothing.
    """
    from streamlit.typing import UploadedFile

    UploadedFile.__deepcopy__ = _shared_copy


# check(): each private use above, found through the objects themselves (attributes, signatures, dataclass
# fields, the names a function's compiled code looks up), never by reading source text.


def _loads(function: Any, name: str) -> bool:
    """Whether ``function``'s own code looks ``name`` up when it runs (a global or an attribute)."""
    code = getattr(inspect.unwrap(function), "__code__", None)
    return code is not None and name in code.co_names


def _takes(function: Any, *names: str) -> bool:
    """Whether ``function`` is a method whose parameters after ``self`` are ``names``."""
    return callable(function) and list(inspect.signature(function).parameters)[1:] == list(names)


def _fields(cls: Any) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _session_id() -> bool:
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    return callable(get_script_run_ctx) and "session_id" in _fields(ScriptRunContext)


def _trigger_list_looked_up() -> bool:
    return callable(getattr(bidi_component, "deserialize_trigger_list", None)) and _loads(
        bidi_component.BidiComponentMixin._bidi_component, "deserialize_trigger_list"
    )


def _trigger_list_decoder() -> bool:
    decode = getattr(bidi_serialization, "deserialize_trigger_list", None)
    return callable(decode) and len(inspect.signature(decode).parameters) == 1  # decode(text)


def _upload_store() -> bool:
    from streamlit.runtime import Runtime
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    return (
        isinstance(getattr(Runtime, "uploaded_file_mgr", None), property)
        and isinstance(MemoryUploadedFileManager("/_stcore/upload_file").file_storage, dict)
        and "data" in UploadedFileRec._fields
    )


def _upload_hooks() -> bool:
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager as Manager
    from streamlit.typing import UploadedFile

    return (
        _takes(Manager.add_file, "session_id", "file")
        and _takes(Manager.remove_file, "session_id", "file_id")
        and issubclass(UploadedFile, io.BytesIO)  # what _shared_copy copies as
    )


def _all(*probes: Callable[[], bool]) -> Callable[[], bool]:
    return lambda: all(probe() for probe in probes)


# Each use, why no public API serves (with the Streamlit 1.67 source read for it), and its probe.
USES: dict[str, Callable[[], bool]] = {
    # st.context (runtime/context.py) gives headers, cookies, the address and the URL but no session id, and the
    # upload manager keys a session's files by it (runtime/memory_uploaded_file_manager.py).
    "get_script_run_ctx().session_id, the session's id": _session_id,
    # Nothing public runs between an upload's PUT and its storing (web/server/starlette/starlette_routes.py's
    # upload handler calls uploaded_file_mgr.add_file), nor lists a session's files; st.file_uploader's value is
    # deep-copied on every draw (runtime/state/session_state.py, register_widget), which UploadedFile.__deepcopy__
    # makes share the bytes.
    "Runtime.uploaded_file_mgr: file_storage, add_file and remove_file, where uploads are admitted": _all(
        _upload_store, _upload_hooks
    ),
    # A components-v2 element has no bound on its event list: bidi_component/main.py decodes it whole with
    # serialization.deserialize_trigger_list, again for each callback, before any of lnviz's code runs.
    "bidi_component.main.deserialize_trigger_list, a component's event list, looked up when it is drawn": _all(
        _trigger_list_looked_up, _trigger_list_decoder
    ),
}


def check() -> list[str]:
    """The private uses above that this Streamlit no longer supports (empty when all are there)."""
    missing = []
    for use, there in USES.items():
        try:
            ok = there()
        except Exception:  # an attribute gone, a signature changed: that use is missing
            ok = False
        if not ok:
            missing.append(use)
    return missing
