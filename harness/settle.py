"""When a page has settled, as the page itself sees it: the one probe of tests and benchmarks.

How "settled" is decided, in the page itself (:data:`INSTRUMENT_JS`, installed
before Streamlit loads, in every context :func:`harness.chromium.local_context`
makes):

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

A page is settled once a successful ``script_finished`` has arrived after the
last rerun request it sent (after the armed key press, for a press: the
frontend sends it a moment after the key; otherwise, after the last input
too, or :data:`INPUT_GRACE_MS` after an input that sent none), the app is connected and not
running, no status widget, stale element or skeleton is left, every chart has
drawn its current data, and nothing of the above has happened for
:data:`QUIET_MS`. So a rerun the page asks for right after a run (a component
that reports back, a widget bound to the URL) is waited for by its own
``script_finished``, and a page that is already idle is settled at once: the
quiet spell only guards against stopping before a request that is about to go
out, and is not counted.

For a benchmark: a press's latency is the last of those events minus the
keydown's own timestamp, all on the page's clock. The bytes are the WebSocket
payloads received in that time (Streamlit's server does not compress its
messages; framing adds a few bytes each). The page's own count of them
(:data:`COUNTED_JS`) is set against what Chromium's network layer saw
(:class:`harness.wire.Wire`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

# The quiet spell after the last event. A request a run's elements send back (a component reporting, a widget
# bound to the URL) goes out within a frame or two of the DOM change that drew them; every settle of a suite run
# pays it once, so it is no longer than that needs (300 ms cost 0.15 s more a settle, ~600 settles a suite run).
QUIET_MS = 150
# How long an input (a click, a key, a change) that no rerun request has followed yet may still send one: the
# frontend sends a button's at once, a slider's after its debounce; an input that sends none costs this once.
INPUT_GRACE_MS = 500
SETTLE_TIMEOUT = 90.0  # seconds: the longest a page may take to settle, a first view that imports torch included

# The stage's host element (the explorer's and the walkthrough's live stage, by its key), and its root: it draws
# inside the shadow DOM of its component's host. Undefined until the host is on the page, so
# `${STAGE_ROOT_JS}?.querySelector(...)` may be polled from the first paint on.
STAGE_HOST = ".st-key-live_stage"
STAGE_ROOT_JS = f"document.querySelector('{STAGE_HOST} [data-testid=\"stBidiComponentIsolated\"]')?.shadowRoot"

_FIELDS = {
    "SCRIPT_FINISHED": ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"].number,
    "HEARTBEAT_ACK": ForwardMsg.DESCRIPTOR.fields_by_name["heartbeat_ack"].number,
    "RERUN_SCRIPT": BackMsg.DESCRIPTOR.fields_by_name["rerun_script"].number,
    "FINISHED_OK": ForwardMsg.FINISHED_SUCCESSFULLY,
    "FRAGMENT_OK": ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
}

_INSTRUMENT = """
(F, stageRoot, stageHost) => {
    if (window.__bench) return;
    const now = () => performance.now();
    const b = (window.__bench = {
        F: F, mark: 0, keyAt: null, sends: [], recv: [], finished: [],
        lastMutation: 0, lastAfterplot: 0, statusAt: 0, status: false, recent: [], inputAt: -Infinity,
    });
    b.arm = () => { b.mark = now(); b.keyAt = null; };
    document.addEventListener('keydown', (e) => { if (b.keyAt === null) b.keyAt = e.timeStamp || now(); }, true);
    // The last thing a person (or a test) did, which may ask for a rerun a moment later.
    for (const type of ['pointerdown', 'click', 'keydown', 'input', 'change']) {
        document.addEventListener(type, () => { b.inputAt = now(); }, true);
    }

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
    // The stage draws inside a shadow root, which the observer below does not see: once its host is on the page,
    // look every frame until its cells are drawn. Only then: a frame callback asked for every frame keeps an idle
    // page drawing frames, 8 % of a core for each open tab without a stage.
    const stage = () => {
        if (stageRoot()?.querySelector('.cell')) b.stageDrawn = now();
        else requestAnimationFrame(stage);
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
            if (!b.stageLooking && document.querySelector(stageHost)) { b.stageLooking = true; requestAnimationFrame(stage); }
            const status = !!document.querySelector('[data-testid="stStatusWidget"]');
            if (status !== b.status) { b.status = status; b.statusAt = t; }
            document.querySelectorAll('.js-plotly-plot').forEach(hook);
        }).observe(document.documentElement, {subtree: true, childList: true, attributes: true, characterData: true});
    };
    if (document.documentElement) observe(); else document.addEventListener('DOMContentLoaded', observe);
}
"""
# Installed in every page before its own scripts: the field numbers come from Streamlit's descriptors, and the
# stage's root is looked up as the tests look it up.
INSTRUMENT_JS = f"({_INSTRUMENT})({json.dumps(_FIELDS)}, () => {STAGE_ROOT_JS}, {json.dumps(STAGE_HOST)});"

# The page has settled since the armed action (see the module docstring); null until then. The argument is
# [quiet ms, whether to wait for a rerun request after the armed key press, INPUT_GRACE_MS].
SETTLED_JS = """
([quiet, needKey, grace]) => {
    const b = window.__bench;
    if (!b) return null;
    const start = needKey ? b.keyAt : b.mark;
    if (start === null) return null;
    // The last rerun request since the start: the page's first, or one it sent after a run (needKey: the press's).
    const sends = b.sends.filter((t) => t >= start);
    if (!sends.length) return null;
    const from = sends[sends.length - 1];
    // An input after it (a click, a key) may send its request a moment later: wait for it, or for `grace` ms.
    if (!needKey && b.inputAt > from && performance.now() - b.inputAt < grace) return null;
    const fin = b.finished.find(([t, s]) => t >= from && (s === b.F.FINISHED_OK || s === b.F.FRAGMENT_OK));
    if (!fin) return null;
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-connection-state') !== 'CONNECTED') return null;
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return null;
    if (document.querySelector('[data-testid="stStatusWidget"]')) return null;
    if (document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]')) return null;
    // A stage that has not yet reported itself drawn (lnviz/web/stage/index.js tellDrawn): its report's rerun is
    // still to come, and would undo a key pressed before it.
    const report = (STAGE_ROOT)?.querySelector('.stage[data-report]')?.dataset.report;
    if (document.querySelector(STAGE_HOST) && !report) return null;
    // Reported: Streamlit's widget manager sends the report's rerun request a task later (a timer of its own), so
    // a probe between the two would see the first run's page, the stage alone, as settled. The report is sent
    // after the cells are drawn: wait for a request from then on (its run is then waited for above).
    if (report === 'sent' && !(b.stageDrawn !== undefined && from >= b.stageDrawn)) return null;
    // A chart whose plot is not made yet (plotly loads lazily) is pending too.
    if (Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]')).some((c) => !c.querySelector('.js-plotly-plot'))) return null;
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
""".replace("(STAGE_ROOT)", f"({STAGE_ROOT_JS})").replace("STAGE_HOST", json.dumps(STAGE_HOST))


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
        stageReport: (STAGE_ROOT)?.querySelector('.stage')?.dataset.report ?? null,
        stageDrawn: b.stageDrawn === undefined ? null : Math.round(b.stageDrawn),
        sends: b.sends.map((at) => Math.round(at)).slice(-3), received: b.recv.length, sinceInput: Math.round(t - b.inputAt),
        sinceMutation: Math.round(t - b.lastMutation), now: Math.round(t), recentMutations: b.recent,
        shows: (document.querySelector('[data-testid="stMain"]') || document.body).innerText.slice(0, 200),
    });
}
""".replace("(STAGE_ROOT)", f"({STAGE_ROOT_JS})")

# The page's own count of what it received (SETTLED_JS's instrumentation), to set against Wire.received().
COUNTED_JS = """() => ({
    messages: window.__bench.recv.length,
    bytes: window.__bench.recv.reduce((n, [, size]) => n + size, 0),
    finished: window.__bench.finished.length,
})"""


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


def settle_from(raw: dict[str, Any]) -> Settle:
    """A :class:`Settle` from what :data:`SETTLED_JS` returned."""
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


def wait_settled(page: Page, need_key: bool = False, timeout: float = SETTLE_TIMEOUT) -> Settle:
    """Wait until ``page`` has settled: after its armed key press when ``need_key``, else after its last request."""
    try:
        handle = page.wait_for_function(
            SETTLED_JS, arg=[QUIET_MS, need_key, INPUT_GRACE_MS], polling=50, timeout=timeout * 1000
        )
    except PlaywrightTimeout:
        raise TimeoutError(f"{page.url} not settled after {timeout:.0f} s: {page.evaluate(DIAGNOSE_JS)}") from None
    return settle_from(handle.json_value())
