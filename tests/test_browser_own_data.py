"""Own data in a real browser: the link carries its id, a new session on that link shows the same numbers, and a
tab showing it while its server is killed and restarted says the data is gone.

The tab reconnects to the new process by itself. The whole page must then run
in the new session, which holds no data of the viewer's, so that the page stops
saying "Showing your data"; without that, a move below the input (a fragment)
went to a session that never drew it, and the tab stayed frozen.
"""

from __future__ import annotations

import os
import signal
from urllib.parse import parse_qs, urlparse

import pytest
from browser import AppPage

from harness.chromium import LAPTOP
from harness.server import free_port, start_app, stop, wait_app
from harness.tab import watch

pytestmark = pytest.mark.browser


def alerts(app: AppPage) -> str:
    return " | ".join(app.page.locator('[data-testid="stAlert"]').all_inner_texts())


def tab(context, url: str, tabs: list) -> AppPage:
    """``url`` in a new tab the size of a laptop's screen (what is read here is at the top of the page), settled;
    the tab is added to ``tabs``, to be closed after the test."""
    page = context.new_page()
    tabs.append(page)
    page.set_viewport_size(LAPTOP)
    return watch(AppPage(page)).goto(url)


def test_a_pasted_matrix_is_in_the_link_a_new_session_shows_it_and_after_a_restart_the_tab_says_it_is_gone(
    browser_context, tmp_path
):
    # Servers of its own: the test kills one, and starts the next on the same port.
    port = free_port()
    first = start_app(port, tmp_path / "first.log")
    second = None
    tabs: list = []
    try:
        wait_app(first)
        app = tab(browser_context, f"{first.url}/?seed=5", tabs)
        page = app.page
        page.locator('[data-testid="stSidebar"]').get_by_text("Your own data").click()
        page.locator(".st-key-paste textarea").fill("1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 0")
        page.locator(".st-key-paste textarea").press("Control+Enter")  # the box hands its text to the server
        page.locator(".st-key-use_paste button").click()
        # The link names the data by its content's hash; this server keeps it in its own memory (no Redis).
        page.wait_for_function(
            "() => /^[0-9a-f]{32}$/.test(new URL(location.href).searchParams.get('own') || '')", timeout=60_000
        )
        app.settle()
        assert "3 × 4" in page.locator('[data-testid="stSidebar"]').inner_text()
        assert "Showing your data" in alerts(app)
        query = parse_qs(urlparse(page.url).query)
        assert len(query["own"][0]) == 32 and query["seed"] == ["5"], query  # beside the controls' own values

        # A new session on the same link (another browser, or after the session expired): the same data, said so.
        again = tab(browser_context, page.url, tabs)
        sidebar = again.page.locator('[data-testid="stSidebar"]').inner_text()
        assert "3 × 4" in sidebar and "Shared data, kept" in sidebar, sidebar
        assert again.page.locator('[data-testid="stAlert"]').filter(has_text="is gone").count() == 0
        assert not again.exceptions() and not again.errors
        again.page.close()  # the restart is the first tab's

        os.kill(first.proc.pid, signal.SIGKILL)  # no goodbye to the tab
        first.proc.wait()
        second = start_app(port, tmp_path / "second.log")
        wait_app(second)
        notice = page.locator('[data-testid="stAlert"]').filter(has_text="is gone")
        notice.wait_for(timeout=60_000)  # on reconnecting, without a move: the whole page ran in the new session
        app.settle()
        assert "Showing your data" not in alerts(app), alerts(app)
        page.locator(".st-key-gain input[type='range']").focus()
        page.keyboard.press("ArrowRight")  # a move below the input, a fragment: it runs
        page.wait_for_function("() => new URL(location.href).searchParams.has('gain')", timeout=60_000)
        app.settle()
        assert not app.exceptions() and "Showing your data" not in alerts(app)
    finally:
        for opened in tabs:
            if not opened.is_closed():
                opened.close()
        if first.proc.poll() is None:
            stop(first.proc)
        if second is not None:
            stop(second.proc)
