"""Browser-test helpers: the app served for real, driven by headless Chromium.

A browser test module loads this file as a plugin, for its fixtures, and
marks its tests::

    pytest_plugins = ("browser",)

    @pytest.mark.browser
    def test_explorer(app_server, open_app):
        app = open_app(app_server + "/?batch=8")
        assert not app.exceptions() and not app.errors
        charts = app.charts()  # each chart's traces, with x, y, z as lists

- ``app_server`` (session): ``streamlit run app.py`` on a free port, up and
  healthy; its value is the base URL. ``app_process`` is the same server as an
  :class:`AppProcess`, whose ``log_tail()`` helps a failure message.
- ``browser`` (session): Debian's Chromium through Playwright; no browser is
  ever downloaded. ``browser_context`` (session) is its one context, which
  lets no request leave the machine.
- ``open_app`` (per test): opens a URL in a new tab (a new Streamlit
  session), waits until the app has settled, and returns an :class:`AppPage`.
  Every tab it opened is closed after the test.

:func:`start_app`, :func:`wait_healthy` and :func:`stop` are the same steps for
tests that run several servers (tests/test_replicas.py).
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# torch's first import alone can take most of a minute on a loaded 2-core machine.
STARTUP_TIMEOUT = 90.0
SETTLE_TIMEOUT = 90.0
VIEWPORT = {"width": 1400, "height": 2400}
# An access-log line (`127.0.0.1:51666 - "GET /static/js/x.js HTTP/1.1" 200`): noise in a failure message.
_ACCESS_LINE = re.compile(r'\d+\.\d+\.\d+\.\d+:\d+ - "[A-Z]+ ')
# Opened at /bench, Streamlit's frontend looks for its server at /bench/_stcore/...
# first and then one level up: those 404s are how it finds its base URL.
_BASE_URL_PROBES = ("/_stcore/health", "/_stcore/host-config")

# True once the page has run its script and drawn it: connected, the script not
# running (no status widget), something in the main block and no placeholder
# left there, and every plotly chart drawn.
_SETTLED_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return false;
    if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    if (!main || !main.querySelector('[data-testid="stElementContainer"]')) return false;
    // A skeleton stands in for an element whose code is still loading (plotly is
    // loaded lazily); a stale element is left over from the previous run.
    if (main.querySelector('[data-testid="stSkeleton"], [data-stale="true"]')) return false;
    for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
        const plot = chart.querySelector('.js-plotly-plot');
        if (!plot || !plot.data || !plot._fullLayout) return false;
    }
    return true;
}"""

_STATE_JS = """() => {
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
_CHARTS_JS = """() => {
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


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class AppProcess:
    """One ``streamlit run``: its process, base URL and log file."""

    proc: subprocess.Popen
    url: str
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's log, without its per-request access lines."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        lines = [line for line in text.splitlines() if not _ACCESS_LINE.search(line)]
        return "\n".join(lines)[-chars:]


def start_app(port: int, log: Path, script: str = "app.py") -> AppProcess:
    """``streamlit run script`` from the repo root on ``port``, as ``make run`` does; does not wait for it."""
    cmd = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return AppProcess(proc=proc, url=f"http://127.0.0.1:{port}", log=log)


def wait_healthy(url: str, timeout: float = STARTUP_TIMEOUT, alive: Callable[[], str | None] | None = None) -> None:
    """Wait until ``url``/_stcore/health answers "ok".

    ``alive`` returns why the server cannot come up (it exited, with its log),
    or None while it may still: checked between tries to fail fast.
    """
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if alive is not None and (why := alive()):
            raise RuntimeError(why)
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200 and r.read().strip() == b"ok":
                    return
        except OSError as e:
            last = str(e)
        time.sleep(0.25)
    raise TimeoutError(f"{url} not healthy after {timeout:.0f} s ({last})")


def wait_app(app: AppProcess, timeout: float = STARTUP_TIMEOUT) -> None:
    """:func:`wait_healthy` for a started app; fails with its log if it exits."""

    def alive() -> str | None:
        if app.proc.poll() is None:
            return None
        return f"streamlit exited with {app.proc.returncode}:\n{app.log_tail()}"

    wait_healthy(app.url, timeout, alive)


def stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """End ``proc`` (SIGTERM, then SIGKILL after ``grace`` seconds) and reap it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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


@dataclass
class AppPage:
    """A Playwright page showing the app, with the JS errors it has raised."""

    page: Page
    errors: list[str] = field(default_factory=list)  # uncaught exceptions and console errors
    offsite: list[str] = field(default_factory=list)  # refused requests to other hosts

    def goto(self, url: str, timeout: float = SETTLE_TIMEOUT) -> AppPage:
        self.page.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)
        self.settle(timeout)
        return self

    def settle(self, timeout: float = SETTLE_TIMEOUT, quiet: float = 0.5) -> None:
        """Wait until the app is idle and stays so for ``quiet`` seconds.

        The quiet spell catches a rerun that starts right after a run ends
        (a widget bound to the URL, st.rerun).
        """
        deadline = time.monotonic() + timeout
        while True:
            left = max(deadline - time.monotonic(), 0.1)
            try:
                self.page.wait_for_function(_SETTLED_JS, timeout=left * 1000, polling=100)
            except PlaywrightTimeout:
                raise TimeoutError(f"{self.page.url} not settled after {timeout:.0f} s: {self.state()}") from None
            self.page.wait_for_timeout(quiet * 1000)
            if self.page.evaluate(_SETTLED_JS):
                return

    def state(self) -> dict[str, Any]:
        """What the page is doing: script and connection state, elements drawn, placeholders."""
        return self.page.evaluate(_STATE_JS)

    def exceptions(self) -> list[str]:
        """The text of every exception box Streamlit shows (``stException``)."""
        return self.page.locator('[data-testid="stException"]').all_inner_texts()

    def charts(self) -> list[dict[str, Any]]:
        """Each plotly chart in page order: ``{"key": ..., "traces": [...]}``.

        ``key`` is the ``st.plotly_chart`` key (None without one); each trace
        has ``type``, ``name`` and those of x, y, z, text, customdata it has,
        as nested lists of plain numbers or strings.
        """
        charts = self.page.evaluate(_CHARTS_JS)
        for chart in charts:
            for trace in chart["traces"]:
                for k in ("x", "y", "z", "text", "customdata"):
                    if k in trace:
                        trace[k] = decode_array(trace[k])
        return charts

    def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=True, timeout=SETTLE_TIMEOUT * 1000)
        return path


def charts_json(charts: list[dict[str, Any]]) -> str:
    """A canonical text of :meth:`AppPage.charts`, for exact comparisons (NaN included)."""
    return json.dumps(charts, sort_keys=True)


@pytest.fixture(scope="session")
def app_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    """The app served on a free port, healthy; stopped after the session."""
    app = start_app(free_port(), tmp_path_factory.mktemp("app_server") / "streamlit.log")
    try:
        wait_app(app)
        yield app
    finally:
        stop(app.proc)


@pytest.fixture(scope="session")
def app_server(app_process: AppProcess) -> str:
    """The served app's base URL, such as ``http://127.0.0.1:40123``."""
    return app_process.url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless Debian Chromium, shared by the session's tests."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: `make system-deps` installs Debian's chromium")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def is_local(url: str) -> bool:
    """Whether ``url`` points at this machine (where the tests' servers are)."""
    return urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")


@pytest.fixture(scope="session")
def browser_context(browser: Browser) -> Iterator[BrowserContext]:
    """One context for the session, so pages share the HTTP and compiled-code caches.

    Requests to any other machine are refused at once, so no test depends on
    the network (Streamlit fetches some icons from a font CDN).
    """
    context = browser.new_context(viewport=VIEWPORT)
    context.route(lambda url: not is_local(url), lambda route: route.abort())
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def open_app(browser_context: BrowserContext) -> Iterator[Callable[[str], AppPage]]:
    """``open_app(url)``: the app at ``url`` in a new tab (a new session), settled.

    Refused requests to other machines are listed in ``AppPage.offsite``, not
    in ``AppPage.errors``. Every tab the test opened is closed after it.
    """
    pages = []

    def _open(url: str, timeout: float = SETTLE_TIMEOUT) -> AppPage:
        page = browser_context.new_page()
        pages.append(page)
        app = AppPage(page)

        def on_console(message: ConsoleMessage) -> None:
            if message.type != "error":
                return
            where = message.location.get("url", "")
            if message.text.startswith("Failed to load resource") and where:
                if not is_local(where):
                    app.offsite.append(where)
                    return
                if "404" in message.text and where.endswith(_BASE_URL_PROBES):
                    return
            app.errors.append(f"console.error: {message.text} ({where})")

        page.on("console", on_console)
        page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
        return app.goto(url, timeout)

    yield _open
    for page in pages:
        if not page.is_closed():
            page.close()
