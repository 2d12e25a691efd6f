"""The stage on a phone (390 × 844, issue 22): one norm at a time, each on one screen with its numbers.

Each test opens the main page at a phone's size and scrolls the stage's top to
just under Streamlit's header, as a reader's thumb would; from there nothing
scrolls. What is checked is what that screen holds: x, the shown norm's μ and
σ (as numbers a phone can read) and its output, the toggle, γ and Play.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from browser import AppPage, overlapping
from playwright.sync_api import Browser

from harness.chromium import PHONE, local_context
from harness.settle import STAGE_ROOT_JS
from lnviz.views import links

pytestmark = pytest.mark.browser

STAGE = ".st-key-live_stage"

# Scroll Streamlit's scroller until the stage's top is at the header's bottom; the header's bottom.
TO_STAGE_JS = """(sel) => {
    const stage = document.querySelector(sel);
    let p = stage.parentElement;
    while (p && !(p.scrollHeight > p.clientHeight && /(auto|scroll)/.test(getComputedStyle(p).overflowY))) {
        p = p.parentElement;
    }
    const header = document.querySelector('[data-testid="stHeader"]');
    const top = header ? header.getBoundingClientRect().bottom : 0;
    (p || document.scrollingElement).scrollBy(0, stage.getBoundingClientRect().top - top);
    return top;
}"""

# Where Streamlit's header ends, nothing scrolled: the page's first screen.
HEADER_JS = """() => document.querySelector('[data-testid="stHeader"]')?.getBoundingClientRect().bottom ?? 0"""

# How far Streamlit's scroller has scrolled (the page scrolls inside it, not the document).
SCROLLED_JS = "() => document.querySelector('[data-testid=\"stMain\"]').scrollTop"

# Each part of the stage by name: its box, whether it is drawn, its text and font size.
PARTS = {
    "x": '.cell[data-block="x"]', "ln": '.cell[data-block="ln"]', "bn": '.cell[data-block="bn"]',
    "lnMu": '.stat[data-block="ln-mu"]', "lnSd": '.stat[data-block="ln-sd"]',
    "bnMu": '.stat[data-block="bn-mu"]', "bnSd": '.stat[data-block="bn-sd"]',
    "toggle": ".norms button", "gain": "input[name=gain]", "play": "button[name=play]",
    "controls": ".norms, .scrubs, .fine-note, .play, .caption, .foot, .legend",
}  # fmt: skip
PARTS_JS = f"""(parts) => {{
    const root = {STAGE_ROOT_JS};
    const out = {{}};
    for (const [name, q] of Object.entries(parts)) {{
        out[name] = Array.from(root.querySelectorAll(q), (e) => {{
            const b = e.getBoundingClientRect();
            const style = getComputedStyle(e);
            return {{
                box: [b.left, b.top, b.right, b.bottom], text: e.textContent.trim(),
                font: parseFloat(style.fontSize), shown: b.width > 0 && b.height > 0 && style.display !== 'none',
            }};
        }});
    }}
    return out;
}}"""

# The box of every drawn line of text on the stage, named "text#k" by its text node (as
# tests/test_browser_stage.py reads them): a wrapped text's own lines may overlap by the font's ascent.
TEXTS_JS = f"""() => {{
    const out = [];
    const walk = document.createTreeWalker({STAGE_ROOT_JS}.querySelector('.stage'), NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {{
        if (!n.textContent.trim()) continue;
        const style = getComputedStyle(n.parentElement);
        if (parseFloat(style.fontSize) === 0 || style.visibility === 'hidden') continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        const node = out.length;
        for (const r of range.getClientRects()) {{
            if (r.width > 0 && r.height > 0) {{
                out.push({{text: `${{n.textContent.trim()}}#${{node}}`, box: [r.left, r.top, r.right, r.bottom]}});
            }}
        }}
    }}
    return out;
}}"""


# axe-core's serious and critical violations inside the stage (its shadow tree included).
STAGE_AXE_JS = """async (sel) => {
    const results = await axe.run(document.querySelector(sel), {resultTypes: ['violations']});
    return results.violations.filter((v) => ['serious', 'critical'].includes(v.impact))
        .map((v) => ({rule: v.id, nodes: v.nodes.slice(0, 3).map((n) => n.html)}));
}"""


@pytest.fixture
def phone(browser: Browser, app_server: str) -> Iterator[Callable[..., tuple[AppPage, float]]]:
    """``phone(query="", viewport=PHONE, touch=False)``: the main page, settled, its stage's top scrolled to
    just under Streamlit's header; returns the page and where that header ends (px from the viewport's top).
    ``touch``: a phone's touch screen, driven through Chromium's DevTools protocol."""
    contexts = []

    def _open(
        query: str = "", viewport: dict[str, int] = PHONE, touch: bool = False, path: str = "/", scroll: bool = True
    ) -> tuple[AppPage, float]:
        context = local_context(
            browser,
            "window.__animations = 0; const animate = Element.prototype.animate;"
            "Element.prototype.animate = function (...a) { window.__animations++; return animate.apply(this, a); };",
            viewport=viewport,
            has_touch=touch,
            is_mobile=touch,
        )
        contexts.append(context)
        app = AppPage(context.new_page())
        app.page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
        app.goto(f"{app_server}{path}?v={links.LINK_VERSION}{query}")
        app.page.wait_for_function(f"() => {STAGE_ROOT_JS}?.querySelector('.stage .cell')", timeout=30_000)
        top = app.page.evaluate(TO_STAGE_JS if scroll else HEADER_JS, STAGE)
        app.page.wait_for_timeout(300)  # the stage lays itself out again for the screen it has
        return app, top

    yield _open
    for context in contexts:
        context.close()


def _parts(app: AppPage) -> dict[str, list[dict]]:
    return app.page.evaluate(PARTS_JS, PARTS)


def _on_screen(box: list[float], top: float, viewport: dict[str, int] = PHONE) -> bool:
    """Whether ``box`` lies inside the viewport below Streamlit's header (half a pixel's rounding allowed)."""
    left, upper, right, lower = box
    return (
        left >= -0.5 and upper >= top - 0.5 and right <= viewport["width"] + 0.5 and lower <= viewport["height"] + 0.5
    )


def _overlap(a: list[float], b: list[float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) >= 1 and min(a[3], b[3]) - max(a[1], b[1]) >= 1


def _number(text: str) -> float:
    return float(text.replace("\u2212", "-"))


def _assert_one_screen(app: AppPage, top: float, norm: str) -> None:
    """x, ``norm``'s μ and σ with their numbers and its output, the toggle, γ and Play on the screen at once,
    the other norm not drawn, and nothing on top of anything else."""
    other = "bn" if norm == "ln" else "ln"
    parts = _parts(app)
    # The default grid's 8 rows, and the columns around the chosen one that fit with their numbers.
    columns = sum(p["shown"] for p in parts["x"]) // 8
    assert 4 <= columns < 12 and sum(p["shown"] for p in parts[norm]) == 8 * columns, columns
    assert app.page.locator(f"{STAGE} .stage.numbers").count() == 1  # the cells carry their numbers
    assert all(p["font"] >= 11 for p in parts["x"] if p["shown"]), {p["font"] for p in parts["x"]}
    for name in ("x", norm, f"{norm}Mu", f"{norm}Sd", "toggle", "gain", "play"):
        off = [p["box"] for p in parts[name] if p["shown"] and not _on_screen(p["box"], top)]
        assert not off, f"{norm} shown: {len(off)} of {name} not on the screen, such as {off[0]}"
        assert any(p["shown"] for p in parts[name]), name
    for name in (f"{norm}Mu", f"{norm}Sd"):
        stats = parts[name]
        assert all(p["font"] >= 11 for p in stats), (name, {p["font"] for p in stats})
        assert all(abs(_number(p["text"])) < 100 for p in stats), [p["text"] for p in stats]  # numbers, all there
    for name in (other, f"{other}Mu", f"{other}Sd"):
        assert not any(p["shown"] for p in parts[name]), f"{norm} shown, but {name} is drawn too"
    grids = [p["box"] for name in ("x", norm, f"{norm}Mu", f"{norm}Sd") for p in parts[name]]
    covered = [c["text"][:20] for c in parts["controls"] if any(_overlap(c["box"], g) for g in grids)]
    assert not covered, f"controls over the cells: {covered}"
    texts = app.page.evaluate(TEXTS_JS)
    clashes = [(a, b) for a, b in overlapping(texts, min_px=0.5) if a.rsplit("#", 1)[1] != b.rsplit("#", 1)[1]]
    assert len(texts) > 40 and not clashes, clashes[:10]
    width = app.page.viewport_size["width"]  # the stage and every text on it within the phone's width
    box = app.page.locator(STAGE).bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
    assert max(t["box"][2] for t in texts) <= width, max(texts, key=lambda t: t["box"][2])


def _pressed(app: AppPage) -> dict[str, str]:
    buttons = app.page.locator(f"{STAGE} .norms button")
    return {b.inner_text(): b.get_attribute("aria-pressed") for b in buttons.all()}


def test_on_a_phone_each_norm_fits_one_screen_with_its_numbers_and_axe_finds_nothing_serious_on_either(phone):
    from test_browser_a11y import AXE

    app, top = phone()
    page = app.page
    assert top > 0  # Streamlit's header is there, and the stage starts under it
    assert _pressed(app) == {"LayerNorm": "true", "BatchNorm": "false"}
    _assert_one_screen(app, top, "ln")
    scrolled = page.evaluate(SCROLLED_JS)
    page.locator(f"{STAGE} .norms button", has_text="BatchNorm").click()
    assert _pressed(app) == {"LayerNorm": "false", "BatchNorm": "true"}
    assert page.evaluate(SCROLLED_JS) == scrolled  # the same screen, nothing scrolled
    _assert_one_screen(app, top, "bn")
    page.locator(f"{STAGE} .norms button", has_text="LayerNorm").click()
    _assert_one_screen(app, top, "ln")
    assert not app.errors, app.errors
    # No serious accessibility violation on the stage with either norm shown (axe-core, its shadow tree included).
    page.add_script_tag(path=str(AXE))
    for norm in ("BatchNorm", "LayerNorm"):
        page.locator(f"{STAGE} .norms button", has_text=norm).click()
        violations = page.evaluate(STAGE_AXE_JS, STAGE)
        assert not violations, (norm, violations)


def test_on_a_phone_the_toggle_is_reached_and_pressed_by_the_keyboard(phone):
    app, _ = phone()
    page = app.page
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    focused = None
    for _ in range(40):  # from the top of the page, through Streamlit's header
        page.keyboard.press("Tab")
        focused = page.evaluate(f"() => {STAGE_ROOT_JS}.activeElement?.textContent")
        if focused:
            break
    assert focused == "LayerNorm", focused  # the stage's first stop
    page.keyboard.press("Tab")
    assert page.evaluate(f"() => {STAGE_ROOT_JS}.activeElement.textContent") == "BatchNorm"
    page.keyboard.press("Enter")
    assert _pressed(app) == {"LayerNorm": "false", "BatchNorm": "true"}
    assert page.locator(f'{STAGE} .stat[data-block="bn-mu"]').first.is_visible()
    assert not page.locator(f'{STAGE} .stat[data-block="ln-mu"]').first.is_visible()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Space")
    assert _pressed(app) == {"LayerNorm": "true", "BatchNorm": "false"}


def test_on_a_phone_a_finger_moves_gain_finely_and_the_stage_says_its_range(phone):
    app, _ = phone(touch=True)
    page = app.page
    note = page.locator(f"{STAGE} .fine-note")
    assert note.is_visible() and "\u22125 to 5" in note.inner_text(), note.inner_text()
    gain = page.locator(f"{STAGE} input[name=gain]")
    box = gain.bounding_box()
    x, y = box["x"] + 0.6 * box["width"], box["y"] + box["height"] / 2  # the thumb: γ = 1 is 60% along
    scrolled = page.evaluate(SCROLLED_JS)
    cdp = page.context.new_cdp_session(page)

    def touch(kind: str, *at: dict[str, float]) -> None:
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": list(at)})

    touch("touchStart", {"x": x, "y": y})
    for dx in range(5, 71, 5):  # 70 px to the right, drifting down a little, as a thumb does
        touch("touchMove", {"x": x + dx, "y": y + dx / 10})
    moved = float(gain.input_value()) - 1.0
    # The track's own span, 10 over its width, would have moved γ by about 3.
    assert 0.3 <= moved <= 0.8, moved
    assert page.locator(f"{STAGE} .badge").inner_text() == "preview (browser)"
    touch("touchEnd")
    assert page.evaluate(SCROLLED_JS) == scrolled  # the drag moved γ, not the page
    page.wait_for_function(f"() => {STAGE_ROOT_JS}.querySelector('.badge').textContent.includes('max')", timeout=60_000)
    app.settle()
    assert f"gain={1.0 + moved:g}" in page.url, page.url  # released to torch and the link, as any drag


def _step(app: AppPage) -> int:
    return int(app.page.evaluate(f"() => {STAGE_ROOT_JS}.querySelector('.stage').dataset.step"))


def _focus(app: AppPage) -> str:
    """The norm the current step of Play is about ("" at either end)."""
    return app.page.evaluate(f"() => {STAGE_ROOT_JS}.querySelector('.stage').dataset.focus")


def _press_until(app: AppPage, key: str, done: Callable[[], bool], most: int = 20) -> None:
    for _ in range(most):
        if done():
            return
        app.page.keyboard.press(key)
    assert done(), f"{most} presses of {key} did not get there"


def test_on_a_phone_play_and_the_clicker_switch_to_the_norm_each_step_is_about(phone):
    app, top = phone()
    page = app.page
    page.locator(f"{STAGE} button[name=next]").click()
    page.locator(f"{STAGE} button[name=play]").click()  # from step 1 to step 2 at once (Play reads each step's words)
    page.wait_for_function(f"() => +{STAGE_ROOT_JS}.querySelector('.stage').dataset.step >= 2", timeout=15_000)
    page.locator(f"{STAGE} button[name=play]").click()  # pause
    assert page.evaluate("window.__animations") > 0  # the row flew into its μ
    assert _focus(app) == "ln" and _pressed(app)["LayerNorm"] == "true"
    page.keyboard.press("Escape")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    # A clicker, with the focus on the page: on to BN's first step, which shows BN.
    _press_until(app, "PageDown", lambda: _focus(app) == "bn")
    assert _pressed(app) == {"LayerNorm": "false", "BatchNorm": "true"}
    # On to BN's μ: the chosen column's, lit and on the screen.
    lit = page.locator(f'{STAGE} .stat[data-block="bn-mu"]:not(.veiled)')
    _press_until(app, "PageDown", lambda: lit.count() == 1, most=4)
    parts = _parts(app)
    assert _on_screen(parts["bnMu"][0]["box"], top)
    assert not any(p["shown"] for p in parts["ln"])
    _press_until(app, "PageUp", lambda: _focus(app) == "ln")  # back to LN's last step
    assert _pressed(app) == {"LayerNorm": "true", "BatchNorm": "false"}
    assert not app.errors, app.errors


def test_on_a_phone_a_gain_the_link_locks_has_no_fine_drag_and_the_note_speaks_of_beta_alone(phone):
    app, _ = phone("&hide=gain")
    page = app.page
    assert not page.locator(f"{STAGE} input[name=gain]").is_visible()
    note = page.locator(f"{STAGE} .fine-note").inner_text()
    assert note == "β: \u22125 to 5; here a drag across the track moves it by 2", note
    assert page.locator(f"{STAGE} .fine").count() == 1  # β's pad only


def _box(app: AppPage, name: str) -> list[float]:
    """The box around the drawn elements of a part of the stage (PARTS)."""
    boxes = [p["box"] for p in _parts(app)[name] if p["shown"]]
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def test_on_a_phone_the_first_screen_holds_the_stage_and_play_keeps_what_it_animates_there(phone):
    """Unscrolled, under a short title: x and LN's output with their numbers on the first screen; stepping
    Play on to BN's output, x stays where it was however long the step's words, and BN's output is on the
    screen too."""
    app, top = phone(scroll=False)
    title = app.page.locator("h1").bounding_box()
    assert title["height"] <= 60, title  # one short line, not the top third
    _assert_one_screen(app, top, "ln")
    x = _box(app, "x")
    app.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    _press_until(app, "PageDown", lambda: _step(app) == 12)  # BN's output, its words among the longest
    assert _focus(app) == "bn" and app.page.locator(f"{STAGE} .caption").inner_text().count(" ") > 20
    assert _box(app, "x") == x
    assert _on_screen(_box(app, "bn"), top), _box(app, "bn")
    assert not app.errors, app.errors


def test_on_a_phone_the_walkthroughs_back_next_and_stage_are_one_screen_and_next_keeps_it_there(phone):
    app, top = phone(path="/walkthrough", scroll=False)
    page = app.page
    for n in (1, 2, 3):
        if n > 1:
            page.locator(".st-key-next button").click()
            page.wait_for_function(f"() => {STAGE_ROOT_JS}.querySelector('.stage').dataset.step === '{n}'")
            app.settle()
        buttons = [page.locator(f".st-key-{k} button").bounding_box() for k in ("back", "next")]
        norm = _focus(app)
        for what, box in [("back", buttons[0]), ("next", buttons[1]), ("x", _box(app, "x")), (norm, _box(app, norm))]:
            if isinstance(box, dict):
                box = [box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"]]
            assert _on_screen(box, top), (n, what, box)
        assert page.evaluate(SCROLLED_JS) == 0  # nothing to scroll down to, and back up from, for a step
    assert not app.errors, app.errors


def test_on_a_phone_the_cell_views_formulas_fit_its_width(phone):
    app, _ = phone("&view=cell", scroll=False)
    # Each typeset line's right end against its box's (KaTeX's struts overhang a box by a pixel or two).
    ends = app.page.evaluate(
        """() => Array.from(document.querySelectorAll('.katex-display'), (e) => [
            Math.max(...Array.from(e.querySelectorAll('.base'), (b) => b.getBoundingClientRect().right)),
            e.getBoundingClientRect().right])"""
    )
    assert len(ends) == 2 and all(line <= box + 0.5 for line, box in ends), ends
