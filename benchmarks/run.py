"""``make bench``: how fast the app is for a viewer, written to docs/benchmarks.md.

    python -m benchmarks.run                  # everything, about 5 minutes on 2 cores
    python -m benchmarks.run --quick          # fewer repeats, to check that it runs
    python -m benchmarks.run --only transformer   # the /transformer page's section alone

It measures, on this machine, against the targets of issue 6:

1. each page's server-side rerun time through AppTest, at the default sizes
   and at the largest batch/features (:mod:`benchmarks.pages`);
2. in headless Chromium, key press to settled page on the explorer's ``gain``
   slider against a bare Streamlit page, alternating, and the ratio of the
   medians (:mod:`benchmarks.browser_latency`);
3. the bytes sent to the browser per rerun, and the first paint of a cold start;
4. the norm kernels on the CPU (:mod:`benchmarks.kernels`, a short sweep);
5. a new visitor on a warm server, to the stage drawn, against the bare page's first paint, and where its
   time goes (:mod:`benchmarks.visit`, issue 32).

It replaces its sections of docs/benchmarks.md (:data:`SECTIONS`, :mod:`benchmarks.page`) with today's figures,
each the page's summary; the whole report (the browser's, the stage's and the cold starts' tables, the kernels' GB/s
and errors) goes to ``artifacts/benchmarks/`` and stdout.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import page
from harness.chromium import LAPTOP

SECTIONS = ("bench", "kernels", "transformer")  # this command's, on docs/benchmarks.md
# A short CPU sweep, about a minute on 2 shared cores: three dtypes, four widths, no torch.compile.
KERNEL_ARGS = [
    "--device", "cpu",
    "--threads", "2",
    "--variants", "copy,ln_naive,ln_fused,rms_naive,rms_fused,bn_train,bn_eval",
    "--dtypes", "float32,float16,bfloat16",
    "--hiddens", "256,1024,4096,16384",
    "--working-set-mib", "16",
    "--iters", "20",
]  # fmt: skip


def ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f} ms"


def verdict(ok: bool) -> str:
    return "**PASS**" if ok else "**MISS**"


def kernels_section(results, when: str) -> str:
    """The page's kernel section: :data:`KERNEL_ARGS`' command and a row per case, median µs per kernel."""
    from benchmarks import kernels

    args = kernels.parse_args(KERNEL_ARGS)
    about = page.wrap(
        f"on the machine above: median µs of up to {args.iters} calls after {args.warmup} warm-ups, "
        f"{args.working_set_mib:g} MiB of x and y per case (so B × H is fixed per dtype), x of shape (B, H), LN and "
        "RMSNorm over H, BN over B. The command also prints GB/s, the share of the copy's bandwidth and each "
        "kernel's error against torch in float64."
    )
    return (
        f"## Norm kernels on the CPU (`make bench`, {when})\n\n"
        f"`python -m benchmarks.kernels {' '.join(KERNEL_ARGS)}`,\n{about}\n\n{kernels.summary(results)}"
    )


def targets(page_results, browser) -> str:
    """The issue's four targets, each with what was measured and PASS/MISS."""
    from benchmarks import browser_latency, pages

    explorer = [r for r in page_results if r.page.file == "pages/explorer.py" and r.at_max and not r.error]
    at_max = [r for r in page_results if r.at_max]
    slowest = max(at_max, key=lambda r: r.worst_ms if not r.error else float("inf"), default=None)
    uncached = max((r.element_bytes for r in page_results if not r.error), default=0)
    worst_bytes = max(browser.worst_bytes, uncached)
    cores = os.cpu_count()
    rows = [
        f"| explorer ≤ {browser_latency.TARGET_RATIO}× the bare page, key press to settled (median) "
        f"| **{browser.ratio:.2f}×** ({browser.main.median():.0f} ms against {browser.bare.median():.0f} ms) "
        f"| {verdict(browser.ratio <= browser_latency.TARGET_RATIO)} |",
    ]
    if explorer:
        e = explorer[0]
        rows.append(
            f"| rerun ≤ {pages.TARGET_MS:.0f} ms at B = H = 1024 on a 2-core CPU (this one: {cores} cores) "
            f"| explorer {ms(e.rerun_ms)} rerun, {ms(e.gain_ms)} gain move, {ms(e.seed_ms)} new seed "
            "(AppTest medians) "
            f"| {verdict(e.worst_ms <= pages.TARGET_MS)} |"
        )
    if slowest is not None:
        ok = not slowest.error and slowest.worst_ms <= pages.TARGET_MS
        shown = slowest.error or f"{slowest.worst_ms:.0f} ms"
        rows.append(
            f"| … every page at its largest batch/features | slowest: {slowest.page.title}, {slowest.size}: {shown} "
            f"| {verdict(ok)} |"
        )
    rows += [
        f"| ≤ {browser_latency.TARGET_BYTES // 1000} KB per rerun at any size "
        f"| {browser.worst_bytes / 1000:.1f} KB the most over the WebSocket in a rerun; {uncached / 1000:.1f} KB "
        f"the largest page's elements with nothing cached (AppTest) | {verdict(worst_bytes <= browser_latency.TARGET_BYTES)} |",
        f"| cold start to the stage drawn < {browser_latency.TARGET_COLD_S:.0f} s "
        f"| {browser.cold.stage_s:.1f} s from starting the server to the stage's cells on the page "
        f"| {verdict(browser.cold.stage_s < browser_latency.TARGET_COLD_S)} |",
        f"| first paint of a cold start < {browser_latency.TARGET_COLD_S:.0f} s "
        f"| {browser.cold.first_paint_s:.1f} s from starting the server to the explorer's title on the page; "
        f"{browser.cold.settled_s:.1f} s to the whole page settled (the bare page: {browser.bare_cold.first_paint_s:.1f} s "
        f"and {browser.bare_cold.settled_s:.1f} s) | {verdict(browser.cold.first_paint_s < browser_latency.TARGET_COLD_S)} |",
    ]
    return "\n".join(rows) + "\n"


def bench_section(when: str, machine: str, page_results, browser, staged, placed, visited) -> str:
    """The page's page-speed section: every target in one table, then each page's rerun time and where a new
    visitor's time goes."""
    from benchmarks import cold, pages, stage, visit

    stage_rows = "".join(line + "\n" for line in stage.markdown(staged).splitlines()[2:])  # under the one header
    where = "servers on core 0, Chromium on core 1" if visited.apart else "servers and Chromium on any core"
    intro = page.wrap(
        f"{machine}; Chromium {browser.chromium}, headless, {LAPTOP['width']} × {LAPTOP['height']}. The bare page "
        "is one slider and one line of text, measured in the same run, alternating."
    )
    reruns = page.wrap(
        "Server-side rerun time per page (AppTest, medians; *element KB*: what a rerun sends with nothing cached in "
        "the browser; AppTest leaves out the server's garbage collection after each run):"
    )
    visits = page.wrap(
        f"A new visitor on a warm server (`benchmarks/visit.py`: {where}; medians of {len(visited.app)}):"
    )
    return (
        f"## Page speed (`make bench`, {when})\n\n{intro}\n\n| target | measured | |\n|---|---|---|\n"
        f"{targets(page_results, browser)}{stage_rows}{cold.target_row(placed)}{visit.target_row(visited)}\n"
        f"{reruns}\n\n{pages.markdown(page_results)}\n{visits}\n\n{visit.markdown(visited)}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats: checks that everything runs")
    parser.add_argument("--no-kernels", action="store_true", help="leave the kernel section as it is")
    parser.add_argument("--out", type=Path, default=page.DOC, help="the markdown file to update")
    parser.add_argument("--only", choices=("transformer",), help="measure and write this section alone")
    args = parser.parse_args(argv)
    from benchmarks import transformer

    if args.only == "transformer":
        page.publish("transformer", transformer.measure(args.quick), args.out)
        return 0

    from benchmarks import browser_latency, cold, kernels, stage, visit
    from benchmarks import pages as page_timings

    started = time.monotonic()
    load_start = page.load_average()
    info = page.machine()
    when = page.now()

    def say(what: str) -> None:
        print(f"[{time.monotonic() - started:5.0f} s] {what}", file=sys.stderr, flush=True)

    if not args.no_kernels:
        say("kernel sweep (benchmarks.kernels)")
        swept = kernels.measure(kernels.parse_args(KERNEL_ARGS), say=lambda text: None)
        page.publish("kernels", kernels_section(swept, when), args.out, kernels.markdown(swept))
    say("the transformer page: load, forward, a typed sentence (benchmarks.transformer)")
    page.publish("transformer", transformer.measure(args.quick), args.out)
    say("server-side reruns through AppTest")
    page_results = page_timings.measure(reruns=3 if args.quick else 7, warmup=1 if args.quick else 2)
    say("browser: cold start, then alternating presses")
    browser = browser_latency.measure(
        pairs=4 if args.quick else 15,
        big_presses=2 if args.quick else 5,
        seed_changes=1 if args.quick else 3,
    )
    say("browser: the stage (drag to frame, release to torch's numbers)")
    staged = stage.measure(quick=args.quick)
    say("browser: cold starts, the server and the browser on cores of their own, then on shared cores")
    started_cold = cold.measure(pairs=1 if args.quick else 3)
    say("browser: new visitors on warm servers, the servers and the browser on cores of their own")
    visited = visit.measure(visits=2 if args.quick else 5)
    machine = page.machine_line(info, load_start, page.load_average(), versions=True)
    body = bench_section(when, machine, page_results, browser, staged, started_cold, visited)
    details = (
        f"\n### In the browser: key press to settled page\n\n{browser_latency.markdown(browser)}\n"
        f"### The stage\n\n{stage.markdown(staged)}\n### Cold starts\n\n{cold.markdown(started_cold)}"
    )
    page.publish("bench", body, args.out, body + details)
    say(f"wrote {args.out}; the whole report in {page.ARTIFACTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
