"""Browser-test helpers: the app served for real, driven by headless Chromium.

A browser test module loads this file as a plugin, for its fixtures, and
marks its tests::

    pytest_plugins = ("browser",)

    @pytest.mark.browser
    def test_explorer(app_server, open_app):
        app = open_app(app_server + "/?batch=8")
        assert not app.exceptions() and not app.errors
        charts = app.charts()  # each chart's traces, with x, y, z as lists

- ``app_server`` (session, from tests/conftest.py): the one default server,
  ``streamlit run app.py`` on a free port, up and healthy; its value is the
  base URL. ``app_process`` is the same server as an :class:`AppProcess`,
  whose ``log_tail()`` helps a failure message.
- ``browser`` (session): Debian's Chromium through Playwright; no browser is
  ever downloaded. ``browser_context`` (session) is its one context, which
  lets no request leave the machine.
- ``open_app`` (per test): opens a URL in a new tab (a new Streamlit
  session), waits until the app has settled, and returns an :class:`AppPage`.
  Every tab it opened is closed after the test.

The server and the browser's settings come from :mod:`harness` (shared with
benchmarks/): a test that runs several servers or browser contexts
(tests/test_replicas.py, tests/test_browser_stage.py) takes its steps from
:mod:`harness.server` and :mod:`harness.chromium` too. :func:`overlapping`
is the check that no two texts on a phone's screen cover each other.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Request, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.chromium import (
    CHARTS_JS,
    CHROMIUM,
    SETTLE_TIMEOUT,
    SETTLED_JS,
    STATE_JS,
    VIEWPORT,
    decode_array,
    foreign_console_error,
    is_local,
    launch,
    local_context,
)
from harness.server import ROOT

__all__ = ["ROOT", "AppPage", "charts_json", "overlapping"]


@dataclass
class AppPage:
    """A Playwright page showing the app, with the JS errors it has raised."""

    page: Page
    errors: list[str] = field(default_factory=list)  # uncaught exceptions and console errors
    offsite: list[str] = field(default_factory=list)  # requests to other hosts (each refused)

    def goto(self, url: str, timeout: float = SETTLE_TIMEOUT) -> AppPage:
        self.page.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)
        self.settle(timeout)
        return self

    def settle(self, timeout: float = SETTLE_TIMEOUT, quiet: float = 0.5) -> None:
        """Wait until the app is idle and stays so for ``quiet`` seconds.

        The quiet spell catches a rerun that starts right after a run ends
        (a widget bound to the URL, st.rerun).
        """
        deadline = time.monotonic() + timeout
        while True:
            left = max(deadline - time.monotonic(), 0.1)
            try:
                self.page.wait_for_function(SETTLED_JS, timeout=left * 1000, polling=100)
            except PlaywrightTimeout:
                raise TimeoutError(f"{self.page.url} not settled after {timeout:.0f} s: {self.state()}") from None
            self.page.wait_for_timeout(quiet * 1000)
            if self.page.evaluate(SETTLED_JS):
                return

    def state(self) -> dict[str, Any]:
        """What the page is doing: script and connection state, elements drawn, placeholders."""
        return self.page.evaluate(STATE_JS)

    def exceptions(self) -> list[str]:
        """The text of every exception box Streamlit shows (``stException``)."""
        return self.page.locator('[data-testid="stException"]').all_inner_texts()

    def charts(self) -> list[dict[str, Any]]:
        """Each plotly chart in page order: ``{"key": ..., "traces": [...]}``.

        ``key`` is the ``st.plotly_chart`` key (None without one); each trace
        has ``type``, ``name`` and those of x, y, z, text, customdata it has,
        as nested lists of plain numbers or strings.
        """
        charts = self.page.evaluate(CHARTS_JS)
        for chart in charts:
            for trace in chart["traces"]:
                for k in ("x", "y", "z", "text", "customdata"):
                    if k in trace:
                        trace[k] = decode_array(trace[k])
        return charts

    def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=True, timeout=SETTLE_TIMEOUT * 1000)
        return path


def overlapping(texts: list[dict[str, Any]], min_px: float = 1.0) -> list[tuple[str, str]]:
    """Each pair of ``texts`` (``{"text", "box": [left, top, right, bottom]}``, in px) whose boxes overlap
    by at least ``min_px`` both across and down."""
    pairs = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            w = min(a["box"][2], b["box"][2]) - max(a["box"][0], b["box"][0])
            h = min(a["box"][3], b["box"][3]) - max(a["box"][1], b["box"][1])
            if w >= min_px and h >= min_px:
                pairs.append((a["text"], b["text"]))
    return pairs


def charts_json(charts: list[dict[str, Any]]) -> str:
    """A canonical text of :meth:`AppPage.charts`, for exact comparisons (NaN included)."""
    return json.dumps(charts, sort_keys=True)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless Debian Chromium, shared by the session's tests."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: `make system-deps` installs Debian's chromium")
    with sync_playwright() as p:
        chromium = launch(p)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def browser_context(browser: Browser) -> Iterator[BrowserContext]:
    """One context for the session, so pages share the HTTP and compiled-code caches.

    Requests to any other machine are refused at once, so no test depends on
    the network.
    """
    context = local_context(browser, viewport=VIEWPORT)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def contexts(browser: Browser) -> Iterator[Callable[[dict], BrowserContext]]:
    """``contexts(viewport)``: a new browser context (its own cookies: one person's phone or projector), closed
    after the test."""
    made = []

    def new(viewport: dict) -> BrowserContext:
        context = local_context(browser, viewport=viewport)
        made.append(context)
        return context

    yield new
    for context in made:
        context.close()


@pytest.fixture
def open_app(browser_context: BrowserContext) -> Iterator[Callable[[str], AppPage]]:
    """``open_app(url)``: the app at ``url`` in a new tab (a new session), settled.

    Requests to other machines (refused at once) are listed in ``AppPage.offsite``,
    not in ``AppPage.errors``. Every tab the test opened is closed after it.
    """
    pages = []

    def _open(url: str, timeout: float = SETTLE_TIMEOUT) -> AppPage:
        page = browser_context.new_page()
        pages.append(page)
        app = AppPage(page)

        def on_console(message: ConsoleMessage) -> None:
            if message.type != "error":
                return
            where = message.location.get("url", "")
            if foreign_console_error(message.text, where):
                return
            app.errors.append(f"console.error: {message.text} ({where})")

        def on_request(request: Request) -> None:
            # Every request, not only those that log an error: a refused favicon logs none.
            if urlsplit(request.url).scheme not in ("data", "blob") and not is_local(request.url):
                app.offsite.append(request.url)

        page.on("request", on_request)
        page.on("console", on_console)
        page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
        return app.goto(url, timeout)

    yield _open
    for page in pages:
        if not page.is_closed():
            page.close()
