"""The benchmarks' browser contexts and what they press: their tabs are :class:`harness.tab.AppPage`
(:func:`harness.tab.open_tab`), the tests' tab, which waits with :mod:`harness.settle`'s probe.

Used by the browser benchmarks (browser_latency, browser_work, cold, stage); the
async sessions of :mod:`benchmarks.load` drive their tabs the same way.
"""

from __future__ import annotations

from playwright.sync_api import Browser, BrowserContext

from harness.chromium import LAPTOP, local_context

BARE_APP = "benchmarks/bare_app.py"
MAIN_APP = "app.py"
GAIN = '.st-key-gain [data-testid="stSlider"] input[type="range"]'
SEED = ".st-key-seed input"


def new_context(browser: Browser) -> BrowserContext:
    """A laptop-sized context that refuses every request leaving the machine, its pages instrumented to settle."""
    return local_context(browser, viewport=LAPTOP)
