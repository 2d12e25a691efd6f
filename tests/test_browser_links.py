"""Links in a real browser: a link fills the widgets, a slider writes the URL, the URL reproduces the view.

Also what only a browser shows: lecture mode collapses the sidebar, hide= removes
controls, a click on the heatmap picks the cell, and the app runs in an iframe, without
its sidebar in embed mode.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from browser import charts_json
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from lnviz.views import links, pages

pytestmark = pytest.mark.browser


SIDEBAR_RIGHT = "() => document.querySelector('[data-testid=\"stSidebar\"]').getBoundingClientRect().right"


def slider_text(app, key: str) -> str:
    """The value a slider shows, read from the page."""
    return app.page.locator(f".st-key-{key} [data-testid='stSliderThumbValue']").inner_text()


def thumb(app, key: str):
    """A slider's thumb, what a mouse or a finger grabs: the box around the value it shows."""
    return app.page.locator(f".st-key-{key} [data-testid='stSliderThumbValue']").locator("xpath=..")


def query(app) -> dict[str, list[str]]:
    return parse_qs(urlparse(app.page.url).query)


def test_a_link_fills_the_widgets(app_server, open_app):
    app = open_app(f"{app_server}/?batch=8&features=12&gain=1.5&dist=heterogeneous+samples&seed=7")
    assert not app.exceptions() and not app.errors
    assert slider_text(app, "batch") == "8"
    assert slider_text(app, "features") == "12"
    assert slider_text(app, "gain") == "1.50"
    from lnviz.views.state import DIST

    assert DIST.meaning("heterogeneous samples") in app.page.locator('[data-testid="stSidebar"]').inner_text()
    assert app.page.locator(".st-key-seed input").input_value() == "7"


def test_moving_a_slider_writes_the_url_and_the_url_reproduces_the_view(app_server, open_app):
    app = open_app(f"{app_server}/?batch=6&features=10&seed=3&view=charts")
    before = charts_json(app.charts())
    app.page.locator(".st-key-gain input[type='range']").focus()
    for _ in range(4):
        app.page.keyboard.press("ArrowRight")
    app.page.wait_for_function("() => new URL(location.href).searchParams.has('gain')", timeout=30_000)
    app.settle()
    assert query(app)["gain"] == ["1.2"]
    after = charts_json(app.charts())
    assert after != before
    fresh = open_app(app.page.url)
    assert charts_json(fresh.charts()) == after
    assert not fresh.exceptions() and not fresh.errors


def test_lecture_mode_and_hidden_controls(app_server, open_app):
    root_size = "() => parseFloat(getComputedStyle(document.documentElement).fontSize)"
    normal = open_app(f"{app_server}/")
    assert normal.page.locator(".st-key-eps").count() == 1
    normal_sidebar, normal_root = normal.page.evaluate(SIDEBAR_RIGHT), normal.page.evaluate(root_size)
    normal.page.close()  # one tab at a time: a busy machine is slow enough with one
    present = open_app(f"{app_server}/?present=1&hide=eps,seed")
    assert not present.exceptions()
    assert present.page.evaluate(SIDEBAR_RIGHT) <= 0 < normal_sidebar
    assert present.page.locator(".st-key-eps").count() == 0 and present.page.locator(".st-key-seed").count() == 0
    assert present.page.locator(".st-key-batch").count() == 1
    assert present.page.evaluate(root_size) > normal_root  # the lecture stylesheet's larger type is in the page


def test_lecture_mode_shows_the_family_cube_on_the_first_screen_beside_its_controls(app_server, open_app):
    """At 1280 × 720 the cube stood under the title, the norms and the pickers: mostly below the fold, and small."""
    app = open_app(f"{app_server}/family?v={links.LINK_VERSION}&present=1", viewport={"width": 1280, "height": 720})
    scene = app.page.locator(".st-key-family_cube .gl-container > div").first.bounding_box()  # the 3-D scene
    norms = app.page.locator(".st-key-norm").bounding_box()
    assert scene["y"] + scene["height"] <= 720 and scene["height"] >= 380, scene
    assert norms["x"] + norms["width"] <= scene["x"] and norms["y"] < scene["y"] + scene["height"], (norms, scene)


def test_clicking_the_heatmap_picks_the_cell(app_server, open_app):
    app = open_app(f"{app_server}/?v={links.LINK_VERSION}&batch=8&features=8&view=charts")
    grid = app.page.locator(".st-key-grid_chart .nsewdrag").first
    box = grid.bounding_box()
    # The heatmap spans the subplot: 8 × 8 cells. Click the middle of cell (row 5, column 2). On a loaded machine
    # plotly may attach its click handler after the page has settled; a second click on the same cell is the same
    # pick, so the click is tried again rather than waited for once.
    picked = "() => new URL(location.href).searchParams.get('sample') === '5'"
    for attempt in range(3):
        app.page.mouse.click(box["x"] + box["width"] * 2.5 / 8, box["y"] + box["height"] * 5.5 / 8)
        try:
            app.page.wait_for_function(picked, timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    app.settle()
    assert query(app)["sample"] == ["5"] and query(app)["feature"] == ["2"]
    app.page.locator(".st-key-view button").filter(has_text=re.compile(r"^cell$")).click()  # the cell's formulas
    app.page.wait_for_function("() => new URL(location.href).searchParams.get('view') === null", timeout=30_000)
    app.settle()
    assert any("sample 5, feature 2" in h for h in app.page.locator("h3").all_inner_texts())


def test_a_reload_after_a_click_on_the_stage_reopens_the_same_view(app_server, open_app):
    """A click writes sample and feature into the address bar beside v: a reload opens today's view, that cell."""
    app = open_app(f"{app_server}/")
    assert query(app)["v"] == [str(links.LINK_VERSION)]  # the address bar carries the version from the start
    stage = ".st-key-live_stage"
    app.page.locator(f'{stage} .cell[data-block="x"][data-k="{2 * 12 + 5}"]').click()  # sample 2, feature 5
    app.page.wait_for_function("() => new URL(location.href).searchParams.get('feature') === '5'", timeout=30_000)
    app.settle()
    before = query(app)
    assert before["sample"] == ["2"] and before["v"] == [str(links.LINK_VERSION)]
    app.page.reload()
    app.settle()
    assert query(app) == before
    main = app.page.locator('[data-testid="stMain"]').inner_text()
    assert "earlier lnviz" not in main and "Cell (sample 2, feature 5)" in main  # today's cell view, that cell
    assert slider_text(app, "batch") == "8" and slider_text(app, "features") == "12"


def test_a_link_past_the_grid_leaves_the_clamped_cell_in_the_address_bar(app_server, open_app):
    """?sample=999 on an 8 × 12 grid is row 7: the widget, the address bar and so a reload all say 7."""
    app = open_app(f"{app_server}/?sample=999&feature=40")
    app.page.wait_for_function("() => new URL(location.href).searchParams.get('sample') === '7'", timeout=30_000)
    app.settle()
    assert query(app)["sample"] == ["7"] and query(app)["feature"] == ["11"]
    assert app.page.locator(".st-key-sample input").input_value() == "7"
    assert "Sample i: 999 is past the last of 8; using 7." in app.page.locator('[data-testid="stMain"]').inner_text()
    app.page.reload()
    app.settle()
    assert query(app)["sample"] == ["7"] and app.page.locator(".st-key-feature input").input_value() == "11"
    assert not app.exceptions() and not app.errors


def test_embed_mode_shows_the_view_without_the_sidebar_also_inside_an_iframe(app_server, open_app):
    url = f"{app_server}/?v={links.LINK_VERSION}&embed=true&batch=5"
    app = open_app(url)
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
        frame_page.set_content(f'<iframe id="slide" src="{url}" width="1200" height="900">')
        frame = frame_page.frame_locator("#slide")
        frame.get_by_text(badge).wait_for(timeout=60_000)
        assert frame.locator('[data-testid="stException"]').count() == 0
        # The embed stylesheet comes with the run: wait for it rather than catch the frame before it applies.
        frame.locator('[data-testid="stSidebar"]').wait_for(state="hidden", timeout=30_000)
    finally:
        frame_page.close()


def test_a_gain_move_reruns_only_the_fragment_below_the_input(app_server, browser_context):
    """γ lives in the explorer's fragment: its run ends as a fragment run, and the charts still follow it."""
    from browser import AppPage
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    finished: list[int] = []

    def on_frame(payload) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            if msg.WhichOneof("type") == "script_finished":
                finished.append(msg.script_finished)

    page = browser_context.new_page()
    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    app = AppPage(page).goto(f"{app_server}/?batch=6&features=10&view=charts")
    # A new visitor's first run draws the stage alone; the stage's report that it is drawn reruns the whole page
    assert finished == [ForwardMsg.FINISHED_SUCCESSFULLY] * 2
    before = charts_json(app.charts())
    finished.clear()
    page.locator(".st-key-gain input[type='range']").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => new URL(location.href).searchParams.has('gain')", timeout=30_000)
    app.settle()
    assert finished and set(finished) == {ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
    after = charts_json(app.charts())
    assert after[0] == before[0] and after[1:] != before[1:]  # x's grid unchanged; the outputs moved
    assert not app.exceptions() and not app.errors
    page.close()


# Markdown and HTML a visitor could put in a link: an image that logs every viewer's address, a
# phishing link, raw HTML, a Streamlit colour directive, LaTeX.
INJECTED = [
    "![x](http://evil.example/px.gif)",
    "[log in](http://evil.example/login)",
    "<img src=x onerror=alert(1)>",
    ":red[**boom**]",
    "$\\frac{1}{0}$",
]


@pytest.mark.parametrize("path", ["", "walkthrough", "coupling", "train_eval", "invariance", "sequences", "family"])
def test_link_values_are_shown_as_text_never_as_markup(path, app_server, open_app):
    page = pages.CONTROLS[path or "explorer"]
    payloads = {p.key: INJECTED[k % len(INJECTED)] for k, p in enumerate(page) if p.key != "device"}
    payloads |= {"preset": INJECTED[0], "hide": ",".join(INJECTED), "v": "2"}
    app = open_app(f"{app_server}/{path}?{urlencode(payloads)}")
    assert not app.exceptions(), app.exceptions()
    notes = app.page.locator('[data-testid="stAlertContainer"]')
    assert notes.count() >= 1
    html = " ".join(notes.evaluate_all("els => els.map(e => e.innerHTML)"))
    for tag in ("<img", "<a ", "<script", "<iframe", "katex"):
        assert tag not in html, (tag, html[:500])
    assert "](http://evil.ex" in " ".join(notes.all_inner_texts())  # shown as literal text, shortened
    main = app.page.locator('[data-testid="stMain"]')
    assert main.locator("img[src*='evil'], a[href*='evil']").count() == 0


def test_every_small_batch_is_one_mouse_drag_away_and_the_stage_says_what_stayed(app_server, open_app):
    """Issue 27: on a linear 1…1024 slider a 6 px drag moved B from 8 to 35. Drag the thumb left pixel by
    pixel and let go where it shows 4, then 3, then 2, each a drag of its own from where the last one let go:
    the page takes that B, and the stage says LN's rows stayed."""
    app = open_app(f"{app_server}/")
    before = 8
    for target in (4, 3, 2):
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


def test_a_version_3_link_keeps_its_draw_and_a_size_between_stops_its_stop_through_a_reload(app_server, open_app):
    """Values the page gave the widgets from code (the old draw, the nearest stop) are in the address bar."""
    app = open_app(f"{app_server}/?v=3&batch=5&features=7&seed=3&dist=heterogeneous+samples")
    assert query(app)["draw"] == ["whole"] and query(app)["v"] == [str(links.LINK_VERSION)]
    app.page.reload()
    app.settle()
    assert query(app)["draw"] == ["whole"] and query(app)["batch"] == ["5"]  # the old draw's numbers again
    assert "Draw = whole" not in app.page.locator('[data-testid="stMain"]').inner_text()  # today's link now
    app.goto(f"{app_server}/?batch=100")
    assert query(app)["batch"] == ["96"] and slider_text(app, "batch") == "96"
    assert "100 is not one of the slider's stops; using 96" in app.page.locator('[data-testid="stMain"]').inner_text()
