"""harness.chromium's console filter: which console messages a test or benchmark records as the app's errors."""

from types import SimpleNamespace

from harness.chromium import app_console_error


def message(kind: str, text: str, url: str) -> SimpleNamespace:
    return SimpleNamespace(type=kind, text=text, location={"url": url})


def test_only_the_apps_own_console_errors_are_recorded():
    local = "http://127.0.0.1:8501/static/js/index.js"
    assert app_console_error(message("error", "TypeError: x is undefined", local)) == (
        f"console.error: TypeError: x is undefined ({local})"
    )
    assert app_console_error(message("warning", "TypeError: x is undefined", local)) is None  # not an error
    offsite = "https://fonts.example.com/font.woff2"  # refused by keep_local: not the app's error
    assert app_console_error(message("error", "Failed to load resource: net::ERR_FAILED", offsite)) is None
    assert app_console_error(message("error", "Failed to load resource: 500", local)) is not None
