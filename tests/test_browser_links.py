"""Links in a real browser: a link fills the widgets, a slider writes the URL, the URL reproduces the view.

Also what only a browser shows: lecture mode collapses the sidebar, hide= removes
controls, a click on the heatmap picks the cell, and the app runs in an iframe, without
its sidebar in embed mode.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from browser import AppPage, charts_json
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.chromium import LAPTOP
from harness.tab import watch
from lnviz.views import links

pytestmark = pytest.mark.browser


# A laptop's screen, as the session's context now is (harness.chromium.VIEWPORT): its 1400 × 2400 before cost a
# load about half as much CPU again in Chromium for pixels nobody reads (the charts view: twice as much).
WINDOW = LAPTOP
SIDEBAR_RIGHT = "() => document.querySelector('[data-testid=\"stSidebar\"]').getBoundingClientRect().right"


def slider_text(app, key: str) -> str:
    """The value a slider shows, read from the page."""
    return app.page.locator(f".st-key-{key} [data-testid='stSliderThumbValue']").inner_text()


def thumb(app, key: str):
    """A slider's thumb, what a mouse or a finger grabs: the box around the value it shows."""
    return app.page.locator(f".st-key-{key} [data-testid='stSliderThumbValue']").locator("xpath=..")


def query(app) -> dict[str, list[str]]:
    return parse_qs(urlparse(app.page.url).query)


def test_every_small_batch_is_one_mouse_drag_away_and_lecture_mode_hides_the_sidebar_and_controls(app_server, open_app):
    """Issue 27: on a linear 1…1024 slider a 6 px drag moved B from 8 to 35. Drag the thumb left pixel by
    pixel and let go where it shows 4, then 3, then 2, each a drag of its own from where the last one let go:
    the page takes that B, and the stage says LN's rows stayed.

    Then lecture mode, against the same page as it was before the drags: the sidebar collapsed, the controls
    hide= names gone, the type larger."""
    root_size = "() => parseFloat(getComputedStyle(document.documentElement).fontSize)"
    app = open_app(f"{app_server}/", viewport=WINDOW)
    assert app.page.locator(".st-key-eps").count() == 1
    normal_sidebar, normal_root = app.page.evaluate(SIDEBAR_RIGHT), app.page.evaluate(root_size)
    before = 8
    for target in (4, 3, 2):
        thumb(app, "batch").scroll_into_view_if_needed()  # the sidebar may hold it below a laptop's fold
        box = thumb(app, "batch").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        app.page.mouse.move(x, y)
        app.page.mouse.down()
        for dx in range(1, 120):
            app.page.mouse.move(x - dx, y)
            if slider_text(app, "batch") == str(target):
                break
        app.page.mouse.up()
        app.page.wait_for_function(
            f"() => new URL(location.href).searchParams.get('batch') === '{target}'", timeout=30_000
        )
        app.settle()
        assert slider_text(app, "batch") == str(target)
        rows = "row 0" if target == 1 else f"rows 0–{target - 1}"
        kept = app.page.locator(".st-key-live_stage .kept")
        assert kept.inner_text() == f"B {before} → {target}: {rows} of x and of LN's output unchanged; BN's changed."
        assert kept.is_visible()
        before = target
    box = thumb(app, "batch").bounding_box()  # and 1024 is still one drag away
    app.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    app.page.mouse.down()
    app.page.mouse.move(box["x"] + 2000, box["y"] + box["height"] / 2, steps=5)
    app.page.mouse.up()
    app.page.wait_for_function("() => new URL(location.href).searchParams.get('batch') === '1024'", timeout=60_000)
    app.page.close()  # one tab at a time: a busy machine is slow enough with one

    present = open_app(f"{app_server}/?present=1&hide=eps,seed", viewport=WINDOW)
    assert not present.exceptions()
    assert present.page.evaluate(SIDEBAR_RIGHT) <= 0 < normal_sidebar
    assert present.page.locator(".st-key-eps").count() == 0 and present.page.locator(".st-key-seed").count() == 0
    assert present.page.locator(".st-key-batch").count() == 1
    assert present.page.evaluate(root_size) > normal_root  # the lecture stylesheet's larger type is in the page


def test_a_link_fills_the_widgets_a_move_writes_it_back_and_the_link_reproduces_the_view(
    app_server, browser_context, open_app
):
    """A link's round trip, in two page loads (five before, in four tests): the link fills the widgets; a move
    of γ reruns only the explorer's fragment below the input, and the charts follow; the moves write the
    address bar, whose link opens the same view in a new tab; and a click on its heatmap picks the cell."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from lnviz.views.state import DIST

    finished: list[int] = []

    def on_frame(payload) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            if msg.WhichOneof("type") == "script_finished":
                finished.append(msg.script_finished)

    page = browser_context.new_page()
    try:
        page.set_viewport_size(WINDOW)
        page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
        link = "/?batch=6&features=10&gain=1.5&dist=heterogeneous+samples&seed=3&view=charts"
        app = watch(AppPage(page)).goto(app_server + link)
        assert not app.exceptions() and not app.errors
        assert slider_text(app, "batch") == "6" and slider_text(app, "features") == "10"
        assert slider_text(app, "gain") == "1.50"
        assert DIST.meaning("heterogeneous samples") in page.locator('[data-testid="stSidebar"]').inner_text()
        assert page.locator(".st-key-seed input").input_value() == "3"
        # A new visitor's first run draws the stage alone; the stage's report that it is drawn reruns the whole page.
        assert finished == [ForwardMsg.FINISHED_SUCCESSFULLY] * 2

        # γ lives in the explorer's fragment: its run ends as a fragment run, and the charts still follow it.
        before = charts_json(app.charts())
        finished.clear()
        page.locator(".st-key-gain input[type='range']").focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => new URL(location.href).searchParams.get('gain') === '1.55'", timeout=30_000)
        app.settle()
        assert finished and set(finished) == {ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
        after = charts_json(app.charts())
        assert after[0] == before[0] and after[1:] != before[1:]  # x's grid unchanged; the outputs moved

        # Moving a slider writes the URL, and the URL reproduces the view.
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.wait_for_function("() => new URL(location.href).searchParams.get('gain') !== '1.55'", timeout=30_000)
        app.settle()
        assert query(app)["gain"] == ["1.7"]
        moved = charts_json(app.charts())
        assert moved != after
        assert not app.exceptions() and not app.errors
    finally:
        page.close()
    fresh = open_app(app.page.url, viewport=WINDOW)
    assert charts_json(fresh.charts()) == moved
    assert slider_text(fresh, "gain") == "1.70"
    assert not fresh.exceptions() and not fresh.errors

    # A click on the heatmap picks the cell.
    grid = fresh.page.locator(".st-key-grid_chart .nsewdrag").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    # The heatmap spans the subplot: 6 × 10 cells. Click the middle of cell (row 5, column 2). On a loaded machine
    # plotly may attach its click handler after the page has settled; a second click on the same cell is the same
    # pick, so the click is tried again rather than waited for once.
    picked = "() => new URL(location.href).searchParams.get('sample') === '5'"
    for attempt in range(3):
        fresh.page.mouse.click(box["x"] + box["width"] * 2.5 / 10, box["y"] + box["height"] * 5.5 / 6)
        try:
            fresh.page.wait_for_function(picked, timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    fresh.settle()
    assert query(fresh)["sample"] == ["5"] and query(fresh)["feature"] == ["2"]
    fresh.page.locator(".st-key-view button").filter(has_text=re.compile(r"^cell$")).click()  # the cell's formulas
    fresh.page.wait_for_function("() => new URL(location.href).searchParams.get('view') === null", timeout=30_000)
    fresh.settle()
    assert any("sample 5, feature 2" in h for h in fresh.page.locator("h3").all_inner_texts())


def test_lecture_mode_shows_the_family_cube_on_the_first_screen_beside_its_controls(app_server, open_app):
    """At 1280 × 720 the cube stood under the title, the norms and the pickers: mostly below the fold, and small."""
    app = open_app(f"{app_server}/family?v={links.LINK_VERSION}&present=1", viewport={"width": 1280, "height": 720})
    scene = app.page.locator(".st-key-family_cube .gl-container > div").first.bounding_box()  # the 3-D scene
    norms = app.page.locator(".st-key-norm").bounding_box()
    assert scene["y"] + scene["height"] <= 720 and scene["height"] >= 380, scene
    assert norms["x"] + norms["width"] <= scene["x"] and norms["y"] < scene["y"] + scene["height"], (norms, scene)


def test_embed_mode_shows_the_view_without_the_sidebar_also_inside_an_iframe(app_server, open_app):
    url = f"{app_server}/?v={links.LINK_VERSION}&embed=true&batch=5"
    app = open_app(url, viewport=WINDOW)
    assert not app.exceptions() and not app.errors
    badge = "x: 5 × 12"  # the link's batch size reached the view
    assert app.page.get_by_text(badge).count() == 1
    # The sidebar (controls, navigation, share box) and the button that would open it are gone: the view alone.
    for part in ("stSidebar", "stExpandSidebarButton"):
        assert not app.page.locator(f'[data-testid="{part}"]').is_visible(), part
    main_left = "() => document.querySelector('[data-testid=\"stMain\"]').getBoundingClientRect().left"
    assert app.page.evaluate(main_left) < 10
    frame_page = app.page.context.new_page()
    try:
        frame_page.set_viewport_size(WINDOW)
        frame_page.set_content(f'<iframe id="slide" src="{url}" width="1200" height="900">')
        frame = frame_page.frame_locator("#slide")
        frame.get_by_text(badge).wait_for(timeout=60_000)
        assert frame.locator('[data-testid="stException"]').count() == 0
        # The embed stylesheet comes with the run: wait for it rather than catch the frame before it applies.
        frame.locator('[data-testid="stSidebar"]').wait_for(state="hidden", timeout=30_000)
    finally:
        frame_page.close()


def test_a_link_from_every_version_opens_its_view_with_its_notes_and_a_reload_reopens_it(app_server, open_app):
    """A link is read at the door (server.door), which answers with today's link: a link of version 3 (its old draw), of
    version 2 (its charts, and a value between two stops and a cell past the grid) and of version 1 (old names,
    counted from 0) each open their view with their notes, and the address bar says that view, without the notes
    (``note=`` read and removed). What the page then writes there too (a cell clicked on the stage) is in it, beside
    v: a reload opens that view, in today's link, without the notes."""
    app = open_app(f"{app_server}/?v=3&batch=5&features=7&seed=3&dist=heterogeneous+samples", viewport=WINDOW)
    redirected: list[str] = []  # the door's answers from here on: a page's HTML, sent on to today's link
    app.page.on("response", lambda r: redirected.append(r.url) if r.status == 302 else None)
    assert query(app)["draw"] == ["whole"] and query(app)["v"] == [str(links.LINK_VERSION)]
    assert "note" not in query(app)  # read, and gone from the address bar
    assert "whose defaults it keeps: Draw = whole." in app.page.locator('[data-testid="stMain"]').inner_text()
    stage = ".st-key-live_stage"
    app.page.locator(f'{stage} .cell[data-block="x"][data-k="{2 * 7 + 5}"]').click()  # sample 2, feature 5
    app.page.wait_for_function("() => new URL(location.href).searchParams.get('feature') === '5'", timeout=30_000)
    app.settle()
    before = query(app)
    assert before["sample"] == ["2"] and before["draw"] == ["whole"] and before["batch"] == ["5"]
    app.page.reload()
    app.settle()
    assert query(app) == before  # the old draw's numbers again, and the cell
    main = app.page.locator('[data-testid="stMain"]').inner_text()
    assert "Draw = whole" not in main and "earlier lnviz" not in main  # today's link now
    assert "Cell (sample 2, feature 5)" in main  # today's cell view, that cell
    assert slider_text(app, "batch") == "5" and slider_text(app, "features") == "7"

    # A version-2 link: its charts and its draw. ?batch=100 is between stops, and ?sample=999 past the grid of
    # 96 × 12: 96 and row 95, through a reload.
    v2 = f"{app_server}/?v=2&batch=100&sample=999&feature=40"
    app.goto(v2)
    app.page.wait_for_function("() => new URL(location.href).searchParams.get('sample') === '95'", timeout=30_000)
    app.settle()
    assert query(app)["v"] == [str(links.LINK_VERSION)]  # the address bar carries the version from the start
    assert query(app)["batch"] == ["96"] and slider_text(app, "batch") == "96"
    assert query(app)["sample"] == ["95"] and query(app)["feature"] == ["11"]
    assert query(app)["view"] == ["charts"] and query(app)["draw"] == ["whole"] and "note" not in query(app)
    assert app.page.locator(".st-key-sample input").input_value() == "95"
    assert len(app.charts()) == 2  # version 2's charts
    main = app.page.locator('[data-testid="stMain"]').inner_text()
    assert "100 is not one of the slider's stops; using 96" in main
    assert "Sample i: 999 is past the last of 96; using 95." in main
    assert "whose defaults it keeps: Draw = whole, Details = charts." in main
    assert redirected == [v2]  # read at the door, once
    app.page.reload()
    app.settle()
    assert redirected == [v2]  # today's link passes the door
    assert query(app)["batch"] == ["96"] and slider_text(app, "batch") == "96"
    assert query(app)["sample"] == ["95"] and app.page.locator(".st-key-feature input").input_value() == "11"
    assert "adjusted" not in app.page.locator('[data-testid="stMain"]').inner_text()  # the notes were read once
    assert not app.exceptions() and not app.errors

    # A version-1 link (no v; row and col were sample's and feature's names), on the walkthrough: its 16 × 32
    # grid, its γ = 1 and β = 0, its old draw, and its step counted from 0.
    v1 = f"{app_server}/walkthrough?row=2&col=5&step=3"
    app.goto(v1)
    app.page.wait_for_function("() => new URL(location.href).searchParams.get('sample') === '2'", timeout=30_000)
    app.settle()
    assert {k: query(app)[k] for k in ("sample", "feature", "step", "batch", "features", "gain", "bias", "draw")} == {
        "sample": ["2"],
        "feature": ["5"],
        "step": ["4"],
        "batch": ["16"],
        "features": ["32"],
        "gain": ["1"],
        "bias": ["0"],
        "draw": ["whole"],
    }
    assert "row" not in query(app) and "note" not in query(app)
    assert slider_text(app, "batch") == "16" and slider_text(app, "step") == "4" and slider_text(app, "gain") == "1.00"
    assert app.page.locator(".st-key-feature input").input_value() == "5"
    main = app.page.locator('[data-testid="stMain"]').inner_text()
    assert "Sample i: this link calls it row, now sample; using 2." in main  # a code span's text, without its fence
    assert "Step: this link counts from 0, as lnviz did before; its 3 is 4." in main
    assert "whose defaults it keeps: Draw = whole, Batch size B = 16, Features H = 32, Gain γ = 1, Bias β = 0." in main
    assert redirected == [v2, v1]
    assert not app.exceptions() and not app.errors
