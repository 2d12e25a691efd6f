"""The class poll in real browsers: a presenter and three phones, each its own browser context (its own cookies),
through a vote, a changed vote, a reveal, a second round, a reload and a late join (the same across two replicas
sharing Redis is in tests/test_replicas.py); a presenter's double click; the projector's every question at
1280 × 720; and the phone's form at 390 × 844."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
import zxingcpp
from browser import SETTLE_TIMEOUT, AppPage, overlapping
from PIL import Image
from test_browser_a11y import _AXE_JS, _TEXTS_JS, _TICK_SIZES_JS, AXE, UPSTREAM

from lnviz.figures import theme
from lnviz.labs.classroom import questions

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
PROJECTOR = {"width": 1280, "height": 720}
SEEN_S = 15  # the poll runs every second; a loaded 2-core machine may take a few more to draw


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


def answer(phone: AppPage, option: int) -> None:
    """Option ``option`` of a choice question; for a number question, the guess ``option`` (typed, then Enter)."""
    box = phone.page.locator(".st-key-answer")
    box.wait_for(timeout=SEEN_S * 1000)
    if box.locator("input[type=radio]").count():
        box.locator("label[data-testid=stRadioOption]").nth(option).click()
    else:
        box.locator("input").fill(str(option))
        box.locator("input").press("Enter")  # Enter sends, as the Send button does
    phone.page.get_by_text("Your answer is in").first.wait_for(timeout=SEEN_S * 1000)
    phone.settle()


def count(presenter: AppPage) -> str:
    return presenter.page.locator(".st-key-class_count [data-testid='stMetricValue']").inner_text()


def wait_count(presenter: AppPage, n: int) -> None:
    presenter.page.wait_for_function(
        "n => document.querySelector(\".st-key-class_count [data-testid='stMetricValue']\")?.innerText === String(n)",
        arg=n,
        timeout=SEEN_S * 1000,
    )


def presenter_button(presenter: AppPage, action: str):
    """The presenter's ``action`` button as drawn now: its key carries the room's version (``class_next_v3``)."""
    return presenter.page.locator(f"[class*='st-key-class_{action}_v'] button").first  # a button with help has two


def press(presenter: AppPage, action: str) -> None:
    presenter.settle()  # the run the last click started is over: its elements replaced the earlier ones
    presenter_button(presenter, action).click()
    presenter.settle()


def results(phone: AppPage) -> str:
    box = phone.page.locator(".st-key-class_results")
    box.wait_for(timeout=SEEN_S * 1000)
    return box.inner_text()


def checked(phone: AppPage) -> int | None:
    """The option a choice question shows as chosen, or the guess a number question shows."""
    box = phone.page.locator(".st-key-answer")
    radios = box.locator("input[type=radio]")
    if not radios.count():
        return round(float(box.locator("input").input_value()))
    for i in range(radios.count()):
        if radios.nth(i).is_checked():
            return i
    return None


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


def class_round(base: str, phone_bases: list[str], contexts, check_looks: bool = False) -> None:
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

    press(presenter, "reveal")
    projected = results(presenter)
    for phone in phones:
        shown = results(phone)
        assert re.search(r"\b3\b", shown) or "3" in shown, shown  # all three answers on option B
    assert "3" in projected

    press(presenter, "again")
    for phone in phones:
        phone.page.locator(".st-key-answer").wait_for(timeout=SEEN_S * 1000)
    answer(phones[1], 0)
    phones[1].page.reload()  # a reconnect: the cookie keeps the voter, and the answer shows again
    phones[1].settle()
    assert checked(phones[1]) == 0
    wait_count(presenter, 1)
    presenter.page.reload()  # the projector's tab reloaded: its cookie keeps the presenter's buttons
    presenter.settle()
    presenter_button(presenter, "reveal").wait_for(timeout=SEEN_S * 1000)
    press(presenter, "reveal")
    late = open_in(contexts(PHONE), f"{phone_bases[-1]}/class?room={code}")  # joins after the second reveal
    assert results(late)
    text = results(phones[2])
    assert "2" in text  # the second round is shown beside the first
    if check_looks:
        looks(presenter, late)

    press(presenter, "next")
    for phone in [*phones, late]:
        phone.page.locator(".st-key-answer").wait_for(timeout=SEEN_S * 1000)


def test_a_presenter_and_three_phones_vote_change_reveal_ask_again_reload_and_join_late(app_server, contexts):
    class_round(app_server, [app_server] * 3, contexts, check_looks=True)


def test_the_projectors_qr_code_reads_back_as_the_join_link_it_shows_and_opens_the_room(app_server, contexts, tmp_path):
    presenter = open_in(contexts(PROJECTOR), f"{app_server}/class?present=1")
    code = start_room(presenter)
    shown = presenter.page.get_by_text("Join at").inner_text().removeprefix("Join at").strip()
    assert shown.endswith(f"/class?room={code}"), shown
    qr = presenter.page.locator("[data-testid=stImage] img")
    qr.screenshot(path=tmp_path / "qr.png")  # the code as the projector draws it: segno's SVG, Chromium's pixels
    (read,) = zxingcpp.read_barcodes(Image.open(tmp_path / "qr.png").convert("L"))
    assert read.format == zxingcpp.BarcodeFormat.QRCode and read.text == shown
    phone = open_in(contexts(PHONE), read.text)
    phone.page.locator(".st-key-answer").wait_for(timeout=SEEN_S * 1000)  # the scanned link joins the room


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


def off_screen(presenter: AppPage, *selectors: str) -> list[str]:
    return presenter.page.evaluate(_OFF_SCREEN_JS, [list(selectors), [BUTTONS]])


def test_the_projector_shows_every_questions_reveal_button_results_and_whole_buttons_at_1280_by_720(
    app_server, contexts
):
    presenter = open_in(contexts(PROJECTOR), f"{app_server}/class?present=1")
    start_room(presenter)
    for number, question in enumerate(questions.bank(), 1):
        assert question_number(presenter) == number
        assert not off_screen(presenter, BUTTONS), (question.id, off_screen(presenter, BUTTONS))
        rounds = (1, 2) if len(question.choices) == 4 else (1,)  # a second round makes a chart taller
        for k in rounds:
            if k == 2:
                press(presenter, "again")
            press(presenter, "reveal")
            presenter.page.locator(CHART).first.wait_for(timeout=SEEN_S * 1000)
            wrong = off_screen(presenter, BUTTONS, CHART)
            assert not wrong, (question.id, f"round {k}", wrong)
        press(presenter, "next")


def test_a_phone_joins_by_enter_and_answers_in_a_phone_form(app_server, contexts):
    """390 × 844: Enter after the code joins; a guess has its range and a Send button on screen, and a value out
    of range gets a sentence; each choice is a 44 px tap target; Start a room is the secondary button."""
    presenter = open_in(contexts(PROJECTOR), f"{app_server}/class?present=1")
    code = start_room(presenter)
    phone = open_in(contexts(PHONE), f"{app_server}/class")
    assert phone.page.locator(".st-key-class_start [data-testid=stBaseButton-secondary]").count() == 1
    assert phone.page.locator(".st-key-class_join_go [data-testid=stBaseButton-primaryFormSubmit]").count() == 1
    phone.page.locator(".st-key-class_join input").fill(f"{code[:4]}-{code[4:]}".lower())
    phone.page.locator(".st-key-class_join input").press("Enter")
    box = phone.page.locator(".st-key-answer")
    box.wait_for(timeout=SEEN_S * 1000)
    first = questions.bank()[0]
    assert first.kind == "number"
    lo, hi = (f"{v:g}".replace("-", "\u2212") for v in (first.lo, first.hi))
    box.get_by_text(f"Your guess, from {lo} to {hi}").wait_for(timeout=SEEN_S * 1000)  # its range beside it
    phone.settle()
    send = phone.page.locator(".st-key-class_send button")
    assert send.is_visible() and send.bounding_box()["y"] + send.bounding_box()["height"] <= PHONE["height"]
    box.locator("input").fill(f"{first.hi * 5:g}")
    box.locator("input").press("Enter")
    phone.page.get_by_text("outside this question's range").wait_for(timeout=SEEN_S * 1000)
    press(presenter, "next")
    options = phone.page.locator(".st-key-answer label[data-testid=stRadioOption]")
    options.first.wait_for(timeout=SEEN_S * 1000)
    heights = [options.nth(i).bounding_box()["height"] for i in range(options.count())]
    assert len(heights) >= 2 and min(heights) >= 44, heights
    assert checked(phone) is None  # nothing chosen until the student taps
    answer(phone, 1)
    assert checked(phone) == 1
