"""Own data in a real browser: the link keeps its marker, and a new session says the data is gone."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.browser


def test_a_pasted_matrix_marks_the_link_and_a_reload_says_it_is_gone(app_server, open_app):
    app = open_app(f"{app_server}/?seed=5")
    page = app.page
    page.locator('[data-testid="stSidebar"]').get_by_text("Your own data").click()
    page.locator(".st-key-paste textarea").fill("1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 0")
    page.locator(".st-key-paste textarea").press("Control+Enter")  # the box hands its text to the server
    page.locator(".st-key-use_paste button").click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('own') === '3x4'", timeout=60_000)
    app.settle()
    assert "3 × 4" in page.locator('[data-testid="stSidebar"]').inner_text()
    query = parse_qs(urlparse(page.url).query)
    assert query["own"] == ["3x4"] and query["seed"] == ["5"], query  # beside the controls' own values

    # A new session on the same link (as after a restart, or an expired session): the data is gone, and it says so.
    again = open_app(page.url)
    notice = again.page.locator('[data-testid="stAlert"]').filter(has_text="is gone")
    assert notice.count() == 1 and "(3 × 4)" in notice.inner_text()
    assert not again.exceptions() and not again.errors
