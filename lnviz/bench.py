"""How fast the norms run, measured against the speed of a plain copy.

LayerNorm on x of shape (B, H) reduces over each row's H features: it reads the
row, computes μ and σ², and writes y. At the least that is one read and one
write of every element, the same traffic as ``y.copy_(x)``:

.. math::

    \\text{ideal bytes} = 2 \\cdot B H \\cdot \\text{itemsize}, \\qquad
    \\text{GB/s} = \\frac{\\text{ideal bytes}}{\\text{median seconds} \\cdot 10^9}

(γ and β, H values each, are left out: a rounding error next to B·H.) So a norm
is memory-bound, and the copy's bandwidth, measured on the same machine, is its
ceiling. A written-out LN makes several passes over memory; a fused kernel
makes one read and one write, and gets close to the copy.

Every variant is checked against torch's float64 result on the same (rounded)
input, so the error shown is the kernel's own. Nothing here holds state between
calls: inputs, buffers and compiled functions are built fresh inside each
measurement.
"""

from __future__ import annotations

import os
import statistics
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import plotly.graph_objects as go
import torch
import torch.nn.functional as F
from plotly.subplots import make_subplots
from torch import Tensor

from lnviz import theme
from lnviz.data import make_activations
from lnviz.device import synchronize, timed

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}
SWEEP_DTYPES = ("float32", "float16", "bfloat16")
# 1023 is not a multiple of 4: its rows are not 16-byte aligned and end in a scalar tail, another path
# through PyTorch's vectorised kernels.
HIDDENS = (256, 512, 1023, 1024, 2048, 4096, 8192, 16384)
EPS = 1e-5
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
# The most threads a measurement may ask for: this machine's cores.
MAX_THREADS = max(2, os.cpu_count() or 1, torch.get_num_threads())


class Unavailable(RuntimeError):
    """A variant that cannot run here (no compiler, no CUDA, no triton); the message says why."""


@dataclass(frozen=True)
class Inputs:
    """One benchmark case: x of shape (B, H), γ and β of shape (H,), BN's running statistics (H,)."""

    x: Tensor  # (B, H)
    weight: Tensor  # (H,)
    bias: Tensor  # (H,)
    running_mean: Tensor  # (H,)
    running_var: Tensor  # (H,), positive
    eps: float

    @property
    def ideal_bytes(self) -> int:
        return ideal_bytes(self.x.numel(), self.x.element_size())


Runner = Callable[[], Tensor]


@dataclass(frozen=True)
class Variant:
    """One kernel to time. ``build(inputs)`` returns a runner: a call with no arguments
    that computes y of shape (B, H) into fresh or preallocated memory."""

    name: str  # stable key: CSV column, CLI flag
    label: str  # shown on the page
    norm: str  # "copy", "LN", "RMSNorm", "BN train" or "BN eval": picks the reference and the colour
    build: Callable[[Inputs], Runner]
    slow: bool = False  # slow to build (compiles): kept out of the per-rerun measurement


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
    rows: int
    hidden: int
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


def ideal_bytes(numel: int, itemsize: int) -> int:
    """2 · numel · itemsize: every element of x read once and of y written once."""
    return 2 * int(numel) * int(itemsize)


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


def rows_for(hidden: int, dtype: torch.dtype, budget: int) -> int:
    """The number of rows B whose x and y of shape (B, H) together fit in ``budget`` bytes (at least 2)."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    return max(2, budget // ideal_bytes(hidden, itemsize))


def make_inputs(
    rows: int, hidden: int, dtype: torch.dtype, device: torch.device, seed: int = 0, eps: float = EPS
) -> Inputs:
    """Seeded x (B, H) with a per-row offset and scale, γ, β and positive running statistics (H,)."""
    if rows < 1 or hidden < 1:
        raise ValueError(f"rows and hidden must be >= 1, got ({rows}, {hidden})")
    x = make_activations("heterogeneous samples", rows, hidden, seed, device=device, dtype=dtype)  # (B, H)
    stats = make_activations("standard normal", 4, hidden, seed + 1, device=device, dtype=dtype)  # (4, H)
    return Inputs(
        x=x,
        weight=1.0 + 0.5 * stats[0],  # (H,)
        bias=0.5 * stats[1],  # (H,)
        running_mean=stats[2],  # (H,)
        running_var=0.5 + stats[3].abs(),  # (H,)
        eps=float(eps),
    )


def as_float64(inputs: Inputs) -> Inputs:
    """The same case cast up to float64 (on the CPU for MPS, which has no float64); exact, as every dtype fits."""
    device = inputs.x.device if inputs.x.device.type != "mps" else torch.device("cpu")
    x, w, b, rm, rv = (
        t.to(device=device, dtype=torch.float64)
        for t in (inputs.x, inputs.weight, inputs.bias, inputs.running_mean, inputs.running_var)
    )
    return Inputs(x=x, weight=w, bias=b, running_mean=rm, running_var=rv, eps=inputs.eps)


def reference(norm: str, inputs: Inputs) -> Tensor:
    """y of shape (B, H) in float64 from ``torch.nn.functional``, on the same input the kernel sees.

    The input is the rounded x of the case's dtype, cast up, so the difference
    is the kernel's own error. Pass :func:`as_float64` of the case to skip the cast.
    """
    if inputs.x.dtype != torch.float64:
        inputs = as_float64(inputs)
    x, w, b, rm, rv = inputs.x, inputs.weight, inputs.bias, inputs.running_mean, inputs.running_var
    shape = x.shape[-1:]
    if norm == "copy":
        return x
    if norm == "LN":
        return F.layer_norm(x, shape, w, b, inputs.eps)
    if norm == "RMSNorm":
        return F.rms_norm(x, shape, w, inputs.eps)
    if norm == "BN train":
        return F.batch_norm(x, None, None, w, b, training=True, eps=inputs.eps)
    if norm == "BN eval":
        return F.batch_norm(x, rm, rv, w, b, training=False, eps=inputs.eps)
    raise ValueError(f"unknown norm {norm!r}")


def naive_layer_norm(x: Tensor, weight: Tensor, bias: Tensor, eps: float) -> Tensor:
    """(x − μ) / sqrt(σ² + ε) · γ + β over the last dim of x (B, H), written out op by op.

    Each line is a pass over (B, H), and most write a new (B, H) tensor: the
    memory traffic a fused kernel saves. σ² is the two-pass E[(x − μ)²] rather
    than ``torch.var`` (as :func:`lnviz.norms.layer_norm` uses), whose CPU
    kernel is a compute-bound Welford loop that would hide the passes.
    """
    mean = x.mean(dim=-1, keepdim=True)  # (B, 1): pass 1
    centred = x - mean  # (B, H): pass 2
    var = (centred * centred).mean(dim=-1, keepdim=True)  # (B, 1): passes 3 and 4
    return centred / torch.sqrt(var + eps) * weight + bias  # (B, H): passes 5, 6 and 7


def naive_rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
    """γ · x / sqrt(E[x²] + ε) over the last dim of x (B, H), written out op by op (four passes)."""
    mean_square = (x * x).mean(dim=-1, keepdim=True)  # (B, 1): passes 1 and 2
    return x * torch.rsqrt(mean_square + eps) * weight  # (B, H): passes 3 and 4


def _build_copy(inputs: Inputs) -> Runner:
    # A fresh y on every call, as every other kernel allocates its output: a y kept across calls
    # would be evicted from cache by the interleaved kernels while their outputs reuse warm memory.
    return lambda: torch.empty_like(inputs.x).copy_(inputs.x)  # (B, H)


def _build_naive(inputs: Inputs) -> Runner:
    return lambda: naive_layer_norm(inputs.x, inputs.weight, inputs.bias, inputs.eps)


def _build_fused(inputs: Inputs) -> Runner:
    shape = inputs.x.shape[-1:]
    return lambda: F.layer_norm(inputs.x, shape, inputs.weight, inputs.bias, inputs.eps)


def _build_compiled(inputs: Inputs) -> Runner:
    # Dynamo keeps its compiled entries on the function's code object, shared by every caller and
    # capped at a few recompilations. A fresh copy of the code object gives each measurement its
    # own static-shape compile, and lets it go with the runner.
    fn = naive_layer_norm
    fresh = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    try:
        compiled = torch.compile(fresh, fullgraph=True, dynamic=False)
        compiled(inputs.x, inputs.weight, inputs.bias, inputs.eps)
    except Exception as err:  # a missing compiler or backend shows up only here, as any error type
        first = str(err).strip().splitlines()[0][:160] if str(err).strip() else ""
        raise Unavailable(f"torch.compile failed: {type(err).__name__}: {first}") from err
    return lambda: compiled(inputs.x, inputs.weight, inputs.bias, inputs.eps)


def _build_rms_eager(inputs: Inputs) -> Runner:
    return lambda: naive_rms_norm(inputs.x, inputs.weight, inputs.eps)


def _build_rms_fused(inputs: Inputs) -> Runner:
    shape = inputs.x.shape[-1:]
    return lambda: F.rms_norm(inputs.x, shape, inputs.weight, inputs.eps)


def _build_bn_train(inputs: Inputs) -> Runner:
    if inputs.x.shape[0] < 2:
        raise Unavailable("BN in training mode needs at least 2 rows")
    # Running statistics are updated on every call, as nn.BatchNorm1d does in training.
    running_mean = inputs.running_mean.clone()  # (H,)
    running_var = inputs.running_var.clone()  # (H,)
    return lambda: F.batch_norm(
        inputs.x, running_mean, running_var, inputs.weight, inputs.bias, training=True, eps=inputs.eps
    )


def _build_bn_eval(inputs: Inputs) -> Runner:
    return lambda: F.batch_norm(
        inputs.x, inputs.running_mean, inputs.running_var, inputs.weight, inputs.bias, training=False, eps=inputs.eps
    )


TRITON_MAX_H = 16384  # one row per program, held in registers: wider rows would need a loop over blocks

if triton is not None:
    # One program per row: load the row into registers, two-pass μ and σ² there, write y once.
    # Accumulates in float32, or float64 for float64 input (FP64 is a compile-time branch).
    @triton.jit
    def _layer_norm_kernel(X, Y, W, B, stride_x, stride_y, n_cols, eps, BLOCK: tl.constexpr, FP64: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0)
        w = tl.load(W + cols, mask=mask, other=1.0)
        b = tl.load(B + cols, mask=mask, other=0.0)
        if FP64:
            x = x.to(tl.float64)
            w = w.to(tl.float64)
            b = b.to(tl.float64)
        else:
            x = x.to(tl.float32)
            w = w.to(tl.float32)
            b = b.to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        centred = tl.where(mask, x - mean, 0.0)
        var = tl.sum(centred * centred, axis=0) / n_cols  # biased, as PyTorch
        rstd = 1.0 / tl.sqrt(var + eps)
        y = centred * rstd * w + b
        tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


def triton_layer_norm(x: Tensor, weight: Tensor, bias: Tensor, eps: float = EPS) -> Tensor:
    """LN over the last dim of x (B, H) on CUDA with the Triton kernel above: y of shape (B, H).

    γ and β have shape (H,). Accumulates in float32 (float64 for float64
    input). Whole rows live in registers, so H is at most ``TRITON_MAX_H``.
    """
    if triton is None:
        raise Unavailable("triton is not installed")
    if x.device.type != "cuda":
        raise Unavailable("the Triton kernel needs a CUDA device")
    if x.dim() != 2:
        raise ValueError(f"triton_layer_norm: x must be (B, H), got shape {tuple(x.shape)}")
    rows, hidden = x.shape
    if hidden > TRITON_MAX_H:
        raise ValueError(f"triton_layer_norm: H={hidden} is wider than {TRITON_MAX_H}, one row per program")
    block = triton.next_power_of_2(hidden)
    x = x.contiguous()
    y = torch.empty_like(x)  # (B, H)
    _layer_norm_kernel[(rows,)](
        x,
        y,
        weight.contiguous(),
        bias.contiguous(),
        x.stride(0),
        y.stride(0),
        hidden,
        eps,
        BLOCK=block,
        FP64=x.dtype == torch.float64,
        num_warps=min(max(block // 256, 1), 16),
    )
    return y


def _build_triton(inputs: Inputs) -> Runner:
    if not torch.cuda.is_available() or inputs.x.device.type != "cuda":
        raise Unavailable("needs a CUDA device")
    if triton is None:
        raise Unavailable("triton is not installed")
    return lambda: triton_layer_norm(inputs.x, inputs.weight, inputs.bias, inputs.eps)


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("copy", "copy ceiling: y.copy_(x)", "copy", _build_copy),
        Variant("ln_naive", "LN, op by op (eager)", "LN", _build_naive),
        Variant("ln_fused", "LN, F.layer_norm", "LN", _build_fused),
        Variant("ln_compiled", "LN, torch.compile of op by op", "LN", _build_compiled, slow=True),
        Variant("ln_triton", "LN, Triton kernel", "LN", _build_triton),
        Variant("rms_naive", "RMSNorm, op by op (eager)", "RMSNorm", _build_rms_eager),
        Variant("rms_fused", "RMSNorm, F.rms_norm", "RMSNorm", _build_rms_fused),
        Variant("bn_train", "BN, training mode", "BN train", _build_bn_train),
        Variant("bn_eval", "BN, eval mode", "BN eval", _build_bn_eval),
    )
}
QUICK = tuple(name for name, v in VARIANTS.items() if not v.slow)


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


def _unavailable(variant: Variant, inputs: Inputs, device: torch.device, threads: int, why: str) -> Measurement:
    rows, hidden = inputs.x.shape
    nan = float("nan")
    return Measurement(
        variant=variant.name,
        label=variant.label,
        norm=variant.norm,
        rows=rows,
        hidden=hidden,
        dtype=str(inputs.x.dtype).removeprefix("torch."),
        device=device.type,
        threads=threads,
        times=(),
        seconds=nan,
        bytes=inputs.ideal_bytes,
        gbps=nan,
        max_error=nan,
        rel_error=nan,
        note=f"unavailable: {why}",
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
    rows, hidden = inputs.x.shape
    dtype = str(inputs.x.dtype).removeprefix("torch.")
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
                out.append(_unavailable(variant, inputs, device, used, missing[name]))
                continue
            y = built[name]()
            synchronize(device)
            if variant.norm not in references:
                references[variant.norm] = reference(variant.norm, inputs64)
            ref = references[variant.norm]
            seconds = statistics.median(times[name])
            max_error, rel_error = errors(y, ref)
            out.append(
                Measurement(
                    variant=name,
                    label=variant.label,
                    norm=variant.norm,
                    rows=rows,
                    hidden=hidden,
                    dtype=dtype,
                    device=device.type,
                    threads=used,
                    times=tuple(times[name]),
                    seconds=seconds,
                    bytes=inputs.ideal_bytes,
                    gbps=gbps(inputs.ideal_bytes, seconds),
                    max_error=max_error,
                    rel_error=rel_error,
                )
            )
    return out


def measure(
    variant: str,
    rows: int,
    hidden: int,
    dtype: str,
    device: torch.device,
    warmup: int = 3,
    iters: int = 20,
    seed: int = 0,
    threads: int | None = None,
) -> Measurement:
    """Time one variant on x of shape (rows, hidden) in ``dtype``: see :func:`measure_inputs`."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")
    inputs = make_inputs(rows, hidden, _dtype(dtype), device, seed)
    return measure_inputs([variant], inputs, device, warmup, iters, threads=threads)[0]


def quick_rows(rows: int, hidden: int, dtype: str, budget: int = QUICK_WORKING_SET) -> int:
    """``rows``, lowered so that x and y of shape (rows, hidden) fit in ``budget`` bytes (at least 1)."""
    itemsize = torch.empty((), dtype=_dtype(dtype)).element_size()
    return max(1, min(int(rows), budget // ideal_bytes(hidden, itemsize)))


def quick(
    rows: int, hidden: int, dtype: str, device: torch.device, seed: int = 0, threads: int | None = None
) -> list[Measurement]:
    """The per-rerun measurement: every fast variant on one small case, a few ms each.

    ``rows`` is lowered by :func:`quick_rows` to keep the case under
    ``QUICK_WORKING_SET``; torch.compile is left out (it compiles for seconds).
    """
    inputs = make_inputs(quick_rows(rows, hidden, dtype), hidden, _dtype(dtype), device, seed)
    return measure_inputs(QUICK, inputs, device, warmup=1, iters=50, budget_s=QUICK_BUDGET_S, threads=threads)


@dataclass(frozen=True)
class Case:
    """One point of a sweep: x of shape (rows, hidden) in ``dtype``."""

    rows: int
    hidden: int
    dtype: str


def sweep_cases(
    device: torch.device,
    hiddens: Sequence[int] = HIDDENS,
    dtypes: Sequence[str] = SWEEP_DTYPES,
    budget: int | None = None,
) -> list[Case]:
    """Every (dtype, H) with the rows that fill the working set (:func:`working_set` unless ``budget``)."""
    budget = working_set(device) if budget is None else int(budget)
    return [Case(rows_for(h, _dtype(d), budget), int(h), d) for d in dtypes for h in hiddens]


def sweep(
    device: torch.device,
    names: Sequence[str] = tuple(VARIANTS),
    hiddens: Sequence[int] = HIDDENS,
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
    for case in sweep_cases(device, hiddens, dtypes, budget):
        inputs = make_inputs(case.rows, case.hidden, _dtype(case.dtype), device, seed)
        yield from measure_inputs(names, inputs, device, warmup, iters, budget_s, threads)
        del inputs  # free this case before the next one is drawn: peak memory stays one case


def _dtype(name: str) -> torch.dtype:
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {name!r}; choose one of {list(DTYPES)}")
    return DTYPES[name]


def _case_key(m: Measurement) -> tuple:
    return (m.rows, m.hidden, m.dtype, m.device)


def percent_of_copy(measurements: Sequence[Measurement]) -> list[float]:
    """Each measurement's GB/s as a percentage of the copy's on the same case (NaN without one)."""
    copy = {_case_key(m): m.gbps for m in measurements if m.variant == "copy" and m.available}
    return [100.0 * m.gbps / copy[_case_key(m)] if _case_key(m) in copy else float("nan") for m in measurements]


COLUMNS = (
    "variant",
    "label",
    "norm",
    "dtype",
    "rows",
    "hidden",
    "device",
    "threads",
    "median_us",
    "gbps",
    "pct_of_copy",
    "max_error",
    "rel_error",
    "note",
)


def table(measurements: Sequence[Measurement]) -> list[dict]:
    """One plain dict per measurement, keyed by :data:`COLUMNS` (for a DataFrame or a CSV)."""
    out = []
    for m, pct in zip(measurements, percent_of_copy(measurements), strict=True):
        out.append(
            {
                "variant": m.variant,
                "label": m.label,
                "norm": m.norm,
                "dtype": m.dtype,
                "rows": m.rows,
                "hidden": m.hidden,
                "device": m.device,
                "threads": m.threads,
                "median_us": m.seconds * 1e6,
                "gbps": m.gbps,
                "pct_of_copy": pct,
                "max_error": m.max_error,
                "rel_error": m.rel_error,
                "note": m.note,
            }
        )
    return out


def to_csv(measurements: Sequence[Measurement]) -> str:
    """The :func:`table` as CSV text, with a header row."""
    lines = [",".join(COLUMNS)]
    for row in table(measurements):
        cells = []
        for key in COLUMNS:
            value = row[key]
            text = f"{value:.6g}" if isinstance(value, float) else str(value)
            cells.append('"' + text.replace('"', '""') + '"' if ("," in text or '"' in text) else text)
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


# Figures ---------------------------------------------------------------------------------------------------------

_DASH = {
    "ln_naive": "dot",
    "ln_fused": "solid",
    "ln_compiled": "dash",
    "ln_triton": "dashdot",
    "rms_naive": "dot",
    "rms_fused": "solid",
    "bn_train": "solid",
    "bn_eval": "dot",
}
_COLOR = {"copy": theme.BLACK, "LN": theme.ROLES["LN"], "RMSNorm": theme.ROLES["RMSNorm"]}
COPY_NAME = "copy ceiling"


def variant_color(m: Measurement | Variant) -> str:
    """The norm's colour from :mod:`lnviz.theme` (BN in both modes shares BN's)."""
    return _COLOR.get(m.norm, theme.ROLES["BN"])


def fig_quick(measurements: Sequence[Measurement]) -> go.Figure:
    """Bars of GB/s per variant on one case, with the measured copy bandwidth as a dashed line."""
    pairs = [
        (m, pct)
        for m, pct in zip(measurements, percent_of_copy(measurements), strict=True)
        if m.available and m.variant != "copy"
    ]
    labels = [m.label for m, _ in pairs]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=[m.gbps for m, _ in pairs],
            marker_color=[variant_color(m) for m, _ in pairs],
            text=[f"{pct:.0f}% of copy" for _, pct in pairs],
            textposition="outside",
            name="GB/s",
            showlegend=False,
            hovertemplate="%{x}<br>%{y:.1f} GB/s<extra></extra>",
        )
    )
    copy = next((m for m in measurements if m.variant == "copy" and m.available), None)
    top = max([m.gbps for m, _ in pairs] + ([copy.gbps] if copy else []), default=1.0)
    if copy is not None and labels:
        fig.add_trace(
            go.Scatter(
                x=[labels[0], labels[-1]],
                y=[copy.gbps, copy.gbps],
                mode="lines",
                name=COPY_NAME,
                line={"color": theme.BLACK, "dash": "dash", "width": 2},
                hovertemplate=f"copy: {copy.gbps:.1f} GB/s<extra></extra>",
            )
        )
        fig.add_annotation(
            x=labels[0], y=copy.gbps, text=f"copy {copy.gbps:.1f} GB/s", showarrow=False, yshift=10, xanchor="center"
        )
    first = measurements[0] if measurements else None
    title = f"x of shape ({first.rows}, {first.hidden}), {first.dtype}, {first.device}" if first else ""
    fig.update_layout(
        title=title,
        yaxis_title="effective GB/s (ideal bytes)",
        yaxis_range=[0, 1.2 * top],
        height=420,
        margin={"t": 50, "b": 10},
        legend={"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"},
    )
    return fig


def fig_sweep(measurements: Sequence[Measurement]) -> go.Figure:
    """GB/s against H, one panel per dtype, one line per variant; the copy ceiling is the black dashed line.

    H is a category axis in increasing order, so 1023 and 1024 stand side by side.
    """
    dtypes = list(dict.fromkeys(m.dtype for m in measurements))
    hiddens = sorted({m.hidden for m in measurements})
    fig = make_subplots(rows=1, cols=max(1, len(dtypes)), shared_yaxes=True, subplot_titles=dtypes)
    for col, dtype in enumerate(dtypes, start=1):
        for name, variant in VARIANTS.items():
            points = sorted(
                (m for m in measurements if m.dtype == dtype and m.variant == name and m.available),
                key=lambda m: m.hidden,
            )
            if not points:
                continue
            is_copy = name == "copy"
            fig.add_trace(
                go.Scatter(
                    x=[str(m.hidden) for m in points],
                    y=[m.gbps for m in points],
                    mode="lines" if is_copy else "lines+markers",
                    name=COPY_NAME if is_copy else variant.label,
                    legendgroup=name,
                    showlegend=col == 1,
                    line={
                        "color": variant_color(variant),
                        "dash": "dash" if is_copy else _DASH.get(name, "solid"),
                        "width": 3 if is_copy else 2,
                    },
                    customdata=[[m.rows, m.seconds * 1e6] for m in points],
                    hovertemplate=f"{variant.label}<br>H=%{{x}}, rows=%{{customdata[0]}}<br>"
                    "%{y:.1f} GB/s, %{customdata[1]:.0f} µs<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=[str(h) for h in hiddens], title_text="H")
    fig.update_yaxes(title_text="effective GB/s", row=1, col=1)
    fig.update_layout(height=460, margin={"t": 60, "b": 10}, legend={"orientation": "h", "y": -0.25})
    return fig
