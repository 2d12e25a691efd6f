"""Cold start to the stage drawn, against the bare page's first paint: each from a freshly started server.

    python -m benchmarks.cold            # prints the numbers
    python -m benchmarks.cold --quick    # one pair per placement, to check that it runs

Issue 22's target: from starting ``streamlit run app.py`` to the stage's cells
on the page, at most 1.5× the bare page's (benchmarks/bare_app.py) first paint,
started and opened the same way in the same run. Each start is a new server
and a new browser context (nothing cached), the app and the bare page in turn,
alternating which goes first; the ratio is of the medians.

Two placements, each with its own Chromium:

- **apart**: the server on core 0 (``taskset -c 0``) and the browser on core 1,
  as when the app is hosted and the browser is the viewer's;
- **shared**: both free to use every core, as on one laptop (and as the
  browser benchmarks run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from benchmarks.browser_latency import ColdStart
from benchmarks.tabs import BARE_APP, MAIN_APP, new_context
from harness.chromium import launch
from harness.server import free_port, start_app, stop, wait_app
from harness.tab import open_tab

TARGET_RATIO = 1.5
# (the server's cores, the browser's) as taskset -c takes them; None: every core.
PLACEMENTS = {"apart": ("0", "1"), "shared": (None, None)}


@dataclass
class Placement:
    """The cold starts of one placement: the app's and the bare page's, in the order they ran."""

    name: str
    server_cpus: str | None
    browser_cpus: str | None
    app: list[ColdStart] = field(default_factory=list)
    bare: list[ColdStart] = field(default_factory=list)

    @property
    def stage_s(self) -> float:
        return statistics.median(c.stage_s for c in self.app)

    @property
    def app_paint_s(self) -> float:
        return statistics.median(c.first_paint_s for c in self.app)

    @property
    def bare_paint_s(self) -> float:
        return statistics.median(c.first_paint_s for c in self.bare)

    @property
    def ratio(self) -> float:
        return self.stage_s / self.bare_paint_s


def cold_start(browser: Browser, script: str, log: Path, cpus: str | None) -> ColdStart:
    """Start ``script``'s server (on ``cpus``), open it in a new context and time its first minute; stop it."""
    t0 = time.time()
    server = start_app(free_port(), log, script, prefix=("taskset", "-c", cpus) if cpus else ())
    try:
        wait_app(server)
        healthy = time.time()
        context = new_context(browser)
        try:
            tab, first = open_tab(context, server.url + "/")
            if script == MAIN_APP:
                first = tab.stage_drawn(first)
        finally:
            context.close()
    finally:
        stop(server.proc)
    return ColdStart.of(t0, healthy, first)


def measure(pairs: int = 3, placements: Sequence[str] = tuple(PLACEMENTS)) -> list[Placement]:
    """``pairs`` cold starts of the app and of the bare page in each placement, alternating which goes first."""
    logs = Path(tempfile.mkdtemp(prefix="bench_cold_"))
    out = []
    with sync_playwright() as p:
        for name in placements:
            server_cpus, browser_cpus = PLACEMENTS[name]
            placed = Placement(name, server_cpus, browser_cpus)
            browser = launch(p, browser_cpus)
            try:
                new_context(browser).close()  # the browser's own start-up is not a server's cold start
                for i in range(pairs):
                    order = ((MAIN_APP, placed.app), (BARE_APP, placed.bare))
                    for script, series in order if i % 2 == 0 else order[::-1]:
                        log = logs / f"{name}_{Path(script).stem}_{i}.log"
                        series.append(cold_start(browser, script, log, server_cpus))
            finally:
                browser.close()
            out.append(placed)
    return out


def _cores(cpus: str | None) -> str:
    return f"core {cpus}" if cpus else "any core"


def markdown(placed: Sequence[Placement]) -> str:
    """The cold-start section: the ratio per placement, and each median's parts."""
    rows = [
        "| placement | n | the stage drawn | the bare page's first paint | ratio | the app's first paint "
        "| frontend loaded (app / bare) | the app's first run on the server | |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in placed:
        med = {k: statistics.median(getattr(c, k) for c in p.app) for k in ("connected_s", "first_run_s", "healthy_s")}
        bare_connected = statistics.median(c.connected_s for c in p.bare)
        rows.append(
            f"| {p.name}: server on {_cores(p.server_cpus)}, browser on {_cores(p.browser_cpus)} | {len(p.app)} "
            f"| {p.stage_s:.2f} s | {p.bare_paint_s:.2f} s | **{p.ratio:.2f}×** | {p.app_paint_s:.2f} s "
            f"| {med['connected_s']:.2f} s / {bare_connected:.2f} s | {med['first_run_s']:.2f} s "
            f"| {'**PASS**' if p.ratio <= TARGET_RATIO else '**MISS**'} |"
        )
    return "\n".join(rows) + "\n"


def target_row(placed: Sequence[Placement]) -> str:
    """Issue 22's cold-start target as a row of the stage's target table: the apart placement decides, the
    shared one is beside it."""
    by = {p.name: p for p in placed}
    apart, shared = by["apart"], by["shared"]
    return (
        f"| cold start to the stage drawn ≤ {TARGET_RATIO}× the bare page's first paint, each from a freshly "
        "started server, the server and the browser on cores of their own (as hosted) "
        f"| **{apart.ratio:.2f}×** ({apart.stage_s:.1f} s against {apart.bare_paint_s:.1f} s, medians of "
        f"{len(apart.app)} each, alternating); on shared cores {shared.ratio:.2f}× ({shared.stage_s:.1f} s against "
        f"{shared.bare_paint_s:.1f} s) | {'**PASS**' if apart.ratio <= TARGET_RATIO else '**MISS**'} |\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one pair per placement")
    parser.add_argument("--pairs", type=int, default=3, help="cold starts of each page per placement")
    parser.add_argument("--placement", choices=list(PLACEMENTS), action="append", help="only these (repeatable)")
    args = parser.parse_args(argv)
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    placed = measure(1 if args.quick else args.pairs, args.placement or tuple(PLACEMENTS))
    print(markdown(placed))
    for p in placed:
        for what, series in (("app", p.app), ("bare", p.bare)):
            print(p.name, what, [(round(c.stage_s, 2), round(c.first_paint_s, 2)) for c in series])
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
