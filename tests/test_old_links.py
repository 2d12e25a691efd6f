"""Links made before a control was renamed still open the same view, and say what changed.

The state table lists each control's old names (``old_keys``); every one is
tried on its page: the widget under the new name gets the link's value, the
URL drops the old name, the share link carries the new one, and a
note names both.
"""

import pytest
from conftest import WIDGETS, assert_no_exception, run_page, share_link

from lnviz.views import links, pages

RENAMED = [(page, p, old) for page, controls in pages.CONTROLS.items() for p in controls for old in p.old_keys]


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
    assert ("explorer", "stage") in olds  # y or x̂, before "stage" meant the picture


def test_the_names_only_version_1_used_are_old_names_of_that_pages_controls():
    for page, names in links.VERSION_1_ONLY.items():
        olds = {old for p in pages.CONTROLS[page] for old in p.old_keys}
        keys = {p.key for p in pages.CONTROLS[page]}
        assert names <= olds and not names & keys, page


def test_a_link_without_v_is_of_version_1_exactly_when_it_names_a_control_renamed_before_v():
    """VERSION_1_ONLY comes from the registry: each control's old names with the version they were last used in."""
    before_v = [(page, old) for page, p, old in RENAMED if p.old_until == 1]
    assert {("explorer", "row"), ("family", "pos"), ("bench", "hidden")} <= set(before_v)
    for page, p, old in RENAMED:
        assert links.version(page, {old: ["1"]}) == (1 if p.old_until == 1 else links.LINK_VERSION), (page, old)


def _other_value(p):
    """A value the control ``p`` can take that is not its default."""
    if p.kind == "choice":
        return next(o for o in p.options if o != p.default)
    return p.lo + 1 if p.lo + 1 != p.default else p.lo + 2


@pytest.mark.parametrize("page, p, old", RENAMED, ids=[f"{page}-{old}" for page, _, old in RENAMED])
def test_an_old_name_in_a_link_sets_the_renamed_control(page, p, old):
    value = _other_value(p)
    if p.key == "output":  # drawn only where the details draw the outputs
        at = run_page(f"pages/{page}.py", {old: p.format(value), "view": "numbers"})
    else:
        at = run_page(f"pages/{page}.py", {old: p.format(value)})
    assert_no_exception(at)
    assert widget(at, p.key).value == value
    assert old not in at.query_params
    notes = " ".join(i.value for i in at.info)
    assert f"`{old}`" in notes and f"`{p.key}`" in notes
    share = share_link(at)
    assert f"{p.key}={p.format(value)}" in share and f"{old}=" not in share


@pytest.mark.parametrize("page", ["explorer", "walkthrough"])
def test_a_link_from_before_the_stage_keeps_its_16_by_32_grid(page):
    old = run_page(f"pages/{page}.py", {"row": "2"})  # row: a name only version 1 used
    assert_no_exception(old)
    assert (widget(old, "batch").value, widget(old, "features").value) == (16, 32)
    assert "earlier lnviz" in " ".join(i.value for i in old.info)
    share = share_link(old)
    assert "batch=16" in share and "features=32" in share and f"v={links.LINK_VERSION}" in share
    for today in ({}, {"gain": "2"}, {"sample": "2", "feature": "5"}):  # no v, only today's names: today's view
        fresh = run_page(f"pages/{page}.py", today)
        assert (widget(fresh, "batch").value, widget(fresh, "features").value) == (8, 12), today
        assert "earlier lnviz" not in " ".join(i.value for i in fresh.info), today


def test_a_links_version():
    assert links.version("explorer", {"v": ["2"]}) == 2
    assert links.version("explorer", {"col": ["2"]}) == 1  # no v, and a name only version 1 used
    assert links.version("sequences", {"steps": ["20"]}) == 1  # sequences' T was called steps then
    assert links.version("training", {"steps": ["20"]}) == links.LINK_VERSION  # the race's steps are today's
    for today in (
        {},
        {"present": ["1"]},
        {"gain": ["2"]},  # a hand-typed link, or one copied off the address bar before it carried v
        {"view": ["numbers"]},  # a control that no link before version 3 had
        {"preset": ["outlier-feature"], "feature": ["5"]},
        {"stage": ["x_hat"]},  # renamed while links carried v: read under its new name, not a sign of an old link
        {"v": [str(links.LINK_VERSION)]},
        {"v": ["99"]},
        {"v": ["two"]},
    ):
        assert links.version("explorer", today) == links.LINK_VERSION, today


def test_a_version_2_link_opens_the_explorers_charts_as_it_did():
    # Version 2 drew every chart under the stage; today the details show one view, the chosen cell's first.
    old = run_page("pages/explorer.py", {"v": "2", "gain": "2"})
    assert_no_exception(old)
    assert widget(old, "view").value == "charts" and len(old.get("plotly_chart")) == 2
    assert "Details = charts" in " ".join(i.value for i in old.info)
    share = share_link(old)
    assert "view=charts" in share and f"v={links.LINK_VERSION}" in share
    today = run_page("pages/explorer.py", {"gain": "2"})  # a link of today's version
    assert widget(today, "view").value == "cell" and "earlier lnviz" not in " ".join(i.value for i in today.info)
    # The walkthrough changed nothing in version 3, only the draw in version 4: its version-2 links say only that.
    walk = run_page("pages/walkthrough.py", {"v": "2", "step": "3"})
    assert "whose defaults it keeps: Draw = whole." in " ".join(i.value for i in walk.info)
