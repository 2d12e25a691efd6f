"""The explorer in a real browser: its own address, /explorer, and the data table under a chart, by keyboard."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from harness.chromium import LAPTOP
from lnviz.views import links

pytestmark = pytest.mark.browser

TITLE = "LayerNorm vs BatchNorm"
# A laptop's screen, as the session's context now is (harness.chromium.VIEWPORT): its 1400 × 2400 before cost a
# load of the charts view twice the CPU in Chromium, for pixels nobody reads.
WINDOW = LAPTOP


def assert_explorer_at_its_path(app, app_server: str) -> None:
    page = app.page
    assert not app.exceptions() and not app.errors  # the not-found dialog also logs a console error
    assert page.locator('[role="dialog"]').count() == 0
    assert "page not found" not in page.locator("body").inner_text().lower()
    assert urlparse(page.url).path == "/explorer"  # not sent to / instead
    assert page.locator("h1").first.inner_text().startswith(TITLE)
    assert page.locator(".st-key-batch [data-testid='stSliderThumbValue']").inner_text() == "6"
    grid = next(c for c in app.charts() if c["key"] == "grid_chart")
    assert len(next(t for t in grid["traces"] if t["type"] == "heatmap")["z"]) == 6  # B = 6 rows
    # The navigation lists the explorer once, and its share link keeps the address.
    assert page.locator('[data-testid="stSidebarNav"] a').filter(has_text=TITLE).count() == 1
    page.get_by_text("Share this view").click()
    link = page.locator('[data-testid="stSidebar"] code').first.inner_text()
    assert link.startswith(f"{app_server}/explorer?") and "batch=6" in link


def test_the_explorer_path_opens_the_explorer(app_server, open_app):
    # Streamlit serves the default page at / only: /explorer showed its "Page not found" dialog and ran /.
    app = open_app(f"{app_server}/explorer?v=2&batch=6", viewport=WINDOW)
    assert_explorer_at_its_path(app, app_server)


def test_a_charts_data_table_opens_and_is_reached_by_keyboard(app_server, open_app):
    app = open_app(f"{app_server}/?v={links.LINK_VERSION}&batch=4&features=5&view=distributions", viewport=WINDOW)
    page = app.page
    box = page.locator(".st-key-hist_chart_data")
    summary = box.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    app.settle()
    grid = box.locator('[data-testid="stDataFrame"]')
    assert grid.count() == 1 and not app.errors
    page.keyboard.press("Tab")  # from the expander's header into the table
    assert page.evaluate(
        "() => !!document.activeElement.closest('.st-key-hist_chart_data [data-testid=\"stDataFrame\"]')"
    )
