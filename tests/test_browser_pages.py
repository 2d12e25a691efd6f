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


# {URL path: page file}: each page once, at the path the navigation links to ("" for the default page).
PAGES = {"" if entry.default else entry.url_path: entry.file for entry in REGISTRY}
# Every path that opens a page, its aliases too (/explorer opens the explorer).
EVERY_PATH = {path: entry.file for entry in REGISTRY for path in entry.paths}


def test_every_page_file_exists():
    assert "" in PAGES and len(PAGES) >= 2, PAGES
    assert all((ROOT / source).is_file() for source in EVERY_PATH.values()), EVERY_PATH


def sidebar_paths(app) -> set[str]:
    """The URL paths the sidebar navigation links to ("" for the default page)."""
    hrefs = app.page.locator('[data-testid="stSidebarNav"] a').evaluate_all("els => els.map(e => e.href)")
    return {urlparse(href).path.strip("/") for href in hrefs}


@pytest.mark.browser
@pytest.mark.parametrize("path", sorted(EVERY_PATH), ids=lambda p: p or "default")
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
    # Nothing is fetched from outside the app, the favicon included: an offline classroom sees the same page.
    assert not app.offsite, f"/{path} asked other machines for {app.offsite}"
    favicon = app.page.locator("link[rel='shortcut icon']").get_attribute("href")
    assert favicon.startswith("data:image/svg+xml"), f"/{path}: the favicon is {favicon[:80]}"
    assert sidebar_paths(app) == set(PAGES), f"/{path}: sidebar vs the page registry {sorted(PAGES)}"
