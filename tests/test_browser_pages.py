"""Every registered page, loaded in headless Chromium: no exception box, no JS error.

The pages come from app.py's ``st.Page(...)`` calls, so a new page is covered
as soon as it is registered; each page's sidebar, as the browser shows it,
must list exactly those pages. A screenshot of each page is kept in
artifacts/screenshots/ (git ignores it; CI keeps it as an artifact).
"""

from __future__ import annotations

import ast
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import ROOT

# The fixtures app_process, app_server, browser and open_app.
pytest_plugins = ("browser",)

SCREENSHOTS = ROOT / "artifacts" / "screenshots"


def registered_pages(app_file: Path = ROOT / "app.py") -> dict[str, str]:
    """``{url path: page file}`` for each ``st.Page`` in ``app_file``; the default page is "".

    Streamlit's rule where ``url_path`` is not given: the file's name without ".py".
    """
    pages = {}
    for node in ast.walk(ast.parse(app_file.read_text())):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page" and node.args):
            continue
        source = ast.literal_eval(node.args[0])
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg in ("url_path", "default")}
        path = "" if kwargs.get("default") else kwargs.get("url_path", Path(source).stem)
        pages[path] = source
    return pages


PAGES = registered_pages()


def test_registry_is_read():
    # The parse above is what covers new pages: it must find the default page and the labs.
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
    assert sidebar_paths(app) == set(PAGES), f"/{path}: sidebar vs app.py {sorted(PAGES)}"
