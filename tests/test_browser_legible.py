"""The stage legible at every width (issue 46), and B's and H's steppers on it, in headless Chromium.

The sweep: on the explorer (``/``) and the walkthrough (``/walkthrough``, at its last step, where every statistic
is lit), on a screen and in lecture mode (``?present=1``), one page load each, resized in place through the screens
people have, phones to a 2,560 px monitor, with Streamlit's sidebar closed, then open where it docks beside the
page. A browser's zoom (90 to 125 %) only changes the viewport's width in CSS pixels, so the widths swept stand for
the zoomed screens too (1,518 px is a 1,366 px laptop at 90 %, 1,093 px the same at 125 %). At each size, every cell
drawn of x, LN's and BN's outputs carries its number (the text its canvas painted, view/paint.js), at 12 px or more
(20 in lecture mode) and no wider than its cell; so does every μ and σ drawn; the column heads are as large; and no
cell lies outside the viewport or under a docked sidebar. A wide stage draws both norms and no toggle (on a laptop
with the sidebar closed, every cell of the window); a narrow one draws one norm and the toggle to the other. The
walkthrough's formula is typeset whole in its box, on the screen, its widest step's too (in lecture mode above the
foot, where the step's words leave it room); Back and Next keep their words, uncut. In lecture mode nothing of the
stage's grid (its blocks' titles, x, LN's and BN's outputs, their μ and σ) lies below the screen's foot: where its
rows don't fit they are fewer, and BN's title says so; at 1280 × 720 with the sidebar closed all 8 are drawn. B's
and H's steppers are pressed on two of the sweep's pages (the projector's explorer, the walkthrough on a laptop).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from browser import AppPage
from playwright.sync_api import Browser, expect

from harness.chromium import LAPTOP, PHONE, local_context
from harness.settle import STAGE_ROOT_JS
from lnviz.views import links, state

pytestmark = pytest.mark.browser

STAGE = ".st-key-live_stage"
# (width, height): phones, a tablet, laptops, monitors, a projector, and laptops zoomed to 90 % and 125 %.
SCREENS = [
    (360, 640), (390, 844), (412, 915), (768, 1024), (1024, 768), (1093, 614), (1280, 720), (1280, 800),
    (1366, 768), (1440, 900), (1518, 853), (1536, 864), (1920, 1080), (2560, 1440),
]  # fmt: skip
# Streamlit docks its sidebar beside the page from 769 px; narrower, it covers the page while open, as a menu does.
# With it open, the screens where it takes the most of the stage's width, and the largest.
OPEN = [(2560, 1440), (1920, 1080), (1536, 864), (1366, 768), (1280, 720), (1024, 768)]
PROJECTOR = {"width": 1280, "height": 720}

# Where the page is: the sidebar's right edge while it is docked and open (0 when closed), and the stage's
# canvases against their boxes (a stage laid out for an older width has canvases of the older size), fresh only
# once no CSS transition runs (on a loaded machine the sidebar's slide could read the same three looks running).
WHERE_JS = f"""() => {{
    const side = document.querySelector('[data-testid="stSidebar"]')?.getBoundingClientRect();
    const root = {STAGE_ROOT_JS}?.querySelector('.stage');
    const canvases = Array.from(root?.querySelectorAll('canvas.paint') ?? [], (c) => {{
        const b = c.getBoundingClientRect();
        return [c.width, Math.round(b.width * devicePixelRatio), c.height, Math.round(b.height * devicePixelRatio)];
    }});
    // A transition still running (the sidebar sliding in, the page's width following it) is a layout on its way.
    const moving = document.getAnimations().filter((a) => a instanceof CSSTransition && a.playState === 'running');
    return {{
        side: side && side.width > 0 ? side.right : 0, width: root?.clientWidth ?? 0,
        fresh: canvases.every(([w, bw, h, bh]) => w === bw && h === bh) && moving.length === 0,
        canvases: JSON.stringify(canvases),
    }};
}}"""

# Every cell drawn of x, LN's and BN's outputs with the text its canvas painted and that text's width in the
# canvas's font; every μ and σ drawn, not veiled by a step (its number is yet to come), with its text, font size
# and whether that text overflows it; every column head with text, with its font size.
DRAWN_JS = f"""() => {{
    const root = {STAGE_ROOT_JS}.querySelector('.stage');
    const measure = document.createElement('canvas').getContext('2d');
    const box = (e) => {{ const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }};
    const drawn = (e) => {{ const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; }};
    const cells = [];
    for (const canvas of root.querySelectorAll('canvas.paint')) {{
        if (!drawn(canvas)) continue;
        const {{ font, texts }} = canvas.painted;
        measure.font = font;
        const name = ['x', 'ln', 'bn'][Array.from(root.querySelectorAll('canvas.paint')).indexOf(canvas)];
        for (const c of root.querySelectorAll(`.cell[data-block="${{name}}"]`)) {{
            if (!drawn(c)) continue;
            const text = texts[+c.dataset.k];
            cells.push({{ block: name, k: +c.dataset.k, text, font: parseFloat(font), nan: c.classList.contains('nan'),
                          width: measure.measureText(text).width, box: box(c) }});
        }}
    }}
    const stats = Array.from(root.querySelectorAll('.stat'), (e) => drawn(e) && !e.classList.contains('veiled') && {{
        block: e.dataset.block, text: e.textContent, font: parseFloat(getComputedStyle(e).fontSize),
        // Cut: wider than its box, or a box shorter than its font's em (the glyphs' ascent and descent may overhang)
        over: e.scrollWidth > e.clientWidth || e.clientHeight < parseFloat(getComputedStyle(e).fontSize), box: box(e),
    }}).filter(Boolean);
    const heads = Array.from(root.querySelectorAll('.head:not(.row):not(.sym)'), (e) => drawn(e) && e.textContent && {{
        text: e.textContent, font: parseFloat(getComputedStyle(e).fontSize),
    }}).filter(Boolean);
    const titles = Array.from(root.querySelectorAll('.title'), (e) => drawn(e) && {{ text: e.innerText, box: box(e) }});
    // The samples of x's cells drawn (their labels say "sample i, feature j"), and how many rows the window has.
    const samples = new Set(Array.from(root.querySelectorAll('.cell[data-block="x"]'))
        .filter(drawn).map((c) => +c.getAttribute('aria-label').match(/sample ([0-9]+)/)[1]));
    // A narrow stage shows one norm and the toggle between them; a wide one both, every cell of the window.
    const fine = root.querySelector('.fine-note');
    return {{ cells, stats, heads, titles: titles.filter(Boolean), numbers: root.classList.contains('numbers'),
              toggle: Array.from(root.querySelectorAll('.norms button')).some(drawn), fine: !!fine && drawn(fine),
              xCells: root.querySelectorAll('.cell[data-block="x"]').length,
              wide: root.classList.contains('wide'), rows: [...samples].sort((a, b) => a - b),
              window: root.querySelectorAll('.head.row[data-block="row-x"]').length,
              // The walkthrough's formula (KaTeX) on the stage: its box, whether its lines are wider than it, and on
              // a wide stage whether the step's words above it in the corner leave it room at 12 px.
              formula: ((f) => f && !f.hidden && f.querySelector('.katex') && {{
                  box: box(f), cut: f.scrollWidth > f.clientWidth, widths: [f.scrollWidth, f.clientWidth],
                  room: root.querySelector('.controls').getBoundingClientRect().bottom - f.getBoundingClientRect().top
                      >= f.offsetHeight * 12 / parseFloat(getComputedStyle(f.querySelector('.katex')).fontSize),
              }})(root.querySelector('.formula')),
              // The walkthrough's Back and Next: each one's words, and whether Streamlit cut them with an ellipsis.
              buttons: Array.from(document.querySelectorAll('.st-key-back button, .st-key-next button'), (b) => {{
                  const words = b.querySelector('[data-testid="stMarkdownContainer"]');
                  return {{ text: words.innerText, cut: words.scrollWidth > words.clientWidth, box: box(b) }};
              }}),
              foot: innerHeight }};
}}"""

NUMBER = re.compile(r"\u2212?(\d+(\.\d+)?(e[+-]\d+)?|\u221e)")  # what model.js short writes


@pytest.fixture
def load(browser: Browser, app_server: str) -> Iterator[Callable[..., AppPage]]:
    """``load(path, present, viewport)``: the page in a context of its own, settled, its stage drawn."""
    contexts = []

    def _open(path: str, present: bool, viewport: dict[str, int]) -> AppPage:
        context = local_context(browser, viewport=viewport)
        contexts.append(context)
        app = AppPage(context.new_page())
        app.page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
        sep = "&" if "?" in path else "?"
        app.goto(f"{app_server}{path}{sep}v={links.LINK_VERSION}{'&present=1' if present else ''}")
        app.page.wait_for_function(f"() => {STAGE_ROOT_JS}?.querySelector('.stage .cell')", timeout=30_000)
        app.settle()
        return app

    yield _open
    for context in contexts:
        context.close()


def _sidebar(app: AppPage, open_: bool) -> None:
    """Open or close Streamlit's sidebar, as a lecturer does to change B."""
    button = "stExpandSidebarButton" if open_ else "stSidebarCollapseButton"
    app.page.locator(f'[data-testid="{button}"]').first.click()


def _laid_out(app: AppPage) -> dict:
    """Wait until the page and its stage are laid out for the viewport: the sidebar, the stage's width and its
    canvases the same over three looks 50 ms apart, the canvases painted for their boxes."""
    seen = []
    for _ in range(120):
        where = app.page.evaluate(WHERE_JS)
        seen.append(where)
        if len(seen) >= 3 and where["fresh"] and seen[-1] == seen[-2] == seen[-3]:
            return where
        app.page.wait_for_timeout(50)
    raise AssertionError(f"the stage did not settle at {app.page.viewport_size}: {seen[-3:]}")


def _assert_legible(app: AppPage, present: bool, screen: str, side: float, walk: bool) -> None:
    least = 20 if present else 12
    width = app.page.viewport_size["width"]
    got = app.page.evaluate(DRAWN_JS)
    where = f"{screen}, lecture {present}, sidebar {side}"
    assert got["numbers"], where
    blocks = {c["block"] for c in got["cells"]}
    if got["wide"]:  # both norms beside x, no toggle between them, no note on a finger's fine drag
        assert blocks == {"x", "ln", "bn"} and not got["toggle"] and not got["fine"], (where, blocks, got["toggle"])
    else:  # one norm under x, the toggle to the other
        assert len(blocks) == 2 and "x" in blocks and got["toggle"], (where, blocks, got["toggle"])
    if got["wide"] and not present and width >= 1440 and not side:  # a laptop's stage: every cell of the window
        drawn = {b: sum(c["block"] == b for c in got["cells"]) for b in blocks}
        assert set(drawn.values()) == {got["xCells"]}, (where, drawn, got["xCells"])
    for c in got["cells"]:
        what = f"{where}: {c['block']}[{c['k']}] {c['text']!r}"
        assert NUMBER.fullmatch(c["text"]) or c["nan"], what  # a number, never colour alone
        assert c["font"] >= least, f"{what} at {c['font']} px"
        left, _, right, _ = c["box"]
        assert c["width"] <= right - left, f"{what}: {c['width']:.1f} px in a cell {right - left:.1f} px wide"
        assert left >= side - 0.5 and right <= width + 0.5, f"{what} at {c['box']}, the viewport {width} px"
    stats = {s["block"] for s in got["stats"]}
    if got["wide"]:
        assert {"ln-mu", "ln-sd", "bn-mu", "bn-sd"} <= stats, (where, stats)
    else:
        assert {"ln-mu", "ln-sd"} <= stats or {"bn-mu", "bn-sd"} <= stats, (where, stats)
    for s in got["stats"]:
        what = f"{where}: {s['block']} {s['text']!r}"
        assert NUMBER.fullmatch(s["text"]) and not s["over"], what
        assert s["font"] >= least, f"{what} at {s['font']} px"
        assert s["box"][0] >= side - 0.5 and s["box"][2] <= width + 0.5, f"{what} at {s['box']}"
    assert got["heads"] and all(h["font"] >= least for h in got["heads"]), (where, got["heads"][:3])
    if present and got["wide"]:
        _assert_on_screen(got, where, every_row=screen == "1280 × 720" and not side)
    if walk:  # the formula whole, on the screen; Back and Next keep their words
        _assert_formula(got, where, side, width, present)
        assert [b["text"] for b in got["buttons"]] == ["Back", "Next"], (where, got["buttons"])
        for b in got["buttons"]:
            assert not b["cut"] and b["box"][0] >= side - 0.5 and b["box"][2] <= width + 0.5, (where, b)


def _assert_formula(got: dict, where: str, side: float, width: int, present: bool) -> None:
    """The walkthrough's formula typeset whole in its box, none of it scrolled out of sight sideways, and the box on
    the screen beside the sidebar; in lecture mode on a wide stage, above the screen's foot too, wherever the step's
    words above it in the stage's corner leave it room at 12 px (step 12's fill the corner at 1024 × 768 with the
    sidebar open)."""
    formula = got["formula"]
    assert formula and not formula["cut"], (where, formula)
    left, top, right, bottom = formula["box"]
    assert left >= side - 0.5 and right <= width + 0.5, (where, formula)
    if present and got["wide"] and formula["room"]:
        assert top >= 0 and bottom <= got["foot"] + 0.5, (where, formula)


def _assert_on_screen(got: dict, where: str, every_row: bool) -> None:
    """Lecture mode: the grid's titles, cells and statistics between the screen's top and its foot; where not all
    of the window's rows are drawn, x's title says which and BN's how many of the samples its μ and σ are over.
    ``every_row``: the projector with the sidebar closed draws all of them."""
    foot = got["foot"]
    for part in (*got["cells"], *got["stats"], *got["titles"]):
        _, top, _, bottom = part["box"]
        assert top >= -0.5 and bottom <= foot + 0.5, (
            f"{where}: {part.get('block', 'title')} at {part['box']}, foot {foot}"
        )
    drawn = got["rows"]  # the row numbers drawn, in order
    assert drawn == list(range(drawn[0], drawn[0] + len(drawn))), (where, drawn)
    x, bn = (next(t["text"] for t in got["titles"] if t["text"].startswith(name)) for name in ("x", "BatchNorm"))
    if len(drawn) < got["window"]:
        assert f"rows {drawn[0]}–{drawn[-1]}" in x or f"row {drawn[0]}" in x, (where, x)
        assert f"; {len(drawn)} shown" in bn, (where, bn)
    if every_row:
        assert len(drawn) == got["window"] == 8, (where, drawn)


@pytest.mark.parametrize("present", [False, True], ids=["screen", "lecture"])
@pytest.mark.parametrize("path", ["/", "/walkthrough?step=12"], ids=["explorer", "walkthrough"])
def test_every_cell_drawn_carries_its_number_at_every_width(load, path, present):
    """One load: every screen with the sidebar closed, then with it open where it docks."""
    app = load(path, present, {"width": SCREENS[0][0], "height": SCREENS[0][1]})
    for open_, screens in ((False, SCREENS), (True, OPEN)):
        for w, h in screens:
            where = _at(app, {"width": w, "height": h}, open_)
            assert (where["side"] > 0) == open_, (w, h, where)
            _assert_legible(app, present, f"{w} × {h}", where["side"], walk=path.startswith("/walkthrough"))
    if present:
        _an_arrow_draws_a_row_not_drawn(app)
    if path.startswith("/walkthrough"):
        _the_widest_formula_fits(app, present)
    # B and H from the stage's steppers, on the page the sweep loaded: the projector's explorer, and the walkthrough
    # on a laptop at step 3 (where _the_widest_formula_fits left it).
    if path == "/" and present:
        _at(app, PROJECTOR, open_=False)
        _steps_b_and_h(app)
    if path.startswith("/walkthrough") and not present:
        _at(app, LAPTOP, open_=True)
        _steps_b_and_h(app)
    assert not app.errors, app.errors


def _at(app: AppPage, viewport: dict[str, int], open_: bool) -> dict:
    """The page resized to ``viewport``, the sidebar opened or closed where it isn't already (Streamlit opens or
    closes it itself across 769 px), laid out; where it is (:func:`_laid_out`)."""
    app.page.set_viewport_size(viewport)
    where = _laid_out(app)
    if (where["side"] > 0) != open_:
        _sidebar(app, open_)
        where = _laid_out(app)
    return where


def _the_widest_formula_fits(app: AppPage, present: bool) -> None:
    """The walkthrough's widest formula, step 3's x − μ of a row (594 px at lecture mode's 24 px), whole on the
    screen at each screen where the sidebar docks, the sidebar open: the step's own slider, Home and two steps on."""
    slider = app.page.locator(".st-key-step input[type='range']")
    slider.focus()
    for key in ("Home", "ArrowRight", "ArrowRight"):
        app.page.keyboard.press(key)
        app.settle()
    tex = f"{STAGE_ROOT_JS}.querySelector('.formula annotation')?.textContent ?? ''"
    app.page.wait_for_function(f"() => ({tex}).includes('\\\\mu_{{0}} &=')", timeout=30_000)
    for w, h in OPEN:
        app.page.set_viewport_size({"width": w, "height": h})
        side = _laid_out(app)["side"]
        assert side > 0, (w, h)
        _assert_formula(app.page.evaluate(DRAWN_JS), f"step 3, {w} × {h}, lecture {present}", side, w, present)


def _an_arrow_draws_a_row_not_drawn(app: AppPage) -> None:
    """Lecture mode where not all rows fit (the sweep ends at 1024 × 768 with the sidebar open): ArrowDown from a cell
    of the last row drawn moves the focus to the next row, which is drawn then, as many rows as before, and x's title
    says which."""
    got = app.page.evaluate(DRAWN_JS)
    rows = got["rows"]
    assert len(rows) < got["window"] and rows[-1] + 1 < got["window"], rows
    cell = app.page.locator(f'{STAGE} .cell[data-block="x"][aria-label^="sample {rows[-1]},"]').filter(visible=True)
    cell.first.focus()
    app.page.keyboard.press("ArrowDown")
    focused = app.page.evaluate(f"() => {STAGE_ROOT_JS}.activeElement.getAttribute('aria-label')")
    assert focused.startswith(f"sample {rows[-1] + 1},"), focused
    now = app.page.evaluate(DRAWN_JS)["rows"]
    assert rows[-1] + 1 in now and len(now) == len(rows), (rows, now)
    title = app.page.locator(f"{STAGE} .title.x").inner_text()
    assert f"rows {now[0]}–{now[-1]}" in title, title


def _query(app: AppPage) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(app.page.url).query).items()}


def _title(app: AppPage) -> tuple[int, int]:
    """B and H as x's title on the stage says them."""
    b, h = app.page.locator(f"{STAGE} .title.x .size output").all_inner_texts()
    return int(b), int(h)


def _title_says(app: AppPage, b: int, h: int) -> None:
    """x's title on the stage says ``b`` and ``h``, within 15 s. The settle watches the page's own DOM, not the stage's
    shadow root: on a loaded machine the stage may draw the run's new grid a moment after."""
    expect(app.page.locator(f"{STAGE} .title.x .size output")).to_have_text([str(b), str(h)], timeout=15_000)


def _press(app: AppPage, name: str, dir_: str) -> None:
    button = app.page.locator(f"{STAGE} .title.x button[name={name}][value={dir_}]")
    box = button.bounding_box()
    least = 44 if app.page.viewport_size["width"] < 640 else 24  # a finger's target on a phone, a pointer's
    assert box["width"] >= least and box["height"] >= least, box
    button.click()
    app.settle()


def _steps_b_and_h(app: AppPage) -> None:
    """B one stop up and H one stop down from the stage's steppers, then H down again from the keyboard: each time
    the link, x's title and the note of what the change kept follow."""
    b_stops, h_stops = state.BATCH.options, state.FEATURES.options
    b, h = _title(app)
    _press(app, "batch", "up")
    up = b_stops[b_stops.index(b) + 1]
    assert int(_query(app)["batch"]) == up
    _title_says(app, up, h)
    kept = app.page.locator(f"{STAGE} .kept").inner_text()
    assert kept.startswith(f"B {b} → {up}:"), kept
    _press(app, "features", "down")
    down = h_stops[h_stops.index(h) - 1]
    assert int(_query(app)["features"]) == down
    _title_says(app, up, down)
    assert app.page.locator(f"{STAGE} .kept").inner_text().startswith(f"H {h} → {down}:")
    # The focus stays on the button pressed while the grid is built again: a key presses it again.
    app.page.keyboard.press("Enter")
    app.settle()
    assert int(_query(app)["features"]) == h_stops[h_stops.index(down) - 1]
    assert not app.exceptions() and not app.errors, app.errors


def test_the_sidebars_slider_lands_on_every_size_to_16_and_the_stages_steppers_go_on_from_there(load):
    """The batch slider's track is about 230 px for 34 stops, 6.9 px apart: dragged, its thumb lands on each size
    from 1 to 16 at that size's place, and the link takes the one where it is let go. From there the stage's
    steppers move one stop of the same scale (16 to 20), and the sidebar's slider follows them."""
    app = load("/", False, LAPTOP)
    page = app.page
    track = page.locator('.st-key-batch [data-testid="stSlider"] [role="group"] > div').first
    track.scroll_into_view_if_needed()  # in the sidebar, under the page list and the input
    track = track.bounding_box()
    thumb = page.locator('.st-key-batch [data-testid="stSlider"] input[type="range"]')
    stops = state.BATCH.options
    assert 200 <= track["width"] <= 260, track  # the sidebar's width
    y = track["y"] + track["height"] / 2
    at = lambda n: track["x"] + track["width"] * stops.index(n) / (len(stops) - 1)  # noqa: E731
    page.mouse.move(at(state.BATCH.default), y)
    page.mouse.down()
    landed = {}
    for n in range(1, 17):
        page.mouse.move(at(n), y, steps=2)
        landed[n] = int(thumb.get_attribute("aria-valuetext"))
    page.mouse.up()
    app.settle()
    assert landed == {n: n for n in range(1, 17)}, landed
    assert _query(app)["batch"] == "16"
    _title_says(app, 16, state.FEATURES.default)
    _steps_b_and_h(app)
    assert page.locator('.st-key-batch [data-testid="stSliderThumbValue"]').inner_text() == "20"


def test_on_a_phone_b_and_h_step_from_the_stage_and_the_arrows_move_the_columns_drawn_with_the_focus(load):
    """A narrow stage draws the columns that fit with their numbers, around the chosen cell's: an arrow to a column
    not drawn draws the columns around it, and the title says which."""
    app = load("/", False, PHONE)
    page = app.page
    _steps_b_and_h(app)
    drawn = lambda: [  # noqa: E731  the columns of x's first row drawn
        int(k)
        for k in page.evaluate(
            f"() => Array.from({STAGE_ROOT_JS}.querySelectorAll('.cell[data-block=\"x\"]'))"
            ".filter((c) => c.getBoundingClientRect().width > 0).map((c) => c.dataset.k)"
        )
        if int(k) < _title(app)[1]
    ]
    first = drawn()
    assert first[0] == 0 and 4 <= len(first) < 10, first
    page.locator(f'{STAGE} .cell[data-block="x"][data-k="{first[-1]}"]').focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate(f"() => {STAGE_ROOT_JS}.activeElement.dataset.k") == str(first[-1] + 1)
    now = drawn()
    assert first[-1] + 1 in now and len(now) == len(first), now
    assert f"features {now[0]}–{now[-1]}" in page.locator(f"{STAGE} .title.x").inner_text()
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => location.search.includes('feature={first[-1] + 1}')", timeout=30_000)
    app.settle()
    assert first[-1] + 1 in drawn()  # the chosen cell's column, drawn
    assert not app.errors, app.errors


def test_a_stepper_is_disabled_at_its_end_and_a_size_the_link_sets_has_none_but_a_word(load):
    """B = 1, the least: its down stepper disabled and saying why; no BatchNorm on the stage (x and LN are drawn), which
    says why where BN's output would be and in the hovered cell's formula; the step table's twelve steps still count
    (BN's say why not). H set by the link: no stepper, a word."""
    app = load("/?batch=1&hide=features&features=16", False, LAPTOP)
    assert app.page.locator(f"{STAGE} canvas.paint").count() == 2  # x and LN
    assert "B = 1" in app.page.locator(f"{STAGE} .nobn").inner_text()
    app.page.locator(f'{STAGE} .cell[data-block="x"][data-k="4"]').hover()
    assert "BatchNorm" in app.page.locator(f"{STAGE} .tip").inner_text()
    assert app.page.locator(f"{STAGE} .count").inner_text() == "0 / 12"
    down = app.page.locator(f"{STAGE} button[name=batch][value=down]")
    assert down.is_disabled() and down.get_attribute("aria-label") == "Fewer samples: B = 1 is the least"
    assert app.page.locator(f"{STAGE} button[name=batch][value=up]").is_enabled()
    assert not app.page.locator(f"{STAGE} button[name=features]").first.is_visible()
    assert _title(app) == (1, 16)
    assert "H set by the link" in app.page.locator(f"{STAGE} .title.x").inner_text()
    assert not app.errors, app.errors
