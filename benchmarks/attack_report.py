"""``make load LOAD_ARGS="--mode attack"``: :mod:`benchmarks.attack`'s run, and what it reports: the whole report,
for stdout and artifacts/, and the page's sections: ``attack`` (issue 20's phases and targets) and, with ``--before``,
``attack-cost`` (issue 47's attacks beside an honest user, :func:`benchmarks.attack_cost.markdown`)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from benchmarks import attack, attack_cost, attack_store, page
from benchmarks.attack import (
    ADMIT_WITHIN_S,
    SETTLE_S,
    TARGET_ADMITTED,
    TARGET_P95_RATIO,
    TARGET_PEAK_MIB,
    AttackReport,
    hog_seconds,
)
from benchmarks.run import verdict
from benchmarks.stats import percentile


def phase_rows(r: AttackReport) -> list[str]:
    """The phases' table: the class's moves in each, beside the baseline, and what the attacker got."""
    baseline, *attacks = r.phases
    base = r.moves(baseline)
    b95 = percentile(base, 95)
    rows = [
        "| phase | class moves | p50 ms | p95 ms | p95 ÷ baseline | peak RSS MiB | settled after | what the attacker got |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
        f"| {baseline.name} (the baseline) | {len(base)} | {percentile(base, 50):.0f} | {b95:.0f} | 1.0 "
        f"| {r.peak(baseline):.0f} | | |",
    ]
    for p in attacks:
        moves = r.moves(p)
        p95 = percentile(moves, 95)
        got = "; ".join(p.notes + [f"attacker error: {e}" for e in p.errors])
        rows.append(
            f"| {p.name} | {len(moves)} | {percentile(moves, 50):.0f} | {p95:.0f} | {_ratio(p95, b95):.1f} "
            f"| {r.peak(p):.0f} | {p.settle_s:.0f} s | {got} |"
        )
    return rows


def _ratio(p95: float, b95: float) -> float:
    return p95 / b95 if b95 else float("nan")


def targets(r: AttackReport) -> list[tuple[str, str, bool]]:
    """Issue 20's targets: (what, what was measured, met)."""
    baseline, *attacks = r.phases
    b95 = percentile(r.moves(baseline), 95)
    worst = max(attacks, key=lambda p: _ratio(percentile(r.moves(p), 95), b95), default=baseline)
    worst_ratio = _ratio(percentile(r.moves(worst), 95), b95) if attacks else 0.0
    worst_peak = max(r.peak(p) for p in r.phases)
    runs = [t for t in r.legit.tries if t[0] == "Run"]
    admitted = sum(ok for _, ok, _ in runs)
    class_errors = sum(len(s.errors) for s in r.class_)
    mismatches = sum(s.mismatches for s in r.class_)
    checks = sum(s.checks for s in r.class_)
    return [
        (
            f"the class's p95 with an attacker ≤ {TARGET_P95_RATIO:.0f} × its baseline",
            f"{worst_ratio:.1f} × at the worst, {worst.name}",
            worst_ratio <= TARGET_P95_RATIO,
        ),
        (
            f"peak RSS ≤ {TARGET_PEAK_MIB / 1024:.1f} GiB through every attack",
            f"{worst_peak:,.0f} MiB",
            worst_peak <= TARGET_PEAK_MIB,
        ),
        (
            f"a legitimate Run admitted within {ADMIT_WITHIN_S:.0f} s in ≥ {TARGET_ADMITTED:.0%} of tries while one "
            "client hogs",
            f"{admitted} of {len(runs)}",
            bool(runs) and admitted / len(runs) >= TARGET_ADMITTED,
        ),
        (
            "the class's numbers stay its own",
            f"{mismatches} mismatches in {checks:,} checks, {class_errors} errors",
            mismatches == 0 and checks > 0,
        ),
    ]


def attack_markdown(r: AttackReport, machine: str) -> str:
    """The whole report of issue 20's run: each phase beside the baseline, then the targets as a table."""
    class_errors = [f"session {s.plan.index}: {e}" for s in r.class_ for e in s.errors]
    lines = [
        f"### One attacker against a class of {r.sessions}",
        "",
        machine,
        "",
        f"One `streamlit run app.py` on 127.0.0.1. {r.sessions} sessions arrive over 10 s (the lecturer's link, one "
        f"in five on a link of its own) and move the gain slider every few seconds throughout, each answer checked "
        f"against torch. First {r.seconds:.0f} s of the class alone, then each attack of issue 20 in turn, "
        f"{r.seconds:.0f} s each (Run hogging {hog_seconds(r.seconds):.0f} s), the server settling "
        f"between two (at most {SETTLE_S:.0f} s). Interaction: a gain step's rerun request out to `script_finished`, "
        "counted in the phase in which its answer came.",
        "",
        *phase_rows(r),
        "",
        "| target (issue 20) | result | |",
        "|---|---|---|",
        *(f"| {what} | {got} | {verdict(ok)} |" for what, got, ok in targets(r)),
    ]
    if r.setup_errors or class_errors:
        lines += ["", "Errors (first 10):", "", *(f"- {e}" for e in [*r.setup_errors, *class_errors][:10])]
    return "\n".join(lines) + "\n"


def section(r: AttackReport, when: str, machine: str) -> str:
    """The page's ``attack`` section: the run in a paragraph, the phases' table, the targets in a paragraph."""
    about = page.wrap(
        f"{machine}. One `streamlit run app.py`; {r.sessions} sessions move the gain slider throughout, each answer "
        f"checked against torch; each attack of issue 20 in turn, {r.seconds:.0f} s each (Run hogging "
        f"{hog_seconds(r.seconds):.0f} s). Interaction: a gain step's rerun request to `script_finished`."
    )
    met = "; ".join(f"{what}, {verdict(ok)} ({got})" for what, got, ok in targets(r))
    head = f'## One attacker against a class of {r.sessions} (`make load LOAD_ARGS="--mode attack"`, {when})'
    return "\n".join([head, "", about, "", *phase_rows(r), "", page.wrap(f"Targets (issue 20): {met}.")]) + "\n"


def publish(
    r: AttackReport,
    store: str,
    cost: tuple[list[attack_cost.Row], str] | None,
    when: str,
    machine: str,
    path: Path = page.DOC,
    folder: Path = page.ARTIFACTS,
) -> str:
    """Put the run's sections on the page (``attack-cost`` only with ``--before``'s rows and their machine), keep the
    whole report under artifacts/, and return it."""
    text = attack_markdown(r, machine) + "\n" + store
    page.write_section("attack", section(r, when, machine), path)
    if cost is not None:
        cost_text = attack_cost.markdown(cost[0], when, cost[1])
        page.write_section("attack-cost", cost_text, path)
        text += "\n" + cost_text
    page.keep("attack", text, folder)
    return text


def main(args: argparse.Namespace) -> int:
    """``python -m benchmarks.load --mode attack``: run it, print the whole report, keep it under artifacts/, and
    put its sections on the page."""
    seconds = attack.PHASE_S if args.seconds is None else args.seconds
    sessions = args.sessions or attack.SESSIONS
    load_start = page.load_average()
    run = attack.run_attack(sessions, seconds, args.every, args.log.parent / "attack.log")
    limit = attack.OPEN_TIMEOUT + 60 + seconds + attack.sum_phases(seconds)
    limit += 7 * (SETTLE_S + 2 * attack.ANSWER_TIMEOUT)
    report = asyncio.run(asyncio.wait_for(run, limit))
    machine = page.machine_line(page.machine(), load_start, page.load_average())
    store = attack_store.markdown(attack_store.run())  # issue 30's attacks 1 and 2, on the shared store
    cost = None
    if args.before is not None:  # issue 47's eight, each beside an honest user, main's code and this one's
        cost_start = page.load_average()
        rows = attack_cost.run(args.before.resolve())
        cost = (rows, page.machine_line(page.machine(), cost_start, page.load_average()))
    print(publish(report, store, cost, page.now(), machine, args.out))
    return 0
