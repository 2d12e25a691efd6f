"""The timing harness: median times, GB/s and errors of the variants, on one case or a sweep of cases.

Variants run interleaved, each against the copy measured on the same case
(:func:`~lnviz.labs.bench.results.percent_of_copy`), and every result is a :class:`Measurement`. The
sweep walks H and the dtype with as many samples B as fill the working set, x
and y of shape (B, H) together, so that each case leaves the cache.
:mod:`~lnviz.labs.bench.results` reads them against the copy and lays them out.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import Tensor

from lnviz.labs.bench.kernels import (
    QUICK,
    VARIANTS,
    Inputs,
    Runner,
    Unavailable,
    Variant,
    as_float64,
    ideal_bytes,
    make_inputs,
    reference,
    torch_dtype,
)
from lnviz.maths.device import synchronize, timed
from lnviz.views.state import DTYPE, THREADS

SWEEP_DTYPES = DTYPE.options  # the dtype control's: float32, float16, bfloat16
# 1023 is not a multiple of 4: its rows are not 16-byte aligned and end in a scalar tail, another path
# through PyTorch's vectorised kernels.
SWEEP_FEATURES = (256, 512, 1023, 1024, 2048, 4096, 8192, 16384)
MIB = 2**20
# x and y together. On a GPU at least four times the L2 cache, so nothing stays cached between runs.
# On the CPU 16 MiB keeps a 24-case sweep to a minute or two on two shared cores; a server CPU's L3 may
# hold it, so there the ceiling is the cache's bandwidth (the CLI takes a larger working set).
CPU_WORKING_SET = 16 * MIB
GPU_WORKING_SET = 256 * MIB
# The per-rerun measurement stays small so that all its variants take well under 150 ms.
QUICK_WORKING_SET = 1 * MIB
QUICK_BUDGET_S = 0.004  # per variant
MIN_ITERS = 3
# The most threads a measurement may ask for: this machine's cores, as the Threads control's range says.
MAX_THREADS = THREADS.hi


@dataclass(frozen=True)
class Measurement:
    """The timing and the error of one variant on one case.

    ``seconds`` is the median of ``times``; ``gbps`` counts only the ideal
    bytes (read x once, write y once). ``max_error`` is max |y − y₆₄| against
    the float64 reference on the same input; ``rel_error`` divides it by
    max |y₆₄|, so it reads against the dtype's unit roundoff u (2⁻²⁴ for
    float32, 2⁻¹¹ for float16, 2⁻⁸ for bfloat16) whatever the size of y. ``note`` is empty, or says why the
    variant did not run (then the numbers are NaN).
    """

    variant: str
    label: str
    norm: str
    batch: int
    features: int
    dtype: str
    device: str
    threads: int
    times: tuple[float, ...]
    seconds: float
    bytes: int
    gbps: float
    max_error: float
    rel_error: float
    note: str = ""

    @property
    def available(self) -> bool:
        return not self.note


def gbps(nbytes: int, seconds: float) -> float:
    """Effective bandwidth in GB/s (10⁹ bytes per second) for ``nbytes`` moved in ``seconds``."""
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds}")
    return nbytes / seconds / 1e9


def working_set(device: torch.device) -> int:
    """Bytes of x plus y per sweep case: 16 MiB on a CPU; on CUDA 256 MiB or 4 × L2, whichever is larger."""
    if device.type == "cuda":
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
        return max(GPU_WORKING_SET, 4 * l2)
    if device.type == "mps":
        return GPU_WORKING_SET
    return CPU_WORKING_SET


def batch_for(features: int, dtype: torch.dtype, budget: int) -> int:
    """The batch size B whose x and y of shape (B, H) together fit in ``budget`` bytes (at least 2)."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    return max(2, budget // ideal_bytes(features, itemsize))


@contextmanager
def num_threads(n: int | None) -> Iterator[int]:
    """Run the block with ``torch.set_num_threads(n)``, then restore the previous count.

    The count is process-wide: two sessions measuring at once share it.
    """
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(max(1, int(n)))
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def time_runners(
    runs: Sequence[Runner], device: torch.device, warmup: int, iters: int, budget_s: float | None = None
) -> list[list[float]]:
    """Seconds per call of each runner, interleaved: round r times one call of every runner in turn.

    Interleaving spreads a noisy moment (another process, a clock change) over
    all variants instead of one, so their ratios, the percentage of the copy
    included, stay fair. Each runner first gets ``warmup`` untimed calls. On
    CUDA each call sits between two CUDA events, all queued back to back and
    read after one synchronisation. Elsewhere each call is timed on the host
    clock with a synchronisation on either side, and ``budget_s`` (seconds per
    runner) ends the rounds early once ``MIN_ITERS`` are in.
    """
    if iters < 1:
        raise ValueError(f"iters must be >= 1, got {iters}")
    for run in runs:
        for _ in range(max(0, warmup)):
            run()
    if device.type == "cuda":
        events = [
            [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in runs]
            for _ in range(iters)
        ]
        synchronize(device)
        for round_events in events:
            for run, (start, end) in zip(runs, round_events, strict=True):
                start.record()
                run()
                end.record()
        synchronize(device)
        return [[events[r][i][0].elapsed_time(events[r][i][1]) / 1e3 for r in range(iters)] for i in range(len(runs))]
    times: list[list[float]] = [[] for _ in runs]
    spent = 0.0
    for r in range(iters):
        for run, own in zip(runs, times, strict=True):
            own.append(timed(run, device)[1])
            spent += own[-1]
        if budget_s is not None and r + 1 >= MIN_ITERS and spent > budget_s * len(runs):
            break
    return times


def errors(y: Tensor, ref: Tensor) -> tuple[float, float]:
    """max |y − ref| and that over max |ref|, in float64 (the subtraction promotes y: no float64 copy of it)."""
    worst = (ref - y.to(ref.device)).abs_().max().item()
    scale = ref.abs().max().item()
    return worst, worst / scale if scale > 0 else worst


def _record(
    variant: Variant,
    inputs: Inputs,
    device: torch.device,
    threads: int,
    times: Sequence[float] = (),
    error: tuple[float, float] | None = None,
    note: str = "",
) -> Measurement:
    """``variant``'s :class:`Measurement` on x (B, H): its ``times`` and ``error``, or NaN where it did not run."""
    batch, features = inputs.x.shape
    nan = float("nan")
    seconds = statistics.median(times) if times else nan
    max_error, rel_error = error if error is not None else (nan, nan)
    return Measurement(
        variant=variant.name,
        label=variant.label,
        norm=variant.norm,
        batch=batch,
        features=features,
        dtype=str(inputs.x.dtype).removeprefix("torch."),
        device=device.type,
        threads=threads,
        times=tuple(times),
        seconds=seconds,
        bytes=inputs.ideal_bytes,
        gbps=gbps(inputs.ideal_bytes, seconds) if times else nan,
        max_error=max_error,
        rel_error=rel_error,
        note=note,
    )


def measure_inputs(
    names: Sequence[str],
    inputs: Inputs,
    device: torch.device,
    warmup: int = 3,
    iters: int = 20,
    budget_s: float | None = None,
    threads: int | None = None,
) -> list[Measurement]:
    """Time the variants in ``names`` on one case, interleaved (:func:`time_runners`), one :class:`Measurement` each.

    A variant that cannot run here comes back with its reason in ``note``. The
    float64 reference of each norm is computed once per case and shared.
    """
    with num_threads(threads) as used:
        built: dict[str, Runner] = {}
        missing: dict[str, str] = {}
        for name in names:
            try:
                built[name] = VARIANTS[name].build(inputs)
            except Unavailable as why:
                missing[name] = str(why)
        times = dict(zip(built, time_runners(list(built.values()), device, warmup, iters, budget_s), strict=True))
        references: dict[str, Tensor] = {}
        inputs64 = as_float64(inputs) if built else inputs
        out = []
        for name in names:
            variant = VARIANTS[name]
            if name in missing:
                out.append(_record(variant, inputs, device, used, note=f"unavailable: {missing[name]}"))
                continue
            y = built[name]()  # (B, H)
            synchronize(device)
            if variant.norm not in references:
                references[variant.norm] = reference(variant.norm, inputs64)  # (B, H), float64
            out.append(_record(variant, inputs, device, used, times[name], errors(y, references[variant.norm])))
    return out


def measure(
    variant: str,
    batch: int,
    features: int,
    dtype: str,
    device: torch.device,
    warmup: int = 3,
    iters: int = 20,
    seed: int = 0,
    threads: int | None = None,
) -> Measurement:
    """Time one variant on x of shape (batch, features) = (B, H) in ``dtype``: see :func:`measure_inputs`."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")
    inputs = make_inputs(batch, features, torch_dtype(dtype), device, seed)
    return measure_inputs([variant], inputs, device, warmup, iters, threads=threads)[0]


def quick_batch(batch: int, features: int, dtype: str, budget: int = QUICK_WORKING_SET) -> int:
    """``batch``, lowered so that x and y of shape (batch, features) fit in ``budget`` bytes (at least 1)."""
    itemsize = torch.empty((), dtype=torch_dtype(dtype)).element_size()
    return max(1, min(int(batch), budget // ideal_bytes(features, itemsize)))


def quick(
    batch: int, features: int, dtype: str, device: torch.device, seed: int = 0, threads: int | None = None
) -> list[Measurement]:
    """The per-rerun measurement: every fast variant on one small case, a few ms each.

    ``batch`` is lowered by :func:`quick_batch` to keep the case under
    ``QUICK_WORKING_SET``; torch.compile is left out (it compiles for seconds).
    """
    inputs = make_inputs(quick_batch(batch, features, dtype), features, torch_dtype(dtype), device, seed)
    return measure_inputs(QUICK, inputs, device, warmup=1, iters=50, budget_s=QUICK_BUDGET_S, threads=threads)


@dataclass(frozen=True)
class Case:
    """One point of a sweep: x of shape (batch, features) in ``dtype``."""

    batch: int
    features: int
    dtype: str


def sweep_cases(
    device: torch.device,
    features: Sequence[int] = SWEEP_FEATURES,
    dtypes: Sequence[str] = SWEEP_DTYPES,
    budget: int | None = None,
) -> list[Case]:
    """Every (dtype, H) with the batch B that fills the working set (:func:`working_set` unless ``budget``)."""
    budget = working_set(device) if budget is None else int(budget)
    return [Case(batch_for(h, torch_dtype(d), budget), int(h), d) for d in dtypes for h in features]


def sweep(
    device: torch.device,
    names: Sequence[str] = tuple(VARIANTS),
    features: Sequence[int] = SWEEP_FEATURES,
    dtypes: Sequence[str] = SWEEP_DTYPES,
    budget: int | None = None,
    warmup: int = 2,
    iters: int = 20,
    budget_s: float | None = 0.2,
    threads: int | None = None,
    seed: int = 0,
) -> Iterator[Measurement]:
    """Yield a :class:`Measurement` per variant per case of :func:`sweep_cases`, copy first in each case.

    A generator, so a caller can show progress: ``len(sweep_cases(...))`` times
    the number of variants (``names`` plus the copy) measurements in all.
    """
    names = ["copy", *(n for n in names if n != "copy")]
    for case in sweep_cases(device, features, dtypes, budget):
        inputs = make_inputs(case.batch, case.features, torch_dtype(case.dtype), device, seed)
        yield from measure_inputs(names, inputs, device, warmup, iters, budget_s, threads)
        del inputs  # free this case before the next one is drawn: peak memory stays one case
