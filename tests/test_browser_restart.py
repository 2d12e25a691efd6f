"""A tab showing your own data while its server is killed and restarted: it says the data is gone.

The tab reconnects to the new process by itself. The whole page must then run
in the new session, which holds no data of the viewer's, so that the page stops
saying "Showing your data"; without that, a move below the input (a fragment)
went to a session that never drew it, and the tab stayed frozen.
"""

from __future__ import annotations

import os
import signal

import pytest
from browser import AppPage

from harness.server import free_port, start_app, stop, wait_app

pytestmark = pytest.mark.browser

pytest_plugins = ("browser",)


def alerts(app: AppPage) -> str:
    return " | ".join(app.page.locator('[data-testid="stAlert"]').all_inner_texts())


def test_after_a_restart_the_tab_says_its_data_is_gone(browser_context, tmp_path):
    # Servers of its own: the test kills one, and starts the next on the same port.
    port = free_port()
    first = start_app(port, tmp_path / "first.log")
    second = None
    try:
        wait_app(first)
        app = AppPage(browser_context.new_page()).goto(f"{first.url}/?seed=5")
        page = app.page
        page.locator('[data-testid="stSidebar"]').get_by_text("Your own data").click()
        page.locator(".st-key-paste textarea").fill("1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 0")
        page.locator(".st-key-paste textarea").press("Control+Enter")
        page.locator(".st-key-use_paste button").click()
        # The link names the data by its content's hash; this server keeps it in its own memory (no Redis).
        page.wait_for_function(
            "() => /^[0-9a-f]{32}$/.test(new URL(location.href).searchParams.get('own'))", timeout=60_000
        )
        app.settle()
        assert "Showing your data" in alerts(app)

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
        page.close()
    finally:
        if first.proc.poll() is None:
            stop(first.proc)
        if second is not None:
            stop(second.proc)
