"""A tab of the app in headless Chromium (Playwright's sync API): the one wrapper of tests and benchmarks.

:class:`AppPage` is a page of a context made by :func:`harness.chromium.local_context` (so it carries the
settle probe, :mod:`harness.settle`): open a URL, wait until settled, press a key or type into a box and wait
again, and read what the page shows (exceptions, charts, its state). A test records the page's JS errors in it
(:func:`watch`); a benchmark also counts its WebSocket traffic on the network layer (:func:`open_tab`, a
:class:`harness.wire.Wire`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, ConsoleMessage, Page, Request

from harness.chromium import CHARTS_JS, STATE_JS, app_console_error, decode_array, is_local
from harness.settle import COUNTED_JS, SETTLE_TIMEOUT, Settle, wait_settled
from harness.wire import Wire

REDRAW_MS = 1500  # after a resize: how long plotly may take to start redrawing a chart for its new width


@dataclass
class AppPage:
    """A Playwright page showing the app, with the JS errors it has raised."""

    page: Page
    errors: list[str] = field(default_factory=list)  # uncaught exceptions and console errors
    offsite: list[str] = field(default_factory=list)  # requests to other hosts (each refused)
    wire: Wire | None = None  # its WebSocket frames on the network layer (a benchmark's tab: open_tab)

    def goto(self, url: str, timeout: float = SETTLE_TIMEOUT) -> AppPage:
        self.page.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)
        self.settle(timeout)
        return self

    def settle(self, timeout: float = SETTLE_TIMEOUT) -> Settle:
        """Wait until the app has finished the run of its last request and drawn it (:mod:`harness.settle`)."""
        return wait_settled(self.page, need_key=False, timeout=timeout)

    def press(self, key: str, selector: str, timeout: float = SETTLE_TIMEOUT) -> Settle:
        """Focus ``selector``, press ``key`` and wait until the run it asks for has settled, timed from the keydown."""
        self.page.bring_to_front()
        self.page.locator(selector).focus()
        return self._after_key(key, timeout)

    def enter(self, selector: str, text: str, timeout: float = SETTLE_TIMEOUT) -> Settle:
        """Type ``text`` into the input ``selector``, press Enter (Streamlit commits it) and wait until settled."""
        self.page.bring_to_front()
        self.page.locator(selector).fill(text)
        return self._after_key("Enter", timeout)

    def _after_key(self, key: str, timeout: float) -> Settle:
        since = self.wire.mark() if self.wire else 0
        self.page.evaluate("window.__bench.arm()")
        self.page.keyboard.press(key)
        settled = wait_settled(self.page, need_key=True, timeout=timeout)
        return replace(settled, server_ms=self.wire.server_ms(since)) if self.wire else settled

    def resize(
        self, viewport: dict[str, int], redraw_ms: float = REDRAW_MS, timeout: float = SETTLE_TIMEOUT
    ) -> AppPage:
        """The window at ``viewport``, its charts redrawn for the new width (plotly takes a moment to start) and
        settled; nothing to wait for when it is that size already."""
        if self.page.viewport_size != viewport:
            self.page.set_viewport_size(viewport)
            self.page.wait_for_timeout(redraw_ms)
            self.settle(timeout)
        return self

    def stage_drawn(self, first: Settle, timeout: float = SETTLE_TIMEOUT) -> Settle:
        """``first`` (the tab's first load) with the time the stage drew its cells: the page may settle before the
        stage has drawn them (it draws in a shadow root, which the settle does not watch), so wait for them."""
        self.page.wait_for_function("() => window.__bench.stageDrawn !== undefined", timeout=timeout * 1000)
        drawn = self.page.evaluate("performance.timeOrigin + window.__bench.stageDrawn")
        return replace(first, stage_epoch=drawn / 1000)

    def disagreement(self) -> str | None:
        """None when the page counted the same messages, bytes and finished runs as the network layer (a tab of
        :func:`open_tab`)."""
        assert self.wire is not None, "only a tab opened with open_tab counts its frames on the network layer"
        self.page.wait_for_timeout(500)  # the last frames' events reach Python
        counted, seen = self.page.evaluate(COUNTED_JS), self.wire.received()
        return None if counted == seen else f"{self.page.url}: the page counted {counted}, the network saw {seen}"

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


def watch(app: AppPage) -> AppPage:
    """Record ``app``'s uncaught exceptions and its console errors in ``app.errors``, and its requests to other
    machines (each refused at once) in ``app.offsite``; a console error that is not the app's is left out."""

    def on_console(message: ConsoleMessage) -> None:
        if (error := app_console_error(message)) is not None:
            app.errors.append(error)

    def on_request(request: Request) -> None:
        # Every request, not only those that log an error: a refused favicon logs none.
        if urlsplit(request.url).scheme not in ("data", "blob") and not is_local(request.url):
            app.offsite.append(request.url)

    app.page.on("request", on_request)
    app.page.on("console", on_console)
    app.page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
    return app


def open_tab(context: BrowserContext, url: str, timeout: float = SETTLE_TIMEOUT) -> tuple[AppPage, Settle]:
    """A new tab at ``url`` with its WebSocket frames counted on the network layer, once its first run has
    finished and every chart is drawn (a benchmark's tab)."""
    page = context.new_page()
    wire = Wire()
    cdp = context.new_cdp_session(page)
    wire.attach(cdp)
    cdp.send("Network.enable")
    page.goto(url, wait_until="commit", timeout=timeout * 1000)
    first = wait_settled(page, need_key=False, timeout=timeout)
    return AppPage(page, wire=wire), replace(first, server_ms=wire.server_ms(0))
