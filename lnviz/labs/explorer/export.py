"""Downloads of the explorer's view: the grids as CSV or .npy, and a plain PyTorch script.

Every grid here is a matrix of shape (B, H): B samples (rows) by H features
(columns), such as x, LN's output or BN's output. Nothing is reduced; the
numbers are written in float64, exactly, so a download read back gives the very
same tensor. :func:`script` writes the few lines of PyTorch that redraw x from
the seed and apply ``F.layer_norm`` and ``F.batch_norm`` to it, with no lnviz
inside, so anyone can check the app's numbers.
"""

from __future__ import annotations

import io
import math

import numpy as np
import torch
from torch import Tensor

from lnviz.maths import data
from lnviz.views import state


def _matrix(t: Tensor, name: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 2:
        raise ValueError(f"{name}: expected a matrix of shape (B, H), got shape {tuple(t.shape)}")
    return t.detach().to(device="cpu", dtype=torch.float64)  # (B, H); float32 → float64 is exact


def to_csv(t: Tensor) -> bytes:
    """The matrix t of shape (B, H) as CSV text (UTF-8): a header ``f0,...,f{H-1}``, then one row per sample.

    Each value is written as Python's ``repr`` of the float64 number, the
    shortest text that reads back to the same double, so a round trip is
    exact; NaN is ``nan`` and ±∞ is ``inf`` / ``-inf``.
    """
    m = _matrix(t, "to_csv")
    lines = [",".join(f"f{k}" for k in range(m.shape[1]))]
    lines += [",".join(map(float.__repr__, row)) for row in m.tolist()]  # repr: shortest exact text
    return ("\n".join(lines) + "\n").encode()


def to_npy(t: Tensor) -> bytes:
    """The matrix t of shape (B, H) as a NumPy ``.npy`` file of float64, shape (B, H).

    Written with ``np.save(..., allow_pickle=False)`` into memory; read it with
    ``np.load(path, allow_pickle=False)``.
    """
    buf = io.BytesIO()
    np.save(buf, _matrix(t, "to_npy").numpy(), allow_pickle=False)
    return buf.getvalue()


# The stable draw's lines of standard normals (lnviz.maths.data.line), written out in plain PyTorch.
LINE = [
    "def line(name, index, n):",
    '    """The seeded line (seed, name, index) of N(0, 1) values: value k from stream k // BLOCK, so not from n."""',
    "    blocks = []",
    "    for block in range(-(-n // BLOCK)):",
    '        key = hashlib.blake2b(f"{seed}/{name}/{index}/{block}".encode(), digest_size=8).digest()',
    '        g = torch.Generator().manual_seed(int.from_bytes(key, "little"))',
    "        blocks.append(torch.randn(BLOCK, generator=g, {DRAW}))",
    "    return torch.cat(blocks)[:n]  # (n,)",
]


def _z_lines(draw: str) -> list[str]:
    """The script's randomness and its z (B, H), as :func:`lnviz.maths.data.make_activations` draws it."""
    if draw == "whole":
        return [
            "g = torch.Generator().manual_seed(seed)  # the only randomness: a CPU generator",
            f"z = torch.randn(B, H, generator=g, {DRAW})  # (B, H)",
        ]
    return [
        f"BLOCK = {data.BLOCK}  # each sample and each feature draws from streams of its own, so B and H change none",
        "",
        "",
        *(text.replace("{DRAW}", DRAW) for text in LINE),
        "",
        "",
        'z = torch.stack([line("x", i, H) for i in range(B)])  # (B, H): row i is the line ("x", i)',
    ]


def _dist_lines(dist: str, features: int, draw: str = "stable") -> list[str]:
    """The lines after ``z`` that turn it into x, exactly as :func:`lnviz.maths.data.make_activations` does."""
    gen = "generator=g, dtype=torch.float64"
    if draw == "whole":
        per = {
            "feature loc": f"torch.randn(1, H, {gen})",
            "feature scale": f"torch.randn(1, H, {gen})",
            "sample loc": f"torch.randn(B, 1, {gen})",
            "sample scale": f"torch.randn(B, 1, {gen})",
        }
    else:
        per = {name: f'line("{name}", 0, H)[None, :]' for name in ("feature loc", "feature scale")}
        per |= {name: f'line("{name}", 0, B)[:, None]' for name in ("sample loc", "sample scale")}
    if dist == "heterogeneous features":
        return [
            f"loc = 3.0 * {per['feature loc']}  # (1, H): one mean per feature",
            f"scale = torch.exp({per['feature scale']})  # (1, H): one scale per feature",
            "x = loc + scale * z  # (B, H)",
        ]
    if dist == "heterogeneous samples":
        return [
            f"loc = 3.0 * {per['sample loc']}  # (B, 1): one offset per sample",
            f"scale = torch.exp({per['sample scale']})  # (B, 1): one scale per sample",
            "x = loc + scale * z  # (B, H)",
        ]
    if dist == "outlier feature":
        j = data.outlier_feature(features, draw)
        if j >= features:
            return [f"x = z  # (B, H): with one feature there is no feature {j} to be the outlier"]
        return [
            "x = z.clone()  # (B, H)",
            f"x[:, {j}] = {data.OUTLIER_SCALE!r} * (1.0 + z[:, {j}].abs())  # feature {j} is the outlier",
        ]
    if dist == "near-constant row":
        return ["x = z.clone()  # (B, H)", f"x[0] = 0.5 + {data.NEAR_CONSTANT_SCALE!r} * z[0]  # sample 0: σ ≈ 0.001"]
    if dist == "constant row":
        return ["x = z.clone()  # (B, H)", "x[0] = 0.5  # sample 0 is constant: σ = 0"]
    return ["x = z  # (B, H): every entry N(0, 1)"]


def script(
    dist: str,
    batch: int,
    features: int,
    seed: int,
    gain: float,
    bias: float,
    affine: bool,
    eps: float,
    draw: str = "stable",
) -> str:
    """A short, plain PyTorch script (imports torch, and hashlib for the stable draw) that reproduces the
    explorer's view.

    It draws x of shape (B, H) = (batch, features) for the distribution ``dist`` as
    :func:`lnviz.maths.data.make_activations` does with ``draw`` (the same seeded
    generators, the same draws, in float64), sets γ and β (scalars ``gain`` and ``bias`` for every feature,
    or with ``affine`` the seeded per-feature γ = gain·g, β = bias + b of
    :func:`lnviz.maths.data.random_affine`), then computes ``ln = F.layer_norm(...)``
    (one μ, σ² per row, over H) and ``bn = F.batch_norm(..., training=True)``
    (one μ, σ² per column, over B), and prints a few numbers. When B = 1
    ``F.batch_norm`` refuses one value per feature in training mode (BN's
    output would be β, for ε > 0) and ``bn = None``; when ε = 0, ``F.batch_norm`` refuses to run,
    so ``bn`` is the formula itself. The names ``x``, ``ln``, ``bn``,
    ``weight`` and ``bias`` are the script's results.
    """
    _check(dist, batch, features, gain, bias, eps)
    if draw not in state.DRAW.options:
        raise ValueError(f"script: unknown draw {draw!r}; choose one of {list(state.DRAW.options)}")
    gain, bias, eps = float(gain), float(bias), float(eps)
    lines = [
        f'"""LayerNorm vs BatchNorm on "{dist}" activations, as the app shows them, in plain PyTorch."""',
        *(["import hashlib", ""] if draw == "stable" else []),
        "import torch",
        "import torch.nn.functional as F",
        "",
        f"B, H, seed, eps = {int(batch)}, {int(features)}, {int(seed)}, {eps!r}",
        *_z_lines(draw),
        *_dist_lines(dist, features, draw),
        "",
    ]
    lines += _affine_lines(gain, bias, affine, draw)
    lines += ["", "ln = F.layer_norm(x, (H,), weight, bias, eps)  # (B, H): one μ, σ² per sample (row)"]
    lines += _bn_lines(batch, eps)
    lines += ["", 'print("x[0, :4]    ", x[0, :4].tolist())', 'print("LN y[0, :4] ", ln[0, :4].tolist())']
    if batch > 1:
        lines += ['print("BN y[0, :4] ", bn[0, :4].tolist())']
    return "\n".join(lines) + "\n"


DRAW = "dtype=torch.float64"  # every draw of the script, as lnviz.maths.data draws


def _check(dist: str, batch: int, features: int, gain: float, bias: float, eps: float) -> None:
    """Refuse what the script could not reproduce, in words."""
    if dist not in state.DIST.options:
        raise ValueError(f"script: unknown dist {dist!r}; choose one of {list(state.DIST.options)}")
    if batch < 1 or features < 1:
        raise ValueError(f"script: batch and features must be >= 1, got ({batch}, {features})")
    for name, value in (("gain", gain), ("bias", bias), ("eps", eps)):
        if not math.isfinite(float(value)):
            raise ValueError(f"script: {name} must be a finite number, got {value}")
    if float(eps) < 0:
        raise ValueError(f"script: eps must be >= 0, got {eps}")


def _affine_lines(gain: float, bias: float, affine: bool, draw: str = "stable") -> list[str]:
    """The script's γ (``weight``) and β (``bias``): scalars for every feature, or seeded per feature."""
    if affine and draw == "stable":
        return [
            f'weight = {gain!r} * (1.0 + 0.5 * line("gain", 0, H))  # (H,): γ per feature, a line of its own',
            f'bias = {bias!r} + 0.5 * line("bias", 0, H)  # (H,): β per feature',
        ]
    if affine:
        return [
            "ga = torch.Generator().manual_seed(seed + 1)  # γ, β have their own generator: x stays the same",
            f"weight = {gain!r} * (1.0 + 0.5 * torch.randn(H, generator=ga, {DRAW}))  # (H,): γ per feature",
            f"bias = {bias!r} + 0.5 * torch.randn(H, generator=ga, {DRAW})  # (H,): β per feature",
        ]
    return [
        f"weight = torch.full((H,), {gain!r}, {DRAW})  # (H,): γ, the same for every feature",
        f"bias = torch.full((H,), {bias!r}, {DRAW})  # (H,): β, the same for every feature",
    ]


def _bn_lines(batch: int, eps: float) -> list[str]:
    """The script's ``bn``: torch's, the formula where torch refuses ε = 0, or None for one sample."""
    if batch == 1:
        would = "y would be bias" if eps > 0 else "at eps = 0 y would be 0/0"
        return [
            "bn = None  # F.batch_norm refuses one value per feature in training mode (its biased variance is 0, "
            f"so {would})"
        ]
    if eps == 0:
        return [
            '# F.batch_norm refuses eps = 0 in training ("eps must be positive"), so BN is its formula:',
            "bn = (x - x.mean(0)) / x.var(0, unbiased=False).sqrt() * weight + bias  # (B, H): one μ, σ per feature",
        ]
    return ["bn = F.batch_norm(x, None, None, weight, bias, training=True, eps=eps)  # (B, H): one μ, σ² per feature"]
