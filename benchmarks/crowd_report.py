"""``make load LOAD_ARGS="--mode class"`` and ``--mode throughput``: :mod:`benchmarks.crowd`'s runs, and what they
report: the whole report of a run, for stdout and artifacts/, and its row in the page's class section. That section
holds a row per kind of run (throughput, idle sessions beside it, a class on one process or on replicas): a run
replaces its own row and leaves the others."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from benchmarks import crowd, page
from benchmarks.crowd import LECTURE, ClassReport
from benchmarks.run import verdict
from benchmarks.stats import percentile

SECTION = "class"
HEADING = '## A class on one link (`make load LOAD_ARGS="--mode class ..."`'
TABLE = (
    "| run | first view p50 / p95 | interaction p50 / p95 | reruns/s | server RSS at most | errors, mismatches |\n"
    "|---|---|---|---:|---|---|"
)
ABOUT = (
    "Sessions arrive over 60 s, four in five on the lecturer's link, and move the gain slider every 3 s; every answer "
    "is checked against torch. `--mode throughput`: 10 sessions back to back (`--idle 190`: 190 more open and idle "
    "in the process)."
)
# The targets.
TARGET_RERUNS_PER_S = 30.0
TARGET_P95_INTERACTION_MS = 1000.0
TARGET_P95_FIRST_VIEW_MS = 5000.0


def tally(r: ClassReport) -> tuple[list[float], list[float], int, float, int, int]:
    """A class run's first views and moves (ms, sorted), the moves made while everyone was in and their rate per
    second, and its checks and mismatches: what its report and its page row say."""
    first = sorted(s.first_view_ms for s in r.students if s.first_view_ms is not None)
    moves = sorted(ms for s in r.students for ms in s.moves)
    lo, hi = r.drive
    in_drive = sum(lo <= t <= hi for s in r.students for t in s.moves_at)
    rate = in_drive / (hi - lo) if hi > lo else float("nan")
    return first, moves, in_drive, rate, sum(s.checks for s in r.students), sum(s.mismatches for s in r.students)


def class_markdown(r: ClassReport) -> str:
    """The whole report of a class run: latency, the checks and memory."""
    first, moves, in_drive, rate, checks, mismatches = tally(r)
    lo, hi = r.drive
    errors = r.errors
    own = sum(s.own_link for s in r.students)
    idle = r.rss("idle")
    full = sum(max((mib for _, mib in m.samples), default=float("nan")) for m in r.memory)  # each one's peak
    per_session = (full - idle) / r.sessions
    where = "one `streamlit run app.py`" if r.replicas == 1 else f"{r.replicas} replicas behind docs/deploy.md's nginx"
    p95_first, p95_move = percentile(first, 95), percentile(moves, 95)
    lines = [
        f"### {r.sessions} sessions on {where}",
        "",
        "The lecturer opens the link first on each replica (not counted), then "
        f"{r.sessions} sessions arrive over {r.arrive:.0f} s; {r.sessions - own} on the lecturer's link "
        f"(`?{LECTURE.query()}`), {own} on links of their own; each moves the gain slider every "
        f"{r.every:g} s (±50 %) until {r.seconds:.0f} s after the last one arrived.",
        "",
        "| | n | p50 ms | p95 ms | max ms |",
        "|---|---:|---:|---:|---:|",
        f"| first view (WebSocket opened to the first `script_finished`) | {len(first)} | {percentile(first, 50):.0f} "
        f"| {p95_first:.0f} | {max(first, default=float('nan')):.0f} |",
        f"| interaction (gain step: rerun request out to `script_finished`) | {len(moves)} "
        f"| {percentile(moves, 50):.0f} | {p95_move:.0f} | {max(moves, default=float('nan')):.0f} |",
        "",
        "| check | result | |",
        "|---|---|---|",
        f"| errors | {len(errors)} in {len(first)} first views and {len(moves)} interactions | {verdict(not errors)} |",
        f"| cross-session mismatches | {mismatches} in {checks} checks | {verdict(mismatches == 0 and checks > 0)} |",
        f"| reruns per second while everyone was in | {rate:.1f} ({in_drive} in {hi - lo:.0f} s) | |",
        f"| p95 of the first view ≤ {TARGET_P95_FIRST_VIEW_MS / 1e3:.0f} s | {p95_first / 1e3:.1f} s "
        f"| {verdict(p95_first <= TARGET_P95_FIRST_VIEW_MS)} |",
        f"| p95 of an interaction ≤ {TARGET_P95_INTERACTION_MS / 1e3:.0f} s | {p95_move / 1e3:.1f} s "
        f"| {verdict(p95_move <= TARGET_P95_INTERACTION_MS)} |",
        f"| server RSS (all replicas) | {idle:.0f} MiB after the lecturer's view, {full:.0f} MiB at the most: "
        f"{per_session:.1f} MiB per session | |",
    ]
    if r.spread:
        shares = ", ".join(f"{n} to {addr}" for addr, n in sorted(r.spread.items()))
        lines.append(f"| WebSockets per replica (the balancer's log) | {shares} | |")
    if errors:
        lines += ["", "Errors (first 10):", "", *(f"- {e}" for e in errors[:10])]
    return "\n".join(lines) + "\n"


def throughput_markdown(
    sessions: int, done: int, elapsed: float, lat: list[float], errors: list[str], idle: int = 0
) -> str:
    rate = done / elapsed
    beside = f", {idle} more sessions open and idle in the same process" if idle else ""
    return "\n".join(
        [
            f"### Rerun throughput of one process ({sessions} sessions back to back{beside})",
            "",
            f"{sessions} sessions on the lecturer's link{beside}, each sending its next gain step as soon as the "
            f"previous answer is in, for {elapsed:.0f} s: **{rate:.1f} reruns/s** (target ≥ {TARGET_RERUNS_PER_S:.0f}: "
            f"{verdict(rate >= TARGET_RERUNS_PER_S)}); latency p50 {percentile(lat, 50):.0f} ms, "
            f"p95 {percentile(lat, 95):.0f} ms; {len(errors)} errors.",
            "",
        ]
    )


def throughput_row(
    sessions: int, done: int, elapsed: float, lat: list[float], errors: list[str], idle: int = 0
) -> tuple[str, str]:
    """The page's row of a throughput run, and its key (its first cell's start)."""
    rate = done / elapsed
    key = (
        f"… with {idle} more sessions idle in the process"
        if idle
        else f"`--mode throughput`, {sessions} sessions back to back"
    )
    first = key if idle else f"{key}, the default view"
    ok = "PASS" if rate >= TARGET_RERUNS_PER_S else "MISS"
    return key, (
        f"| {first} | – | {percentile(lat, 50):,.0f} / {percentile(lat, 95):,.0f} ms "
        f"| **{rate:.1f}** (target ≥ {TARGET_RERUNS_PER_S:.0f}: {ok}) | – | {len(errors)} |"
    )


def class_row(r: ClassReport) -> tuple[str, str]:
    """The page's row of a class run, and its key (its first cell's start)."""
    first, moves, _, rate, checks, mismatches = tally(r)
    full = sum(max((mib for _, mib in m.samples), default=float("nan")) for m in r.memory)  # each one's peak
    where = "one process" if r.replicas == 1 else f"{r.replicas} replicas behind docs/deploy.md's nginx"
    key = f"{r.sessions} sessions, {where}"
    shares = f" ({' and '.join(str(n) for _, n in sorted(r.spread.items()))} WebSockets)" if r.spread else ""
    p95 = percentile(moves, 95)
    ok = "PASS" if p95 <= TARGET_P95_INTERACTION_MS else "MISS"
    return key, (
        f"| {key}{shares} | {percentile(first, 50):,.0f} / {percentile(first, 95):,.0f} ms "
        f"| {percentile(moves, 50):,.0f} / {p95:,.0f} ms (target p95 ≤ {TARGET_P95_INTERACTION_MS / 1e3:.0f} s: {ok}) "
        f"| {rate:.1f} | {full:.0f} MiB{' for all' if r.replicas > 1 else ''} "
        f"| {len(r.errors)}, {mismatches} in {checks:,} checks |"
    )


def write_row(key: str, row: str, when: str, machine: str, path: Path = page.DOC) -> None:
    """Put ``row`` in the page's class section in place of ``key``'s, the heading's date and the machine this
    run's; the section's other rows, and what follows its table, stay as they are."""
    body = page.section(path.read_text(), SECTION) if path.exists() else None
    if body is None:
        body = f"{HEADING})\n\n{machine}; the load clients on the same cores. {ABOUT}\n\n{TABLE}"
    _, about, *rest = body.split("\n\n")
    about = " ".join(about.split()).split(". ", 1)[1]  # the machine is the first sentence
    about = page.wrap(f"{machine}; the load clients on the same cores. {about}")
    body = "\n\n".join([f"{HEADING}, {when})", about, *rest])
    page.write_section(SECTION, page.replace_row(body, key, row), path)


def main(args: argparse.Namespace) -> int:
    """``python -m benchmarks.load --mode class`` or ``--mode throughput``: run it, print the whole report, keep it
    under artifacts/, and put its row in the page's class section."""
    load_start = page.load_average()
    log_dir = args.log.parent
    if args.mode == "throughput":
        sessions = args.sessions or 10
        done, elapsed, lat, errors = asyncio.run(crowd.run_throughput(sessions, args.seconds, log_dir, args.idle))
        text = throughput_markdown(sessions, done, elapsed, lat, errors, args.idle)
        key, row = throughput_row(sessions, done, elapsed, lat, errors, args.idle)
        name = f"throughput-{args.idle}" if args.idle else "throughput"
    else:
        sessions = args.sessions or 200
        run = crowd.run_class(sessions, args.replicas, args.arrive, args.seconds, args.every, args.own_every, log_dir)
        limit = args.arrive + args.seconds + 2 * crowd.OPEN_TIMEOUT + 120
        report = asyncio.run(asyncio.wait_for(run, limit))
        errors = report.errors
        text = class_markdown(report)
        key, row = class_row(report)
        name = f"class-{args.replicas}x{sessions}"
    machine = page.machine_line(page.machine(), load_start, page.load_average())
    print(text)
    page.keep(name, text)
    write_row(key, row, page.now(), machine, args.out)
    return 0 if not errors else 1
