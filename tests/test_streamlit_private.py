"""The private Streamlit attributes lnviz relies on are still where ui.streamlit_private looks."""

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from conftest import run_page
from streamlit.components.v2.bidi_component import main as bidi_main
from streamlit.components.v2.bidi_component import serialization as bidi_serialization
from streamlit.runtime import backend_operation_handler
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec
from streamlit.web.server.starlette import starlette_server_config

from ui import streamlit_private


def test_streamlit_still_has_the_private_attributes():
    assert streamlit_private.check() == []


def _without_field(monkeypatch, cls, name):
    fields = {k: v for k, v in cls.__dataclass_fields__.items() if k != name}
    monkeypatch.setattr(cls, "__dataclass_fields__", fields)


# Each private use (how check() names it), and a Streamlit that lost it.
GONE = [
    pytest.param("PagesManager.uses_pages_directory", lambda mp: mp.delattr(PagesManager, "uses_pages_directory")),
    pytest.param(
        "AppSession._handle_clear_cache_request",
        lambda mp: mp.delattr(AppSession, "_handle_clear_cache_request"),
        id="clear_cache handler gone",
    ),
    pytest.param(
        "AppSession._handle_clear_cache_request",
        lambda mp: mp.setattr(AppSession, "handle_backmsg", lambda self, msg: None),
        id="clear_cache handler no longer called",
    ),
    pytest.param(
        "bidi_component.main.deserialize_trigger_list", lambda mp: mp.delattr(bidi_main, "deserialize_trigger_list")
    ),
    pytest.param(
        "bidi_component.serialization.deserialize_trigger_list",
        lambda mp: mp.delattr(bidi_serialization, "deserialize_trigger_list"),
    ),
    pytest.param("backend_operation_handler._LOGGER", lambda mp: mp.delattr(backend_operation_handler, "_LOGGER")),
    pytest.param(
        "Runtime.uploaded_file_mgr.file_storage",
        lambda mp: mp.setattr(MemoryUploadedFileManager, "__init__", lambda self, endpoint: None),
    ),
    pytest.param(
        "MemoryUploadedFileManager.add_file",
        lambda mp: mp.delattr(MemoryUploadedFileManager, "add_file"),
        id="add_file gone",
    ),
    pytest.param(
        "MemoryUploadedFileManager.add_file",
        lambda mp: mp.delattr(MemoryUploadedFileManager, "remove_file"),
        id="remove_file gone",
    ),
    pytest.param("the XSRF cookie's name", lambda mp: mp.delattr(starlette_server_config, "XSRF_COOKIE_NAME")),
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
    # Streamlit's own int(inf) raises for a link that reached it: the door (ui.door) takes inf out, with a note.
    at = run_page("pages/explorer.py", {"seed": "inf"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="seed").value == 0


def test_a_browsers_clear_cache_is_ignored_once_installed():
    from streamlit.runtime.app_session import AppSession

    handler = AppSession._handle_clear_cache_request
    try:
        streamlit_private.ignore_clear_cache()
        assert AppSession._handle_clear_cache_request is streamlit_private._clear_cache_ignored
    finally:
        AppSession._handle_clear_cache_request = handler


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

    from lnviz.serving import limits

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
        streamlit_private.quiet_refused_downloads(limits.BusyError)
        handler = backend_operation_handler.DeferredFileHandler(Refusing)
        # In a thread of its own: Playwright's sync API (other tests in this worker) keeps a loop in this one.
        with ThreadPoolExecutor(1) as pool:
            answer = pool.submit(asyncio.run, handler.handle(request, "s1")).result()
    finally:
        logger.removeHandler(keep)
    assert answer.error_msg == "Failed to generate file for download"
    assert lines == ["A download was refused: Busy: 1 heavy action is running. Try again in 4 s."]


def test_the_first_run_of_a_process_logs_each_lacking_use(monkeypatch, caplog):
    from ui import boot

    monkeypatch.setattr(boot, "_router_checked", False)
    monkeypatch.setattr(streamlit_private, "check", lambda: ["PagesManager.uses_pages_directory"])
    monkeypatch.setattr(streamlit_private, "leave_legacy_pages_mode", lambda: False)
    with caplog.at_level(logging.WARNING, logger="ui.boot"):
        boot.router()
        boot.router()  # once per process
    assert [r.getMessage() for r in caplog.records] == [
        "This Streamlit lacks a private use lnviz relies on: PagesManager.uses_pages_directory"
    ]
