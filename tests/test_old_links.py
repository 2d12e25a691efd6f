"""Links made before a control was renamed still open the same view, and say what changed.

The state table lists each control's old names (``old_keys``); every one is
tried on its page: the widget under the new name gets the link's value, the
URL drops the old name, the share link carries the new one, and a
note names both.
"""

import pytest
from conftest import assert_no_exception, run_page

from lnviz import state

RENAMED = [(page, p, old) for page, controls in state.PAGES.items() for p in controls for old in p.old_keys]
WIDGETS = ("slider", "number_input", "select_slider", "selectbox", "radio", "toggle")


def widget(at, key):
    for kind in WIDGETS:
        for w in at.get(kind):
            if getattr(w, "key", None) == key:
                return w
    raise AssertionError(f"no widget {key!r}")


def test_every_renamed_control_is_listed():
    olds = {(page, old) for page, _, old in RENAMED}
    assert {("explorer", "row"), ("explorer", "col"), ("walkthrough", "row"), ("sequences", "steps")} <= olds
    assert {("family", "n"), ("family", "c"), ("family", "pos"), ("bench", "rows"), ("bench", "hidden")} <= olds


@pytest.mark.parametrize("page, p, old", RENAMED, ids=[f"{page}-{old}" for page, _, old in RENAMED])
def test_an_old_name_in_a_link_sets_the_renamed_control(page, p, old):
    value = p.lo + 1 if p.lo + 1 != p.default else p.lo + 2
    at = run_page(f"pages/{page}.py", {old: str(value)}, current=False)
    assert_no_exception(at)
    assert widget(at, p.key).value == value
    assert old not in at.query_params
    share = [c.value for c in at.code if "?" in c.value]
    assert len(share) == 1 and f"{p.key}={value}" in share[0] and f"{old}=" not in share[0]
    notes = " ".join(i.value for i in at.info)
    assert f"`{old}`" in notes and f"`{p.key}`" in notes


@pytest.mark.parametrize("page", ["explorer", "walkthrough"])
def test_a_link_from_before_the_stage_keeps_its_16_by_32_grid(page):
    old = run_page(f"pages/{page}.py", {"gain": "2"}, current=False)
    assert_no_exception(old)
    assert (widget(old, "batch").value, widget(old, "features").value) == (16, 32)
    assert "earlier lnviz" in " ".join(i.value for i in old.info)
    share = [c.value for c in old.code if "?" in c.value][0]
    assert "batch=16" in share and "features=32" in share and "v=2" in share
    fresh = run_page(f"pages/{page}.py")  # a visit with no controls in its link: today's defaults
    assert (widget(fresh, "batch").value, widget(fresh, "features").value) == (8, 12)
