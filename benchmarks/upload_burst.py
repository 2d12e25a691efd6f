"""A bystander's γ move while eight sessions upload 31 MiB CSV files, with large files parsed in the server's own
process (``inline``, as before issue 30) and in the upload worker (``worker``), side by side in one run.

    python -m benchmarks.upload_burst                       # inline, then worker: about 5 minutes on 2 cores
    python -m benchmarks.upload_burst --modes worker inline --bursts 2 --port 9400
    python -m benchmarks.upload_burst --modes worker --before /tmp/main --rounds 2   # a change, side by side

For each mode one ``streamlit run app.py`` on 127.0.0.1 (``LNVIZ_UPLOAD_WORKER`` set to the mode). A bystander
session on the lecturer's link moves the gain slider (γ) every ``--every`` seconds: first with the server quiet
(``--quiet`` moves), then through ``--bursts`` bursts of issue 30's attack 8: :data:`UPLOADERS` fresh sessions each
PUT :func:`benchmarks.attack.big_csv` (1024 × 1024 in long digits, 31 MiB) and have the page read it, all at once.
``--file npy`` uploads the same matrix as .npy (8 MiB, read at once): what the pages' work with a 1024 × 1024
matrix costs the bystander, the parse of the text aside. A move is the rerun request out to ``script_finished`` (:meth:`harness.wsclient.Session.rerun`). The target is
issue 30's: the burst's p95 at most twice the quiet p95. ``--before DIR`` measures each mode with the code of the
checkout in DIR and then with this tree's, ``--rounds`` times in turn, each one's moves pooled. Printed as a
Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.attack import ANSWER_TIMEOUT, OPEN_TIMEOUT, big_csv, close_all, on_page, put_one, uploaded
from benchmarks.crowd import LECTURE
from benchmarks.page import load_average
from benchmarks.run import verdict
from benchmarks.stats import percentile
from harness.server import start_app, stop, wait_app
from harness.wsclient import Session

UPLOADERS = 8  # as in the red team's run
TARGET_RATIO = 2.0


async def move(probe: Session, gain: float) -> float:
    return await probe.rerun([probe.widget("gain", double_array_value=[gain])], ANSWER_TIMEOUT)


async def burst(base: str, data: bytes, phases: dict[str, list[float]], name: str) -> tuple[int, list[float]]:
    """One burst: the uploaders' pages opened, their files put, then read by their pages at once; (files read,
    each read's ms). ``phases`` gets each phase's start and end (monotonic) under "open", "put" and "read"."""
    phases["open"].append(time.monotonic())
    sessions = [await on_page(base, "", LECTURE.query()) for _ in range(UPLOADERS)]
    phases["open"].append(time.monotonic())
    reading = phases["read"]
    try:
        phases["put"].append(time.monotonic())
        puts = await asyncio.gather(*(put_one(base, s, data, name) for s in sessions))
        phases["put"].append(time.monotonic())
        reading.append(time.monotonic())
        reads = await asyncio.gather(
            *(s.rerun([uploaded(s, fid, name, len(data))], 600) for s, (status, fid) in zip(sessions, puts, strict=True)
              if status == 204),
            return_exceptions=True,
        )  # fmt: skip
        reading.append(time.monotonic())
    finally:
        await close_all(sessions)
    ms = [r for r in reads if isinstance(r, float)]
    return len(ms), ms


def big_npy() -> bytes:
    """The same 1024 × 1024 matrix as :func:`benchmarks.attack.big_csv`, as .npy (8 MiB): read at once, so a
    burst of these costs the bystander what the pages do with the matrix, without the parse of the text."""
    buf = io.BytesIO()
    np.save(buf, np.tile(np.arange(1024) % 97 / 97, (1024, 1)))
    return buf.getvalue()


async def measure(base: str, quiet: int, bursts: int, every: float, kind: str) -> dict[str, object]:
    probe = Session(base, query=LECTURE.query())
    await asyncio.wait_for(probe.open(), OPEN_TIMEOUT)
    gains = iter([1.05, 1.0] * 100_000)
    calm = []
    try:
        for _ in range(3):  # warm: the first moves compile and cache
            await move(probe, next(gains))
        for _ in range(quiet):
            calm.append(await move(probe, next(gains)))
            await asyncio.sleep(every)
        data = big_csv() if kind == "csv" else big_npy()
        loud: list[tuple[float, float]] = []  # (ms, answered at)
        read, reads = 0, []
        phases: dict[str, list[float]] = {"open": [], "put": [], "read": []}
        for _ in range(bursts):
            task = asyncio.create_task(burst(base, data, phases, f"x.{kind}"))
            while not task.done():
                loud.append((await move(probe, next(gains)), time.monotonic()))
                await asyncio.sleep(every)
            n, ms = task.result()
            read, reads = read + n, reads + ms
    finally:
        await close_all([probe])

    def answered_while(phase: str) -> list[float]:
        """The moves answered while that phase ran (a move's answer can come just after the phase it waited on)."""
        spans = list(zip(phases[phase][::2], phases[phase][1::2], strict=True))
        return sorted(ms for ms, at in loud if any(a <= at <= b for a, b in spans))

    return {
        "quiet": sorted(calm),
        "burst": sorted(ms for ms, _ in loud),
        "opening": answered_while("open"),
        "putting": answered_while("put"),
        "puts_s": sorted(b - a for a, b in zip(phases["put"][::2], phases["put"][1::2], strict=True)),
        "reading": answered_while("read"),
        "read": read,
        "reads": sorted(reads),
    }


def run_mode(mode: str, port: int, args: argparse.Namespace, logs: Path, tree: Path | None = None) -> dict[str, object]:
    """One server in ``mode``, measured: this tree's code, or with ``tree`` the code of that checkout (its
    ``app.py``, its packages first on the path), with this tree's config."""
    env = {"LNVIZ_UPLOAD_WORKER": mode} | ({"PYTHONPATH": str(tree)} if tree else {})
    script = str(tree / "app.py") if tree else "app.py"
    app = start_app(port, logs / f"upload_burst_{mode}_{port}.log", script=script, env=env)
    try:
        wait_app(app)
        result = asyncio.run(measure(app.url, args.quiet, args.bursts, args.every, args.file))
    finally:
        stop(app.proc)
    print(f"{mode}{' (' + str(tree) + ')' if tree else ''}: {summary(result)}", file=sys.stderr, flush=True)
    return result


def runs(args: argparse.Namespace, logs: Path) -> dict[tuple[str, str], dict[str, object]]:
    """Every mode, with ``--before`` that checkout's code first and then this tree's, ``--rounds`` times in turn;
    each (mode, whose code)'s moves pooled over the rounds."""
    trees = [("before", args.before), ("after", None)] if args.before else [("", None)]
    pooled: dict[tuple[str, str], dict[str, object]] = {}
    port = args.port
    for _ in range(args.rounds):
        for mode in args.modes:
            for label, tree in trees:
                r = run_mode(mode, port, args, logs, tree)
                port += 1
                into = pooled.setdefault((mode, label), {k: [] if isinstance(v, list) else 0 for k, v in r.items()})
                for key, value in r.items():
                    into[key] = into[key] + value  # lists of ms joined, counts added
    return {key: {k: sorted(v) if isinstance(v, list) else v for k, v in r.items()} for key, r in pooled.items()}


def summary(r: dict[str, object]) -> str:
    q, b = r["quiet"], r["burst"]
    during = "; ".join(
        f"while {what}: p50 {percentile(r[key], 50):.0f} p95 {percentile(r[key], 95):.0f} "
        f"max {max(r[key], default=float('nan')):.0f} ms ({len(r[key])} moves)"
        for key, what in (("opening", "the uploaders' pages open"), ("putting", "the files are put"),
                          ("reading", "the pages read"))
    )  # fmt: skip
    return (
        f"quiet p50 {percentile(q, 50):.0f} p95 {percentile(q, 95):.0f} ms; burst p50 {percentile(b, 50):.0f} "
        f"p95 {percentile(b, 95):.0f} max {max(b, default=float('nan')):.0f} ms ({len(b)} moves); {during}; "
        f"{r['read']} files read; the {UPLOADERS} files put in {max(r['puts_s'], default=float('nan')):.1f} s at most"
    )


def markdown(
    results: dict[tuple[str, str], dict[str, object]], bursts: int, kind: str, start: str, end: str, rounds: int = 1
) -> str:
    rows = [
        "| large files parsed | quiet moves | quiet p50 ms | quiet p95 ms | burst moves | burst p50 ms | burst p95 ms "
        "| burst max ms | p95 ÷ quiet p95 | moves while the pages read | their p50 ms | their p95 ms "
        "| files read (p50 s each) | target ≤ 2 × |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (mode, code), r in results.items():
        q, b, w = r["quiet"], r["burst"], r["reading"]
        ratio = percentile(b, 95) / percentile(q, 95)
        # Without --before, the CSV runs compare the parse in the server (before issue 30) with the worker (after).
        when = f" ({code})" if code else {"inline": " (before)", "worker": " (after)"}[mode] if "CSV" in kind else ""
        rows.append(
            f"| {'in the server' if mode == 'inline' else 'in the worker'}{when} | {len(q)} "
            f"| {percentile(q, 50):.0f} | {percentile(q, 95):.0f} | {len(b)} | {percentile(b, 50):.0f} "
            f"| {percentile(b, 95):.0f} | {max(b, default=float('nan')):.0f} | {ratio:.1f} "
            f"| {len(w)} | {percentile(w, 50):.0f} | {percentile(w, 95):.0f} | {r['read']} ({percentile(r['reads'], 50) / 1000:.1f}) | {verdict(ratio <= TARGET_RATIO)} |"
        )
    return "\n".join(
        [
            f"{bursts} bursts of {UPLOADERS} uploads of a 1024 × 1024 {kind} read at once, a bystander moving γ"
            f"{f' ({rounds} rounds in turn, pooled)' if rounds > 1 else ''}; "
            f"load average {start} before, {end} after.",
            "",
            *rows,
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["inline", "worker"], choices=["inline", "worker"])
    parser.add_argument("--port", type=int, default=9400, help="the first server's port; the next ones follow")
    parser.add_argument("--quiet", type=int, default=40, help="the bystander's moves before the bursts")
    parser.add_argument("--bursts", type=int, default=2)
    parser.add_argument("--file", choices=["csv", "npy"], default="csv", help="npy: the same matrix, no text to parse")
    parser.add_argument("--every", type=float, default=0.25, help="seconds between two moves")
    parser.add_argument(
        "--before", type=Path, help="a checkout of the code before a change (git archive main | tar -x -C DIR): each "
        "mode is measured with its code, then with this tree's, side by side"
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=1, help="with --before: before and after in turn, this often")
    args = parser.parse_args()
    start = load_average()
    with tempfile.TemporaryDirectory() as logs:
        results = runs(args, Path(logs))
    kind = "CSV (31 MiB)" if args.file == "csv" else ".npy (8 MiB)"
    print(markdown(results, args.bursts, kind, start, load_average(), args.rounds))
    return 0


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"took {time.monotonic() - started:.0f} s", file=sys.stderr)
    sys.exit(code)
