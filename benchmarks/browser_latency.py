"""What a viewer waits for: key press to settled page, in headless Chromium, against a bare Streamlit page.

    python -m benchmarks.browser_latency            # prints the markdown section

Two servers run side by side with the same flags: the app, and
``benchmarks/bare_app.py`` (one slider and one line of text), the platform's
floor. The explorer's ``gain`` slider and the bare page's slider (same key, same
range) are pressed in turn, ArrowRight then ArrowLeft, alternating which page
goes first, so both see the same machine load; the ratio of their medians is
the headline, the absolute times are only as quiet as the machine.

How "settled" is decided, in the page itself (:data:`INSTRUMENT_JS`, installed
before Streamlit loads):

- the WebSocket is wrapped, and each message's top-level protobuf fields are
  read (field numbers from Streamlit's own ``ForwardMsg``/``BackMsg``
  descriptors): a ``rerun_script`` going out, a ``script_finished`` coming back
  (with its status), heartbeats left out;
- plotly's ``plotly_afterplot`` is hooked on every chart and remembers which
  ``gd.data`` it drew; a chart whose data object has changed and not yet been
  drawn is pending (a chart whose figure did not change is never redrawn,
  so it is not waited for);
- a MutationObserver notes the time of the last DOM change outside the header,
  and when Streamlit's status widget comes and goes.

A press is settled once a successful ``script_finished`` has arrived after the
last rerun request it caused, the app is connected and not running, no status
widget, stale element or skeleton is left, every chart has drawn its current
data, and nothing of the above has happened for :data:`QUIET_MS`. Its latency
is the last of those events minus the keydown's own timestamp, all on the
page's clock; the quiet spell only guards against stopping early and is not
counted. The bytes are the WebSocket payloads received in that time
(Streamlit's server does not compress its messages; framing adds a few bytes
each). Chromium's network layer, through the DevTools protocol, sees the
same frames (:class:`Wire`, parsed with Streamlit's protobuf classes): their
times split a press at the ``script_finished`` message, and its count of
messages, bytes and finished runs must agree with the page's own, or the run
reports an error.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness.chromium import CHROMIUM, CHROMIUM_ARGS, SETTLE_TIMEOUT, is_local
from harness.server import AppProcess, free_port, start_app, stop, wait_app
from lnviz import links

BARE_APP = "benchmarks/bare_app.py"
MAIN_APP = "app.py"
GAIN = '.st-key-gain [data-testid="stSlider"] input[type="range"]'
SEED = ".st-key-seed input"
QUIET_MS = 300
# A laptop's screen: the charts below the fold are still redrawn and waited for, but not painted.
VIEWPORT = {"width": 1440, "height": 900}
# The largest grid, in the view of the details that sends the most: the charts (heatmap windows of 64 × 64).
BIG = {"batch": 1024, "features": 1024, "view": "charts", "v": links.LINK_VERSION}
TARGET_RATIO = 1.5
TARGET_BYTES = 300_000
TARGET_COLD_S = 5.0

OK_STATUSES = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
_FIELDS = {
    "SCRIPT_FINISHED": ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"].number,
    "HEARTBEAT_ACK": ForwardMsg.DESCRIPTOR.fields_by_name["heartbeat_ack"].number,
    "RERUN_SCRIPT": BackMsg.DESCRIPTOR.fields_by_name["rerun_script"].number,
    "FINISHED_OK": ForwardMsg.FINISHED_SUCCESSFULLY,
    "FRAGMENT_OK": ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
}

_INSTRUMENT = """
(F) => {
    if (window.__bench) return;
    const now = () => performance.now();
    const b = (window.__bench = {
        F: F, mark: 0, keyAt: null, sends: [], recv: [], finished: [],
        lastMutation: 0, lastAfterplot: 0, statusAt: 0, status: false, recent: [],
    });
    b.arm = () => { b.mark = now(); b.keyAt = null; };
    document.addEventListener('keydown', (e) => { if (b.keyAt === null) b.keyAt = e.timeStamp || now(); }, true);

    // The top-level fields of a protobuf message: [field number, varint value or null].
    const scan = (bytes) => {
        const out = [];
        let i = 0;
        const varint = () => {
            let v = 0, s = 1, x;
            do { x = bytes[i++]; v += (x & 0x7f) * s; s *= 128; } while (x & 0x80 && i < bytes.length);
            return v;
        };
        while (i < bytes.length) {
            const tag = varint(), wire = tag & 7;
            let value = null;
            if (wire === 0) value = varint();
            else if (wire === 1) i += 8;
            else if (wire === 2) { const n = varint(); i += n; }  // i after the length, then past the bytes
            else if (wire === 5) i += 4;
            else break;
            out.push([Math.floor(tag / 8), value]);
        }
        return out;
    };
    const Native = window.WebSocket;
    window.WebSocket = new Proxy(Native, {
        construct(target, args) {
            const ws = new target(...args);
            ws.addEventListener('message', (e) => {
                if (!(e.data instanceof ArrayBuffer)) return;
                const t = now(), fields = scan(new Uint8Array(e.data));
                if (fields.some(([f]) => f === F.HEARTBEAT_ACK)) return;
                b.recv.push([t, e.data.byteLength]);
                for (const [f, v] of fields) if (f === F.SCRIPT_FINISHED) b.finished.push([t, v === null ? 0 : v]);
            });
            return ws;
        },
    });
    const send = Native.prototype.send;
    Native.prototype.send = function (data) {
        const bytes = data instanceof ArrayBuffer ? new Uint8Array(data)
            : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
        if (bytes && scan(bytes).some(([f]) => f === F.RERUN_SCRIPT)) b.sends.push(now());
        return send.call(this, data);
    };

    // The app's first own element in the main area (a heading or a line of text): first paint.
    const FIRST_CONTENT = '[data-testid="stMain"] [data-testid="stHeading"], [data-testid="stMain"] [data-testid="stMarkdown"]';
    const hook = (gd) => {
        if (gd.__benchHooked || typeof gd.on !== 'function') return;
        gd.__benchHooked = true;
        if (gd._fullLayout) gd.__drawn = gd.data;
        gd.on('plotly_afterplot', () => { gd.__drawn = gd.data; b.lastAfterplot = now(); });
    };
    const observe = () => {
        new MutationObserver((records) => {
            const t = now();
            const header = document.querySelector('[data-testid="stHeader"]');
            const outside = records.filter((r) => !(header && header.contains(r.target)));
            if (outside.length) {
                b.lastMutation = t;
                // What changed last, for a page that never goes quiet (see DIAGNOSE_JS).
                const r = outside[outside.length - 1];
                const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
                const where = el && el.closest('[data-testid]');
                b.recent.push([Math.round(t), r.type, r.attributeName, el && el.tagName,
                    where && where.getAttribute('data-testid'), outside.length]);
                if (b.recent.length > 8) b.recent.shift();
            }
            if (b.firstContent === undefined && document.querySelector(FIRST_CONTENT)) b.firstContent = t;
            const status = !!document.querySelector('[data-testid="stStatusWidget"]');
            if (status !== b.status) { b.status = status; b.statusAt = t; }
            document.querySelectorAll('.js-plotly-plot').forEach(hook);
        }).observe(document.documentElement, {subtree: true, childList: true, attributes: true, characterData: true});
    };
    if (document.documentElement) observe(); else document.addEventListener('DOMContentLoaded', observe);
    // The stage draws inside a shadow root, which the observer above does not see: look every frame.
    const stage = () => {
        const host = document.querySelector('.st-key-live_stage [data-testid="stBidiComponentIsolated"]');
        if (host && host.shadowRoot && host.shadowRoot.querySelector('.cell')) b.stageDrawn = now();
        else requestAnimationFrame(stage);
    };
    requestAnimationFrame(stage);
}
"""
# Installed in every page before its own scripts: the field numbers come from Streamlit's descriptors.
INSTRUMENT_JS = f"({_INSTRUMENT})({json.dumps(_FIELDS)});"

# The page has settled after the armed action (see the module docstring); null until then.
SETTLED_JS = """
([quiet, needKey]) => {
    const b = window.__bench;
    if (!b) return null;
    const start = needKey ? b.keyAt : b.mark;
    if (start === null) return null;
    let from = start;
    if (needKey) {
        const sends = b.sends.filter((t) => t >= start);
        if (!sends.length) return null;
        from = sends[sends.length - 1];
    }
    const fin = b.finished.find(([t, s]) => t >= from && (s === b.F.FINISHED_OK || s === b.F.FRAGMENT_OK));
    if (!fin) return null;
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-connection-state') !== 'CONNECTED') return null;
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return null;
    if (document.querySelector('[data-testid="stStatusWidget"]')) return null;
    if (document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]')) return null;
    const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
    if (plots.some((gd) => !gd.data || !gd._fullLayout || (gd.__benchHooked && gd.data !== gd.__drawn))) return null;
    const settled = Math.max(fin[0], ...[b.lastMutation, b.lastAfterplot, b.statusAt].filter((t) => t >= start));
    if (performance.now() - settled < quiet) return null;
    const recv = b.recv.filter(([t]) => t >= start && t <= settled);
    return {
        start: start, settled: settled, origin: performance.timeOrigin, charts: plots.length,
        latency_ms: settled - start,
        first_content_ms: b.firstContent === undefined ? null : b.firstContent - start,
        stage_ms: b.stageDrawn === undefined ? null : b.stageDrawn - start,
        connected_ms: b.sends.length ? b.sends[0] - start : null,
        request_ms: needKey ? b.sends.find((t) => t >= start) - start : 0,
        bytes: recv.reduce((n, [, size]) => n + size, 0),
        messages: recv.length,
        exceptions: document.querySelectorAll('[data-testid="stException"]').length,
    };
}
"""


# Why a page has not settled: each condition of SETTLED_JS, for an error message.
DIAGNOSE_JS = """
() => {
    const b = window.__bench, app = document.querySelector('[data-testid="stApp"]'), t = performance.now();
    if (!b) return 'not instrumented';
    const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
    return JSON.stringify({
        connection: app && app.getAttribute('data-test-connection-state'),
        script: app && app.getAttribute('data-test-script-state'),
        statusWidget: !!document.querySelector('[data-testid="stStatusWidget"]'),
        staleOrSkeleton: document.querySelectorAll('[data-stale="true"], [data-testid="stSkeleton"]').length,
        plots: plots.length,
        undrawn: plots.filter((gd) => !gd._fullLayout || (gd.__benchHooked && gd.data !== gd.__drawn)).length,
        finished: b.finished.map(([at, s]) => [Math.round(at), s]).slice(-3),
        sends: b.sends.length, received: b.recv.length,
        sinceMutation: Math.round(t - b.lastMutation), now: Math.round(t), recentMutations: b.recent,
        shows: (document.querySelector('[data-testid="stMain"]') || document.body).innerText.slice(0, 200),
    });
}
"""


@dataclass(frozen=True)
class Settle:
    """One action, from its start (the keydown, or the navigation) to the settled page."""

    latency_ms: float  # start to the last event (script finished, last redraw, last DOM change)
    request_ms: float  # start to the first rerun request sent (the widget's own delay)
    bytes: int  # WebSocket payload bytes received
    messages: int
    charts: int
    exceptions: int  # stException boxes on the page
    settled_epoch: float  # wall-clock seconds at the settle, for the cold start
    first_content_epoch: float | None = None  # when the app's first heading or text appeared (first paint)
    stage_epoch: float | None = None  # when the stage's cells were drawn (the main page only)
    connected_epoch: float | None = None  # when the frontend, loaded, asked for its first run
    server_ms: float | None = None  # rerun request out to script_finished in, on the network layer (Wire)


def _settle(raw: dict[str, Any]) -> Settle:
    return Settle(
        latency_ms=raw["latency_ms"],
        request_ms=raw["request_ms"],
        bytes=int(raw["bytes"]),
        messages=int(raw["messages"]),
        charts=int(raw["charts"]),
        exceptions=int(raw["exceptions"]),
        settled_epoch=(raw["origin"] + raw["settled"]) / 1000,
        first_content_epoch=_epoch(raw, "first_content_ms"),
        stage_epoch=_epoch(raw, "stage_ms"),
        connected_epoch=_epoch(raw, "connected_ms"),
    )


def _epoch(raw: dict[str, Any], key: str) -> float | None:
    return None if raw.get(key) is None else (raw["origin"] + raw["start"] + raw[key]) / 1000


def launch(playwright) -> Browser:
    """Debian's Chromium, headless, with the flags the browser tests use."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def new_context(browser: Browser) -> BrowserContext:
    """A context that refuses every request leaving the machine and instruments each page."""
    context = browser.new_context(viewport=VIEWPORT)
    context.route(lambda url: not is_local(url), lambda route: route.abort())
    context.add_init_script(INSTRUMENT_JS)
    return context


def wait_settled(page: Page, need_key: bool, timeout: float = SETTLE_TIMEOUT) -> Settle:
    try:
        handle = page.wait_for_function(SETTLED_JS, arg=[QUIET_MS, need_key], polling=50, timeout=timeout * 1000)
    except PlaywrightTimeout:
        raise TimeoutError(f"{page.url} not settled after {timeout:.0f} s: {page.evaluate(DIAGNOSE_JS)}") from None
    return _settle(handle.json_value())


@dataclass(frozen=True)
class Frame:
    """One WebSocket frame, as Chromium's network layer saw it."""

    at: float  # seconds, the network's monotonic clock
    sent: bool
    kind: str | None  # the BackMsg or ForwardMsg type
    status: int | None  # a script_finished's status
    size: int  # payload bytes


@dataclass
class Wire:
    """Every WebSocket frame of one tab through the DevTools protocol, parsed with Streamlit's protobuf classes.

    Two things the page itself cannot tell: when each frame went out and came
    in at the network layer, which splits a press at the ``script_finished``
    message (rerun request out to ``script_finished`` in: the server's time,
    plus whatever time a busy page held the network layer back, since Chromium
    reads a WebSocket only as fast as the page consumes it); and an
    independent count of the messages, bytes and finished runs, which must
    agree with the page's own.
    """

    frames: list[Frame] = field(default_factory=list)

    def attach(self, cdp: Any) -> None:
        """Listen on a DevTools session (sync or async) whose Network domain is, or will be, enabled."""
        cdp.on("Network.webSocketFrameSent", lambda event: self._frame(event, sent=True))
        cdp.on("Network.webSocketFrameReceived", lambda event: self._frame(event, sent=False))

    def _frame(self, event: dict[str, Any], sent: bool) -> None:
        response = event["response"]
        if response.get("opcode") != 2:  # Streamlit's messages are binary frames
            return
        payload = base64.b64decode(response["payloadData"])
        msg = (BackMsg if sent else ForwardMsg).FromString(payload)
        kind = msg.WhichOneof("type")
        status = msg.script_finished if kind == "script_finished" else None
        self.frames.append(Frame(event["timestamp"], sent, kind, status, len(payload)))

    def mark(self) -> int:
        return len(self.frames)

    def server_ms(self, since: int) -> float | None:
        """From the last rerun request after frame ``since`` to the successful ``script_finished`` that answers it."""
        frames = self.frames[since:]
        asks = [f.at for f in frames if f.sent and f.kind == "rerun_script"]
        done = [
            f.at
            for f in frames
            if not f.sent and f.kind == "script_finished" and f.status in OK_STATUSES and asks and f.at >= asks[-1]
        ]
        return (done[0] - asks[-1]) * 1000 if done else None

    def received(self) -> dict[str, int]:
        frames = [f for f in self.frames if not f.sent and f.kind != "heartbeat_ack"]
        return {
            "messages": len(frames),
            "bytes": sum(f.size for f in frames),
            "finished": sum(f.kind == "script_finished" for f in frames),
        }


# The page's own count of what it received (SETTLED_JS's instrumentation), to set against Wire.received().
COUNTED_JS = """() => ({
    messages: window.__bench.recv.length,
    bytes: window.__bench.recv.reduce((n, [, size]) => n + size, 0),
    finished: window.__bench.finished.length,
})"""


@dataclass
class Tab:
    """A page of the app with its WebSocket traffic."""

    page: Page
    wire: Wire

    def disagreement(self) -> str | None:
        """None when the page counted the same messages, bytes and finished runs as the network layer."""
        self.page.wait_for_timeout(500)  # the last frames' events reach Python
        counted, seen = self.page.evaluate(COUNTED_JS), self.wire.received()
        return None if counted == seen else f"{self.page.url}: the page counted {counted}, the network saw {seen}"


def open_tab(context: BrowserContext, url: str, timeout: float = SETTLE_TIMEOUT) -> tuple[Tab, Settle]:
    """A new tab at ``url``, once its first run has finished and every chart is drawn."""
    page = context.new_page()
    wire = Wire()
    cdp = context.new_cdp_session(page)
    wire.attach(cdp)
    cdp.send("Network.enable")
    page.goto(url, wait_until="commit", timeout=timeout * 1000)
    first = wait_settled(page, need_key=False, timeout=timeout)
    return Tab(page, wire), replace(first, server_ms=wire.server_ms(0))


def press(tab: Tab, key: str, selector: str = GAIN, timeout: float = SETTLE_TIMEOUT) -> Settle:
    """Focus ``selector``, press ``key`` and wait until the page has settled."""
    tab.page.bring_to_front()
    tab.page.locator(selector).focus()
    since = tab.wire.mark()
    tab.page.evaluate("window.__bench.arm()")
    tab.page.keyboard.press(key)
    settle = wait_settled(tab.page, need_key=True, timeout=timeout)
    return replace(settle, server_ms=tab.wire.server_ms(since))


def enter(tab: Tab, selector: str, text: str, timeout: float = SETTLE_TIMEOUT) -> Settle:
    """Type ``text`` into the input ``selector``, press Enter (Streamlit commits it) and wait until settled."""
    tab.page.bring_to_front()
    tab.page.locator(selector).fill(text)
    since = tab.wire.mark()
    tab.page.evaluate("window.__bench.arm()")
    tab.page.keyboard.press("Enter")
    settle = wait_settled(tab.page, need_key=True, timeout=timeout)
    return replace(settle, server_ms=tab.wire.server_ms(since))


@dataclass
class Series:
    """The presses on one page."""

    name: str
    url: str
    first_load: Settle | None = None
    presses: list[Settle] = field(default_factory=list)

    def median(self, attr: str = "latency_ms") -> float:
        return statistics.median(getattr(p, attr) for p in self.presses) if self.presses else float("nan")

    def worst(self, attr: str) -> float:
        return max((getattr(p, attr) for p in self.presses), default=float("nan"))


@dataclass(frozen=True)
class ColdStart:
    """One server's first minute, in seconds from starting the process."""

    healthy_s: float  # the server answers its health check
    connected_s: float  # the browser has loaded the frontend and asked for the first run
    first_paint_s: float  # the app's first heading or line of text is on the page
    stage_s: float  # the stage's cells are drawn (nan for a page without one)
    settled_s: float  # the first run has finished and every chart is drawn
    first_run_s: float  # of which the server's first run (request out to script_finished in)

    @classmethod
    def of(cls, t0: float, healthy: float, first: Settle) -> ColdStart:
        nan = float("nan")
        return cls(
            healthy_s=healthy - t0,
            connected_s=first.connected_epoch - t0 if first.connected_epoch else nan,
            first_paint_s=first.first_content_epoch - t0 if first.first_content_epoch else nan,
            stage_s=first.stage_epoch - t0 if first.stage_epoch else nan,
            settled_s=first.settled_epoch - t0,
            first_run_s=(first.server_ms or nan) / 1000,
        )


@dataclass
class Report:
    chromium: str
    cold: ColdStart  # the app
    bare_cold: ColdStart  # the bare page, the same way: the platform's floor
    main: Series
    bare: Series
    big: Series
    big_seed: Series
    errors: list[str]
    received: dict[str, int]  # every tab's WebSocket traffic as the network saw it, matched by the pages' counts
    busy_main: list[float] = field(default_factory=list)  # the explorer's renderer main thread, ms per traced press
    busy_bare: list[float] = field(default_factory=list)  # the bare page's, pressed in turn
    plotly: tuple[str, dict[str, float]] = ("", {})  # plotly.js version; Plotly.react ms per figure, alone

    @property
    def series(self) -> tuple[Series, ...]:
        return (self.main, self.bare, self.big, self.big_seed)

    @property
    def worst_bytes(self) -> int:
        return max(p.bytes for s in self.series if s is not self.bare for p in s.presses)

    @property
    def ratio(self) -> float:
        return self.main.median() / self.bare.median()


def _key(i: int) -> str:
    return "ArrowRight" if i % 2 == 0 else "ArrowLeft"


def measure(
    pairs: int = 15,
    big_presses: int = 5,
    seed_changes: int = 3,
    warmup: int = 2,
    traced: int = 4,
    log_dir: Path | None = None,
) -> Report:
    """Cold start, then ``pairs`` alternating presses on the explorer and the bare page, then the big grid.

    On the big grid the gain is pressed ``big_presses`` times, then the seed is
    changed ``seed_changes`` times: a new x, so every chart is new and no
    message can come from the browser's cache of large messages. Then
    ``traced`` more presses on each page, in turn, under a Chromium trace
    (:mod:`benchmarks.browser_work`; kept apart, since tracing slows a page),
    and plotly.js redrawing the explorer's figures alone.
    """
    from benchmarks import browser_work

    log_dir = log_dir or Path("/tmp/lnviz-bench")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        servers: list[AppProcess] = []

        def cold_open(script: str, log: Path) -> tuple[AppProcess, Tab, Settle, ColdStart]:
            """Start ``script``'s server and open its first tab, timing the cold start."""
            t0 = time.time()
            server = start_app(free_port(), log, script)
            servers.append(server)
            wait_app(server)
            healthy = time.time()
            tab, first = open_tab(context, server.url + "/")
            return server, tab, first, ColdStart.of(t0, healthy, first)

        try:
            context = new_context(browser)
            context.new_page().close()  # the browser's own start-up is not the server's cold start
            app, main_tab, first, cold = cold_open(MAIN_APP, log_dir / "app.log")
            main = Series("explorer, default 8 × 12", app.url + "/", first)
            bare, bare_tab, bare_first, bare_cold = cold_open(BARE_APP, log_dir / "bare.log")
            bare_series = Series("bare page (one slider, one line)", bare.url + "/", bare_first)
            for tab in (main_tab, bare_tab):
                for i in range(warmup):
                    press(tab, _key(i))
            for i in range(pairs):
                order = ((main, main_tab), (bare_series, bare_tab))
                for series, tab in order if i % 2 == 0 else order[::-1]:
                    series.presses.append(press(tab, _key(i)))
            query = "&".join(f"{k}={v}" for k, v in BIG.items())
            big_tab, big_first = open_tab(context, f"{app.url}/?{query}")
            big = Series("explorer, B = H = 1024, charts view", big_tab.page.url, big_first)
            for i in range(warmup):
                press(big_tab, _key(i))
            for i in range(big_presses):
                big.presses.append(press(big_tab, _key(i)))
            big_seed = Series("explorer, B = H = 1024, charts view, new seed (all data changes)", big_tab.page.url)
            for i in range(seed_changes):
                big_seed.presses.append(enter(big_tab, SEED, str(i + 1)))
            busy: dict[str, list[float]] = {"main": [], "bare": []}
            for i in range(traced):
                for name, tab in (("main", main_tab), ("bare", bare_tab)):
                    busy[name].append(browser_work.main_thread_ms(browser, tab, _key(i)))
            plotly_alone = browser_work.plotly_redraw_ms(browser)
            received = {"messages": 0, "bytes": 0, "finished": 0}
            for tab in (main_tab, bare_tab, big_tab):
                if why := tab.disagreement():
                    errors.append(why)
                received = {k: v + tab.wire.received()[k] for k, v in received.items()}
            for series in (main, bare_series, big, big_seed):
                bad = sum(s.exceptions for s in (series.first_load, *series.presses) if s is not None)
                if bad:
                    errors.append(f"{series.name}: {bad} exception box(es) seen")
                if any(s.server_ms is None for s in series.presses):
                    errors.append(f"{series.name}: a press with no rerun request and script_finished on the wire")
            report = Report(
                browser.version,
                cold,
                bare_cold,
                main,
                bare_series,
                big,
                big_seed,
                errors,
                received,
                busy["main"],
                busy["bare"],
                plotly_alone,
            )
        finally:
            browser.close()
            for server in servers:
                stop(server.proc)
    return report


def _kb(n: float) -> str:
    return f"{n / 1000:.1f}"


def _verdict(ok: bool) -> str:
    return "**PASS**" if ok else "**MISS**"


def _median(values: Sequence[float | None]) -> float:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else float("nan")


def _cold_table(r: Report) -> str:
    """Where a cold start's seconds go, for the app and for the bare page."""
    head = (
        "| cold start, seconds from starting the server | server answers | frontend loaded, first run asked "
        "| first paint | first run on the server | the stage drawn | the whole page settled |\n"
        "|---|---:|---:|---:|---:|---:|---:|"
    )
    rows = [
        f"| {name} | {c.healthy_s:.1f} | {c.connected_s:.1f} | {c.first_paint_s:.1f} | {c.first_run_s:.1f} "
        f"| {c.stage_s:.1f} | {c.settled_s:.1f} |"
        for name, c in (("explorer (`app.py`)", r.cold), ("bare page", r.bare_cold))
    ]
    return "\n".join([head, *rows])


def _work_lines(r: Report) -> list[str]:
    """Where a gain move's time goes: the server, the page's main thread, plotly.js alone."""
    if not r.busy_main:
        return []
    version, alone = r.plotly
    return [
        "",
        "Where a gain move's time goes (default view, medians):",
        "",
        "| | explorer | bare page |",
        "|---|---:|---:|",
        f"| request out to `script_finished` in (the server) | {r.main.median('server_ms'):.0f} ms "
        f"| {r.bare.median('server_ms'):.0f} ms |",
        f"| the browser's main thread busy, key press to settled ({len(r.busy_main)} traced presses each) "
        f"| {statistics.median(r.busy_main):.0f} ms | {statistics.median(r.busy_bare):.0f} ms |",
        "",
        f"plotly.js {version} alone in a blank page (no server, no Streamlit, no other tab), `Plotly.react` of the "
        "explorer's own figures for γ 1.00 → 1.05: "
        + "; ".join(f"{name} {ms:.0f} ms" for name, ms in alone.items())
        + f", {sum(alone.values()):.0f} ms together, against the bare page's whole press of "
        f"{r.bare.median():.0f} ms.",
    ]


def markdown(r: Report) -> str:
    """The browser section: the press latencies side by side, bytes per rerun, the cold start."""
    rows = [
        "| page, action | n | median ms | max ms | request sent ms | script_finished in ms | then the page ms "
        "| median KB / rerun | max KB / rerun | first load KB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in r.series:
        action = "Enter in seed" if s is r.big_seed else "ArrowRight/Left on the slider"
        server = _median([p.server_ms for p in s.presses])
        rest = _median([p.latency_ms - p.request_ms - p.server_ms for p in s.presses if p.server_ms is not None])
        first = _kb(s.first_load.bytes) if s.first_load else "–"
        rows.append(
            f"| {s.name}: {action} | {len(s.presses)} | {s.median():.0f} | {s.worst('latency_ms'):.0f} "
            f"| {s.median('request_ms'):.0f} | {server:.0f} | {rest:.0f} "
            f"| {_kb(s.median('bytes'))} | {_kb(s.worst('bytes'))} | {first} |"
        )
    lines = [
        f"Chromium {r.chromium}, headless, one context, a tab per page, a {VIEWPORT['width']} × "
        f"{VIEWPORT['height']} window. *Median*, *max*: keydown to settled page, on the page's clock. "
        "*Request sent*: keydown to the rerun request leaving (the widget's own delay). *Script_finished in*: the "
        "request out to Streamlit's `script_finished` message in, on Chromium's network layer (DevTools): the "
        "server's time, plus any time a busy page kept the network layer from reading (Chromium paces WebSocket "
        "reads by what the page has consumed). *Then the page*: the rest, until the last redraw. "
        f"A settle is confirmed by {QUIET_MS} ms of quiet, not counted.",
        "",
        *rows,
        "",
        f"- **Explorer / bare page, median of {len(r.main.presses)} presses each, alternating: {r.ratio:.2f}×** "
        f"(target ≤ {TARGET_RATIO}×) {_verdict(r.ratio <= TARGET_RATIO)}",
        f"- Bytes per rerun, the most seen on the explorer at any size: {_kb(r.worst_bytes)} KB "
        f"(target ≤ {TARGET_BYTES // 1000} KB) {_verdict(r.worst_bytes <= TARGET_BYTES)}",
        f"- **Cold start, first paint: {r.cold.first_paint_s:.1f} s** from starting the server to the explorer's "
        f"title on the page (target < {TARGET_COLD_S:.0f} s) {_verdict(r.cold.first_paint_s < TARGET_COLD_S)}; "
        f"{r.cold.settled_s:.1f} s to the whole page settled. The bare page, started the same way in the same run: "
        f"{r.bare_cold.first_paint_s:.1f} s to its first paint, {r.bare_cold.settled_s:.1f} s settled.",
        *_work_lines(r),
        "",
        _cold_table(r),
    ]
    if not any("the network saw" in e for e in r.errors):
        lines.append(
            "- Cross-check: each page's own count of what it received agrees with the network layer's "
            f"(every frame parsed as a `ForwardMsg`): {r.received['messages']} messages, "
            f"{_kb(r.received['bytes'])} KB, {r.received['finished']} finished runs."
        )
    if r.errors:
        lines.append(f"- Errors: {'; '.join(r.errors)}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.browser_latency", description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15, help="alternating presses on each page")
    parser.add_argument("--big-presses", type=int, default=5, help="gain presses at B = H = 1024")
    parser.add_argument("--seed-changes", type=int, default=3, help="new seeds at B = H = 1024")
    args = parser.parse_args(argv)
    print(markdown(measure(args.pairs, args.big_presses, args.seed_changes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
