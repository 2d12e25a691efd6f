"""The class poll in real browsers: a presenter and three phones, each its own browser context (its own cookies),
through a vote, a changed vote, a reveal, a second round, torch's answer, a reload and a late join (the same across
two replicas sharing Redis is in tests/test_replicas.py), where each phone draws the reveal, Ask again, the answer
and Next from the room's stream with no run of its page on the server (the server counts them: ui.poll.live.RUNS_FILE);
a question through peer instruction with the presenter's own view on a second device; a presenter's double click;
the projector's every question at 1280 × 720; and the phone's element at 390 × 844, the concept check's too
(issue 49)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import zxingcpp
from browser import SETTLE_TIMEOUT, AppPage, overlapping
from PIL import Image
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect
from test_browser_a11y import _AXE_JS, _TEXTS_JS, _TICK_SIZES_JS, AXE, UPSTREAM

from harness.chromium import decode_array
from lnviz.figures import theme
from lnviz.labs.classroom import check, questions
from lnviz.labs.classroom.text import TAKEN_HERE

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
PROJECTOR = {"width": 1280, "height": 720}
WIDE = {"width": 1920, "height": 1080}  # a projector's full HD
SEEN_S = 15  # the stream looks every 0.5 s; a loaded 2-core machine may take a few more to draw
ELEMENT = ".st-key-class_phone .lnviz-class"  # the phone's element (its shadow DOM: Playwright's CSS pierces it)
CHOICES = f"{ELEMENT} label.choice"
GUESS = f"{ELEMENT} form.guess input"
RESULTS = f".st-key-class_results, {ELEMENT} section.results"  # the projector's text, a phone's element
COUNT = ".st-key-class_count .lnviz-class .value"


def open_in(context, url: str) -> AppPage:
    page = context.new_page()
    page.on("pageerror", lambda e: pytest.fail(f"pageerror: {e}"))
    return AppPage(page).goto(url)


def start_room(presenter: AppPage) -> str:
    presenter.page.locator(".st-key-class_start button").click()
    presenter.page.locator(".st-key-class_code").wait_for(timeout=SETTLE_TIMEOUT * 1000)
    presenter.settle()
    (code,) = parse_qs(urlparse(presenter.page.url).query)["room"]
    return code


def asked(phone: AppPage) -> None:
    """Until the phone's element shows answer controls: a choice's options, or a guess's box."""
    phone.page.locator(f"{CHOICES}, {GUESS}").first.wait_for(timeout=SEEN_S * 1000)


def pick(phone: AppPage, option: int) -> None:
    """A tap on option ``option`` of a choice question; for a number question, the guess ``option`` typed and
    sent with Enter (as the Send button does)."""
    asked(phone)
    if phone.page.locator(CHOICES).count():
        phone.page.locator(CHOICES).nth(option).click()
    else:
        phone.page.locator(GUESS).fill(str(option))
        phone.page.locator(GUESS).press("Enter")


def answer(phone: AppPage, option: int) -> None:
    """:func:`pick`, then until the phone says the store holds it."""
    pick(phone, option)
    expect(phone.page.locator(f"{ELEMENT} .note")).to_have_text(re.compile("Your answer is in"), timeout=SEEN_S * 1000)
    phone.settle()


def count(presenter: AppPage) -> str:
    return presenter.page.locator(COUNT).inner_text()


def wait_count(presenter: AppPage, n: int) -> None:
    expect(presenter.page.locator(COUNT)).to_have_text(str(n), timeout=SEEN_S * 1000)


def presenter_button(presenter: AppPage, action: str):
    """The presenter's ``action`` button as drawn now: its key carries the room's version (``class_next_v3``)."""
    # A button with help has two, and a run may keep a hidden copy of its element: the one on screen.
    return presenter.page.locator(f"[class*='st-key-class_{action}_v'] button").filter(visible=True).first


# The room's version as the presenter's buttons were drawn (their keys: ``class_next_v3``), -1 with none drawn.
_VERSION_JS = """() => Math.max(-1, ...Array.from(document.querySelectorAll('[class*="st-key-class_"]'), (e) => {
    const m = e.className.match(/st-key-class_[a-z_]+_v([0-9]+)/);
    return m ? +m[1] : -1;
}))"""


def press(presenter: AppPage, action: str) -> None:
    """A click on the presenter's ``action`` button, until the page draws the room it moved to (a version on).

    In two loaded runs of the suite a press early in the projector's sweep never reached the room (the chart it
    reveals was not drawn in 15 s); on an idle machine, or beside three busy loops, never. Such a press is pressed
    again, as a lecturer would, and said in a warning, so a run that needs it shows it."""
    presenter.settle()  # the run the last click started is over: its elements replaced the earlier ones
    before = presenter.page.evaluate(_VERSION_JS)
    moved = f"() => ({_VERSION_JS})() > {before}"
    presenter_button(presenter, action).click()
    presenter.settle()
    try:
        presenter.page.wait_for_function(moved, timeout=SEEN_S * 1000)
    except PlaywrightTimeout:
        warnings.warn(
            f"the press of {action!r} on the room at version {before} did not reach it; pressed again", stacklevel=2
        )
        presenter_button(presenter, action).click()
        presenter.settle()
        presenter.page.wait_for_function(moved, timeout=SETTLE_TIMEOUT * 1000)


def results(app: AppPage) -> str:
    box = app.page.locator(RESULTS).first
    box.wait_for(timeout=SEEN_S * 1000)
    return box.inner_text()


def checked(phone: AppPage) -> int | None:
    """The option a choice question shows as chosen, or the guess a number question shows."""
    asked(phone)
    radios = phone.page.locator(f"{CHOICES} input[type=radio]")
    if not radios.count():
        shown = phone.page.locator(GUESS).input_value()
        return round(float(shown)) if shown else None
    for i in range(radios.count()):
        if radios.nth(i).is_checked():
            return i
    return None


def page_runs(path: Path | None) -> Callable[[], int]:
    """How many runs of a phone's page the server has made so far (ui.poll.live.RUNS_FILE); -1 when not counted."""
    return lambda: path.read_text().split().count("phone") if path and path.exists() else -1


def looks(presenter: AppPage, phone: AppPage) -> None:
    """The revealed results as a projector and a phone show them: the projector's chart with lecture-sized ticks and
    no text over text, the phone's as text (no chart: each phone's rerun at the reveal stays cheap), and no serious
    accessibility violation on either."""
    sizes = [s for chart in presenter.page.evaluate(_TICK_SIZES_JS) for s in chart]
    assert sizes and min(sizes) >= theme.FONT_SIZE * theme.LECTURE_SCALE - 0.5, sorted(set(sizes))
    charts = presenter.page.evaluate(_TEXTS_JS)
    assert charts and all(charts)
    assert not any(overlapping(texts) for texts in charts), charts
    assert not phone.charts()
    assert "torch's answer" in results(phone)
    for app in (presenter, phone):
        app.page.add_script_tag(path=str(AXE))
        violations = app.page.evaluate(_AXE_JS, UPSTREAM)
        assert not violations, violations


def class_round(
    base: str, phone_bases: list[str], contexts, check_looks: bool = False, runs: Callable[[], int] | None = None
) -> None:
    """The round of the module's docstring; ``runs()``, where the server counts its phone page runs, must not move
    while the phones draw the reveal, Ask again and Next."""
    runs = runs or page_runs(None)
    presenter = open_in(contexts(PROJECTOR), f"{base}/class?present=1")
    code = start_room(presenter)
    assert count(presenter) == "0"
    assert not presenter.page.locator(".st-key-class_results").count()  # nothing shown before the reveal
    phones = [open_in(contexts(PHONE), f"{b}/class?room={code}") for b in phone_bases]
    for phone in phones:
        assert not phone.page.locator("[class*='st-key-class_reveal']").count()  # a phone gets no presenter buttons
    picks = [0, 1, 1]
    for phone, pick in zip(phones, picks, strict=True):
        answer(phone, pick)
    wait_count(presenter, 3)
    answer(phones[0], 1)  # changes its mind: still three voters
    picks[0] = 1
    presenter.page.wait_for_timeout(2000)
    assert count(presenter) == "3"

    for phone in phones:
        phone.settle()
    before = runs()
    press(presenter, "reveal")
    projected = results(presenter)
    for phone in phones:
        shown = results(phone)
        assert "— 3 votes" in shown and "right" not in shown and "torch" not in shown, shown  # the class's, alone
        assert "Your answer:" in phone.page.locator(f"{ELEMENT} .mine").inner_text()
    assert "3" in projected and "right" not in projected.lower()

    press(presenter, "again")
    for phone in phones:
        asked(phone)
        assert checked(phone) is None  # a new round: nothing chosen yet
    assert runs() == before  # the reveal and Ask again reached every phone with no run of its page
    assert not phones[0].page.locator(f"{ELEMENT} .why").count()
    answer(phones[1], 0)
    phones[1].page.reload()  # a reconnect: the cookie keeps the voter, and the answer shows again
    phones[1].settle()
    assert checked(phones[1]) == 0
    wait_count(presenter, 1)
    presenter.page.reload()  # the projector's tab reloaded: its cookie keeps the presenter's buttons
    presenter.settle()
    presenter_button(presenter, "reveal").wait_for(timeout=SEEN_S * 1000)
    press(presenter, "reveal")
    before = runs()
    press(presenter, "answer")
    for phone in phones:
        why = questions.bank()[0].why.replace("`", "").replace("**", "")  # fetched when shown, not held before
        expect(phone.page.locator(f"{ELEMENT} .why p")).to_have_text(why, timeout=SEEN_S * 1000)
    assert runs() == before  # torch's answer too
    late = open_in(contexts(PHONE), f"{phone_bases[-1]}/class?room={code}")  # joins after torch's answer
    assert results(late)
    text = results(phones[2])
    assert "2" in text  # the second round is shown beside the first
    if check_looks:
        looks(presenter, late)

    for phone in [*phones, late]:
        phone.settle()
    before = runs()
    press(presenter, "next")
    for phone in [*phones, late]:
        phone.page.get_by_text(re.compile(r"^Question 2 of")).first.wait_for(timeout=SEEN_S * 1000)
        asked(phone)
    assert runs() == before  # Next too


@pytest.fixture(scope="module")
def counted(tmp_path_factory) -> Iterator[tuple[str, Callable[[], int]]]:
    """A server of this module's own, under ``server.baseUrlPath`` (so the element's stream must carry the prefix),
    that counts its phone page runs (ui.poll.live.RUNS_FILE); its URL and the count."""
    from harness.server import free_port, start_app, stop, wait_app
    from ui.poll import live

    where = tmp_path_factory.mktemp("class_runs")
    app = start_app(free_port(), where / "streamlit.log", env={live.RUNS_FILE: str(where / "runs")}, base_path="lnviz")
    try:
        wait_app(app)
        yield app.url, page_runs(where / "runs")
    finally:
        stop(app.proc)


def test_a_presenter_and_three_phones_vote_change_reveal_ask_again_reload_and_join_late(counted, contexts):
    base, runs = counted
    assert base.endswith("/lnviz")
    class_round(base, [base] * 3, contexts, check_looks=True, runs=runs)
    assert runs() >= 3 + 4  # the count is kept: each phone's first run, and a run per vote at least


def take_to(presenter: AppPage, contexts, viewport: dict) -> AppPage:
    """The presenter's deliberate act: in lecture mode's sidebar, "Present from another device", and the one-time
    link its box shows opened in another browser (its own cookies); the box and the sidebar closed again, so the
    projector shows the class what it should."""
    presenter.page.locator("[data-testid=stExpandSidebarButton]").first.click()
    presenter.page.locator(".st-key-class_take button").first.click()  # a button with help has two
    shown = presenter.page.get_by_text(re.compile(r"/class\?take=")).first
    shown.wait_for(timeout=SEEN_S * 1000)
    link = shown.inner_text().strip()
    presenter.page.keyboard.press("Escape")
    presenter.page.locator("[data-testid=stSidebarCollapseButton]").first.click()
    own = open_in(contexts(viewport), link)
    own.page.get_by_text(TAKEN_HERE).wait_for(timeout=SEEN_S * 1000)
    return own


def shown_text(app: AppPage) -> str:
    """What a page shows, the class's element (its shadow DOM) included."""
    return app.page.evaluate(_SHOWN_JS)


# The page's text, and each element's in its shadow root (innerText does not enter one).
_SHOWN_JS = """() => {
  const parts = [document.body.innerText];
  for (const e of document.querySelectorAll('*')) if (e.shadowRoot) parts.push(e.shadowRoot.textContent);
  return parts.join('\\n');
}"""


def test_the_qr_code_joins_and_a_question_runs_through_peer_instruction_on_the_presenters_own_view(
    app_server, contexts, tmp_path
):
    """The projector's QR code reads back as the join link it shows and opens the room. Then peer instruction on a
    choice question, with the presenter's own view on another device (a one-time link) and three phones: round 1
    revealed without torch's answer on the phones and the projector, the share right and the advice on the
    presenter's view only, round 2, then torch's answer with how many moved to it, everywhere."""
    presenter = open_in(contexts(PROJECTOR), f"{app_server}/class?present=1")
    code = start_room(presenter)
    shown = presenter.page.get_by_text("Join at").inner_text().removeprefix("Join at").strip()
    assert shown.endswith(f"/class?room={code}"), shown
    qr = presenter.page.locator(QR)
    qr.screenshot(path=tmp_path / "qr.png")  # the code as the projector draws it: segno's SVG, Chromium's pixels
    (read,) = zxingcpp.read_barcodes(Image.open(tmp_path / "qr.png").convert("L"))
    assert read.format == zxingcpp.BarcodeFormat.QRCode and read.text == shown
    phones = [open_in(contexts(PHONE), read.text)]
    asked(phones[0])  # the scanned link joins the room
    phones += [open_in(contexts(PHONE), shown) for _ in range(2)]
    own = take_to(presenter, contexts, PHONE)  # the lecturer's phone
    press(own, "next")
    question = questions.bank()[1]
    assert question.kind == "choice" and question.answer == 0
    for phone, option in zip(phones, (0, 0, 1), strict=True):  # 2 of 3 right: 67 %, "turn to your neighbour"
        phone.page.get_by_text(re.compile(r"^Question 2 of")).first.wait_for(timeout=SEEN_S * 1000)
        answer(phone, option)
    expect(own.page.get_by_text("Right so far: 2 of 3 (67 %)")).to_be_visible(timeout=SEEN_S * 1000)

    press(own, "reveal")
    expect(own.page.get_by_text("Right: 2 of 3 (67 %)")).to_be_visible(timeout=SEEN_S * 1000)
    expect(own.page.locator(".st-key-class_advice")).to_contain_text("Between 35 and 70 % right")
    own.page.screenshot(path=tmp_path / "own-reveal.png")
    chart_drawn(presenter)
    for phone in phones:
        expect(phone.page.locator(f"{ELEMENT} p.over")).to_be_visible(timeout=SEEN_S * 1000)
    presenter.settle()
    presenter.page.screenshot(path=tmp_path / "projector-reveal.png")
    phones[2].page.screenshot(path=tmp_path / "phone-reveal.png")
    assert "2 votes" in results(presenter)
    for app in [presenter, *phones]:  # the class's answers, and nothing of who is right
        seen = " ".join(shown_text(app).split())  # "67\u00a0%" as "67 %"
        assert "2 votes" in seen, seen
        assert not re.search(r"\bright\b", seen, re.IGNORECASE), seen  # never "✓ right", "(right)", "Right: …"
        for secret in ("67 %", "2 of 3", "Between 35", "torch's answer:", question.why[:40]):
            assert secret not in seen, (secret, seen)
    assert not off_screen(presenter, BUTTONS, CHART, QR, CODE, JOIN)
    qr.screenshot(path=tmp_path / "qr_revealed.png")  # a student who comes late still finds the QR code, smaller
    (late,) = zxingcpp.read_barcodes(Image.open(tmp_path / "qr_revealed.png").convert("L"))
    assert late.text == shown == presenter.page.get_by_text("Join at").inner_text().removeprefix("Join at").strip()

    press(own, "again")
    for phone, option in zip(phones, (0, 0, 0), strict=True):  # the third phone moved to torch's answer
        asked(phone)
        answer(phone, option)
    expect(own.page.get_by_text("Right so far: 3 of 3 (100 %)")).to_be_visible(timeout=SEEN_S * 1000)
    press(own, "reveal")
    press(own, "answer")
    moved = (
        "Right in round 1: 2 of 3 (67 %); in round 2: 3 of 3 (100 %). "
        "Of the 3 who answered both rounds, 1 moved to torch's answer and 0 away from it."
    )
    expect(own.page.get_by_text(moved)).to_be_visible(timeout=SEEN_S * 1000)
    for phone in phones:
        expect(phone.page.locator(f"{ELEMENT} p.outcome")).to_have_text(moved, timeout=SEEN_S * 1000)
        expect(phone.page.locator(f"{ELEMENT} .mine")).to_contain_text("(right)")
    expect(presenter.page.get_by_text(moved)).to_be_visible(timeout=SEEN_S * 1000)
    presenter.settle()
    assert not off_screen(presenter, BUTTONS, CHART, QR, CODE, JOIN)
    presenter.page.screenshot(path=tmp_path / "projector-answer.png")
    phones[2].page.screenshot(path=tmp_path / "phone-answer.png")
    own.page.screenshot(path=tmp_path / "own-answer.png")


def question_number(presenter: AppPage) -> int:
    """The number of the question the projector shows ("Question 2 of 12 · round 1")."""
    caption = presenter.page.get_by_text(re.compile(r"^Question \d+ of")).first.inner_text()
    return int(caption.split()[1])


def double_click(app: AppPage, action: str, apart_ms: int = 30) -> None:
    """Two clicks on the presenter's ``action`` button where it is drawn now, ``apart_ms`` apart, as a hurried
    hand makes them: the second lands on the same spot, whatever the page has redrawn there by then."""
    app.settle()
    box = presenter_button(app, action).bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    app.page.mouse.click(x, y)
    app.page.wait_for_timeout(apart_ms)
    app.page.mouse.click(x, y)
    app.page.wait_for_timeout(1500)  # both clicks' runs, however the server took them
    app.settle()


def test_a_double_click_on_next_moves_the_room_one_question(app_server, contexts):
    presenter = open_in(contexts(PROJECTOR), f"{app_server}/class?present=1")
    start_room(presenter)
    assert question_number(presenter) == 1
    double_click(presenter, "next")
    assert question_number(presenter) == 2
    press(presenter, "next")  # a press on the page as it is now still moves it
    assert question_number(presenter) == 3


# What a projector must show at once, and where it doesn't: each element outside the viewport, and each button
# label cut ("Ask aga…": wider than its box).
_OFF_SCREEN_JS = """([selectors, labelled]) => {
  window.scrollTo(0, 0);
  const wrong = [];
  const inside = (r) => r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  for (const selector of selectors) {
    const found = [...document.querySelectorAll(selector)];
    if (!found.length) wrong.push(`${selector}: none`);
    for (const e of found) {
      const r = e.getBoundingClientRect();
      if (!inside(r)) wrong.push(`${selector} "${e.innerText.trim()}": ${Math.round(r.top)}..${Math.round(r.bottom)} px`);
      for (const part of labelled.includes(selector) ? [e, ...e.querySelectorAll('*')] : []) {
        if (part.scrollWidth > part.clientWidth + 1 && part.clientWidth > 0) {
          wrong.push(`${selector} "${e.innerText.trim()}": cut to ${part.clientWidth} of ${part.scrollWidth} px`);
          break;
        }
      }
    }
  }
  return wrong;
}"""
BUTTONS = ".st-key-class_buttons button"
CHART = ".st-key-class_chart .js-plotly-plot, [data-testid=stPlotlyChart] .js-plotly-plot"
# The code's heading with the widest letters a code may have (W and M), as the projector writes it (a no-break
# hyphen): whether it takes more than one line, or passes the window's edge. Put back as it was.
_WIDEST_CODE_JS = """(box) => {
  const h = document.querySelector(`${box} h1, ${box} h2, ${box} h3, ${box} h4`);
  const kept = h.textContent;
  h.textContent = 'Code WWMW\\u2011MWWM';
  const range = document.createRange();
  range.selectNodeContents(h);
  const rects = [...range.getClientRects()];
  const wrong = new Set(rects.map((r) => Math.round(r.top))).size > 1 || rects.some((r) => r.right > innerWidth);
  h.textContent = kept;
  return wrong;
}"""
QR = "[data-testid=stImage] img"
CODE = ".st-key-class_code"
JOIN = "a[href*='/class?room=']"  # the join link, as text
SIDEBAR_CLOSED = "[data-testid=stExpandSidebarButton]"
CHECK_COUNT = ".st-key-class_check_count .lnviz-class .value"
_BOXES_JS = "(all) => all.map((e) => e.getBoundingClientRect().toJSON())"


def chart_drawn(presenter: AppPage) -> None:
    """Until the projector's chart is drawn, after a press that reveals: the presenter's own run draws it, not the
    stream, so the wait is bounded by a page's settle, not by the stream's :data:`SEEN_S`."""
    presenter.page.locator(CHART).first.wait_for(timeout=SETTLE_TIMEOUT * 1000)


def off_screen(presenter: AppPage, *selectors: str) -> list[str]:
    return presenter.page.evaluate(_OFF_SCREEN_JS, [list(selectors), [BUTTONS, CODE]])


# The projector's chart as plotly holds it: each trace's type and z (a cells question's shares), each shape's name.
_CHART_DATA_JS = """(selector) => {
  const plot = document.querySelector(selector);
  return {
    traces: plot.data.map((t) => ({ type: t.type || 'scatter', z: t.z ?? null, name: t.name, x: t.x ?? null })),
    shapes: (plot.layout.shapes || []).map((s) => s.name || ''),
  };
}"""
# A cells question's reveal on the projector: each share's text against its cell (the heatmap's axis lengths over
# its columns and rows, less the gaps), as [text's width, cell's width, text's height, cell's height].
_SHARES_JS = """(selector) => {
  const gd = document.querySelector(selector);
  return gd._fullData.filter((t) => t.type === 'heatmap').flatMap((t) => {
    const x = gd._fullLayout[t.xaxis.replace('x', 'xaxis')], y = gd._fullLayout[t.yaxis.replace('y', 'yaxis')];
    const w = x._length / t.z[0].length - t.xgap, h = y._length / t.z.length - t.ygap;
    const texts = gd.querySelectorAll(`.subplot.${t.xaxis}${t.yaxis} .heatmap-label text`);
    return Array.from(texts, (e) => e.getBoundingClientRect()).map((r) => [r.width, w, r.height, h]);
  });
}"""
CELL = f"{ELEMENT} .grid button.cell"
SHOWN_CELL = f"{ELEMENT} .cells-result .cell"
TAPS = {1: [15, 9, 16], 2: [3, 9, 15, 21]}  # bn-mu-cells: round 1 one too many and one short, round 2 torch's cells


def tap_cells(phone: AppPage, cells: list[int]) -> None:
    """Taps on ``cells``, each checked pressed, then Send, until the phone says the store holds them."""
    for k in cells:
        target = phone.page.locator(f"{CELL}[data-cell='{k}']")
        target.click()
        expect(target).to_have_attribute("aria-pressed", "true")
    phone.page.locator(f"{ELEMENT} form.cells button.send").click()
    expect(phone.page.locator(f"{ELEMENT} .note")).to_have_text(re.compile("Your answer is in"), timeout=SEEN_S * 1000)


# The phone widths a cells question's targets are measured at, one resize of the same page each (issue 49).
PHONE_WIDTHS = (360, 375, 390, 414, 430)

# A cells question's form as a phone draws it: every button's box (the cells, then Send), the picker's box, and,
# with the picker scrolled to its end, the last column's boxes and the row names' left edges (back to its start).
_TARGETS_JS = """(form) => {
  const box = (e) => e.getBoundingClientRect().toJSON();
  const picker = form.querySelector('.grid');
  const targets = Array.from(form.querySelectorAll('button'), box);
  const cols = getComputedStyle(picker).gridTemplateColumns.split(' ').length - 1;
  const cells = Array.from(picker.querySelectorAll('button.cell'));
  picker.scrollLeft = picker.scrollWidth;
  const last = cells.filter((c, k) => k % cols === cols - 1).map(box);
  const names = Array.from(picker.querySelectorAll('.row-name'), (e) => box(e).left);
  picker.scrollLeft = 0;
  return {targets, picker: box(picker), last, names};
}"""


def phone_grid_fits(phone: AppPage, question) -> None:
    """A cells question on a phone 360 to 430 px wide: every tap target (each cell, Send) at least 44 × 44 px; the
    grid within the screen's width, or scrolled sideways to its last column under row names that stay; at 390 ×
    844 Send on screen, and the marked cell's star."""
    cells = phone.page.locator(CELL)
    cells.first.wait_for(timeout=SEEN_S * 1000)
    form = phone.page.locator(f"{ELEMENT} form.cells")
    for width in PHONE_WIDTHS:
        phone.page.set_viewport_size({"width": width, "height": PHONE["height"]})
        drawn = form.evaluate(_TARGETS_JS)
        targets, grid, last = drawn["targets"], drawn["picker"], drawn["last"]
        assert len(targets) == question.cells + 1, question.id
        small = [(k, b["width"], b["height"]) for k, b in enumerate(targets) if min(b["width"], b["height"]) < 44]
        assert not small, (question.id, width, small[:3])
        assert grid["left"] >= 0 and grid["right"] <= width, (question.id, width, grid)
        assert len(last) == question.rows and all(b["right"] <= grid["right"] + 0.5 for b in last), (width, last)
        assert {round(left) for left in drawn["names"]} == {round(grid["left"])}, (question.id, width, drawn["names"])
    phone.page.set_viewport_size(PHONE)
    send = phone.page.locator(f"{ELEMENT} form.cells button.send").bounding_box()
    assert send["y"] + send["height"] <= PHONE["height"], (question.id, send)
    assert cells.nth(question.marked).inner_text() == "★"


def test_the_projector_shows_every_questions_reveal_button_results_and_whole_buttons_at_1280_by_720(
    app_server, contexts, tmp_path
):
    """Every question revealed on the projector, a phone beside it: at every cells question the phone's grid fits
    390 × 844; on bn-mu-cells it taps cells in two rounds of peer instruction, and the projector's per-cell shares are
    its taps, torch's cells outlined only after Show answer; on the drag question it drags and sends."""
    presenter = open_in(contexts(PROJECTOR), f"{app_server}/class?present=1")
    code = start_room(presenter)
    phone = open_in(contexts(PHONE), f"{app_server}/class?room={code}")
    for number, question in enumerate(questions.bank(), 1):
        assert question_number(presenter) == number
        assert not off_screen(presenter, BUTTONS), (question.id, off_screen(presenter, BUTTONS))
        constructed = question.id == "bn-mu-cells"
        # A second round makes a chart taller; on the constructed question the phone votes in both.
        rounds = (1, 2) if len(question.choices) == 4 or constructed else (1,)
        if question.kind == "cells" or question.drag:
            phone.page.get_by_text(re.compile(rf"^Question {number} of")).first.wait_for(timeout=SEEN_S * 1000)
        if question.kind == "cells":
            phone_grid_fits(phone, question)
        if question.drag:
            send = phone.page.locator(f"{ELEMENT} form.drag button.send")
            expect(send).to_be_disabled()  # nothing is sent before the slider is touched
            slider, shown = (phone.page.locator(f"{ELEMENT} form.drag {e}") for e in ("input[type=range]", "output"))
            slider.fill("3.8")
            expect(shown).to_have_text("4.0")  # snapped to the question's stops, every 0.5 (Question.step)
            for key, value in (("ArrowRight", "4.5"), ("ArrowLeft", "4.0")):  # the keyboard moves a stop at a time
                slider.press(key)
                expect(shown).to_have_text(value)
            phone.page.screenshot(path=tmp_path / "phone-drag.png")
            send.click()
            expect(phone.page.locator(f"{ELEMENT} .note")).to_have_text(re.compile("Your answer is in"))
        for k in rounds:
            if k == 2:
                press(presenter, "again")
            if constructed:
                tap_cells(phone, TAPS[k])
                wait_count(presenter, 1)
                if k == 1:
                    phone.page.screenshot(path=tmp_path / "phone-cells.png")
            # The last round's torch's answer at once (the fullest screen: the right option marked, what the class
            # got, why); round 1 of two as peer instruction reveals it, the class's answers alone.
            press(presenter, "answer" if k == rounds[-1] else "reveal")
            chart_drawn(presenter)
            wrong = off_screen(presenter, BUTTONS, CHART, QR, CODE, JOIN)  # how to join stays, for a late student
            assert not wrong, (question.id, f"round {k}", wrong)
            if number == k == 1:  # the widest letters a code may have fit its one line beside the QR code
                assert not presenter.page.evaluate(_WIDEST_CODE_JS, CODE), "Code WWMW-MWWM overflows its line"
            if question.kind == "cells":
                shares_fit(presenter, question, (PROJECTOR, WIDE) if question.cols == 8 else (PROJECTOR,))
            if constructed:
                presenter.page.screenshot(path=tmp_path / f"projector-cells-{k}.png")
                shown_cells(presenter, phone, question, k, k == rounds[-1], tmp_path)
        if question.drag:  # the guess's bar beside torch's line
            drawn = presenter.page.evaluate(_CHART_DATA_JS, CHART)
            assert [t["type"] for t in drawn["traces"]] == ["bar"] and any("torch" in n for n in drawn["shapes"])
        press(presenter, "next")


def shares_fit(presenter: AppPage, question, screens: tuple[dict, ...]) -> None:
    """Every share's text ("100%" the widest) within its cell on the projector at each of ``screens``."""
    for screen in screens:
        drawn = presenter.resize(screen).page.evaluate(_SHARES_JS, CHART)
        assert len(drawn) >= question.cells, (question.id, screen, len(drawn))
        over = [d for d in drawn if d[0] > d[1] or d[2] > d[3]]
        assert not over, (question.id, screen, over[:3])
    presenter.resize(PROJECTOR)


def shown_cells(presenter: AppPage, phone: AppPage, question, k: int, answer: bool, shots: Path) -> None:
    """Round ``k`` of bn-mu-cells as the projector and the phone draw it: each round's grid of shares equal to the
    phone's taps in it (one voter: 1 where tapped, 0 elsewhere), torch's cells outlined on both only with ``answer``,
    the phone's verdict then."""
    drawn = presenter.page.evaluate(_CHART_DATA_JS, CHART)
    grids = [decode_array(t["z"]) for t in drawn["traces"] if t["type"] == "heatmap"]
    assert len(grids) == k
    for j, z in enumerate(grids, 1):
        tapped = [r * question.cols + c for r, row in enumerate(z) for c, share in enumerate(row) if share]
        assert tapped == sorted(TAPS[j]) and {v for row in z for v in row} <= {0, 1}, (j, z)
    rings = [t["x"] for t in drawn["traces"] if t["name"] == "outlined: torch's cells" and t["x"] != [None]]
    outlined = sum(len(x) // 6 for x in rings)  # five points and a break each
    assert outlined == (k * len(question.answer) if answer else 0), drawn["traces"]
    shown = phone.page.locator(SHOWN_CELL)
    shown.first.wait_for(timeout=SEEN_S * 1000)
    expect(phone.page.locator(f"{SHOWN_CELL}.torch")).to_have_count(len(question.answer) if answer else 0)
    taps = phone.page.locator(f"{SHOWN_CELL}.tapped").evaluate_all("(all) => all.map((e) => +e.dataset.cell)")
    assert taps == sorted(TAPS[k])
    if answer:
        torch = phone.page.locator(f"{SHOWN_CELL}.torch").evaluate_all("(all) => all.map((e) => +e.dataset.cell)")
        assert torch == list(question.answer)
        expect(phone.page.locator(f"{ELEMENT} .mine")).to_contain_text("(right)")
        phone.page.screenshot(path=shots / "phone-cells-answer.png")


def test_a_phone_joins_by_enter_and_answers_in_a_phone_form(app_server, contexts, tmp_path):
    """390 × 844: Enter after the code joins; a guess has its range and a Send button on screen, and a value out
    of range gets a sentence; each choice is a 44 px tap target reached by the keyboard; Start a room is the
    secondary button. Then the concept check: its every item on the phone, a tap that moves the projector's count,
    and its results on the projector's screen with the sidebar open and closed."""
    presenter = open_in(contexts(PROJECTOR), f"{app_server}/class?present=1")
    code = start_room(presenter)
    phone = open_in(contexts(PHONE), f"{app_server}/class")
    assert phone.page.locator(".st-key-class_start [data-testid=stBaseButton-secondary]").count() == 1
    assert phone.page.locator(".st-key-class_join_go [data-testid=stBaseButton-primaryFormSubmit]").count() == 1
    phone.page.locator(".st-key-class_join input").fill(f"{code[:4]}-{code[4:]}".lower())
    phone.page.locator(".st-key-class_join input").press("Enter")
    asked(phone)
    first = questions.bank()[0]
    assert first.kind == "number"
    lo, hi = (f"{v:g}".replace("-", "\u2212") for v in (first.lo, first.hi))
    expect(phone.page.locator(f"{ELEMENT} form.guess label")).to_have_text(f"Your guess, from {lo} to {hi}")
    phone.settle()
    send = phone.page.locator(f"{ELEMENT} button.send")
    assert send.is_visible() and send.bounding_box()["y"] + send.bounding_box()["height"] <= PHONE["height"]
    phone.page.screenshot(path=tmp_path / "phone-guess.png")
    phone.page.locator(GUESS).fill(f"{first.hi * 5:g}")
    phone.page.locator(GUESS).press("Enter")
    expect(phone.page.locator(f"{ELEMENT} .note")).to_have_text(
        re.compile("outside this question's range"), timeout=SEEN_S * 1000
    )
    press(presenter, "next")
    options = phone.page.locator(CHOICES)
    options.first.wait_for(timeout=SEEN_S * 1000)
    heights = [options.nth(i).bounding_box()["height"] for i in range(options.count())]
    assert len(heights) >= 2 and min(heights) >= 44, heights
    assert checked(phone) is None  # nothing chosen until the student taps
    radios = phone.page.locator(f"{CHOICES} input[type=radio]")
    radios.first.focus()
    phone.page.keyboard.press("ArrowDown")  # the keyboard moves through the options, each sent as chosen
    expect(phone.page.locator(f"{ELEMENT} .note")).to_have_text(re.compile("Your answer is in"), timeout=SEEN_S * 1000)
    assert checked(phone) == 1
    answer(phone, 2)
    assert checked(phone) == 2
    phone.page.screenshot(path=tmp_path / "phone-choice.png")

    # The concept check on the same pages: the presenter shows it from the sidebar and opens it; the phone gets every
    # item as 44 px options; its tap is stored and moves the projector's count; closed, the results fit the screen.
    if presenter.page.locator(SIDEBAR_CLOSED).count():
        presenter.page.locator(SIDEBAR_CLOSED).click()
    presenter.page.locator("[data-testid=stSidebar]").get_by_text("Concept check").click()
    presenter.settle()
    press(presenter, "check_open")
    expect(presenter.page.locator(CHECK_COUNT)).to_have_text("0", timeout=SEEN_S * 1000)
    check_items = phone.page.locator(f"{ELEMENT} fieldset.check-item")
    check_items.first.wait_for(timeout=SEEN_S * 1000)
    assert check_items.count() == len(check.items())
    heights = [box["height"] for box in check_items.locator("label.choice").evaluate_all(_BOXES_JS)]
    assert min(heights) >= 44, heights
    check_items.nth(1).locator("label.choice").first.click()
    expect(check_items.nth(1).locator(".note")).to_have_text("Saved.", timeout=SEEN_S * 1000)
    expect(presenter.page.locator(CHECK_COUNT)).to_have_text("1", timeout=SEEN_S * 1000)
    expect(presenter.page.locator(f"{CHECK_COUNT} + .detail")).to_have_text("Answers: 1")
    press(presenter, "check_close")
    shown = [".st-key-class_check_results table", ".st-key-class_check_side button"]
    for sidebar in ("open", "closed"):
        if sidebar == "closed":
            presenter.page.locator("[data-testid=stSidebar]").hover()  # its collapse button shows on a hover
            presenter.page.locator("[data-testid=stSidebarCollapseButton] button").click()
            presenter.settle()
        presenter.page.locator(".st-key-class_check_results").wait_for(timeout=SEEN_S * 1000)
        wrong = presenter.page.evaluate(_OFF_SCREEN_JS, [shown, shown[1:]])
        assert not wrong, (f"sidebar {sidebar}", wrong)
