"""The stage in headless Chromium: scrubbing without a round trip, torch's numbers on hover, the fit, Play.

Served by the app itself: the stage is the first thing on the main page, and
the sidebar holds the page's γ, β, ε, sample and feature widgets, bound to
the URL.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
import torch
import torch.nn.functional as F
from browser import AppPage, overlapping
from playwright.sync_api import Browser, Page, Response, expect
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness.chromium import LAPTOP, local_context
from harness.settle import STAGE_ROOT_JS
from lnviz.labs import explorer
from lnviz.maths import data
from lnviz.views import links

pytestmark = pytest.mark.browser

STAGE = ".st-key-live_stage"


@pytest.fixture(scope="module")
def stage_url(app_server: str) -> str:
    return app_server


@pytest.fixture
def open_stage(browser: Browser) -> Iterator[Callable[..., AppPage]]:
    """``open_stage(url, viewport=LAPTOP, reduced_motion=None)``: the page in a fresh context, settled.

    Each page records the kind of every websocket message it sends
    (``app.sent``: a BackMsg's type, such as "rerun_script") and counts the
    Web Animations the page starts (``window.__animations``).
    """
    contexts = []

    def _open(url: str, viewport: dict[str, int] = LAPTOP, reduced_motion: str | None = None) -> AppPage:
        url += ("&" if "?" in url else "?") + f"v={links.LINK_VERSION}"  # a link of today's state table
        context = local_context(
            browser,
            "window.__animations = 0; const animate = Element.prototype.animate;"
            "Element.prototype.animate = function (...a) { window.__animations++; return animate.apply(this, a); };",
            viewport=viewport,
            reduced_motion=reduced_motion,
        )
        contexts.append(context)
        page = context.new_page()
        app = AppPage(page)
        app.sent = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda frame: app.sent.append(_kind(frame))))
        page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
        app.files = []  # the stage's own files the page fetched: (path, status, Cache-Control)
        page.on("response", lambda r: _stage_file(r) and app.files.append(_stage_file(r)))
        app.goto(url)
        page.wait_for_function(f"() => {STAGE_ROOT_JS}?.querySelector('.stage .cell')", timeout=30_000)
        app.settle()  # the rerun the stage asks for once drawn (ui.stage.stage.waiting) included
        return app

    yield _open
    for context in contexts:
        context.close()


def _stage_file(response: Response) -> tuple[str, int, str] | None:
    """A response that is one of the stage's files (its asset_dir, served by Streamlit) as (path, status,
    Cache-Control); None for any other."""
    path = urlsplit(response.url).path
    if "/_stcore/bidi-components/lnviz.stage/" not in path:
        return None
    return path, response.status, response.headers.get("cache-control", "")


def _kind(frame: bytes | str) -> str:
    return BackMsg.FromString(frame).WhichOneof("type") if isinstance(frame, bytes) else "text"


def _delta(app: AppPage) -> float:
    """How far the browser's preview was from torch's numbers, as the badge says (before any " · " caveat)."""
    badge = app.page.locator(f"{STAGE} .badge").inner_text()
    delta = re.fullmatch(r"torch: max \|Δ\| (\S+)(?: · BN: formula \(ε = 0\))?", badge)
    assert delta, badge
    return float(delta.group(1).replace("∞", "inf"))


def _query(app: AppPage) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(app.page.url).query).items()}


def _outputs(app: AppPage) -> list[str]:
    """The pixels of x's, LN's and BN's canvases (where the cells' colours and numbers are drawn)."""
    return app.page.evaluate(
        f"() => Array.from({STAGE_ROOT_JS}.querySelectorAll('canvas.paint'), (c) => c.toDataURL())"
    )


def _torch(query: dict[str, str], i: int, j: int) -> dict[str, float]:
    """The numbers the tooltip must show for cell (i, j), from torch.nn.functional in float64."""
    b, h, seed = int(query.get("batch", 16)), int(query.get("features", 32)), int(query.get("seed", 0))
    gain, bias = float(query.get("gain", 1.0)), float(query.get("bias", 0.0))
    eps = float(query.get("eps", 1e-5))
    x = data.make_activations(query.get("dist", "heterogeneous features"), b, h, seed)  # (B, H)
    per_feature = data.random_affine(h, seed) if query.get("affine") == "true" else (None, None)  # g, b: (H,) each
    affine = explorer.Affine(gain, bias, *per_feature)  # γ = gain·g, β = bias + b, as the page makes them
    gamma = torch.as_tensor(affine.gamma, dtype=torch.float64).expand(h)  # (H,)
    beta = torch.as_tensor(affine.beta, dtype=torch.float64).expand(h)  # (H,)
    ln_var, ln_mu = torch.var_mean(x, dim=1, unbiased=False)  # (B,)
    bn_var, bn_mu = torch.var_mean(x, dim=0, unbiased=False)  # (H,)
    return {
        "x": x[i, j],
        "ln-mu": ln_mu[i], "ln-var": ln_var[i],
        "ln-xhat": F.layer_norm(x, (h,), eps=eps)[i, j], "ln-y": F.layer_norm(x, (h,), gamma, beta, eps)[i, j],
        "bn-mu": bn_mu[j], "bn-var": bn_var[j],
        "bn-xhat": F.batch_norm(x, None, None, training=True, eps=eps)[i, j],
        "bn-y": F.batch_norm(x, None, None, gamma, beta, training=True, eps=eps)[i, j],
    }  # fmt: skip


def _shown(app: AppPage) -> dict[str, float]:
    """The numbers in the tooltip, by name (the minus sign read as "-")."""
    pairs = app.page.evaluate(
        f"() => Array.from({STAGE_ROOT_JS}.querySelectorAll('.tip [data-v]')).map((b) => [b.dataset.v, b.textContent])"
    )
    return {name: float(text.replace("\u2212", "-")) for name, text in pairs}


def test_dragging_gain_moves_the_outputs_before_any_message_then_torch_and_the_url_follow_then_b_keeps_x(
    stage_url, open_stage
):
    app = open_stage(stage_url + "/")
    page = app.page
    gain = page.locator(f"{STAGE} input[name=gain]")
    box = gain.bounding_box()
    before, shot = _outputs(app), page.locator(STAGE).screenshot()
    app.sent.clear()
    # The JS and CSS came as files, each once, cacheable: not inside the element, not again on a rerun.
    fetched = list(app.files)
    paths = [path for path, _, _ in fetched]
    assert {"/_stcore/bidi-components/lnviz.stage/index.js", "/_stcore/bidi-components/lnviz.stage/stage.css"} <= set(
        paths
    ), paths
    assert len(set(paths)) == len(paths), paths
    assert all(status == 200 and cache == "public" for _, status, cache in fetched), fetched
    # γ = 1 sits at 60% of the track: grab the thumb there and drag it right.
    page.mouse.move(box["x"] + 0.6 * box["width"], box["y"] + box["height"] / 2)
    page.mouse.down()
    for dx in range(8, 97, 8):
        page.mouse.move(box["x"] + 0.6 * box["width"] + dx, box["y"] + box["height"] / 2)
    page.wait_for_timeout(300)
    during = _outputs(app)
    assert during[0] == before[0] and during[1:] != before[1:], "x must stay, the outputs must move"
    assert page.locator(STAGE).screenshot() != shot
    # The client's periodic heartbeat is not about the drag.
    assert [k for k in app.sent if k != "app_heartbeat"] == [], "a message went to the server during the drag"
    assert page.locator(f"{STAGE} .badge").inner_text() == "preview (browser)"
    dragged = float(gain.input_value())
    assert dragged > 1.0
    page.mouse.up()
    page.wait_for_function(f"() => {STAGE_ROOT_JS}.querySelector('.badge').textContent.includes('max')", timeout=60_000)
    app.settle()
    assert "rerun_script" in app.sent, "the release was not sent"
    assert float(_query(app)["gain"]) == pytest.approx(dragged)
    assert _delta(app) <= 1e-12
    assert _outputs(app) == during, "torch's numbers should look exactly like the preview"
    assert app.files == fetched, "the rerun fetched the stage's files again"
    assert not app.errors, app.errors
    _a_change_of_b_alone_keeps_the_colour_of_every_cell_of_x_that_it_keeps(app)  # x's colours don't depend on γ


def test_hover_shows_the_cells_formula_with_torchs_numbers_and_lights_its_row_and_column(stage_url, open_stage):
    query = {"batch": "12", "features": "20", "seed": "3", "gain": "1.5", "bias": "-0.5", "eps": "0.001"}
    query["affine"] = "true"
    app = open_stage(stage_url + "/?" + "&".join(f"{k}={v}" for k, v in query.items()))
    i, j = 2, 5  # the window starts at (0, 0): row 0 is chosen
    app.page.locator(f'{STAGE} .cell[data-block="x"][data-k="{i * 12 + j}"]').hover()
    app.page.wait_for_function(f"() => !{STAGE_ROOT_JS}.querySelector('.tip').hidden")
    shown, want = _shown(app), _torch(query, i, j)
    assert set(shown) == set(want)
    for name, value in want.items():
        assert shown[name] == pytest.approx(float(value), abs=1e-6), name
    tip = app.page.evaluate(f"() => {STAGE_ROOT_JS}.querySelector('.tip').innerText")
    assert want["bn-mu"] < 0 or want["ln-mu"] < 0  # a negative mean, subtracted
    assert "− −" not in tip and "+ −" not in tip, tip  # negative terms in parentheses
    bands = app.page.evaluate(
        f"""() => Array.from({STAGE_ROOT_JS}.querySelectorAll('.band:not([hidden])'))
            .map((b) => [b.className, getComputedStyle(b).boxShadow])"""
    )
    colours = {name.split()[1]: shadow for name, shadow in bands}
    assert "rgb(0, 114, 178)" in colours["ln"] and "rgb(213, 94, 0)" in colours["bn"]


def test_clicking_a_cell_chooses_it_for_the_page(stage_url, open_stage):
    app = open_stage(stage_url + "/?batch=10&features=14")
    app.page.locator(f'{STAGE} .cell[data-block="ln"][data-k="{3 * 12 + 7}"]').click()
    app.page.wait_for_function("() => location.search.includes('sample=3')", timeout=60_000)
    app.settle()
    assert (_query(app)["sample"], _query(app)["feature"]) == ("3", "7")


def _text_boxes(app: AppPage) -> list[dict]:
    """The box of every visible piece of text on the stage."""
    return app.page.evaluate(
        f"""() => {{
        const out = [];
        const walk = document.createTreeWalker({STAGE_ROOT_JS}.querySelector('.stage'), NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {{
            if (!n.textContent.trim()) continue;
            const e = n.parentElement;
            const style = getComputedStyle(e);
            if (e.closest('[hidden]') || parseFloat(style.fontSize) === 0 || style.visibility === 'hidden') continue;
            const range = document.createRange();
            range.selectNodeContents(n);
            // One box per line; "#k" names the text node, as a wrapped text's own lines may overlap by the
            // font's ascent and descent, which is no clash.
            const node = out.length;
            for (const r of range.getClientRects()) {{
                if (r.width > 0 && r.height > 0) out.push({{text: `${{n.textContent.trim()}}#${{node}}`, box: [r.left, r.top, r.right, r.bottom]}});
            }}
        }}
        return out;
    }}"""
    )


def _step(app: AppPage) -> int:
    return int(app.page.evaluate(f"() => {STAGE_ROOT_JS}.querySelector('.stage').dataset.step"))


def test_play_steps_through_the_reduction_and_the_keyboard_and_a_clicker_step_it_too(stage_url, open_stage):
    app = open_stage(stage_url + "/")
    page = app.page
    play = page.locator(f"{STAGE} button[name=play]")
    assert _step(app) == 0
    # Its speed, beside it, by its name; the tab's session keeps the choice (tests/js/play.test.mjs times it).
    page.get_by_role("combobox", name="Play's speed").select_option("2")
    assert page.evaluate("sessionStorage.getItem('lnviz.stage.speed')") == "2"
    page.locator(f"{STAGE} button[name=next]").click()
    play.click()  # from step 1, Play moves to step 2 at once: the row flies into its μ
    page.wait_for_function(f"() => +{STAGE_ROOT_JS}.querySelector('.stage').dataset.step >= 3", timeout=15_000)
    assert page.evaluate("window.__animations") > 0  # the row flew into its μ
    assert page.locator(f'{STAGE} .stat[data-block="ln-mu"].veiled').count() == 7  # only row 0's μ is shown
    play.click()  # pause
    at = _step(app)
    page.wait_for_timeout(2000)
    assert _step(app) == at
    page.keyboard.press("ArrowRight")
    assert _step(app) == at + 1
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert _step(app) == at - 1
    page.keyboard.press("Escape")
    assert _step(app) == 0 and page.locator(f"{STAGE} .veiled").count() == 0
    # The cells of x take the keyboard too: arrows move, Enter chooses.
    page.locator(f'{STAGE} .cell[data-block="x"][data-k="0"]').focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    assert page.evaluate(f"() => {STAGE_ROOT_JS}.activeElement.dataset.k") == "13"
    assert page.locator(f"{STAGE} .tip").is_visible()
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.search.includes('feature=1')", timeout=60_000)
    app.settle()
    assert (_query(app)["sample"], _query(app)["feature"]) == ("1", "1")
    _a_clicker_steps_play_with_the_focus_anywhere_on_the_page_but_in_a_control(app)


def test_reduced_motion_steps_instead_of_moving(stage_url, open_stage):
    app = open_stage(stage_url + "/", reduced_motion="reduce")
    page = app.page
    page.locator(f"{STAGE} button[name=next]").click()
    page.locator(f"{STAGE} button[name=play]").click()  # to step 2 at once, where the row would fly into its μ
    page.wait_for_function(f"() => +{STAGE_ROOT_JS}.querySelector('.stage').dataset.step >= 2", timeout=15_000)
    page.locator(f"{STAGE} button[name=play]").click()
    for _ in range(13):
        page.locator(f"{STAGE} button[name=next]").click()
    assert _step(app) == 13  # the last: the table's twelve steps between everything shown before and after
    assert page.evaluate("window.__animations") == 0
    transition = page.evaluate(f"() => getComputedStyle({STAGE_ROOT_JS}.querySelector('.cell')).transitionDuration")
    assert transition == "0s"


def _undefined(app: AppPage, block: str) -> int:
    return app.page.locator(f'{STAGE} .cell.nan[data-block="{block}"]').count()


def test_scrubbing_eps_to_zero_previews_the_undefined_row_as_torch_then_computes_it(stage_url, open_stage):
    app = open_stage(stage_url + "/?dist=constant+row")  # row 0 is constant: with ε = 0, 0/0
    assert _undefined(app, "ln") == 0
    app.page.locator(f"{STAGE} input[name=eps]").focus()
    app.page.keyboard.press("Home")  # ε = 0, the first option
    assert _undefined(app, "ln") == 12 and _undefined(app, "bn") == 0  # the browser's x̂ from torch's μ, σ²
    app.page.wait_for_function(
        f"() => {STAGE_ROOT_JS}.querySelector('.badge').textContent.includes('max')", timeout=60_000
    )
    app.settle()
    assert app.page.locator(".st-key-eps [data-testid=stSliderThumbValue]").inner_text() == "0"  # the sidebar's ε
    assert _delta(app) <= 1e-12  # and NaN exactly where torch has NaN (else Δ is ∞)
    assert _undefined(app, "ln") == 12 and _undefined(app, "bn") == 0
    # torch refuses BN at ε = 0 in training: the badge says BN's numbers are the formula's, its title why.
    badge = app.page.locator(f"{STAGE} .badge")
    assert badge.inner_text().endswith(" · BN: formula (ε = 0)"), badge.inner_text()
    assert "refuses ε = 0" in badge.get_attribute("title")
    app.page.locator(f'{STAGE} .cell[data-block="ln"][data-k="3"]').hover()
    assert _shown(app)["ln-xhat"] != _shown(app)["ln-xhat"]  # NaN, shown as "NaN"


def test_a_release_at_a_controls_minimum_reaches_the_url(stage_url, open_stage):
    app = open_stage(stage_url + "/?eps=0.001")
    # One text for ε on the stage, the sidebar and the link (lnviz.text.format_number; model.js formatNumber).
    sidebar = app.page.locator(".st-key-eps [data-testid=stSliderThumbValue]").inner_text()
    assert app.page.locator(f"{STAGE} input[name=eps] + output").inner_text() == sidebar == "0.001"
    app.page.locator(f"{STAGE} input[name=eps]").focus()
    app.page.keyboard.press("Home")  # ε = 0
    app.page.wait_for_function(
        f"() => {STAGE_ROOT_JS}.querySelector('.badge').textContent.includes('max')", timeout=60_000
    )
    app.settle()
    assert _query(app).get("eps") == "0", app.page.url


PROJECTOR = {"width": 1280, "height": 720}


def _px(app: AppPage, selector: str) -> float:
    """The computed font size of the stage's first element that matches ``selector`` (the canvases draw the
    cells' numbers at their cells' size: view/paint.js)."""
    return app.page.evaluate(
        f"() => parseFloat(getComputedStyle({STAGE_ROOT_JS}.querySelector({selector!r})).fontSize)"
    )


def _window(app: AppPage) -> tuple[set[int], set[int]]:
    """The samples and features of x's cells on the stage, from their labels."""
    labels = app.page.evaluate(
        f"() => Array.from({STAGE_ROOT_JS}.querySelectorAll('.cell[data-block=\"x\"]'), (c) => c.ariaLabel)"
    )
    pairs = [re.fullmatch(r"sample (\d+), feature (\d+)", label).groups() for label in labels]
    return {int(i) for i, _ in pairs}, {int(j) for _, j in pairs}


def test_lecture_mode_fits_the_stage_on_a_projector_at_20px_with_every_cell_or_says_how_many(stage_url, open_stage):
    """On a 1280 × 720 projector: the whole stage on the first screen, the cells with their numbers, every caption,
    label and the hovered cell's formula at 20 px or more, all of the default 8 × 12 drawn. At 1024 × 768 with the
    sidebar open, no text on the stage over another. A grid of 16 × 32 draws what fits and says how many of the
    samples and features its μ and σ are over."""
    app = open_stage(stage_url + "/?present=1", PROJECTOR)
    box = app.page.locator(STAGE).bounding_box()
    assert box["y"] >= 0 and box["x"] >= 0, box
    assert box["y"] + box["height"] <= PROJECTOR["height"] and box["x"] + box["width"] <= PROJECTOR["width"], box
    assert app.page.evaluate("window.scrollY") == 0
    assert app.page.locator(f"{STAGE} .stage.numbers").count() == 1  # the cells carry their numbers
    assert _window(app) == (set(range(8)), set(range(12)))  # the default grid, 8 × 12: all of it
    assert app.page.locator(f"{STAGE} .partial").count() == 0
    sizes = {
        what: _px(app, selector)
        for what, selector in {
            "cell": '.cell[data-block="x"]', "column head": ".head:not(.row):not(.sym)", "row head": ".head.row",
            "LN's μ": ".stat.ln", "BN's μ": ".stat.bn",
            # The captions and labels that say the idea (issue 27): read from the back of a room too.
            "x's caption": ".title span", "LN's caption": ".title.ln span", "BN's caption": ".title.bn span",
            "counter": ".count", "badge": ".badge", "legend": ".legend", "words": ".caption", "γ's key": ".scrub small",
        }.items()
    }  # fmt: skip
    app.page.locator(f'{STAGE} .cell[data-block="x"][data-k="30"]').hover()
    app.page.wait_for_function(f"() => !{STAGE_ROOT_JS}.querySelector('.tip').hidden")
    sizes["formula"] = _px(app, ".tip")
    assert all(size >= 20 for size in sizes.values()), sizes
    tip = app.page.locator(f"{STAGE} .tip").bounding_box()
    assert tip["y"] + tip["height"] <= PROJECTOR["height"] and tip["x"] + tip["width"] <= PROJECTOR["width"], tip
    app.page.mouse.move(0, 0)  # off the cell: its formula goes
    app.page.wait_for_function(f"() => {STAGE_ROOT_JS}.querySelector('.tip').hidden")

    # 1024 × 768 with the sidebar open, the stage narrowed: no text on it over another on the same line, the
    # legends' included ("outputs" ran over x's "+15" while both legends stood squeezed on one line). A wrapped
    # title's lines overlap by the font's ascent: each text is taken as its line's middle 2 px.
    app.resize({"width": 1024, "height": 768})
    wide = app.page.evaluate(f"() => {STAGE_ROOT_JS}.querySelector('.stage').offsetWidth")
    app.page.locator("[data-testid=stExpandSidebarButton]").first.click()
    app.page.wait_for_function(f"() => {STAGE_ROOT_JS}.querySelector('.stage').offsetWidth < {wide}")
    app.page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    boxes = _text_boxes(app)
    lines = [
        {
            **b,
            "box": [b["box"][0], (b["box"][1] + b["box"][3]) / 2 - 1, b["box"][2], (b["box"][1] + b["box"][3]) / 2 + 1],
        }
        for b in boxes
    ]
    overlaps = [(a, b) for a, b in overlapping(lines, min_px=0.5) if a.rsplit("#", 1)[1] != b.rsplit("#", 1)[1]]
    assert len(boxes) > 40 and not overlaps, overlaps[:10]

    app = open_stage(stage_url + "/?present=1&batch=16&features=32", PROJECTOR)
    rows, cols = _window(app)
    assert len(rows) < 16 and len(cols) < 32
    notes = app.page.locator(f"{STAGE} .partial").all_inner_texts()
    assert notes == [f"μ, σ over all 32 features; {len(cols)} shown", f"μ, σ over all 16 samples; {len(rows)} shown"]


def _a_clicker_steps_play_with_the_focus_anywhere_on_the_page_but_in_a_control(app: AppPage) -> None:
    """From step 0: PageDown and PageUp (a clicker's keys) and the arrows step the stage wherever the focus is, but in
    a sidebar slider, whose arrows are its own."""
    page = app.page
    assert _step(app) == 0
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    assert page.evaluate("() => document.activeElement === document.body")
    page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")
    assert _step(app) == 2
    page.keyboard.press("PageUp")
    assert _step(app) == 1
    page.keyboard.press("ArrowRight")
    assert _step(app) == 2
    # A sidebar slider (an input under react-aria) keeps its arrows, and moves nothing on the stage.
    page.locator(".st-key-eps input[type=range]").focus()
    page.keyboard.press("ArrowRight")
    app.settle()
    assert _query(app).get("eps") not in (None, "1e-05") and _step(app) == 2


def test_at_rest_the_chosen_cells_row_and_column_are_lit_and_x_and_the_outputs_have_their_own_legends(
    stage_url, open_stage
):
    app = open_stage(stage_url + "/?sample=2&feature=5")
    page = app.page
    for norm in ("ln", "bn"):
        assert page.locator(f"{STAGE} .band.{norm}:not([hidden])").first.is_visible(), norm
    chosen = page.locator(f'{STAGE} .cell[data-block="x"][data-k="{2 * 12 + 5}"]').bounding_box()
    row = page.locator(f"{STAGE} .band.ln:not([hidden])").first.bounding_box()
    column = page.locator(f"{STAGE} .band.bn:not([hidden])").first.bounding_box()
    assert row["y"] <= chosen["y"] and chosen["y"] + chosen["height"] <= row["y"] + row["height"]
    assert column["x"] <= chosen["x"] and chosen["x"] + chosen["width"] <= column["x"] + column["width"]
    legends = page.evaluate(
        f"""() => Array.from({STAGE_ROOT_JS}.querySelectorAll('.legend'),
            (l) => [...l.querySelectorAll('.what, .lo, .hi')].map((e) => e.textContent))"""
    )
    assert [what for what, _, _ in legends] == ["x", "outputs"]
    (_, x_lo, x_hi), (_, y_lo, y_hi) = legends
    assert (y_lo, y_hi) == ("\u22123.0", "+3.0")  # the fixed output range
    assert x_lo == "\u2212" + x_hi[1:] and x_hi != y_hi  # x on a scale of its own


# Each cell of x by its place in the full grid, "i,j": the colour its canvas has near the cell's top left corner
# (its number is drawn in the middle), as [r, g, b].
X_COLOURS_JS = """(r) => {
    const canvas = r.querySelector('canvas.paint');
    const box = canvas.getBoundingClientRect(), dpr = canvas.width / box.width;
    const ctx = canvas.getContext('2d');
    const out = {};
    for (const c of r.querySelectorAll('.cell[data-block="x"]')) {
        const b = c.getBoundingClientRect();
        const px = ctx.getImageData(Math.round((b.left - box.left + 3) * dpr), Math.round((b.top - box.top + 3) * dpr), 1, 1);
        out[c.getAttribute('aria-label')] = Array.from(px.data.slice(0, 3));
    }
    return out;
}"""


def _a_change_of_b_alone_keeps_the_colour_of_every_cell_of_x_that_it_keeps(app: AppPage) -> None:
    """B 8 → 7 keeps rows 0–6 of x (a sample stays itself): their pixels keep their colour, and x's legend its
    ends and the words that say why (issue 46). Row 7 held x's largest |x| at B = 8, which set the scale before."""
    page = app.page
    colours = lambda: page.evaluate(f"() => ({X_COLOURS_JS})({STAGE_ROOT_JS})")  # noqa: E731
    legend = lambda: page.evaluate(  # noqa: E731
        f"() => ['.legend.x .lo', '.legend.x .hi', '.scale-note'].map((q) => {STAGE_ROOT_JS}.querySelector(q).textContent)"
    )
    before, said = colours(), legend()
    assert len(before) == 8 * 12 and "fixed" in said[2]
    app.press("ArrowLeft", ".st-key-batch input[type=range]")
    page.wait_for_function(f"() => {STAGE_ROOT_JS}.querySelectorAll('.cell[data-block=\"x\"]').length === 7 * 12")
    app.settle()
    after = colours()
    assert _query(app)["batch"] == "7" and len(after) == 7 * 12
    assert {at: before[at] for at in after} == after
    assert legend() == said
    assert not app.errors, app.errors


def test_the_stage_builds_its_ranges_from_the_state_table_a_hidden_control_is_locked_and_its_colours_are_the_themes(
    stage_url, open_stage
):
    from lnviz.figures import theme
    from lnviz.views import state

    app = open_stage(stage_url + "/?hide=eps&gain=1.35")
    page = app.page
    assert not page.locator(f"{STAGE} input[name=eps]").is_visible()  # the link holds ε: no range for it
    for param in (state.GAIN, state.BIAS):
        scrub = page.locator(f"{STAGE} input[name={param.key}]")
        assert scrub.is_visible()
        limits = [float(scrub.get_attribute(a)) for a in ("min", "max", "step")]
        assert limits == [param.lo, param.hi, param.step], param.key
    assert page.locator(f"{STAGE} input[name=gain] + output").inner_text() == "1.35"
    assert page.locator(f"{STAGE} input[name=gain]").get_attribute("aria-label") == "gain γ"
    seen = page.evaluate(
        f"""() => {{
            const root = {STAGE_ROOT_JS}.querySelector('.stage');
            const css = (sel, prop) => getComputedStyle(root.querySelector(sel))[prop];
            return {{ ln: css('.title.ln b', 'color'), bn: css('.title.bn b', 'color'),
                      accent: css('input[name=gain]', 'accentColor'), bar: css('.legend .bar', 'backgroundImage') }};
        }}"""
    )

    def rgb(hex_color: str) -> str:
        return "rgb({}, {}, {})".format(*(int(hex_color[k : k + 2], 16) for k in (1, 3, 5)))

    assert (seen["ln"], seen["bn"], seen["accent"]) == tuple(
        map(rgb, (theme.ROLES["LN"], theme.ROLES["BN"], theme.ACCENT))
    )
    assert seen["bar"].startswith("linear-gradient") and "rgb(64, 0, 75)" in seen["bar"], seen["bar"]
    assert not app.errors, app.errors


# When the stage's cells, the first KaTeX formula and the first line of PyTorch (inline code) appear, on the page's
# clock.
FIRST_SEEN_JS = f"""(() => {{
    const t = (window.__firstSeen = {{}});
    const look = () => {{
        const now = performance.now();
        if (t.cells === undefined && {STAGE_ROOT_JS}?.querySelector('.cell')) t.cells = now;
        if (t.katex === undefined && document.querySelector('.katex')) t.katex = now;
        if (t.code === undefined && Array.from(document.querySelectorAll('[data-testid="stMain"] code'))
            .some((c) => c.textContent.startsWith('F.layer_norm'))) t.code = now;
        if (Object.keys(t).length < 3) requestAnimationFrame(look);
    }};
    requestAnimationFrame(look);
}})();"""


def test_a_new_visitor_sees_the_stage_first_and_the_cells_formulas_and_the_share_link_follow(stage_url, browser):
    # Issue 32: KaTeX, its chunk and fonts, and the lines of PyTorch come after the stage, not before it; the lines
    # are inline code, which loads no code highlighter (ui/labs/details.py, _pytorch).
    context = local_context(browser, FIRST_SEEN_JS, viewport=LAPTOP)
    try:
        app = AppPage(context.new_page()).goto(stage_url + "/")
        page = app.page
        page.wait_for_function("() => Object.keys(window.__firstSeen).length === 3", timeout=60_000)
        seen = page.evaluate("window.__firstSeen")
        assert seen["cells"] < seen["katex"] and seen["cells"] < seen["code"], seen
        app.settle()
        assert page.locator(".katex-display").count() == 2  # LN's formula and BN's, typeset
        lines = page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"] code').all_inner_texts()
        assert [t for t in lines if "F.layer_norm" in t] and [t for t in lines if "F.batch_norm" in t], lines
        assert not page.locator('[data-testid="stCode"]').count()  # nothing on the page asks for the highlighter
        page.get_by_text("Share this view").click()
        assert page.locator('[data-testid="stSidebar"] code').first.inner_text().startswith(stage_url)
        assert not app.exceptions() and not app.errors, app.errors
    finally:
        context.close()


def _held_reports(browser: Browser) -> tuple:
    """A context whose pages hold back the stage's report that it is drawn (a rerun request carrying its
    "drawn" trigger) until ``release()``: the page stays as its first run drew it."""
    held: list[bytes] = []
    hold = {"on": True}

    def through(ws) -> None:
        server = ws.connect_to_server()

        def from_page(message: bytes | str) -> None:
            drawn = isinstance(message, bytes) and _kind(message) == "rerun_script" and b"drawn" in message
            if hold["on"] and drawn:
                held.append(message)
            else:
                server.send(message)

        hold["send"] = server.send
        ws.on_message(from_page)

    def release() -> None:
        hold["on"] = False
        assert held, "the stage's report was not held"
        for message in held:
            hold["send"](message)

    def wait(page: Page) -> None:
        """Until the page's stage has sent its report, and it is held."""
        page.wait_for_function(f"() => {STAGE_ROOT_JS}?.querySelector('.stage[data-report]')", timeout=60_000)
        for _ in range(100):
            if held:
                return
            page.wait_for_timeout(100)
        raise AssertionError("the stage's report was not held")

    context = local_context(browser, viewport=LAPTOP)
    context.route_web_socket(re.compile(r".*/_stcore/stream$"), through)
    return context, wait, release


def _elements(frame: bytes | str) -> list[str]:
    """The kinds of the elements a message from the server brings ("heading", "slider", ...)."""
    if isinstance(frame, str):
        return []
    msg = ForwardMsg.FromString(frame)
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return []
    return [msg.delta.new_element.WhichOneof("type")]


MAIN_KINDS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]'),
    (e) => e.querySelector('[data-testid]')?.getAttribute('data-testid'))"""
SIDEBAR_WIDGETS = (
    '[data-testid="stSidebar"] [data-testid="stSlider"], [data-testid="stSidebar"] [data-testid="stSelectbox"]'
)


def test_a_new_visitors_first_run_draws_the_stage_alone_at_the_links_values_and_the_page_comes_whole_around_it(
    stage_url, browser
):
    # Issue 32: the first run sends the title and the stage, no widget; the stage's report reruns the page whole,
    # and the stage stays the same element, in the same place, with the same numbers.
    query = {"batch": "10", "features": "14", "seed": "4", "gain": "1.5", "bias": "0.25", "sample": "3",
             "feature": "6", "affine": "true"}  # fmt: skip
    context, wait_held, release = _held_reports(browser)
    try:
        page = context.new_page()
        app = AppPage(page)
        page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
        elements: list[str] = []  # the kind of each element the server sent
        page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: elements.extend(_elements(frame))))
        url = stage_url + "/?" + "&".join(f"{k}={v}" for k, v in query.items()) + f"&v={links.LINK_VERSION}"
        page.goto(url, wait_until="domcontentloaded")  # not settled: its last request, the report, is held
        wait_held(page)
        # What the first run sent (the report held, nothing else can have come): the title, the stage and its
        # caption (this grid is wider than the stage's window), the lecture style; no widget.
        assert set(elements) == {"heading", "bidi_component", "markdown", "html"}, elements
        assert page.evaluate(MAIN_KINDS_JS)[:2] == ["stHeading", "stBidiComponentIsolated"]
        page.evaluate(f"() => {{ window.__stageRoot = {STAGE_ROOT_JS}.querySelector('.stage'); }}")
        top = page.locator(STAGE).bounding_box()["y"]
        i, j = 3, 6  # the link's chosen cell is lit, and its numbers are torch's at the link's values
        cell = page.locator(f'{STAGE} .cell[data-block="x"][data-k="{i * 12 + j}"]')
        cell.hover()
        page.wait_for_function(f"() => !{STAGE_ROOT_JS}.querySelector('.tip').hidden")
        first, want = _shown(app), _torch(query, i, j)
        for name, value in want.items():
            assert first[name] == pytest.approx(float(value), abs=1e-6), name
        page.mouse.move(0, 0)

        release()
        app.settle()
        assert page.locator(SIDEBAR_WIDGETS).count() >= 5  # the input's and the normalization's
        assert page.locator('.st-key-gain [data-testid="stSliderThumbValue"]').inner_text() == "1.50"
        assert page.evaluate("window.__stageRoot.isConnected"), "the stage was built again, not updated"
        assert page.locator(STAGE).bounding_box()["y"] == top
        cell.hover()
        page.wait_for_function(f"() => !{STAGE_ROOT_JS}.querySelector('.tip').hidden")
        assert _shown(app) == first
        assert {k: _query(app).get(k) for k in query} == query
        assert not app.exceptions() and not app.errors, app.errors
    finally:
        context.close()


def test_a_link_the_door_changed_draws_the_stage_first_and_its_note_with_the_whole_page(stage_url, browser):
    # The door (server/door.py) checks a link's values before the page runs: a value out of range is today's default in
    # the address the browser is sent to, so the first run may draw the stage alone, and the note comes with the
    # widgets in the run the stage's report asks for.
    context, wait_held, release = _held_reports(browser)
    try:
        page = context.new_page()
        app = AppPage(page)
        page.goto(stage_url + f"/?gain=99&v={links.LINK_VERSION}", wait_until="domcontentloaded")
        wait_held(page)
        assert "gain=99" not in page.url  # redirected
        assert page.locator(SIDEBAR_WIDGETS).count() == 0  # the report held: the first run drew the stage alone
        release()
        app.settle()
        expect(page.locator(SIDEBAR_WIDGETS).nth(4)).to_be_attached()
        assert "Gain γ: 99" in page.locator('[data-testid="stAlert"]').first.inner_text()
        assert not app.errors, app.errors
    finally:
        context.close()


# The page's socket sends the stage's report 400 ms after the page asked it to, as a busy machine may: Streamlit's
# widget manager sends a trigger from a timer of its own, after the stage has marked its report sent. Whichever of
# this and the harness's own wrapper of send (INSTRUMENT_JS) is installed first, the harness sees the request only
# when it really goes out: the setter catches a wrapper installed after this one.
LATE_REPORT_JS = """(() => {
    const proto = WebSocket.prototype, native = proto.send;
    let outer = null, inside = false;
    window.__lateReports = 0;
    function late(data) {
        if (inside) return native.call(this, data);
        const go = () => { inside = true; try { return (outer || native).call(this, data); } finally { inside = false; } };
        const bytes = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
            : data instanceof ArrayBuffer ? new Uint8Array(data) : null;
        if (!bytes || !new TextDecoder().decode(bytes).includes('drawn')) return go();
        window.__lateReports += 1;
        setTimeout(go, 400);
    }
    Object.defineProperty(proto, 'send', {configurable: true, get: () => late, set: (f) => { outer = f; }});
})()"""


def test_a_settle_waits_for_the_stage_reports_rerun_however_late_the_page_sends_it(stage_url, browser):
    # A CI run (2026-12-06) opened a link in a new tab and found no chart: its settle had taken the first run's
    # page, the title and the stage alone, for the whole, in the moment between the report and its request.
    context = local_context(browser, viewport=LAPTOP)
    try:
        page = context.new_page()
        page.add_init_script(LATE_REPORT_JS)
        app = AppPage(page)
        page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
        app.goto(stage_url + f"/?batch=6&features=10&seed=3&view=charts&v={links.LINK_VERSION}")
        assert page.evaluate("window.__lateReports") == 1, "the stage's report did not go out late, or twice"
        assert [c["key"] for c in app.charts()] == ["grid_chart", "outputs_chart"], "settled before the report's run"
        assert page.locator(SIDEBAR_WIDGETS).count() > 0, "settled before the report's run: no widget"
        assert not app.errors, app.errors
    finally:
        context.close()


SIDEBAR_GAIN = '[data-testid="stSidebar"] .st-key-gain input[type="range"]'
ASKED_JS = "performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/api/stage/'))"


def test_a_press_on_the_sidebars_gain_brings_torchs_numbers_to_the_stage_before_the_rerun(stage_url, browser):
    """The stage asks the server's route (ui/stage/stage_at.py) as the page's own γ slider moves (issue 32): with the
    page's reruns held back, a key press on the sidebar's γ still puts torch's numbers at the new γ on the stage;
    let through, the rerun brings the same γ to the URL."""
    query = {"batch": "10", "features": "14", "seed": "4", "gain": "1.5", "bias": "0.25"}
    held: list[bytes] = []
    hold = {"on": False}

    def through(ws) -> None:
        server = ws.connect_to_server()

        def from_page(message: bytes | str) -> None:
            if hold["on"] and isinstance(message, bytes) and _kind(message) == "rerun_script":
                held.append(message)
            else:
                server.send(message)

        hold["send"] = server.send
        ws.on_message(from_page)

    context = local_context(browser, viewport=LAPTOP)
    try:
        page = context.new_page()
        page.route_web_socket(re.compile(r".*/_stcore/stream$"), through)
        app = AppPage(page)
        page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
        url = stage_url + "/?" + "&".join(f"{k}={v}" for k, v in query.items()) + f"&v={links.LINK_VERSION}"
        app.goto(url)
        page.wait_for_function(f"() => {STAGE_ROOT_JS}?.querySelector('.stage .cell')", timeout=30_000)
        app.settle()
        readout = page.locator(f"{STAGE} input[name=gain] + output")
        assert readout.inner_text() == "1.50"

        hold["on"] = True
        page.locator(SIDEBAR_GAIN).focus()
        # Focused, the slider's next values either side are asked ahead; the press then asks nothing.
        page.wait_for_function(f"() => {ASKED_JS}.filter((e) => e.includes('ahead=1')).length === 2")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            f"() => {STAGE_ROOT_JS}.querySelector('input[name=gain] + output').textContent === '1.55'", timeout=20_000
        )
        assert held, "the press's rerun was not held: the stage may have had it from the rerun"
        assert all("ahead=1" in url for url in page.evaluate(ASKED_JS)), "the press asked what was asked ahead"
        i, j = 3, 6
        page.locator(f'{STAGE} .cell[data-block="x"][data-k="{i * 12 + j}"]').hover()
        page.wait_for_function(f"() => !{STAGE_ROOT_JS}.querySelector('.tip').hidden")
        shown, want = _shown(app), _torch({**query, "gain": "1.55"}, i, j)
        for name, value in want.items():
            assert shown[name] == pytest.approx(float(value), abs=1e-6), name

        hold["on"] = False
        for message in held:
            hold["send"](message)
        app.settle()
        assert _query(app)["gain"] == "1.55"
        assert readout.inner_text() == "1.55"
        assert _shown(app) == shown, "the rerun changed the stage's numbers"
        assert not app.errors, app.errors
    finally:
        context.close()
