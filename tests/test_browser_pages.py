"""Every registered page, loaded in headless Chromium: no exception box, no JS error.

The pages come from the page registry (lnviz/views/pages.py), so a new page is
covered as soon as it is registered; each page's sidebar, as the browser shows
it, must list exactly the registry's pages. A screenshot of each page is kept in
artifacts/screenshots/ (git ignores it; CI keeps it as an artifact).
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from conftest import ROOT

from lnviz.views.pages import PAGES as REGISTRY

# The fixtures app_process, app_server, browser and open_app.
pytest_plugins = ("browser",)

SCREENSHOTS = ROOT / "artifacts" / "screenshots"


# {URL path: page file}: every path that opens a page, its aliases included ("" for the default page).
PAGES = {path: entry.file for entry in REGISTRY for path in entry.paths}
LISTED = {"" if entry.default else entry.url_path for entry in REGISTRY}  # what the navigation shows


def test_every_page_file_exists():
    assert "" in PAGES and len(PAGES) >= 2, PAGES
    assert all((ROOT / source).is_file() for source in PAGES.values()), PAGES


def sidebar_paths(app) -> set[str]:
    """The URL paths the sidebar navigation links to ("" for the default page)."""
    hrefs = app.page.locator('[data-testid="stSidebarNav"] a').evaluate_all("els => els.map(e => e.href)")
    return {urlparse(href).path.strip("/") for href in hrefs}


@pytest.mark.browser
@pytest.mark.parametrize("path", sorted(PAGES), ids=lambda p: p or "default")
def test_page_loads_clean(path, app_process, open_app):
    app = open_app(f"{app_process.url}/{path}")
    shot = app.screenshot(SCREENSHOTS / f"{path or 'default'}.png")
    assert shot.stat().st_size > 0
    log = f"\n--- server log ---\n{app_process.log_tail()}"
    main = app.page.locator('[data-testid="stMainBlockContainer"]')
    assert main.inner_text().strip(), f"/{path} rendered nothing{log}"
    exceptions = app.exceptions()
    assert not exceptions, f"/{path} shows an exception: {exceptions}{log}"
    assert not app.errors, f"/{path} raised JavaScript errors: {app.errors}"
    assert sidebar_paths(app) == LISTED, f"/{path}: sidebar vs the page registry {sorted(LISTED)}"
