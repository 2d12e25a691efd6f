"""Time the norm kernels over a sweep of sizes and dtypes, and print a markdown table.

    python -m benchmarks.kernels                      # the page's sweep, on the app's default device
    python -m benchmarks.kernels --device cpu --threads 2 --working-set-mib 64 --csv bench.csv
    python -m benchmarks.kernels --features 1023,1024 --dtypes float32 --no-compile

Each row is one kernel on one case, x of shape (B, H), B samples by H features: the median time,
the effective GB/s from the ideal bytes (read x once, write y once), that as a
percentage of the copy measured on the same case, and the error against
torch in float64 (absolute, and over the largest output, to read against the
dtype's unit roundoff). The sweep itself is :func:`lnviz.labs.bench.sweep`.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from lnviz.labs import bench
from lnviz.maths.device import label, pick
from lnviz.views.state import DEVICE


def _csv_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _format(value: float, spec: str) -> str:
    return "–" if math.isnan(value) else format(value, spec)


def markdown(measurements: Sequence[bench.Measurement]) -> str:
    """A markdown table, one row per measurement, in sweep order."""
    lines = [
        "| dtype | H | B | kernel | median µs | GB/s | % of copy | max abs error | error / max abs y |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for m, pct in zip(measurements, bench.percent_of_copy(measurements), strict=True):
        kernel = m.label if m.available else f"{m.label} ({m.note})"
        lines.append(
            f"| {m.dtype} | {m.features} | {m.batch} | {kernel} | {_format(m.seconds * 1e6, '.1f')} "
            f"| {_format(m.gbps, '.1f')} | {_format(pct, '.0f')} | {_format(m.max_error, '.1e')} "
            f"| {_format(m.rel_error, '.1e')} |"
        )
    return "\n".join(lines) + "\n"


# The page's column for each variant (docs/benchmarks.md, "Norm kernels on the CPU").
COLUMNS = {
    "copy": "copy",
    "ln_naive": "LN eager",
    "ln_fused": "`F.layer_norm`",
    "ln_compiled": "LN compiled",
    "ln_triton": "LN Triton",
    "rms_naive": "RMSNorm eager",
    "rms_fused": "`F.rms_norm`",
    "bn_train": "BN train",
    "bn_eval": "BN eval",
}


def summary(measurements: Sequence[bench.Measurement]) -> str:
    """The page's table: a row per case (dtype, H, B), a column per kernel, its median µs; the rest
    (GB/s, the share of the copy, the errors) is :func:`markdown`'s, for stdout."""
    variants = list(dict.fromkeys(m.variant for m in measurements))
    cases: dict[tuple[str, int, int], dict[str, str]] = {}
    for m in measurements:
        us = m.seconds * 1e6 if m.available else math.nan
        cases.setdefault((m.dtype, m.features, m.batch), {})[m.variant] = _format(us, ",.0f")
    lines = [
        "| dtype | H | B | " + " | ".join(COLUMNS.get(v, v) for v in variants) + " |",
        "|---|---:|---:|" + "---:|" * len(variants),
    ]
    for (dtype, features, batch), row in cases.items():
        cells = " | ".join(row.get(v, "–") for v in variants)
        lines.append(f"| {dtype} | {features} | {batch} | {cells} |")
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kernels", description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=DEVICE.options, default="auto", help="auto: CUDA, then MPS, else the CPU")
    parser.add_argument("--dtypes", type=_csv_list, default=list(bench.SWEEP_DTYPES), help="comma-separated")
    parser.add_argument(
        "--features",
        "--hiddens",  # its name before the bench said features: make bench's recorded command still runs
        dest="features",
        type=lambda t: [int(h) for h in _csv_list(t)],
        default=list(bench.SWEEP_FEATURES),
        help="comma-separated H",
    )
    parser.add_argument("--variants", type=_csv_list, default=list(bench.VARIANTS), help="comma-separated names")
    parser.add_argument("--no-compile", action="store_true", help="leave out torch.compile (seconds per case)")
    parser.add_argument("--working-set-mib", type=float, default=None, help="x plus y per case; default per device")
    parser.add_argument("--threads", type=int, default=None, help="torch threads while timing (default: unchanged)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--iters", type=int, default=20, help="at most this many timed calls per kernel")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", type=Path, default=None, help="also write the results here as CSV")
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in bench.VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {list(bench.VARIANTS)}")
    bad = [d for d in args.dtypes if d not in bench.DTYPES]
    if bad:
        parser.error(f"unknown dtypes {bad}; choose from {list(bench.DTYPES)}")
    if any(h < 1 for h in args.features):
        parser.error("every H must be >= 1")
    return args


def measure(args: argparse.Namespace, say=print) -> list[bench.Measurement]:
    """The sweep :func:`parse_args` asked for, its setting said first through ``say``."""
    device = pick(args.device)
    names = [v for v in args.variants if not (args.no_compile and v == "ln_compiled")]
    budget = None if args.working_set_mib is None else int(args.working_set_mib * bench.MIB)
    cases = bench.sweep_cases(device, args.features, args.dtypes, budget)
    total = len(cases) * len(["copy", *(n for n in names if n != "copy")])
    working = bench.working_set(device) if budget is None else budget
    threads = args.threads if args.threads is not None else torch.get_num_threads()
    say(
        f"# Norm kernels on {label(device)}\n\ntorch {torch.__version__}; {threads} thread(s) while timing; "
        f"{working / bench.MIB:g} MiB of x and y per case; warm-up {args.warmup}, median of up to {args.iters} "
        "calls; GB/s from the ideal bytes 2 × B × H × itemsize.\n"
    )
    results = []
    stream = bench.sweep(
        device, names, args.features, args.dtypes, budget, args.warmup, args.iters, threads=args.threads, seed=args.seed
    )
    for i, m in enumerate(stream, start=1):
        results.append(m)
        print(f"[{i}/{total}] {m.dtype} H={m.features}: {m.label}", file=sys.stderr, flush=True)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results = measure(args)
    print(markdown(results))
    if args.csv is not None:
        args.csv.write_text(bench.to_csv(results))
        print(f"CSV written to {args.csv}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
