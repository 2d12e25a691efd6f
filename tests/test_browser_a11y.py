"""Every page in a real browser: it loads clean, accessible (axe-core), readable on a projector, no text over text on
a phone, a hostile link's values shown as text.

- Each registered page (tests/test_browser_pages.py), at every path that opens it, opened by a link with markup in
  every value (the values a visitor could share), shows no exception box, raises no JS error, fetches nothing from
  another machine and lists exactly the registry's pages in its sidebar; the door's notes say the link's values as
  literal text, never as an image, a link, HTML or a formula. A screenshot of each is kept in
  artifacts/screenshots/ (git ignores it; CI keeps it as an artifact).
- axe-core (vendored in tests/vendor/axe-core) finds no serious or critical
  violation. The only rules left out are ``list`` and ``listitem`` on
  Streamlit's own sidebar navigation, whose ``<ul>`` wraps each section's
  items in a ``<div>`` (upstream; a two-page, two-section app reproduces it).
- In lecture mode (``?present=1``, 1280×720) the family page's tick labels,
  2D and 3D, are drawn at the lecture size the figures set, not the desk size
  (every view's figures are checked to set it in tests/test_pages.py).
- At 390×844 no two of a chart's titles, annotations, legend entries and
  axis titles overlap.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlencode, urlparse

import pytest
from browser import ROOT, AppPage, overlapping
from playwright.sync_api import BrowserContext
from test_browser_pages import EVERY_PATH, PAGES

from harness.chromium import LAPTOP, PHONE
from harness.tab import watch
from lnviz.figures import theme
from lnviz.views import pages

pytestmark = pytest.mark.browser

AXE = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
# Streamlit's sectioned sidebar navigation: <ul> > <div> > <li>, in Streamlit's own markup (upstream).
UPSTREAM = {"list": '[data-testid="stSidebarNavItems"]', "listitem": '[data-testid="stSidebarNavItems"] li'}

_AXE_JS = """async (upstream) => {
    const results = await axe.run(document, {resultTypes: ['violations']});
    const out = [];
    for (const v of results.violations) {
        if (!['serious', 'critical'].includes(v.impact)) continue;
        const nodes = v.nodes.filter((n) => !(upstream[v.id] && n.target.some((t) =>
            document.querySelector(t) && document.querySelector(t).matches(upstream[v.id]))));
        if (nodes.length) out.push({rule: v.id, impact: v.impact, nodes: nodes.slice(0, 3).map((n) => n.html)});
    }
    return out;
}"""

_TICK_SIZES_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((plot) =>
    Array.from(plot.querySelectorAll('g[class^="x"][class$="tick"] text, g[class^="y"][class$="tick"] text'))
        .map((t) => parseFloat(getComputedStyle(t).fontSize)))"""

# The tick size plotly resolved for each 3D scene's axes (WebGL draws their text: no SVG to read).
_SCENE_TICKS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap((gd) =>
    Object.keys(gd._fullLayout).filter((k) => /^scene\\d*$/.test(k))
        .flatMap((k) => ['xaxis', 'yaxis', 'zaxis'].map((a) => gd._fullLayout[k][a].tickfont.size)))"""

# A chart's titles, annotations, legend entries and axis titles, with their boxes.
_TEXTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((plot) => {
    const texts = [];
    plot.querySelectorAll('text').forEach((e) => {
        const c = e.getAttribute('class') || '';
        if (!(c === 'gtitle' || c === 'annotation-text' || c === 'legendtext' || /^[xy]\\d*title$/.test(c))) return;
        const r = e.getBoundingClientRect();
        if (r.width > 0.5 && r.height > 0.5) texts.push({text: e.textContent, box: [r.left, r.top, r.right, r.bottom]});
    });
    return texts;
})"""


def test_overlapping_finds_overlaps():
    a, b, c = ([0, 0, 10, 10], [5, 5, 15, 15], [11, 0, 20, 10])
    texts = [{"text": k, "box": box} for k, box in zip("abc", (a, b, c), strict=True)]
    assert overlapping(texts) == [("a", "b"), ("b", "c")]


# Each page, and the explorer's views of its details that draw charts.
VIEWS = [*sorted(PAGES), "?view=charts", "?view=distributions"]
# The views with charts: the explorer's default view of its details (the chosen cell's formulas) has none, the
# walkthrough draws the stage (tests/test_browser_walkthrough.py reads its sizes), and the class page draws its
# chart only after a reveal (tests/test_browser_classroom.py checks that one).
CHART_VIEWS = [v for v in VIEWS if v and v not in ("class", "walkthrough")]


PROJECTOR = {"width": 1280, "height": 720}


# Markdown and HTML a visitor could put in a link: an image that logs every viewer's address, a
# phishing link, raw HTML, a Streamlit colour directive, LaTeX.
INJECTED = [
    "![x](http://evil.example/px.gif)",
    "[log in](http://evil.example/login)",
    "<img src=x onerror=alert(1)>",
    ":red[**boom**]",
    "$\\frac{1}{0}$",
]


NAME_AT = {path: entry.name for entry in pages.PAGES for path in entry.paths}  # the registry's page at each path


def hostile(path: str) -> str:
    """The link a hostile visitor could share to page ``path`` (its path, or a view's query): markup in every
    control's value of the page, in ``preset`` and ``hide``, as an old link (``v=2``) that the door rewrites; no
    query for a path that is not a page with controls (a view of the explorer, the class page)."""
    controls = pages.CONTROLS.get(NAME_AT.get(path, ""))
    if not controls:
        return path
    payloads = {p.key: INJECTED[k % len(INJECTED)] for k, p in enumerate(controls) if p.key != "device"}
    payloads |= {"preset": INJECTED[0], "hide": ",".join(INJECTED), "v": "2"}
    return f"{path}?{urlencode(payloads)}"


@pytest.fixture(scope="module")
def at_laptop(request: pytest.FixtureRequest, app_server: str, browser_context: BrowserContext) -> Iterator[AppPage]:
    """The page ``request.param`` opened at a laptop's size by a hostile link (:func:`hostile`: the page at its
    defaults, and the door's notes on the values it refused) and settled: one visit per page, which the clean
    load's, the notes', the accessibility and (for a page with charts) the phone's overlap checks share; pytest runs
    the tests of one page together, in the module's order (the clean load's first, before anything is added to the
    page), and closes the tab before it opens the next page's."""
    page = browser_context.new_page()
    page.set_viewport_size(LAPTOP)
    try:
        yield watch(AppPage(page)).goto(f"{app_server}/{hostile(request.param)}")
    finally:
        page.close()


def sidebar_paths(app: AppPage) -> set[str]:
    """The URL paths the sidebar navigation links to ("" for the default page)."""
    hrefs = app.page.locator('[data-testid="stSidebarNav"] a').evaluate_all("els => els.map(e => e.href)")
    return {urlparse(href).path.strip("/") for href in hrefs}


@pytest.mark.parametrize("at_laptop", sorted(EVERY_PATH), ids=lambda p: p or "default", indirect=True)
def test_page_loads_clean(at_laptop, app_process):
    app, path = at_laptop, urlparse(at_laptop.page.url).path.strip("/")
    shot = app.screenshot(SCREENSHOTS / f"{path or 'default'}.png")
    assert shot.stat().st_size > 0
    log = f"\n--- server log ---\n{app_process.log_tail()}"
    main = app.page.locator('[data-testid="stMainBlockContainer"]')
    assert main.inner_text().strip(), f"/{path} rendered nothing{log}"
    exceptions = app.exceptions()
    assert not exceptions, f"/{path} shows an exception: {exceptions}{log}"
    assert not app.errors, f"/{path} raised JavaScript errors: {app.errors}"
    # Nothing is fetched from outside the app, the favicon included: an offline classroom sees the same page.
    assert not app.offsite, f"/{path} asked other machines for {app.offsite}"
    favicon = app.page.locator("link[rel='shortcut icon']").get_attribute("href")
    assert favicon.startswith("data:image/svg+xml"), f"/{path}: the favicon is {favicon[:80]}"
    assert sidebar_paths(app) == set(PAGES), f"/{path}: sidebar vs the page registry {sorted(PAGES)}"


@pytest.mark.parametrize(
    "at_laptop", sorted(p for p in EVERY_PATH if hostile(p) != p), ids=lambda p: p or "default", indirect=True
)
def test_link_values_are_shown_as_text_never_as_markup(at_laptop):
    """The hostile link's values are in the door's notes as literal text: no image, link, HTML or formula made of
    them there or anywhere on the page (each page fails with lnviz.text.quote's code span left out)."""
    notes = at_laptop.page.locator('[data-testid="stAlertContainer"]')
    assert notes.count() >= 1
    html = " ".join(notes.evaluate_all("els => els.map(e => e.innerHTML)"))
    for tag in ("<img", "<a ", "<script", "<iframe", "katex"):
        assert tag not in html, (tag, html[:500])
    assert "](http://evil.ex" in " ".join(notes.all_inner_texts())  # shown as literal text, shortened
    main = at_laptop.page.locator('[data-testid="stMain"]')
    assert main.locator("img[src*='evil'], a[href*='evil']").count() == 0


@pytest.mark.parametrize("at_laptop", VIEWS, ids=lambda p: p or "default", indirect=True)
def test_page_has_no_serious_accessibility_violation(at_laptop):
    app = at_laptop.resize(LAPTOP)  # back from the phone's size, if that test came first
    app.page.add_script_tag(path=str(AXE))
    violations = app.page.evaluate(_AXE_JS, UPSTREAM)
    assert not violations, violations


def test_lecture_mode_draws_chart_text_at_lecture_size(app_server, open_app):
    """The size a chart's figure sets on its ticks is the size Chromium draws them at, Streamlit's chart theme
    around it: on the family page, whose charts have both kinds of axes (2D small multiples, a 3D scene, whose ticks
    WebGL paints, so plotly's resolved layout says their size). That every view's figures set the lecture size on
    every axis is checked for each view through AppTest (tests/test_pages.py), without a page load each."""
    app = open_app(f"{app_server}/family?present=1", viewport=PROJECTOR)
    sizes = [s for chart in app.page.evaluate(_TICK_SIZES_JS) for s in chart]
    scenes = app.page.evaluate(_SCENE_TICKS_JS)
    assert sizes and scenes, ("no chart ticks drawn", sizes, scenes)
    assert min(sizes + scenes) >= theme.FONT_SIZE * theme.LECTURE_SCALE - 0.5, sorted(set(sizes + scenes))


@pytest.mark.parametrize("at_laptop", CHART_VIEWS, indirect=True)
def test_no_chart_text_overlaps_on_a_phone(at_laptop):
    app = at_laptop.resize(PHONE)
    charts = app.page.evaluate(_TEXTS_JS)
    path = app.page.url
    assert charts and all(charts), f"{path}: a chart with no text drawn"
    clashes = {i: overlapping(texts) for i, texts in enumerate(charts)}
    assert not any(clashes.values()), {i: c for i, c in clashes.items() if c}
