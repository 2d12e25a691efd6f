"""The private Streamlit attributes lnviz relies on are still where ui.streamlit_private looks."""

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor

from conftest import run_page

from ui import streamlit_private


def test_streamlit_still_has_the_private_attributes():
    assert streamlit_private.check() == []


def test_an_infinite_seed_in_a_link_leaves_the_page_working():
    # Without forget_initial_link_value, Streamlit's own int(inf) raises here.
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
