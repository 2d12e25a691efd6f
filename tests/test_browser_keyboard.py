"""The walkthrough by keyboard alone, as a student without a mouse or a lecturer with a clicker would.

ArrowRight and PageDown (a presenter's clicker sends these) go to the next step,
ArrowLeft and PageUp back, while the focus is on the page and not in a control;
Tab reaches Back and Next, and Enter or Space presses them. A control keeps its
own meaning for those keys: an arrow in a slider or a number input moves that
control, never the step as well. After every move the heading ("Step N of 12")
and the link's ``step=`` must agree; step 1, the default, is left out of links.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from browser import AppPage

from lnviz.labs.walkthrough import N_STEPS
from lnviz.views.links import LINK_VERSION

pytestmark = pytest.mark.browser

# The step a page shows: the heading and the link, read in the browser in one go.
_SHOWN_JS = """() => {
    const heading = Array.from(document.querySelectorAll('h3')).map((h) => h.innerText)
        .find((t) => /^Step \\d+ of \\d+/.test(t));
    return {heading: heading || null, step: new URL(location.href).searchParams.get('step')};
}"""
# Which widget (its st.key) holds the focus, and the focused element's tag.
_FOCUS_JS = """() => {
    const e = document.activeElement;
    const holder = e && e.closest('[class*="st-key-"]');
    const key = holder ? Array.from(holder.classList).find((c) => c.startsWith('st-key-')).slice(7) : null;
    return {key: key, tag: e ? e.tagName : null};
}"""
MOVE_TIMEOUT_MS = 30_000
MAX_TABS = 80  # the sidebar's controls and the page's links come first


def shown(app: AppPage) -> tuple[int | None, str | None]:
    """The step in the heading, and the link's ``step=`` (None when left out)."""
    now = app.page.evaluate(_SHOWN_JS)
    match = re.match(rf"Step (\d+) of {N_STEPS}\b", now["heading"] or "")
    return (int(match.group(1)) if match else None), now["step"]


def expect_step(app: AppPage, n: int, after: str) -> None:
    """Wait until the page shows step ``n`` in its heading and its link, then for the run to settle."""
    link = "null" if n == 1 else f"'{n}'"
    try:
        app.page.wait_for_function(
            f"() => {{ const s = ({_SHOWN_JS})(); return s.heading && s.heading.startsWith('Step {n} of ')"
            f" && s.step === {link}; }}",
            timeout=MOVE_TIMEOUT_MS,
        )
    except Exception:
        raise AssertionError(f"after {after}: expected step {n}, the page shows {shown(app)}") from None
    app.settle()
    assert shown(app) == (n, None if n == 1 else str(n)), f"after {after}"
    assert not app.exceptions() and not app.errors


def press(app: AppPage, key: str, n: int) -> None:
    app.page.keyboard.press(key)
    expect_step(app, n, key)


def focus_by_tab(app: AppPage, key: str, backwards: bool = False) -> None:
    """Press Tab (Shift+Tab) until the focus is in widget ``key``, as a keyboard user would."""
    for _ in range(MAX_TABS):
        app.page.keyboard.press("Shift+Tab" if backwards else "Tab")
        if app.page.evaluate(_FOCUS_JS)["key"] == key:
            return
    raise AssertionError(f"{MAX_TABS} Tab presses never reached {key!r}")


def test_arrow_and_page_keys_walk_every_step(app_server, open_app):
    app = open_app(f"{app_server}/walkthrough?v=2")
    assert shown(app) == (1, None)
    assert app.page.evaluate(_FOCUS_JS)["tag"] == "BODY"  # nothing focused: the page's own keys apply
    for n in range(2, N_STEPS + 1):  # forward, alternating the keyboard's and the clicker's key
        press(app, "ArrowRight" if n % 2 else "PageDown", n)
    app.page.keyboard.press("PageDown")  # past the last step: stays there
    quiet(app)
    assert shown(app) == (N_STEPS, str(N_STEPS))
    for n in range(N_STEPS - 1, 0, -1):
        press(app, "ArrowLeft" if n % 2 else "PageUp", n)
    app.page.keyboard.press("ArrowLeft")  # before the first: stays there
    quiet(app)
    assert shown(app) == (1, None)


def test_tab_reaches_back_and_next_and_enter_or_space_presses_them(app_server, open_app):
    app = open_app(f"{app_server}/walkthrough?v=2")
    focus_by_tab(app, "next")  # Back is disabled on step 1, so Tab passes it by
    assert app.page.evaluate(_FOCUS_JS)["tag"] == "BUTTON"
    app.page.keyboard.press("Enter")
    expect_step(app, 2, "Enter on Next")
    assert app.page.evaluate(_FOCUS_JS)["key"] == "next"  # the focus stays for the next press
    app.page.keyboard.press("Space")
    expect_step(app, 3, "Space on Next")
    focus_by_tab(app, "back", backwards=True)
    app.page.keyboard.press("Enter")
    expect_step(app, 2, "Enter on Back")
    app.page.keyboard.press("Space")
    expect_step(app, 1, "Space on Back")
    # Next, by Tab, all the way: every step can be reached with the buttons too.
    focus_by_tab(app, "next")
    for n in range(2, N_STEPS + 1):
        app.page.keyboard.press("Enter")
        expect_step(app, n, f"Enter on Next, towards step {n}")


def query(app: AppPage) -> dict[str, list[str]]:
    return parse_qs(urlparse(app.page.url).query)


def quiet(app: AppPage) -> None:
    """Long enough for a rerun a key might have started to begin, then until it has ended."""
    app.page.wait_for_timeout(1500)
    app.settle()


def wait_url(app: AppPage, condition: str, after: str) -> None:
    try:
        app.page.wait_for_function(condition, timeout=MOVE_TIMEOUT_MS)
    except Exception:
        raise AssertionError(f"after {after}: the link is {app.page.url}, the page shows {shown(app)}") from None
    app.settle()


def test_arrows_inside_a_control_do_not_also_move_the_step(app_server, open_app):
    app = open_app(f"{app_server}/walkthrough?v=2&step=5")
    assert shown(app) == (5, "5")

    # A number input (sample i): ←/→ move the caret, PageUp/PageDown do nothing, ↑ steps the value.
    app.page.locator(".st-key-sample input").focus()
    for key in ("ArrowRight", "ArrowLeft", "PageDown", "PageUp"):
        app.page.keyboard.press(key)
    quiet(app)
    assert shown(app) == (5, "5"), "an arrow or page key typed in a number input moved the step"
    app.page.keyboard.press("ArrowUp")
    wait_url(app, "() => new URL(location.href).searchParams.get('sample') === '1'", "ArrowUp in sample i")
    assert shown(app) == (5, "5"), "ArrowUp in a number input moved the step"

    # A slider in the sidebar (γ): the arrows move γ, not the step.
    app.page.locator(".st-key-gain input[type='range']").focus()
    app.page.keyboard.press("ArrowRight")
    app.page.keyboard.press("ArrowRight")
    wait_url(app, "() => new URL(location.href).searchParams.has('gain')", "ArrowRight in the γ slider")
    assert shown(app) == (5, "5"), "an arrow typed in the γ slider moved the step"

    # The step's own slider: one press is one step (the slider's), not two (slider and page).
    app.page.locator(".st-key-step input[type='range']").focus()
    app.page.keyboard.press("ArrowRight")
    expect_step(app, 6, "ArrowRight on the step slider")
    app.page.keyboard.press("ArrowLeft")
    expect_step(app, 5, "ArrowLeft on the step slider")
    assert query(app)["sample"] == ["1"]


def test_the_clicker_still_works_after_next_was_clicked(app_server, open_app):
    """A lecturer clicks Next once with the mouse, then goes on with the clicker (PageDown)."""
    app = open_app(f"{app_server}/walkthrough?v=2&present=1")
    app.page.locator(".st-key-next button").click()
    expect_step(app, 2, "a click on Next")
    press(app, "PageDown", 3)


def test_a_reload_after_key_presses_reopens_the_same_step(app_server, open_app):
    """The address bar carries v, so a reload is read as today's link: not as one from before the stage."""
    app = open_app(f"{app_server}/walkthrough")
    assert shown(app) == (1, None)
    press(app, "PageDown", 2)
    press(app, "PageDown", 3)
    for reload in (1, 2):  # a second reload once dropped back to step 1
        app.page.reload()
        app.settle()
        assert shown(app) == (3, "3"), f"after reload {reload}"
        assert query(app)["v"] == [str(LINK_VERSION)] and "batch" not in query(app)  # today's 8 × 12 grid
        assert "earlier lnviz" not in app.page.locator('[data-testid="stMain"]').inner_text()


def test_a_hand_typed_step_opens_that_step(app_server, open_app):
    app = open_app(f"{app_server}/walkthrough?step=3")
    assert shown(app) == (3, "3")


def test_a_clickers_presses_all_count_four_pagedowns_150_ms_apart_are_four_steps(app_server, open_app):
    """A clicker pressed faster than the page reruns (issue 46): every press is a step, whichever run it lands in."""
    app = open_app(f"{app_server}/walkthrough?v=2&present=1&step=3")
    assert shown(app) == (3, "3")
    for key, n in (("PageDown", 7), ("PageUp", 3)):
        for _ in range(4):
            app.page.keyboard.press(key)
            app.page.wait_for_timeout(150)
        expect_step(app, n, f"four {key}s 150 ms apart")
        quiet(app)  # and no press is applied again later
        assert shown(app) == (n, str(n))


# Where the focus is: the widget (its st.key), the element's tag, and whether it is inside the sidebar.
_WHERE_JS = f"""() => ({{...({_FOCUS_JS})(),
    sidebar: !!document.activeElement?.closest('[data-testid="stSidebar"]')}})"""


def test_in_lecture_mode_tab_never_reaches_the_collapsed_sidebar_and_does_once_it_is_open(app_server, open_app):
    """Lecture mode collapses the sidebar, off the screen: Tab, from the page's start round to its end, must not
    give the focus to a control there, which an arrow key would then change unseen (issue 46)."""
    app = open_app(f"{app_server}/walkthrough?v=2&present=1", viewport={"width": 1280, "height": 720})
    page = app.page
    assert page.locator('[data-testid="stSidebar"]').get_attribute("data-collapsed") == "true"
    seen = []
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        now = page.evaluate(_WHERE_JS)
        if now["tag"] == "BODY" and seen:
            break  # past the page's last control
        seen.append(now)
    else:
        raise AssertionError(f"{MAX_TABS} Tab presses did not go round the page: {seen}")
    assert [f for f in seen if f["sidebar"]] == []
    assert {"next", "live_stage", "step", "feature"} <= {f["key"] for f in seen}  # the whole page, stage included
    # Opened, the sidebar's controls are in the Tab order again.
    page.get_by_role("button", name="Expand sidebar").click()
    page.wait_for_function("() => document.querySelector('[data-testid=\"stSidebar\"]').dataset.collapsed === 'false'")
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        if page.evaluate(_WHERE_JS)["sidebar"]:
            break
    else:
        raise AssertionError("Tab never reached the opened sidebar")
