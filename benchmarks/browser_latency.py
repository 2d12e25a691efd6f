"""What a viewer waits for: key press to settled page, in headless Chromium, against a bare Streamlit page.

    python -m benchmarks.browser_latency            # prints the markdown section

Two servers run side by side with the same flags: the app, and
``benchmarks/bare_app.py`` (one slider and one line of text), the platform's
floor. The explorer's ``gain`` slider and the bare page's slider (same key, same
range) are pressed in turn, ArrowRight then ArrowLeft, alternating which page
goes first, so both see the same machine load; the ratio of their medians is
the headline, the absolute times are only as quiet as the machine.

Each press is timed from its keydown to the settled page
(:mod:`harness.settle`), and split at the ``script_finished`` message that
Chromium's network layer saw (:mod:`harness.wire`).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks import browser_work
from benchmarks.tabs import BARE_APP, GAIN, MAIN_APP, SEED, new_context
from harness.chromium import LAPTOP, launch
from harness.server import AppProcess, free_port, start_app, stop, wait_app
from harness.settle import QUIET_MS, Settle
from harness.tab import AppPage, open_tab
from lnviz.views import links

# The largest grid, in the view of the details that sends the most: the charts (heatmap windows of 64 × 64).
BIG = {"batch": 1024, "features": 1024, "view": "charts", "v": links.LINK_VERSION}
TARGET_RATIO = 1.5
TARGET_BYTES = 300_000
TARGET_COLD_S = 5.0


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
    log_dir = log_dir or Path("/tmp/lnviz-bench")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        servers: list[AppProcess] = []

        def cold_open(script: str, log: Path) -> tuple[AppProcess, AppPage, Settle, ColdStart]:
            """Start ``script``'s server and open its first tab, timing the cold start."""
            t0 = time.time()
            server = start_app(free_port(), log, script)
            servers.append(server)
            wait_app(server)
            healthy = time.time()
            tab, first = open_tab(context, server.url + "/")
            if script == MAIN_APP:
                first = tab.stage_drawn(first)
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
                    tab.press(_key(i), GAIN)
            for i in range(pairs):
                order = ((main, main_tab), (bare_series, bare_tab))
                for series, tab in order if i % 2 == 0 else order[::-1]:
                    series.presses.append(tab.press(_key(i), GAIN))
            query = "&".join(f"{k}={v}" for k, v in BIG.items())
            big_tab, big_first = open_tab(context, f"{app.url}/?{query}")
            big = Series("explorer, B = H = 1024, charts view", big_tab.page.url, big_first)
            for i in range(warmup):
                big_tab.press(_key(i), GAIN)
            for i in range(big_presses):
                big.presses.append(big_tab.press(_key(i), GAIN))
            big_seed = Series("explorer, B = H = 1024, charts view, new seed (all data changes)", big_tab.page.url)
            for i in range(seed_changes):
                big_seed.presses.append(big_tab.enter(SEED, str(i + 1)))
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
        f"Chromium {r.chromium}, headless, one context, a tab per page, a {LAPTOP['width']} × "
        f"{LAPTOP['height']} window. *Median*, *max*: keydown to settled page, on the page's clock. "
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
