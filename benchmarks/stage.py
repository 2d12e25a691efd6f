"""The stage's speed in headless Chromium: drag to frame, release to torch's numbers, bytes.

    python -m benchmarks.stage              # prints the numbers
    python -m benchmarks.stage --quick      # fewer moves and presses, to check that it runs

Two servers run side by side with the same flags: the app (its main page,
whose first element is the stage) and benchmarks/bare_app.py (one slider and
one line of text), the platform's floor.

1. **Drag to frame.** The mouse drags the stage's ``gain`` thumb in small
   moves, each of which fires one ``input`` event. A listener on the range,
   added after the stage's own (so it runs once the stage has redrawn its
   canvases), checks that LN's pixels changed, and from the next animation frame
   posts a task, which runs once that frame has been rendered. Latency: that
   task's time minus the event's ``timeStamp``, on the page's clock. At 60 Hz
   a frame is 16.7 ms; the targets are a median ≤ 16 ms and a p95 ≤ 33 ms.
   The messages the page sends the server during the drag are counted on
   Chromium's network layer: none but heartbeats may go. On a busy machine
   the latencies include waiting for a core, so the renderer's main-thread
   CPU time per move is reported too, from a Chromium trace of the drag.
2. **Release to torch's numbers.** ArrowRight or ArrowLeft on the stage's
   ``gain`` range (an ``input`` and a ``change`` together, as a release):
   from the keydown to torch's numbers on the stage (its badge shows torch's
   Δ); the bare page's slider is pressed to settled in turn, alternating which
   goes first. The whole page settled (the details below the stage redrawn
   too) is reported beside it.
3. **Bytes.** The payload's JSON for the default window and for a 1024 × 1024
   grid, and the WebSocket bytes a release's rerun brings (target ≤ 300 KB).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from benchmarks.stats import percentile
from benchmarks.tabs import BARE_APP, GAIN, Tab, new_context, open_tab, press
from harness.chromium import STAGE_ROOT_JS, launch
from harness.server import free_port, start_app, stop, wait_app
from lnviz.labs import explorer
from lnviz.labs.explorer import stage
from lnviz.maths import data
from lnviz.views import links

STAGE_APP = "app.py"
STAGE_GAIN = ".st-key-live_stage input[name=gain]"
FRAME_MS = 1000 / 60
TARGET_MEDIAN_MS, TARGET_P95_MS, TARGET_BYTES = 16.0, 33.0, 300_000

# The drag probe: one latency per input event, and how many events left the outputs unchanged.
DRAG_JS = f"""() => {{
    const root = {STAGE_ROOT_JS};
    const gain = root.querySelector('input[name=gain]');
    // LN's first row of cells, one pixel high across the canvas: colours and digits.
    const canvas = root.querySelectorAll('canvas.paint')[1];
    const ctx = canvas.getContext('2d');
    const outputs = () => ctx.getImageData(0, Math.round(canvas.height / 16), canvas.width, 1).data.join();
    const m = (window.__drag = {{ms: [], unchanged: 0, last: outputs()}});
    gain.addEventListener('input', (e) => {{
        const t0 = e.timeStamp, now = outputs();
        if (now === m.last) m.unchanged++;
        m.last = now;
        requestAnimationFrame(() => {{
            const channel = new MessageChannel();
            channel.port1.onmessage = () => m.ms.push(performance.now() - t0);
            channel.port2.postMessage(0);
        }});
    }});
}}"""

# When the badge last showed torch's Δ, on the page's clock.
BADGE_JS = f"""() => {{
    const badge = {STAGE_ROOT_JS}.querySelector('.badge');
    window.__torchAt = null;
    new MutationObserver(() => {{
        if (badge.textContent.includes('max')) window.__torchAt = performance.now();
    }}).observe(badge, {{childList: true, characterData: true, subtree: true}});
}}"""


def payload_bytes() -> dict[str, int]:
    """The stage's JSON, default window, at the default grid and at 1024 × 1024 with per-feature γ, β."""
    sizes = {}
    for batch, features in ((16, 32), (1024, 1024)):
        x = data.make_activations("heterogeneous features", batch, features, seed=0)
        g, b = data.random_affine(features, seed=0)
        result = explorer.with_affine(explorer.normalize(x, 1e-5), 1.5, -0.25, g, b)
        p = stage.payload(result, *stage.window(batch, features, batch // 2, features // 2))
        sizes[f"{batch}x{features}"] = len(json.dumps(p, allow_nan=False).encode())
    return sizes


def main_thread_cpu_ms(trace: bytes) -> float:
    """The renderer main thread's CPU time in a Chromium trace: the sum of its top-level tasks."""
    events = json.loads(trace)
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {
        (e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name" and e["args"]["name"] == "CrRendererMain"
    }
    tasks = [
        e
        for e in events
        if e.get("name") == "ThreadControllerImpl::RunTask" and e.get("ph") == "X" and (e["pid"], e["tid"]) in main
    ]
    return sum(e.get("tdur", e.get("dur", 0)) for e in tasks) / 1000


def drag(browser: Browser, tab: Tab, moves: int) -> dict[str, float]:
    """Drag the stage's gain thumb back and forth ``moves`` times: latencies, CPU and messages sent meanwhile."""
    page = tab.page
    page.evaluate(DRAG_JS)
    box = page.locator(STAGE_GAIN).bounding_box()
    y = box["y"] + box["height"] / 2
    x = box["x"] + 0.6 * box["width"]  # γ = 1
    page.mouse.move(x, y)
    since = tab.wire.mark()
    page.mouse.down()
    browser.start_tracing(page=page, categories=["toplevel"])
    lo, hi = box["x"] + 0.15 * box["width"], box["x"] + 0.85 * box["width"]
    step = 6.0
    for _ in range(moves):
        if not lo <= x + step <= hi:
            step = -step
        x += step
        page.mouse.move(x, y)
        page.wait_for_timeout(25)
    page.wait_for_timeout(200)
    cpu = main_thread_cpu_ms(browser.stop_tracing())
    sent = [f.kind for f in tab.wire.frames[since:] if f.sent and f.kind != "app_heartbeat"]
    result = page.evaluate("window.__drag")
    page.mouse.up()
    ms = result["ms"]
    return {
        "events": len(ms),
        "unchanged": result["unchanged"],
        "median_ms": statistics.median(ms),
        "p95_ms": percentile(ms, 95),
        "max_ms": max(ms),
        "within_one_frame": sum(v <= FRAME_MS for v in ms) / len(ms),
        "cpu_per_move_ms": cpu / moves,
        "sent_during_drag": len(sent),
    }


def release(tab: Tab, bare: Tab, presses: int) -> dict[str, float]:
    """Keyboard releases on the stage's gain (to torch's Δ on the badge, to settled) and on the bare slider."""
    tab.page.evaluate(BADGE_JS)
    to_badge, page_settled, bare_settled, stage_bytes = [], [], [], []
    for k in range(presses):
        key = "ArrowRight" if k % 2 == 0 else "ArrowLeft"
        order = ("stage", "bare") if k % 2 == 0 else ("bare", "stage")
        for which in order:
            if which == "bare":
                bare_settled.append(press(bare, key, GAIN).latency_ms)
                continue
            tab.page.evaluate("window.__torchAt = null")
            settle = press(tab, key, STAGE_GAIN)
            tab.page.wait_for_function("() => window.__torchAt !== null", timeout=30_000)
            key_at = tab.page.evaluate("window.__bench.keyAt")
            to_badge.append(tab.page.evaluate("window.__torchAt") - key_at)
            page_settled.append(settle.latency_ms)
            stage_bytes.append(settle.bytes)
    return {
        "stage_ms": statistics.median(to_badge),
        "page_ms": statistics.median(page_settled),
        "bare_ms": statistics.median(bare_settled),
        "ratio": statistics.median(to_badge) / statistics.median(bare_settled),
        "rerun_bytes": max(stage_bytes),
    }


def measure(quick: bool = False) -> dict[str, dict[str, float]]:
    """The stage's numbers: drag to frame, release to torch's numbers (against the bare page), bytes."""
    moves, presses = (40, 4) if quick else (200, 12)
    sizes = payload_bytes()
    logs = Path(tempfile.mkdtemp(prefix="bench_stage_"))
    apps = [
        start_app(free_port(), logs / f"{name}.log", script)
        for name, script in (("stage", STAGE_APP), ("bare", BARE_APP))
    ]
    try:
        for app in apps:
            wait_app(app)
        with sync_playwright() as p:
            browser = launch(p)
            context = new_context(browser)
            tab, _ = open_tab(context, apps[0].url + f"/?v={links.LINK_VERSION}")
            tab.page.wait_for_function(f"() => {STAGE_ROOT_JS}?.querySelector('.cell.out')")
            bare, _ = open_tab(context, apps[1].url + "/")
            dragged = drag(browser, tab, moves)
            tab.page.wait_for_timeout(1500)  # the drag's own release reruns
            released = release(tab, bare, presses)
            browser.close()
    finally:
        for app in apps:
            stop(app.proc)
    return {"drag": dragged, "release": released, "bytes": sizes, "load": {"average": os.getloadavg()[0]}}


def markdown(r: dict[str, dict[str, float]]) -> str:
    """The stage's section of docs/benchmarks.md."""
    d, rel, b = r["drag"], r["release"], r["bytes"]
    drag_ok = d["median_ms"] <= TARGET_MEDIAN_MS and d["p95_ms"] <= TARGET_P95_MS and d["sent_during_drag"] == 0
    return (
        "| stage target | measured | |\n|---|---|---|\n"
        f"| drag to frame: median ≤ {TARGET_MEDIAN_MS:.0f} ms, p95 ≤ {TARGET_P95_MS:.0f} ms, no server round trip "
        f"| median {d['median_ms']:.1f} ms, p95 {d['p95_ms']:.1f} ms, max {d['max_ms']:.1f} ms over {d['events']} "
        f"input events ({d['within_one_frame']:.0%} within one 60 Hz frame); {d['sent_during_drag']} messages to the "
        f"server during the drag; the renderer's main thread busy {d['cpu_per_move_ms']:.1f} ms per move "
        f"| {'**PASS**' if drag_ok else '**MISS**'} |\n"
        f"| release to torch's numbers on the stage ≤ 1.5× the bare page's press to settled "
        f"| {rel['stage_ms']:.0f} ms against {rel['bare_ms']:.0f} ms: **{rel['ratio']:.2f}×** (medians); the whole "
        f"page, details below the stage included, settled after {rel['page_ms']:.0f} ms "
        f"| {'**PASS**' if rel['ratio'] <= 1.5 else '**MISS**'} |\n"
        f"| ≤ {TARGET_BYTES // 1000} KB per rerun | a release's rerun {rel['rerun_bytes'] / 1000:.1f} KB; the stage's "
        f"data {b['16x32'] / 1000:.1f} KB (16 × 32), {b['1024x1024'] / 1000:.1f} KB (1024 × 1024) "
        f"| {'**PASS**' if rel['rerun_bytes'] <= TARGET_BYTES else '**MISS**'} |\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer moves and presses")
    args = parser.parse_args(argv)
    report = measure(args.quick)
    print(markdown(report))
    print(f"load average while measuring: {report['load']['average']:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
