"""On every page, the share link carries every control the page drew, with its value, and nothing else."""

from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import WIDGETS, assert_no_exception, run_page, share_link

from lnviz.views import links, pages
from lnviz.views.param import Param
from ui.kit.page import SHARE_LABEL


def other_value(p: Param):
    """A valid value that is not the default."""
    if p.kind == "bool":
        return not p.default
    if p.kind == "choice":
        return next(o for o in p.options if o != p.default)
    if p.kind == "text":
        return p.default + " Another one."
    step = p.step or 1
    value = p.lo + step if p.lo + step != p.default else p.lo + 2 * step
    return type(p.default)(min(value, p.hi))


def drawn_widgets(at, keys) -> dict:
    return {w.key: w.value for kind in WIDGETS for w in at.get(kind) if getattr(w, "key", None) in keys}


@pytest.mark.parametrize("page", pages.CONTROLS)
def test_the_share_link_is_exactly_the_drawn_controls(page):
    table = pages.CONTROLS[page]
    link = {p.key: p.format(other_value(p)) for p in table if p.key != "device"} | {"v": str(links.LINK_VERSION)}
    at = run_page(f"pages/{page}.py", link)
    assert_no_exception(at)
    drawn = drawn_widgets(at, set(table.keys()))
    shared = {k: v[-1] for k, v in parse_qs(urlsplit(share_link(at)).query).items()}
    assert shared.pop("v") == str(links.LINK_VERSION)  # every link says which state table it was made with
    assert set(shared) <= set(drawn), set(shared) - set(drawn)  # nothing that isn't on the page
    for key, value in drawn.items():
        p = table[key]
        if value != p.default:
            assert shared.get(key) == p.format(value), key  # everything that is, with its value
        else:
            assert key not in shared, key
    assert len(drawn) >= len(table) - 2, set(table.keys()) - set(drawn)  # the page did draw its controls


@pytest.mark.parametrize("page", pages.CONTROLS)
def test_the_share_box_draws_its_link_only_once_opened_and_keeps_it_while_open(page):
    """A closed box sends no ``st.code``, whose highlighter a browser would load and run on every visit; opening
    it reruns the page with the link in it."""
    at = run_page(f"pages/{page}.py", {"v": str(links.LINK_VERSION)})
    assert_no_exception(at)
    (box,) = [e for e in at.sidebar.expander if e.label == SHARE_LABEL]
    assert not box.code and not at.sidebar.code
    link = share_link(at)  # opens the box
    assert parse_qs(urlsplit(link).query)["v"] == [str(links.LINK_VERSION)]
    at.run()  # an open box stays open, with its link, through the page's next runs
    assert [c.value for c in at.sidebar.code] == [link]
