"""The registered pages and the paths that open them, as the browser tests take them.

The pages come from the page registry (lnviz/views/pages.py), so a new page is
covered as soon as it is registered. Each is loaded in headless Chromium by
tests/test_browser_a11y.py, in the one visit its accessibility checks look at:
no exception box, no JS error, its sidebar listing exactly the registry's pages.
"""

from __future__ import annotations

from conftest import ROOT

from lnviz.views.pages import PAGES as REGISTRY

# {URL path: page file}: each page once, at the path the navigation links to ("" for the default page).
PAGES = {"" if entry.default else entry.url_path: entry.file for entry in REGISTRY}
# Every path that opens a page, its aliases too (/explorer opens the explorer).
EVERY_PATH = {path: entry.file for entry in REGISTRY for path in entry.paths}


def test_every_page_file_exists():
    assert "" in PAGES and len(PAGES) >= 2, PAGES
    assert all((ROOT / source).is_file() for source in EVERY_PATH.values()), EVERY_PATH
