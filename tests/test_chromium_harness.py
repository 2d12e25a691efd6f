"""harness.chromium: the browser stays on this machine, and which console messages a test or benchmark records as
the app's errors."""

import http.server
import threading
from types import SimpleNamespace

import pytest

from harness.chromium import app_console_error


def message(kind: str, text: str, url: str) -> SimpleNamespace:
    return SimpleNamespace(type=kind, text=text, location={"url": url})


def test_only_the_apps_own_console_errors_are_recorded():
    local = "http://127.0.0.1:8501/static/js/index.js"
    assert app_console_error(message("error", "TypeError: x is undefined", local)) == (
        f"console.error: TypeError: x is undefined ({local})"
    )
    assert app_console_error(message("warning", "TypeError: x is undefined", local)) is None  # not an error
    offsite = "https://fonts.example.com/font.woff2"  # refused by the browser (STAY_LOCAL): not the app's error
    assert app_console_error(message("error", "Failed to load resource: net::ERR_FAILED", offsite)) is None
    assert app_console_error(message("error", "Failed to load resource: 500", local)) is not None
    # The stage's route refusing on a busy server is its design (the stage waits for the rerun); another route's
    # 429, or the stage route's 500, is not.
    busy = "Failed to load resource: the server responded with a status of 429 (Too Many Requests)"
    assert app_console_error(message("error", busy, "http://127.0.0.1:8501/api/stage/Lz7Y?gain=1.7&bias=0")) is None
    assert app_console_error(message("error", busy, "http://127.0.0.1:8501/api/class/ABCD/vote")) is not None
    broken = "Failed to load resource: the server responded with a status of 500 (Internal Server Error)"
    assert app_console_error(message("error", broken, "http://127.0.0.1:8501/api/stage/Lz7Y?gain=1")) is not None


@pytest.fixture
def local_http():
    """A plain HTTP server on 127.0.0.1, its base URL (not the app: nothing here needs Streamlit)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    server.RequestHandlerClass.log_message = lambda *args: None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


FETCH_JS = "(url) => fetch(url, {mode: 'no-cors'}).then(() => 'answered').catch(() => 'refused')"


def test_the_browser_reaches_this_machine_and_nothing_else(browser_context, local_http):
    page = browser_context.new_page()
    failures = []
    page.on("requestfailed", lambda request: failures.append((request.url, request.failure)))
    try:
        page.goto(local_http + "/")
        port = local_http.rsplit(":", 1)[1]
        assert page.evaluate(FETCH_JS, f"http://localhost:{port}/") == "answered"
        offsite = ["https://fonts.googleapis.com/icon", "http://1.1.1.1/", "http://[2606:4700:4700::1111]/"]
        for url in offsite:  # a host name, and addresses that need no resolving
            assert page.evaluate(FETCH_JS, url) == "refused", url
        page.wait_for_timeout(100)  # requestfailed comes after the fetch's rejection
        # Refused here, by the browser's resolver, not by the network:
        assert {url: why for url, why in failures if url in offsite} == dict.fromkeys(
            offsite, "net::ERR_NAME_NOT_RESOLVED"
        )
    finally:
        page.close()
