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
  session; ``viewport=`` a size of its own from the start), waits until the app has settled, and returns an :class:`AppPage`
  (:mod:`harness.tab`, the tab the benchmarks drive too; its ``settle()`` is
  :mod:`harness.settle`'s probe). Every tab it opened is closed after the test.

The server, the browser's settings and the tab come from :mod:`harness` (shared with
benchmarks/): a test that runs several servers or browser contexts
(tests/test_replicas.py, tests/test_browser_stage.py) takes its steps from
:mod:`harness.server` and :mod:`harness.chromium` too. :func:`overlapping`
is the check that no two texts on a phone's screen cover each other.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, sync_playwright

from harness.chromium import HEADLESS_SHELL, VIEWPORT, launch, local_context
from harness.server import ROOT
from harness.settle import SETTLE_TIMEOUT
from harness.tab import AppPage, watch

__all__ = ["ROOT", "SETTLE_TIMEOUT", "AppPage", "charts_json", "overlapping"]


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
    """Debian's headless Chromium (its headless shell), shared by the session's tests."""
    if not os.access(HEADLESS_SHELL, os.X_OK):
        pytest.fail(f"{HEADLESS_SHELL} is missing: `make system-deps` installs Debian's chromium-headless-shell")
    with sync_playwright() as p:
        chromium = launch(p, executable=HEADLESS_SHELL)
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

    def _open(url: str, timeout: float = SETTLE_TIMEOUT, viewport: dict | None = None) -> AppPage:
        page = browser_context.new_page()
        pages.append(page)
        if viewport is not None:  # that size from the start: no redraw for a resize after the load
            page.set_viewport_size(viewport)
        return watch(AppPage(page)).goto(url, timeout)

    yield _open
    for page in pages:
        if not page.is_closed():
            page.close()
