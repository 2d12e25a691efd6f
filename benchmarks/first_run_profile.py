"""Where the server's interpreter goes while eight pages read a 1024 × 1024 upload at once: each script run
profiled on its own thread (cProfile), and how late a 1 ms sleeper in the same process wakes (what every other
session's rerun waits for), printed as the runs' heaviest functions.

    python -m benchmarks.first_run_profile                 # .npy: the pages' work without the parse of the text
    python -m benchmarks.first_run_profile --file csv --port 9410

One ``streamlit run app.py`` started with a ``sitecustomize`` of this module's (:data:`SITE`) on its path: it
wraps Streamlit's ``ScriptRunner._run_script`` in a profiler per run and dumps each run's stats, its wall
and its thread's CPU seconds. A tool for finding the time, not a benchmark with a target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pstats
import sys
import tempfile
from pathlib import Path

from benchmarks import upload_burst
from benchmarks.attack import big_csv
from benchmarks.upload_burst import big_npy, burst
from harness.server import ROOT, start_app, stop, wait_app

SITE = """
import os
if os.environ.get("LNVIZ_PROFILE_DIR"):
    import cProfile, itertools, json, sys, threading, time, traceback
    from streamlit.runtime.scriptrunner import script_runner

    out, count, original = os.environ["LNVIZ_PROFILE_DIR"], itertools.count(), script_runner.ScriptRunner._run_script

    def profiled(self, rerun_data):
        prof, wall, cpu, at = cProfile.Profile(), time.perf_counter(), time.thread_time(), time.monotonic()
        prof.enable()
        try:
            return original(self, rerun_data)
        finally:
            prof.disable()
            n = next(count)
            prof.dump_stats(f"{out}/run-{n}.prof")
            with open(f"{out}/run-{n}.json", "w") as f:
                json.dump({"wall": time.perf_counter() - wall, "cpu": time.thread_time() - cpu, "at": at}, f)

    script_runner.ScriptRunner._run_script = profiled

    def sleeper():
        with open(f"{out}/late-{os.getpid()}.txt", "a") as f:
            while True:
                t = time.perf_counter()
                time.sleep(0.001)
                late = (time.perf_counter() - t - 0.001) * 1e3
                f.write(f"{time.monotonic():.4f} {late:.2f}\\n")
                f.flush()
                if late > 50:  # who had the interpreter: each other thread's innermost frames, as it stands now
                    with open(f"{out}/stalls-{os.getpid()}.txt", "a") as g:
                        g.write(f"--- {late:.0f} ms at {time.monotonic():.3f}\\n")
                        for ident, frame in sys._current_frames().items():
                            stack = traceback.format_stack(frame, limit=6)
                            idle = any(w in stack[-1] for w in ("acquire()", "wait(", "sleep(", "select(", ".get("))
                            if ident != threading.get_ident() and not idle:
                                g.write("".join(stack) + "\\n")

    threading.Thread(target=sleeper, daemon=True).start()
"""


def report(prof_dir: Path, since: float, top: int, pid: int) -> None:
    """The burst's runs (from ``since``) and the server's (``pid``) sleeper."""
    runs = []
    for meta in prof_dir.glob("run-*.json"):
        info = json.loads(meta.read_text())
        if info["at"] >= since:  # the runs that read the files, not the sessions' first runs
            runs.append((info["wall"], info["cpu"], meta.with_suffix(".prof"), info["at"] - since))
    heavy = sorted((r for r in runs if r[0] > 0.2), key=lambda r: r[3])
    print(
        f"{len(runs)} runs, {len(heavy)} over 200 ms: "
        + ", ".join(f"{t:.2f}+{w:.2f}s/{c:.2f}cpu" for w, c, _, t in heavy)
    )
    if heavy:
        stats = pstats.Stats(str(heavy[0][2]))
        for _, _, path, _ in heavy[1:]:
            stats.add(str(path))
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumtime").print_stats(top)
    late = [line.split() for line in (prof_dir / f"late-{pid}.txt").read_text().splitlines()]
    during = sorted(float(ms) for at, ms in late if float(at) >= since)
    stalls = [(float(at) - since, float(ms)) for at, ms in late if float(at) >= since and float(ms) > 20]
    print("stalls over 20 ms (s after the reads began, ms late):", " ".join(f"{t:.2f}:{ms:.0f}" for t, ms in stalls))
    if during:
        print(f"1 ms sleeper during the burst: {len(during)} wakes, p50 {during[len(during) // 2]:.1f} ms late, "
              f"p99 {during[int(len(during) * 0.99)]:.1f}, max {during[-1]:.1f}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9410)
    parser.add_argument("--file", choices=["csv", "npy"], default="npy")
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--mode", default="worker", choices=["worker", "inline"])
    parser.add_argument("--uploaders", type=int, default=upload_burst.UPLOADERS, help="1: one page's run alone")
    args = parser.parse_args()
    upload_burst.UPLOADERS = args.uploaders
    with tempfile.TemporaryDirectory() as tmp:
        site, prof = Path(tmp, "site"), Path(tmp, "prof")
        site.mkdir()
        prof.mkdir()
        (site / "sitecustomize.py").write_text(SITE)
        env = {
            "LNVIZ_PROFILE_DIR": str(prof),
            "PYTHONPATH": f"{site}{os.pathsep}{ROOT}",
            "LNVIZ_UPLOAD_WORKER": args.mode,
        }
        app = start_app(args.port, Path(tmp, "app.log"), env=env)
        try:
            wait_app(app)
            data = big_csv() if args.file == "csv" else big_npy()

            async def go() -> float:
                import time

                await burst(app.url, data, [], f"x.{args.file}")  # warm: the server's first imports, the worker
                (prof / f"stalls-{app.proc.pid}.txt").unlink(missing_ok=True)
                reading: list[float] = []
                since = time.monotonic()
                await burst(app.url, data, reading, f"x.{args.file}")
                late = [line.split() for line in (prof / f"late-{app.proc.pid}.txt").read_text().splitlines()]
                put = sorted(float(ms) for at, ms in late if since <= float(at) < reading[0])
                print(f"1 ms sleeper while the files were PUT ({reading[0] - since:.1f} s): p50 {put[len(put) // 2]:.1f}"
                      f" ms late, p99 {put[int(len(put) * 0.99)]:.1f}, max {put[-1]:.1f}")  # fmt: skip
                return reading[0]

            since = asyncio.run(go())
        finally:
            stop(app.proc)
        report(prof, since, args.top, app.proc.pid)
        if (stalls := prof / f"stalls-{app.proc.pid}.txt").exists():
            print(stalls.read_text()[-20000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
