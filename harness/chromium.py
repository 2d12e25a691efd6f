"""Headless Chromium for tests and benchmarks: Debian's browser, its flags (among them: stay on this machine),
its contexts, and what to ask a page.

Shared by tests/ and benchmarks/, which import this and not each other. The
JavaScript probes read the app's state from the page: what it is doing
(``STATE_JS``) and each plotly chart's data (``CHARTS_JS``); whether it has
settled, and the stage's shadow root (``STAGE_ROOT_JS``), are
:mod:`harness.settle`'s, whose instrumentation every context
:func:`local_context` makes carries.
"""

from __future__ import annotations

import base64
import shlex
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from harness.settle import INSTRUMENT_JS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext

CHROMIUM = "/usr/bin/chromium"
# The same Chromium without the browser's user interface (Debian's chromium-headless-shell, Playwright's own choice
# for headless runs): the tests' browser. Its browser process takes about 0.3 s of CPU a page load against the full
# browser's 0.7-0.9 s, and the renderer, where the page is laid out, painted and its scripts run, is the same
# Blink (docs/benchmarks.md, "The test suite on a fresh clone"). The benchmarks keep the full browser, a
# visitor's.
HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
# Every host name but this machine's resolves to nothing, IP literals included, so a request that would leave
# the machine fails at once (net::ERR_NAME_NOT_RESOLVED) and no test depends on the network: Streamlit asks a
# font CDN for some icons. In the browser's resolver, not a Playwright route: a route sends every request of
# a page (about 140 a load) through Playwright to Python and back, which cost a quarter of a page load's wall
# time and of the browser process's CPU (docs/benchmarks.md, "The test suite on a fresh clone").
STAY_LOCAL = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1"
CHROMIUM_ARGS = [
    STAY_LOCAL,
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LAPTOP = {"width": 1440, "height": 900}  # a laptop's screen: the benchmarks' window, the stage tests' default
# Every browser test's pages, unless a test sets its own: a laptop's screen. What the tests read is in the page
# whatever its height (Streamlit draws every element), and the 1400 x 2400 window this was cost a load of the
# explorer's charts view twice the CPU in Chromium, for pixels nobody reads (tests/test_browser_explorer.py).
VIEWPORT = LAPTOP
PHONE = {"width": 390, "height": 844}
# Opened at /bench, Streamlit's frontend looks for its server at /bench/_stcore/...
# first and then one level up: those 404s are how it finds its base URL.
BASE_URL_PROBES = ("/_stcore/health", "/_stcore/host-config")
# The stage's route for torch's numbers at another γ and β (ui/stage/stage_at.py): a 429 from it is its designed
# answer on a busy server (no turn among the computations within 2 s, or the client's budget spent), after which
# the stage waits for the page's rerun. Chromium logs the refused fetch as a console error all the same.
STAGE_AT = "/api/stage/"

STATE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const count = (selector) => document.querySelectorAll(selector).length;
    return {
        script: app && app.getAttribute('data-test-script-state'),
        connection: app && app.getAttribute('data-test-connection-state'),
        statusWidget: count('[data-testid="stStatusWidget"]'),
        elements: count('[data-testid="stMainBlockContainer"] [data-testid="stElementContainer"]'),
        skeletons: count('[data-testid="stMainBlockContainer"] [data-testid="stSkeleton"]'),
        stale: count('[data-testid="stMainBlockContainer"] [data-stale="true"]'),
        plotlyCharts: count('[data-testid="stPlotlyChart"]'),
    };
}"""

# Each plotly chart's traces as plain JSON: typed arrays become arrays; a
# base64 array spec ({dtype, bdata, shape}) is passed on for Python to decode.
CHARTS_JS = """() => {
    const plain = (v) => {
        if (ArrayBuffer.isView(v)) return Array.from(v);
        if (Array.isArray(v)) return v.map(plain);
        return v;
    };
    return Array.from(document.querySelectorAll('.js-plotly-plot')).map((plot) => {
        const holder = plot.closest('[class*="st-key-"]');
        const keyClass = holder ? Array.from(holder.classList).find((c) => c.startsWith('st-key-')) : null;
        const traces = (plot.data || []).map((t) => {
            const out = {type: t.type || 'scatter', name: t.name === undefined ? null : t.name};
            for (const k of ['x', 'y', 'z', 'text', 'customdata']) {
                if (t[k] !== undefined && t[k] !== null) out[k] = plain(t[k]);
            }
            return out;
        });
        return {key: keyClass ? keyClass.slice('st-key-'.length) : null, traces: traces};
    });
}"""


def is_local(url: str) -> bool:
    """Whether ``url`` points at this machine (where the tests' servers are)."""
    return urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")


def launch(playwright: Any, cpus: str | None = None, executable: str = CHROMIUM) -> Any:
    """Debian's Chromium, headless, with :data:`CHROMIUM_ARGS` (sync or async Playwright: await the latter's).

    ``executable``: :data:`CHROMIUM`, or :data:`HEADLESS_SHELL` for the tests. ``cpus``: the cores it may run on,
    as ``taskset -c`` takes them ("1"); its every process (renderers, GPU, network) inherits them. For a benchmark
    that keeps the browser off the server's core, as on a host.
    """
    if cpus is not None:
        wrapper = Path(tempfile.mkdtemp(prefix="lnviz-chromium-")) / "chromium"
        wrapper.write_text(f'#!/bin/sh\nexec taskset -c {shlex.quote(cpus)} {executable} "$@"\n')
        wrapper.chmod(0o755)
        executable = str(wrapper)
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)


def local_context(browser: Browser, init_script: str | None = None, **options: Any) -> BrowserContext:
    """A new context of the (sync) ``browser`` (which stays on this machine: :data:`STAY_LOCAL`), its pages
    instrumented for the settle probe (:data:`harness.settle.INSTRUMENT_JS`); ``init_script`` runs in each page too, before the page's own.

    ``options`` go to ``browser.new_context`` (``viewport``, ``reduced_motion``, ...).
    """
    context = browser.new_context(**options)
    context.add_init_script(INSTRUMENT_JS)
    if init_script:
        context.add_init_script(init_script)
    return context


def foreign_console_error(text: str, where: str) -> str | None:
    """Why a console error is not the app's, or None when it is.

    "offsite": a request to another machine, refused by the browser (:data:`STAY_LOCAL`).
    "probe": a 404 of :data:`BASE_URL_PROBES`, how the frontend finds its base URL.
    "busy": a 429 of the stage's route (:data:`STAGE_AT`), which the stage answers by waiting for the rerun.
    """
    if not text.startswith("Failed to load resource") or not where:
        return None
    if not is_local(where):
        return "offsite"
    if "404" in text and where.endswith(BASE_URL_PROBES):
        return "probe"
    if "status of 429" in text and STAGE_AT in urlsplit(where).path:
        return "busy"
    return None


def app_console_error(message: Any) -> str | None:
    """A console message (Playwright's, sync or async) as the line a test or benchmark records: None unless it is
    an error and the app's (:func:`foreign_console_error`)."""
    if message.type != "error":
        return None
    where = message.location.get("url", "")
    return None if foreign_console_error(message.text, where) else f"console.error: {message.text} ({where})"


def decode_array(value: Any) -> Any:
    """A plotly array as nested lists: a base64 spec {dtype, bdata, shape} is decoded."""
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]).newbyteorder("<"))
        shape = value.get("shape")
        if shape:
            dims = [int(n) for n in str(shape).split(",")]
            flat = flat.reshape(dims)
        return flat.tolist()
    if isinstance(value, list):
        return [decode_array(v) for v in value]
    return value
