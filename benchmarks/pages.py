"""Each page's server-side rerun time, through Streamlit's AppTest (the real router, no browser).

    python -m benchmarks.pages            # prints the markdown table

Every page registered in ``app.py`` is opened as a link would open it
(``harness.apptest.run_page``), at its default sizes and, where it has
``batch``/``features`` controls, at the largest values those controls allow.
After a warm-up (the first runs fill the caches), ``at.run()`` is timed
several times: a rerun with nothing changed, the cost of any interaction
that only redraws. Where the page has the ``gain`` slider, moving it is timed
too (alternating between two values), since that is what a viewer drags; and
where it has a ``seed``, new seeds, so that every cache misses. All medians.
The verdict at the largest size is on the slowest of the three. The
bytes are the serialized element protos of the run (main area and sidebar),
the payload the server sends for it before WebSocket framing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from streamlit.testing.v1 import AppTest

from harness.apptest import run_page
from lnviz.views.pages import PAGES, PageEntry

SIZE_KEYS = ("batch", "features")
TARGET_MS = 250.0
GAIN_VALUES = (1.05, 1.0)
SEED_START = 101


@dataclass(frozen=True)
class PageTiming:
    """One page at one size: median milliseconds per rerun and the bytes of one run's elements."""

    page: PageEntry
    size: str  # "default" or "batch=1024, features=1024"
    at_max: bool
    rerun_ms: float
    gain_ms: float | None  # None where the page has no gain slider
    seed_ms: float | None  # None where the page has no seed input
    element_bytes: int
    reruns: int
    error: str | None = None

    @property
    def worst_ms(self) -> float:
        return max(self.rerun_ms, self.gain_ms or 0.0, self.seed_ms or 0.0)


def size_limits(at: AppTest) -> dict[str, int]:
    """The largest value of each batch/features widget on the page, from the widget itself."""
    limits = {}
    for widget in [*at.get("slider"), *at.get("number_input")]:
        if widget.key in SIZE_KEYS:
            limits[widget.key] = int(widget.proto.max)
    for widget in at.get("select_slider"):  # the explorer's B and H: a ladder of sizes (issue 27)
        if widget.key in SIZE_KEYS:
            limits[widget.key] = max(int(option) for option in widget.options)
    return limits


def element_bytes(at: AppTest) -> int:
    """The serialized size of every element and block proto of the last run."""

    def walk(node) -> int:
        proto = getattr(node, "proto", None)
        size = proto.ByteSize() if hasattr(proto, "ByteSize") else 0
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            size += sum(walk(child) for child in children.values())
        return size

    return walk(at.main) + walk(at.sidebar)


def _median_ms(step: Callable[[], AppTest], n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        at = step()
        times.append((time.perf_counter() - start) * 1e3)
        if at.exception:
            raise RuntimeError("; ".join(e.value for e in at.exception))
    return statistics.median(times)


def time_page(page: PageEntry, query: dict[str, str], at_max: bool, reruns: int, warmup: int) -> PageTiming:
    """Open ``page`` with ``query``, warm up, then time ``reruns`` plain reruns and gain moves."""
    size = ", ".join(f"{k}={v}" for k, v in query.items()) or "default"
    try:
        at = run_page(page.file, query)
        for _ in range(warmup):
            at.run()
        rerun_ms = _median_ms(at.run, reruns)
        gain_ms = None
        if any(s.key == "gain" for s in at.get("slider")):
            moves = iter(GAIN_VALUES * (warmup + reruns))
            for _ in range(warmup):
                at.slider(key="gain").set_value(next(moves)).run()
            gain_ms = _median_ms(lambda: at.slider(key="gain").set_value(next(moves)).run(), reruns)
        seed_ms = None
        if any(n.key == "seed" for n in at.get("number_input")):
            # Seeds never used before: every cache misses, as for a viewer trying a new seed.
            seeds = iter(range(SEED_START, SEED_START + reruns))
            seed_ms = _median_ms(lambda: at.number_input(key="seed").set_value(next(seeds)).run(), reruns)
        return PageTiming(page, size, at_max, rerun_ms, gain_ms, seed_ms, element_bytes(at), reruns)
    except Exception as e:  # a broken page is a result to report, not a reason to stop the benchmark
        return PageTiming(page, size, at_max, float("nan"), None, None, 0, 0, f"{type(e).__name__}: {e}")


def measure(reruns: int = 7, warmup: int = 2, pages: Sequence[PageEntry] | None = None) -> list[PageTiming]:
    """Every page at its default size, and at its largest batch/features where it has them."""
    results = []
    for page in pages or PAGES:
        default = time_page(page, {}, False, reruns, warmup)
        results.append(default)
        try:
            limits = size_limits(run_page(page.file)) if default.error is None else {}
        except Exception:
            limits = {}
        if limits:
            results.append(time_page(page, {k: str(v) for k, v in limits.items()}, True, reruns, warmup))
    return results


def _ms(value: float | None) -> str:
    return "–" if value is None or value != value else f"{value:.0f}"


def markdown(results: Sequence[PageTiming]) -> str:
    """The table, one row per page and size, with the verdict at the largest sizes."""
    lines = [
        "| page | size | rerun ms | gain move ms | new seed ms | element KB / run | ≤ 250 ms at the largest size |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        if r.error:
            lines.append(f"| {r.page.title} (`{r.page.file}`) | {r.size} | error: {r.error} | | | | **MISS** |")
            continue
        verdict = ("**PASS**" if r.worst_ms <= TARGET_MS else "**MISS**") if r.at_max else ""
        lines.append(
            f"| {r.page.title} (`{r.page.file}`) | {r.size} | {_ms(r.rerun_ms)} | {_ms(r.gain_ms)} "
            f"| {_ms(r.seed_ms)} | {r.element_bytes / 1000:.1f} | {verdict} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pages", description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=7, help="timed reruns per page and size (median)")
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args(argv)
    print(markdown(measure(args.reruns, args.warmup)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
