"""A new visitor on a warm server: a shared link opened in a new browser, against a bare Streamlit page.

    python -m benchmarks.visit              # prints the numbers
    python -m benchmarks.visit --quick      # two visits each, to check that it runs

Issue 32's target: a new browser context opening ``/`` on a server that has
already served a visitor, until the stage is drawn with torch's numbers, at
most 1.5× the bare page's (benchmarks/bare_app.py) first paint, opened the
same way in the same run, alternating which goes first; the ratio is of the
medians. With ``--apart`` (as ``make bench`` runs it) the servers are on core 0
and the browser on core 1, as hosted.

Each visit is broken down on the page's clock, from the navigation's start:
when the frontend asked for its first run, the server's first run for the new
session (request out to ``script_finished`` in, on the network layer), the
first paint, and the requests of each kind (the browser's resource timings):
Streamlit's JS chunks and CSS, fonts, KaTeX, the stage's own files; then the
stage drawn.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from benchmarks.tabs import BARE_APP, MAIN_APP, new_context
from harness.chromium import launch
from harness.server import free_port, start_app, stop, wait_app
from harness.tab import open_tab
from harness.wire import OK_STATUSES, Frame

TARGET_RATIO = 1.5
# (the servers' cores, the browser's) as taskset -c takes them.
APART = ("0", "1")
STAGE_PATH = "/bidi-components/lnviz.stage/"

# Every request the page made, on its clock from the navigation's start: url, start, response end, bytes.
RESOURCES_JS = """() => performance.getEntriesByType('resource').map((e) => ({
    url: e.name, start: e.startTime, end: e.responseEnd, size: e.transferSize,
}))"""


def kind(url: str) -> str:
    """Which part of the first screen a request is for."""
    if STAGE_PATH in url:
        return "the stage's files"
    if "katex" in url.lower():
        return "KaTeX"
    if url.endswith((".woff2", ".woff", ".ttf")):
        return "fonts"
    if "/static/" in url:
        return "Streamlit's JS and CSS"
    return "other"


KINDS = ("Streamlit's JS and CSS", "fonts", "KaTeX", "the stage's files", "other")


@dataclass(frozen=True)
class Visit:
    """One new visitor, each time in ms from the navigation's start."""

    drawn_ms: float  # the app: the stage's cells drawn; the bare page: its first paint
    first_paint_ms: float
    connected_ms: float  # the frontend loaded, its first run asked
    server_ms: float  # the first run on the server, request out to script_finished in
    requests: int
    spans: dict[str, tuple[int, float, float]]  # kind: (requests, first start, last end)


@dataclass
class Visits:
    app: list[Visit] = field(default_factory=list)
    bare: list[Visit] = field(default_factory=list)
    apart: bool = False

    def median(self, which: str, attr: str = "drawn_ms") -> float:
        return statistics.median(getattr(v, attr) for v in getattr(self, which))

    @property
    def ratio(self) -> float:
        return self.median("app") / self.median("bare")


def first_run_ms(frames: Sequence[Frame]) -> float:
    """The new session's first run, on the network layer: its first rerun request out to the ``script_finished``
    that answers it (the app's stage then asks for another run, which is not this one)."""
    asked = next((f.at for f in frames if f.sent and f.kind == "rerun_script"), None)
    done = (f.at for f in frames if not f.sent and f.kind == "script_finished" and f.status in OK_STATUSES and asked)
    finished = next((at for at in done if at >= asked), None)
    return float("nan") if finished is None else (finished - asked) * 1000


def visit(browser: Browser, url: str, stage: bool) -> Visit:
    """Open ``url`` in a new context (nothing cached) and time it until the stage (or the first paint) is drawn."""
    context = new_context(browser)
    try:
        tab, first = open_tab(context, url)
        if stage:
            first = tab.stage_drawn(first)
        origin = tab.page.evaluate("performance.timeOrigin") / 1000
        resources = tab.page.evaluate(RESOURCES_JS)
    finally:
        context.close()

    def ms(epoch: float | None) -> float:
        return float("nan") if epoch is None else (epoch - origin) * 1000

    spans = {}
    for k in KINDS:
        mine = [r for r in resources if kind(r["url"]) == k]
        if mine:
            spans[k] = (len(mine), min(r["start"] for r in mine), max(r["end"] for r in mine))
    paint = ms(first.first_content_epoch)
    return Visit(
        drawn_ms=ms(first.stage_epoch) if stage else paint,
        first_paint_ms=paint,
        connected_ms=ms(first.connected_epoch),
        server_ms=first_run_ms(tab.wire.frames),
        requests=len(resources),
        spans=spans,
    )


def measure(visits: int = 5, apart: bool = True) -> Visits:
    """``visits`` new visitors on each server, alternating which goes first, after one visitor each (warm)."""
    server_cpus, browser_cpus = APART if apart else (None, None)
    logs = Path(tempfile.mkdtemp(prefix="bench_visit_"))
    prefix = ("taskset", "-c", server_cpus) if server_cpus else ()
    servers = {
        name: start_app(free_port(), logs / f"{name}.log", script, prefix=prefix)
        for name, script in (("app", MAIN_APP), ("bare", BARE_APP))
    }
    out = Visits(apart=apart)
    try:
        for server in servers.values():
            wait_app(server)
        with sync_playwright() as p:
            browser = launch(p, browser_cpus)
            try:
                for name, server in servers.items():  # the one visitor before: the server is warm
                    visit(browser, server.url + "/", name == "app")
                for i in range(visits):
                    order = ("app", "bare") if i % 2 == 0 else ("bare", "app")
                    for name in order:
                        getattr(out, name).append(visit(browser, servers[name].url + "/", name == "app"))
            finally:
                browser.close()
    finally:
        for server in servers.values():
            stop(server.proc)
    return out


def _verdict(ok: bool) -> str:
    return "**PASS**" if ok else "**MISS**"


def target_row(v: Visits) -> str:
    """Issue 32's new-visitor target as a row of a target table."""
    where = "servers on core 0, browser on core 1" if v.apart else "shared cores"
    return (
        f"| a new visitor on a warm server: a new browser opening `/` to the stage drawn with torch's numbers "
        f"≤ {TARGET_RATIO}× the bare page's first paint ({where}) "
        f"| **{v.ratio:.2f}×** ({v.median('app'):.0f} ms against {v.median('bare'):.0f} ms, medians of "
        f"{len(v.app)} each, alternating) | {_verdict(v.ratio <= TARGET_RATIO)} |\n"
    )


def markdown(v: Visits) -> str:
    """Where a new visitor's time goes: the medians of each part, the app beside the bare page."""

    def span(which: str, k: str) -> str:
        got = [x.spans[k] for x in getattr(v, which) if k in x.spans]
        if not got:
            return "–"
        n = statistics.median(s[0] for s in got)
        return f"{n:.0f}: {statistics.median(s[1] for s in got):.0f}–{statistics.median(s[2] for s in got):.0f} ms"

    rows = [
        "| a new visitor, ms from the navigation's start (medians) | the app | the bare page |",
        "|---|---:|---:|",
        f"| the frontend loaded, first run asked | {v.median('app', 'connected_ms'):.0f} "
        f"| {v.median('bare', 'connected_ms'):.0f} |",
        f"| the server's first run for the new session (request out to `script_finished` in) "
        f"| {v.median('app', 'server_ms'):.0f} | {v.median('bare', 'server_ms'):.0f} |",
        f"| first paint | {v.median('app', 'first_paint_ms'):.0f} | {v.median('bare', 'first_paint_ms'):.0f} |",
        *(
            f"| requests for {k} (how many: first start–last end) | {span('app', k)} | {span('bare', k)} |"
            for k in KINDS
        ),
        f"| requests in all | {v.median('app', 'requests'):.0f} | {v.median('bare', 'requests'):.0f} |",
        f"| **the stage drawn** (the bare page: its first paint) | **{v.median('app'):.0f}** "
        f"| **{v.median('bare'):.0f}** |",
    ]
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.visit", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two visits each")
    parser.add_argument("--visits", type=int, default=5, help="new visitors on each server")
    parser.add_argument("--shared", action="store_true", help="the servers and the browser on any core")
    args = parser.parse_args(argv)
    v = measure(2 if args.quick else args.visits, apart=not args.shared)
    print("| target | measured | |\n|---|---|---|")
    print(target_row(v))
    print(markdown(v))
    for which in ("app", "bare"):
        print(which, [round(x.drawn_ms) for x in getattr(v, which)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
