"""/transformer in a real browser: the model's page draws at a laptop's, a projector's and a phone's size, and a
typed sentence reaches the drawn page. (axe-core, lecture sizes and text overlaps: tests/test_browser_a11y.py,
which takes every page of the registry.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser import AppPage
from playwright.sync_api import BrowserContext

from harness.chromium import LAPTOP, PHONE
from harness.tab import watch

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
LINK = "/transformer?layer=0&site=ffn"


@pytest.fixture(scope="module")
def at_desk(app_server: str, browser_context: BrowserContext) -> Iterator[AppPage]:
    """The link opened once at a laptop's size and settled: the laptop's and the phone's cases look at this one
    visit (the phone's narrows its window), as the link is the same; the projector's link has present=1."""
    page = browser_context.new_page()
    page.set_viewport_size(LAPTOP)
    try:
        yield watch(AppPage(page)).goto(app_server + LINK)
    finally:
        page.close()


@pytest.mark.parametrize(
    "size, query", [(LAPTOP, ""), (PROJECTOR, "&present=1"), (PHONE, "")], ids=["laptop", "projector", "phone"]
)
def test_the_page_draws_its_three_charts_at_each_size(size, query, app_server, open_app, request):
    if query:
        app = open_app(app_server + LINK + query, viewport=size)
    else:
        app = request.getfixturevalue("at_desk").resize(size)
    assert not app.exceptions() and not app.errors, (app.exceptions(), app.errors)
    assert [c["key"] for c in app.charts()] == ["tf_ln", "tf_bn", "tf_affine"]
    ticks = app.charts()[0]["traces"][0]
    assert ticks["type"] == "heatmap"
    # Nothing wider than the window: no sideways scrolling on a phone.
    assert app.page.evaluate("document.documentElement.scrollWidth") <= size["width"]


def test_a_typed_sentence_reaches_the_drawn_page(app_server, open_app):
    app = open_app(f"{app_server}/transformer")
    box = app.page.get_by_role("textbox", name="Sentences")
    box.fill("Zebras graze quietly.")
    box.press("Control+Enter")
    ticks = "() => Array.from(document.querySelectorAll('.js-plotly-plot .ytick text')).map((t) => t.textContent)"
    # The grid's row labels, not any text: the sidebar's share link also says "Zebras", hidden.
    app.page.wait_for_function(f"() => ({ticks})().some((t) => t.includes('zebra'))", timeout=60_000)
    app.settle()
    labels = app.page.evaluate(ticks)
    assert "zebra" in " ".join(labels) and "[CLS]" in labels, labels
    assert "text=Zebras" in app.page.url  # the link keeps the view
