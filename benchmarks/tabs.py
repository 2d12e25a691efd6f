"""Tabs of the app in headless Chromium (Playwright's sync API), each with its WebSocket traffic: open one,
press a key or type into a box, and wait until the page has settled (:mod:`benchmarks.settle`).

Used by the browser benchmarks (browser_latency, browser_work, stage); the
async sessions of :mod:`benchmarks.load` drive their tabs the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from playwright.sync_api import Browser, BrowserContext, Page

from benchmarks.settle import COUNTED_JS, INSTRUMENT_JS, Settle, wait_settled
from benchmarks.wire import Wire
from harness.chromium import LAPTOP, SETTLE_TIMEOUT, local_context

BARE_APP = "benchmarks/bare_app.py"
MAIN_APP = "app.py"
GAIN = '.st-key-gain [data-testid="stSlider"] input[type="range"]'
SEED = ".st-key-seed input"


def new_context(browser: Browser) -> BrowserContext:
    """A laptop-sized context that refuses every request leaving the machine and instruments each page."""
    return local_context(browser, INSTRUMENT_JS, viewport=LAPTOP)


@dataclass
class Tab:
    """A page of the app with its WebSocket traffic."""

    page: Page
    wire: Wire

    def disagreement(self) -> str | None:
        """None when the page counted the same messages, bytes and finished runs as the network layer."""
        self.page.wait_for_timeout(500)  # the last frames' events reach Python
        counted, seen = self.page.evaluate(COUNTED_JS), self.wire.received()
        return None if counted == seen else f"{self.page.url}: the page counted {counted}, the network saw {seen}"


def open_tab(context: BrowserContext, url: str, timeout: float = SETTLE_TIMEOUT) -> tuple[Tab, Settle]:
    """A new tab at ``url``, once its first run has finished and every chart is drawn."""
    page = context.new_page()
    wire = Wire()
    cdp = context.new_cdp_session(page)
    wire.attach(cdp)
    cdp.send("Network.enable")
    page.goto(url, wait_until="commit", timeout=timeout * 1000)
    first = wait_settled(page, need_key=False, timeout=timeout)
    return Tab(page, wire), replace(first, server_ms=wire.server_ms(0))


def stage_drawn(tab: Tab, first: Settle, timeout: float = SETTLE_TIMEOUT) -> Settle:
    """``first`` (a tab's first load) with the time the stage drew its cells: the page may settle before the
    stage has drawn them (it draws in a shadow root, which the settle does not watch), so wait for them."""
    tab.page.wait_for_function("() => window.__bench.stageDrawn !== undefined", timeout=timeout * 1000)
    drawn = tab.page.evaluate("performance.timeOrigin + window.__bench.stageDrawn")
    return replace(first, stage_epoch=drawn / 1000)


def press(tab: Tab, key: str, selector: str = GAIN, timeout: float = SETTLE_TIMEOUT) -> Settle:
    """Focus ``selector``, press ``key`` and wait until the page has settled."""
    tab.page.bring_to_front()
    tab.page.locator(selector).focus()
    since = tab.wire.mark()
    tab.page.evaluate("window.__bench.arm()")
    tab.page.keyboard.press(key)
    settle = wait_settled(tab.page, need_key=True, timeout=timeout)
    return replace(settle, server_ms=tab.wire.server_ms(since))


def enter(tab: Tab, selector: str, text: str, timeout: float = SETTLE_TIMEOUT) -> Settle:
    """Type ``text`` into the input ``selector``, press Enter (Streamlit commits it) and wait until settled."""
    tab.page.bring_to_front()
    tab.page.locator(selector).fill(text)
    since = tab.wire.mark()
    tab.page.evaluate("window.__bench.arm()")
    tab.page.keyboard.press("Enter")
    settle = wait_settled(tab.page, need_key=True, timeout=timeout)
    return replace(settle, server_ms=tab.wire.server_ms(since))
