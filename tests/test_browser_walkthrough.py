"""The Walkthrough in headless Chromium: one picture, the stage, lit step by step from the one step table.

What only a browser shows: the stage follows the page's step (its Back, Next and the clicker's keys), the
chosen line of x is redrawn with the step's values, the formula is typeset on the stage with torch's numbers,
there is no figure of its own, and in lecture mode at 1280 × 720 the numbers are large and the step fits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from browser import AppPage
from playwright.sync_api import Browser

from harness.chromium import LAPTOP, local_context
from harness.settle import STAGE_ROOT_JS
from lnviz.labs.explorer.explain import num
from lnviz.maths import data
from lnviz.views import links

pytestmark = pytest.mark.browser

STAGE = ".st-key-live_stage"
PROJECTOR = {"width": 1280, "height": 720}
TEX = 'annotation[encoding="application/x-tex"]'  # KaTeX keeps the LaTeX it typeset, for screen readers


@pytest.fixture
def open_walk(browser: Browser, app_server: str) -> Iterator[Callable[..., AppPage]]:
    contexts = []

    def _open(query: str, viewport: dict[str, int] = LAPTOP) -> AppPage:
        context = local_context(browser, viewport=viewport)
        contexts.append(context)
        app = AppPage(context.new_page())
        app.goto(f"{app_server}/walkthrough?v={links.LINK_VERSION}&{query}")
        app.page.wait_for_function(f"() => {STAGE_ROOT_JS}?.querySelector('.stage .formula .katex')", timeout=30_000)
        return app

    yield _open
    for context in contexts:
        context.close()


def _stage(app: AppPage, js: str):
    return app.page.evaluate(f"() => {{ const r = {STAGE_ROOT_JS}; return {js}; }}")


def _x_pixels(app: AppPage) -> str:
    return _stage(app, "r.querySelector('canvas.paint').toDataURL()")


def _veiled(app: AppPage, selector: str) -> int:
    return app.page.locator(f"{STAGE} {selector}.veiled").count()


def _wait_step(app: AppPage, n: int) -> None:
    app.page.wait_for_function(f"() => {STAGE_ROOT_JS}.querySelector('.stage').dataset.step === '{n}'", timeout=30_000)
    app.page.wait_for_function(
        f"() => ({STAGE_ROOT_JS}.querySelector('.formula {TEX}') || {{}}).textContent?.length > 0", timeout=30_000
    )
    app.settle()


def test_each_step_lights_the_stage_its_formula_carries_torchs_numbers_and_a_click_picks_the_row(open_walk):
    x = data.make_activations("heterogeneous features", 8, 12, seed=0)  # the walkthrough's default grid
    plain = open_walk("step=1")
    app = open_walk("step=4")
    _wait_step(app, 4)
    assert app.page.locator("[data-testid=stPlotlyChart]").count() == 0  # one picture: no figure of its own
    assert _stage(app, "r.querySelector('.stage').classList.contains('driven')")
    assert not app.page.locator(f"{STAGE} button[name=play]").is_visible()  # the page's Back and Next drive it
    # Step 4, LN's variance: row 0's μ and σ lit, every other statistic and every output veiled.
    assert _veiled(app, '.stat[data-block="ln-mu"]') == 7 and _veiled(app, '.stat[data-block="ln-sd"]') == 7
    assert _veiled(app, '.cell[data-block="ln"]') == 96 and _veiled(app, '.stat[data-block="bn-mu"]') == 12
    assert "(x − μ)²" in app.page.locator(f"{STAGE} .caption").inner_text()
    tex = app.page.locator(f"{STAGE} .formula {TEX}").text_content()
    var = float(x[0].var(unbiased=False))  # torch's biased σ² of row 0
    assert num(var) in tex
    # Row 0 of x is drawn with (x − μ)², not x: the canvas differs from step 1's, and step 6 draws x again.
    squared = _x_pixels(app)
    assert squared != _x_pixels(plain)
    app.page.keyboard.press("PageDown")  # a clicker, the focus on the page
    _wait_step(app, 5)
    assert "step=5" in app.page.url and _x_pixels(app) not in (squared, _x_pixels(plain))  # x̂
    tex5 = app.page.locator(f"{STAGE} .formula {TEX}").text_content()
    assert tex5 != tex and "sqrt" in tex5
    app.page.keyboard.press("PageDown")
    _wait_step(app, 6)
    assert _x_pixels(app) == _x_pixels(plain) and _veiled(app, '.cell[data-block="ln"]') == 96 - 12
    app.page.locator(".st-key-next button").click()  # BN's first step: column 0, LN done
    _wait_step(app, 7)
    assert _veiled(app, '.cell[data-block="ln"]') == 0 and _veiled(app, '.stat[data-block="bn-mu"]') == 12
    assert _stage(app, "r.querySelector('.stage').dataset.focus") == "bn"
    assert not app.errors, app.errors
    _a_click_on_a_cell_moves_the_walk_to_its_row(plain, x)


def _a_click_on_a_cell_moves_the_walk_to_its_row(app: AppPage, x) -> None:
    """On step 2 (LN's mean), a click on a cell of row 3 makes the formula row 3's mean, torch's."""
    app.page.locator(".st-key-next button").click()
    _wait_step(app, 2)
    app.page.locator(f'{STAGE} .cell[data-block="x"][data-k="{3 * 12 + 5}"]').click()  # sample 3, feature 5
    app.page.wait_for_function("() => location.search.includes('sample=3')", timeout=30_000)
    _wait_step(app, 2)
    tex = app.page.locator(f"{STAGE} .formula {TEX}").text_content()
    assert r"\mu_{3}" in tex and num(float(x[3].mean())) in tex  # the mean of row 3, torch's
    assert not app.errors, app.errors


# Where each part of the stage is on the screen: the box around all of a block's cells, the step's words, the
# formula's typeset lines and the corner that holds them, and each caption's and label's font size.
FIT_JS = """(r) => {
    const box = (q) => {
        const bs = Array.from(r.querySelectorAll(q), (e) => e.getBoundingClientRect()).filter((b) => b.height > 0);
        return bs.length ? [Math.min(...bs.map((b) => b.left)), Math.min(...bs.map((b) => b.top)),
                            Math.max(...bs.map((b) => b.right)), Math.max(...bs.map((b) => b.bottom))] : null;
    };
    const corner = r.querySelector('.controls');
    const fonts = {};
    for (const q of ['.title span', '.caption', '.badge', '.legend', '.head', '.formula .katex']) {
        fonts[q] = Math.min(...Array.from(r.querySelectorAll(q), (e) => parseFloat(getComputedStyle(e).fontSize)));
    }
    return {
        x: box('.cell[data-block="x"]'), ln: box('.cell[data-block="ln"]'), bn: box('.cell[data-block="bn"]'),
        bnTitle: box('.title.bn'), words: box('.caption'), formula: box('.formula .katex-html'),
        corner: box('.controls'), hidden: corner.scrollHeight - corner.clientHeight, fonts,
    };
}"""


def test_in_lecture_mode_every_step_fits_a_projector_and_only_what_the_step_changes_moves(open_walk):
    """At 1280 × 720 with ?present=1, on each of the 12 steps: all of x, LN's and BN's outputs, the step's words
    and its formula on the screen, nothing of them scrolled away in their corner, BN's block where it was on
    step 1 however long the step's words, and every caption and label at 20 px or more."""
    app = open_walk("step=1&present=1", viewport=PROJECTOR)
    width, height = PROJECTOR["width"], PROJECTOR["height"]
    first = None
    for n in range(1, 13):
        if n > 1:
            app.page.locator(".st-key-next button").click()
        _wait_step(app, n)
        at = app.page.evaluate(f"() => ({FIT_JS})({STAGE_ROOT_JS})")
        for what in ("x", "ln", "bn", "words", "formula"):
            left, top, right, bottom = at[what]
            assert left >= 0 and top >= 0 and right <= width and bottom <= height, (n, what, at[what])
        assert at["formula"][3] <= at["corner"][3] + 1 and at["hidden"] <= 1, (n, at["formula"], at["corner"])
        assert all(size >= 20 for size in at["fonts"].values()), (n, at["fonts"])
        first = first or at
        assert (at["bn"][1], at["bnTitle"][1]) == (first["bn"][1], first["bnTitle"][1]), (n, at["bn"], first["bn"])
    assert not app.errors, app.errors
