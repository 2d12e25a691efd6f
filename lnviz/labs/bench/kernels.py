"""The kernels the benchmark times: the inputs of a case, the variants and their float64 references.

A case is x of shape (B, H), γ and β of shape (H,) and BN's running
statistics (H,) (:class:`Inputs`). A variant (:class:`Variant`) builds a runner
that computes y of shape (B, H) from them: a plain copy (the ceiling), LN op
by op, fused, compiled and as a Triton kernel, RMSNorm op by op and fused, and
BN in training and eval mode. :func:`reference` is torch's float64 result on
the same rounded input, against which every variant's error is measured.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from lnviz.maths.data import make_activations

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}
EPS = 1e-5


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


def ideal_bytes(numel: int, itemsize: int) -> int:
    """2 · numel · itemsize: every element of x read once and of y written once."""
    return 2 * int(numel) * int(itemsize)


def make_inputs(
    batch: int, features: int, dtype: torch.dtype, device: torch.device, seed: int = 0, eps: float = EPS
) -> Inputs:
    """Seeded x (B, H) with a per-row offset and scale, γ, β and positive running statistics (H,)."""
    if batch < 1 or features < 1:
        raise ValueError(f"batch and features must be >= 1, got ({batch}, {features})")
    # The whole grid from one generator: sizes go to 8192 × 16384, where a stream per row costs seconds and no
    # one compares a resized grid with the one before.
    x = make_activations("heterogeneous samples", batch, features, seed, device, dtype, draw="whole")  # (B, H)
    stats = make_activations("standard normal", 4, features, seed + 1, device, dtype, draw="whole")  # (4, H)
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
    than ``torch.var`` (as :func:`lnviz.maths.norms.layer_norm` uses), whose CPU
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
    batch, features = x.shape
    if features > TRITON_MAX_H:
        raise ValueError(f"triton_layer_norm: H={features} is wider than {TRITON_MAX_H}, one row per program")
    block = triton.next_power_of_2(features)
    x = x.contiguous()
    y = torch.empty_like(x)  # (B, H)
    _layer_norm_kernel[(batch,)](
        x,
        y,
        weight.contiguous(),
        bias.contiguous(),
        x.stride(0),
        y.stride(0),
        features,
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


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype named ``name`` (a key of :data:`DTYPES`); ValueError for any other name."""
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {name!r}; choose one of {list(DTYPES)}")
    return DTYPES[name]
