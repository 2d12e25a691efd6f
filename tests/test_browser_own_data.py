"""Own data in a real browser: the link carries its id, and a new session on that link shows the same numbers."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.browser


def test_a_pasted_matrix_is_in_the_link_and_a_new_session_on_it_shows_the_same_data(app_server, open_app):
    app = open_app(f"{app_server}/?seed=5")
    page = app.page
    page.locator('[data-testid="stSidebar"]').get_by_text("Your own data").click()
    page.locator(".st-key-paste textarea").fill("1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 0")
    page.locator(".st-key-paste textarea").press("Control+Enter")  # the box hands its text to the server
    page.locator(".st-key-use_paste button").click()
    page.wait_for_function(
        "() => /^[0-9a-f]{32}$/.test(new URL(location.href).searchParams.get('own') || '')", timeout=60_000
    )
    app.settle()
    assert "3 × 4" in page.locator('[data-testid="stSidebar"]').inner_text()
    query = parse_qs(urlparse(page.url).query)
    assert len(query["own"][0]) == 32 and query["seed"] == ["5"], query  # beside the controls' own values

    # A new session on the same link (another browser, or after the session expired): the same data, said so.
    again = open_app(page.url)
    sidebar = again.page.locator('[data-testid="stSidebar"]').inner_text()
    assert "3 × 4" in sidebar and "Shared data, kept" in sidebar, sidebar
    assert again.page.locator('[data-testid="stAlert"]').filter(has_text="is gone").count() == 0
    assert not again.exceptions() and not again.errors
