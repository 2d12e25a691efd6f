"""What every page does, checked once for all of them through the router (AppTest).

Each page's own tests check its numbers and controls; these check what the
page kit promises on every page: it runs at its defaults, its share box says
which state table the link belongs to, every chart has a text alternative and
its data as a table (built only once opened), and in lecture mode every
chart's text grows with the page's type, every tick label to the lecture size.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import assert_no_exception, figures, run_page, share_link

from lnviz.figures import reader, theme
from lnviz.views import links, pages

PAGES = [entry.name for entry in pages.PAGES]
# Every view with charts: each page at its defaults, and the explorer's details that draw charts (its default
# view, the chosen cell, draws none). The walkthrough draws the stage, no chart (tests/test_browser_walkthrough.py).
# The class page draws its one chart only after a reveal, which no link can make: tests/test_classroom_page.py.
VIEWS = [(page, {}) for page in PAGES if page not in ("explorer", "class", "walkthrough")] + [
    ("explorer", {"view": "charts"}),
    ("explorer", {"view": "distributions"}),
]
VIEW_IDS = [page + "".join(f"-{v}" for v in query.values()) for page, query in VIEWS]
DATA = ("x", "y", "z", "customdata")


DATA_LABEL = "Data of this chart"


def chart_specs(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def data_boxes(at) -> list:
    return [e for e in at.expander if e.label == DATA_LABEL]


def chart_keys(at) -> list[str]:
    """Each chart's key, from its element id ("$$ID-<hash>-<key>")."""
    return [el.proto.id.split("-", 2)[2] for el in at.get("plotly_chart")]


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_at_its_defaults_with_a_versioned_share_link(page):
    at = run_page(pages.BY_NAME[page].file)
    assert_no_exception(at)
    assert at.title[0].value == pages.BY_NAME[page].heading  # the registry's heading, found from the page's file
    assert at.get("plotly_chart") or at.get("arrow_data_frame") or at.get("bidi_component")
    assert f"v={links.LINK_VERSION}" in share_link(at)
    # The address bar carries the version too, so a reload or a copied URL is read as today's link.
    assert at.query_params["v"] == str(links.LINK_VERSION)


def test_a_script_the_registry_lacks_is_a_plain_error(tmp_path):
    from ui.kit.page import Page

    with pytest.raises(LookupError, match="is not a page of"):
        Page.start(file=str(tmp_path / "pages" / "nowhere.py"))


@pytest.mark.parametrize("page, query", VIEWS, ids=VIEW_IDS)
def test_every_chart_has_a_text_alternative(page, query):
    at = run_page(pages.BY_NAME[page].file, query)
    alts = [el.proto.alt for el in at.get("plotly_chart")]
    assert alts and all(len(alt) > 20 for alt in alts), alts


@pytest.mark.parametrize("page, query", VIEWS, ids=VIEW_IDS)
def test_every_chart_has_its_data_as_a_table_built_only_when_opened(page, query):
    at = run_page(pages.BY_NAME[page].file, query)
    keys = chart_keys(at)
    assert keys, "no chart drawn"
    assert [box.key for box in data_boxes(at)] == [f"{key}_data" for key in keys]
    assert not any(box.dataframe for box in data_boxes(at))  # closed: nothing built, nothing sent
    for key in keys:
        at.session_state[f"{key}_data"] = True
    at.run()
    assert_no_exception(at)
    opened = {box.key: box for box in data_boxes(at)}
    for key, el, fig in zip(chart_keys(at), at.get("plotly_chart"), figures(at), strict=True):
        box = opened[f"{key}_data"]
        assert box.caption[0].value == el.proto.alt
        pd.testing.assert_frame_equal(box.dataframe[0].value, reader.table(fig), check_dtype=False)


GL3D = ("scatter3d", "surface", "mesh3d", "cone", "streamtube", "isosurface", "volume")  # plotly's 3D traces


def tick_sizes(spec: dict) -> dict[str, float | None]:
    """The font size each of a chart's tick labels is given: every axis a trace is drawn on or the layout has, and
    every colour bar (a trace's, a shared colour axis's), by name. None where the figure leaves it unset: then
    Streamlit's chart theme (a 2D axis's ticks) or plotly's inheritance sizes it, not the figure's own rule."""
    layout, sizes = spec["layout"], {}
    axes = {k for k in layout if re.fullmatch(r"[xy]axis\d*", k)}
    for trace in spec["data"]:
        if trace.get("type", "scatter") in GL3D:  # drawn in a 3D scene, on its three axes
            scene = layout.get(trace.get("scene", "scene"), {})
            for a in ("xaxis", "yaxis", "zaxis"):
                sizes[f"{trace.get('scene', 'scene')}.{a}"] = scene.get(a, {}).get("tickfont", {}).get("size")
        elif trace.get("type", "scatter") not in ("pie", "table", "sankey"):
            axes |= {a[0] + "axis" + a[1:] for a in (trace.get("xaxis", "x"), trace.get("yaxis", "y"))}
        if "colorbar" in trace:
            sizes[f"colorbar of {trace.get('name') or trace.get('type')}"] = (
                trace["colorbar"].get("tickfont", {}).get("size")
            )
    for name in axes:
        sizes[name] = layout.get(name, {}).get("tickfont", {}).get("size")
    for name, axis in layout.items():
        if re.fullmatch(r"coloraxis\d*", name) and "colorbar" in axis:
            sizes[f"colorbar of {name}"] = axis["colorbar"].get("tickfont", {}).get("size")
    return sizes


@pytest.mark.parametrize("page, query", VIEWS, ids=VIEW_IDS)
def test_lecture_mode_grows_every_charts_text_and_keeps_its_data(page, query):
    normal, lecture = (
        run_page(pages.BY_NAME[page].file, query),
        run_page(pages.BY_NAME[page].file, {"present": "1", **query}),
    )
    assert_no_exception(lecture)
    assert data_boxes(normal) and not data_boxes(lecture)  # the lecturer's screen has no tables
    big = round(theme.FONT_SIZE * theme.LECTURE_SCALE, 1)
    for before, after in zip(chart_specs(normal), chart_specs(lecture), strict=True):
        assert before["layout"]["font"]["size"] == theme.FONT_SIZE
        assert after["layout"]["font"]["size"] == big
        # Every tick label at the lecture size, set on the figure where Streamlit's theme would win otherwise
        # (tests/test_browser_a11y.py checks in Chromium that the size set is the size drawn).
        ticks = tick_sizes(after)
        assert ticks and all(s is not None and s >= big - 0.5 for s in ticks.values()), ticks
        if page != "bench":  # the bench's timings differ from run to run
            for old, new in zip(before["data"], after["data"], strict=True):
                assert {k: old.get(k) for k in DATA} == {k: new.get(k) for k in DATA}


def test_every_page_file_is_in_the_registry_and_pages_are_listed_from_it_alone():
    """One registry: every script in pages/ has its entry, and nothing lists pages by reading app.py or pages/."""
    from conftest import ROOT

    assert sorted(p.stem for p in (ROOT / "pages").glob("*.py")) == sorted(e.name for e in pages.PAGES)
    here = Path(__file__).resolve()
    for folder in ("tests", "benchmarks", "harness"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            if path == here:
                continue
            for old_way in ("st\\.Page", "def registered_pages"):
                assert old_way not in text, (path, old_way)


def test_every_page_is_served_at_its_file_name_so_a_fresh_servers_first_link_finds_it():
    # A fresh server runs its first session in Streamlit's legacy pages/ folder mode, where a page's path is its
    # file name; ui.kit.boot.router switches that off and reruns, but a path the folder mode didn't know was already
    # "Page not found" and the default page (seen: /class while the file was classroom.py).
    for entry in pages.PAGES:
        assert entry.name in entry.paths or (entry.default and entry.name in entry.aliases), entry
