"""``make bench``'s server-side rerun table (benchmarks/pages.py) measures each page at its largest batch and
features: the explorer's B and H are select sliders over a ladder of sizes (issue 27), and the 2026-12-06 run
found no largest size for them until the table read those too."""

from __future__ import annotations

from conftest import run_page

from benchmarks import pages
from lnviz.views import state


def test_the_largest_sizes_are_found_on_the_explorer_and_the_walkthrough():
    want = {"batch": state.BATCH.hi, "features": state.FEATURES.hi}
    assert want == {"batch": 1024, "features": 1024}  # issue 6's B = H = 1024 target
    for page in ("pages/explorer.py", "pages/walkthrough.py"):
        assert pages.size_limits(run_page(page)) == want, page
