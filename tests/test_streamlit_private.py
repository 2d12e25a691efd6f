"""The private Streamlit attributes lnviz relies on are still where server.streamlit_private looks, and no other file of
the app reaches for one."""

import ast
import asyncio
import json
import logging
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from conftest import ROOT, run_page
from streamlit.components.v2.bidi_component import main as bidi_main
from streamlit.components.v2.bidi_component import serialization as bidi_serialization
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from server import streamlit_private


def test_streamlit_still_has_the_private_attributes():
    assert streamlit_private.check() == []


def _without_field(monkeypatch, cls, name):
    fields = {k: v for k, v in cls.__dataclass_fields__.items() if k != name}
    monkeypatch.setattr(cls, "__dataclass_fields__", fields)


# Each private use (how check() names it), and a Streamlit that lost it.
GONE = [
    pytest.param("get_script_run_ctx().session_id", lambda mp: _without_field(mp, ScriptRunContext, "session_id")),
    pytest.param(
        "bidi_component.main.deserialize_trigger_list",
        lambda mp: mp.delattr(bidi_main, "deserialize_trigger_list"),
        id="trigger list not looked up",
    ),
    pytest.param(
        "bidi_component.main.deserialize_trigger_list",
        lambda mp: mp.delattr(bidi_serialization, "deserialize_trigger_list"),
        id="trigger list decoder gone",
    ),
    pytest.param(
        "Runtime.uploaded_file_mgr",
        lambda mp: mp.setattr(MemoryUploadedFileManager, "__init__", lambda self, endpoint: None),
        id="file_storage gone",
    ),
    pytest.param(
        "Runtime.uploaded_file_mgr", lambda mp: mp.delattr(MemoryUploadedFileManager, "add_file"), id="add_file gone"
    ),
    pytest.param(
        "Runtime.uploaded_file_mgr",
        lambda mp: mp.delattr(MemoryUploadedFileManager, "remove_file"),
        id="remove_file gone",
    ),
]


@pytest.mark.parametrize("use, lose", GONE)
def test_check_names_a_private_use_this_streamlit_lost(monkeypatch, use, lose):
    lose(monkeypatch)
    (missing,) = streamlit_private.check()
    assert missing.startswith(use), missing


def test_every_private_use_has_a_case_above():
    cases = {p.values[0] for p in GONE}
    assert all(any(use.startswith(case) for case in cases) for use in streamlit_private.USES)


def test_each_upload_is_admitted_before_streamlit_stores_it(monkeypatch):
    from streamlit import runtime

    mgr = MemoryUploadedFileManager("/_stcore/upload_file")
    monkeypatch.setattr(runtime, "exists", lambda: True)
    monkeypatch.setattr(runtime, "get_instance", lambda: SimpleNamespace(uploaded_file_mgr=mgr))
    uploads = streamlit_private.uploads()
    assert uploads.files is mgr.file_storage
    asked: list[tuple[str, int]] = []

    def admit(session_id, file):
        asked.append((session_id, len(file.data)))
        if len(file.data) > 3:
            raise ValueError("too big")

    assert streamlit_private.before_each_upload(admit)
    assert streamlit_private.before_each_upload(lambda session_id, file: None)  # the first one stays
    mgr.add_file("s1", UploadedFileRec("f1", "a.csv", "text/csv", b"1,2"))
    with pytest.raises(ValueError, match="too big"):
        mgr.add_file("s1", UploadedFileRec("f2", "b.csv", "text/csv", b"1,2,3"))
    assert asked == [("s1", 3), ("s1", 5)] and list(uploads.files["s1"]) == ["f1"]
    uploads.remove("s1", "f1")
    assert uploads.files["s1"] == {}


def test_without_a_server_nothing_is_installed():
    assert streamlit_private.uploads() is None
    assert not streamlit_private.before_each_upload(lambda session_id, file: None)


def test_an_infinite_seed_in_a_link_leaves_the_page_working():
    # Streamlit's own int(inf) raises for a link that reached it: the door (server.door) takes inf out, with a note.
    at = run_page("pages/explorer.py", {"seed": "inf"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="seed").value == 0


def test_a_component_event_list_is_bounded_and_keeps_the_last_event_of_each_name():
    from streamlit.components.v2.bidi_component import main

    decode = main.deserialize_trigger_list
    events = [{"event": "scrub", "value": i} for i in range(5)] + [{"event": "pick", "value": 9}, "junk"]
    events.append({"event": "scrub", "value": 5})
    try:
        streamlit_private.bound_component_events(1000)
        bounded = main.deserialize_trigger_list
        assert bounded(json.dumps(events)) == [{"event": "pick", "value": 9}, {"event": "scrub", "value": 5}]
        assert bounded(json.dumps(events) + " " * 1000) is None  # as if nothing came
        assert bounded(None) is None and bounded(json.dumps({"event": "pick", "value": 1})) == [
            {"event": "pick", "value": 1}
        ]
    finally:
        main.deserialize_trigger_list = decode


def test_a_refused_download_logs_one_line_not_a_traceback():
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.runtime import backend_operation_handler
    from streamlit.runtime.media_file_storage import MediaFileStorageError

    from server import heavy, limits

    class Refusing:
        def execute_deferred(self, file_id: str) -> str:  # as Streamlit's MediaFileManager wraps a build's error
            try:
                raise limits.BusyError(limits.Busy("server", 4, "1 heavy action is running."))
            except limits.BusyError as e:
                raise MediaFileStorageError(f"Callable execution failed: {e}") from e

    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    keep = Keep()
    logger = backend_operation_handler._LOGGER
    logger.addHandler(keep)
    request = BackMsg().backend_operation_request
    request.request_id = "r1"
    request.deferred_file.file_id = "f1"
    try:
        heavy.quiet_refused_downloads()
        handler = backend_operation_handler.DeferredFileHandler(Refusing)
        # In a thread of its own: Playwright's sync API (other tests in this worker) keeps a loop in this one.
        with ThreadPoolExecutor(1) as pool:
            answer = pool.submit(asyncio.run, handler.handle(request, "s1")).result()
    finally:
        logger.removeHandler(keep)
    assert answer.error_msg == "Failed to generate file for download"
    assert lines == ["A download was refused: Busy: 1 heavy action is running. Try again in 4 s."]


def test_another_record_with_an_exception_keeps_its_traceback():
    from server import heavy

    heavy.quiet_refused_downloads()
    try:
        raise ValueError("not a refusal")
    except ValueError:
        record = logging.getLogger("lnviz.test").makeRecord(
            "lnviz.test", logging.ERROR, "f", 1, "m", (), sys.exc_info()
        )
    assert record.exc_info is not None and record.getMessage() == "m"


def test_the_server_starts_with_streamlits_pages_folder_mode_off():
    # router.py has pages/ beside it: in that mode a fresh server's first deep link would run its page without the
    # router. Importing app.py (as `streamlit run app.py` does) switches it off with st.navigation, before any session.
    probe = (
        "import app\n"
        "from streamlit.runtime.pages_manager import PagesManager\n"
        "print(PagesManager.uses_pages_directory)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1:] == ["False"], done.stderr[-2000:]
    assert "missing ScriptRunContext" not in done.stderr


def test_the_first_run_of_a_process_logs_each_lacking_use(monkeypatch, caplog):
    from ui.kit import boot

    monkeypatch.setattr(boot, "_router_checked", False)
    monkeypatch.setattr(streamlit_private, "check", lambda: ["get_script_run_ctx().session_id, the session's id"])
    with caplog.at_level(logging.WARNING, logger="ui.kit.boot"):
        boot.router()
        boot.router()  # once per process
    assert [r.getMessage() for r in caplog.records] == [
        "This Streamlit lacks a private use lnviz relies on: get_script_run_ctx().session_id, the session's id"
    ]


# The app's own files (tests, the harness and benchmarks may look inside Streamlit), and the one that may reach in.
APP_FILES = [
    ROOT / "app.py",
    ROOT / "router.py",
    *[p for d in ("pages", "server", "ui", "lnviz") for p in (ROOT / d).rglob("*.py")],
]
ADAPTER = ROOT / "server" / "streamlit_private.py"
MOST_USES = 3  # issue 48: see server.streamlit_private.USES for why each is there


def private_names(path) -> list[str]:
    """Each private Streamlit name ``path`` reaches for: a module of Streamlit's other than ``streamlit`` itself (the
    text ``streamlit.runtime`` included, wherever it is), get_script_run_ctx, and a ``_``-prefixed attribute of
    anything it imported from Streamlit (not a dunder such as a module's ``__file__``)."""
    text = path.read_text()
    tree = ast.parse(text)
    found, imported = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "streamlit":
                    imported.add((alias.asname or alias.name).split(".")[0])
                    found += [alias.name] if alias.name != "streamlit" else []
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "streamlit":
            imported.update(a.asname or a.name for a in node.names)
            found += [f"{node.module}.{a.name}" for a in node.names]
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "get_script_run_ctx" and isinstance(node.ctx, ast.Load):
            found.append(node.id)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.endswith("__"):
            root = node.value
            while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
                root = root.func if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name) and root.id in imported:
                found.append(ast.unparse(node))
    return found + ["streamlit.runtime"] * (
        text.count("streamlit.runtime") - sum("streamlit.runtime" in f for f in found)
    )


def test_private_streamlit_is_reached_only_through_the_adapter_and_each_use_is_probed():
    elsewhere = {str(p.relative_to(ROOT)): names for p in APP_FILES if p != ADAPTER and (names := private_names(p))}
    assert elsewhere == {}
    assert private_names(ADAPTER)  # the scan sees what is there
    assert len(streamlit_private.USES) <= MOST_USES


def test_the_scan_finds_each_kind_of_private_name(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import streamlit as st\n"
        "from streamlit.runtime.scriptrunner import get_script_run_ctx\n"
        "from streamlit import file_util\n"
        "x = st.session_state._state.query_params\n"
        "y = get_script_run_ctx().session_id\n"
        "z = st.context.cookies.get('a')\n"
        "doc = 'see streamlit.runtime.app_session'\n"
    )
    assert sorted(private_names(probe)) == sorted(
        [
            "streamlit.runtime.scriptrunner.get_script_run_ctx",
            "streamlit.file_util",
            "get_script_run_ctx",
            "st.session_state._state",
            "streamlit.runtime",
        ]
    )
