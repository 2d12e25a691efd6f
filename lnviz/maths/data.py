"""Seeded activation grids x of shape (B, H): B samples by H features.

Each distribution (``dist``) shows which differences each norm removes. Randomness comes from a
``torch.Generator`` seeded from ``seed`` on the CPU, never from the global RNG, so
the same (dist, B, H, seed) gives the same numbers on every machine and in
every concurrent session; the tensor is moved to the device afterwards.

The distributions and the draws, and what each is in words, are the state table's options
(:data:`lnviz.views.state.DIST` and ``DRAW``); this module draws each of them.

**A sample stays itself** (the "stable" draw): x[i, j] depends only on the seed, ``dist`` and
(i, j), never on B or H, so a smaller batch keeps rows 0…B−1 bit for bit and fewer features keep columns
0…H−1. Each row of z, and each per-sample or per-feature parameter, is a :func:`line`: a sequence of
standard normals of its own, drawn in blocks of :data:`BLOCK` from a generator seeded by
:func:`stream_seed`. ``torch.randn(n)`` is not a prefix of ``torch.randn(m)`` for n < m (torch draws
in vectorised chunks), so every block is drawn whole and cut.

The "whole" draw is lnviz's before this (links of version 3 and earlier keep it, :mod:`lnviz.views.links`):
one ``torch.randn(B, H)`` from one generator and the parameters after it, so every value depends on B and H.
It is faster at sizes far beyond the stage's (the kernel benchmark's 8192 × 16384), where no one resizes.
"""

from __future__ import annotations

import hashlib
import math

import torch
from torch import Tensor

OUTLIER_SCALE = 25.0
NEAR_CONSTANT_SCALE = 1e-3
BLOCK = 1024  # values per seeded stream of a line; a longer line continues in the next stream
OUTLIER = 1  # the stable draw's outlier feature: a fixed column, so that fewer features keep the others


def outlier_feature(features: int, draw: str = "stable") -> int:
    """The index of the outlier feature in the "outlier feature" distribution, for a grid of H = ``features``.

    Feature 1 in the stable draw (at H = 1 there is no outlier; the app's H is at least 2); H // 3, which
    moves with H, in the whole draw.
    """
    return OUTLIER if draw == "stable" else features // 3


def generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed``; the only source of randomness in lnviz."""
    return torch.Generator(device="cpu").manual_seed(int(seed))


def stream_seed(seed: int, name: str, index: int, block: int = 0) -> int:
    """The seed of block ``block`` of line ``index`` of stream ``name``: the first 8 bytes of
    BLAKE2b("{seed}/{name}/{index}/{block}"), little-endian, an integer in [0, 2⁶⁴).

    A hash rather than ``seed + index``, so that no two (seed, name, index, block) share a generator
    (seed 1's row 0 is not seed 0's row 1). Stable across Python and torch versions: it is the
    standard library's BLAKE2b.
    """
    text = f"{int(seed)}/{name}/{int(index)}/{int(block)}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


def line(seed: int, name: str, index: int, n: int) -> Tensor:
    """The first ``n`` values of the standard normal line (``seed``, ``name``, ``index``), shape (n,), float64.

    Value k is value k % BLOCK of ``torch.randn(BLOCK)`` from a generator seeded with
    :func:`stream_seed` (seed, name, index, k // BLOCK): it depends on k, never on n.
    """
    g = torch.Generator(device="cpu")
    blocks = [
        torch.randn(BLOCK, generator=g.manual_seed(stream_seed(seed, name, index, k)), dtype=torch.float64)
        for k in range(math.ceil(n / BLOCK))
    ]
    return torch.cat(blocks)[:n] if blocks else torch.zeros(0, dtype=torch.float64)  # (n,)


def _normals(draw: str, seed: int) -> tuple:
    """The draw's three sources of standard normals: z (B, H), a per-sample column (B, 1), a per-feature row (1, H).

    They take (B, H), (name, B) and (name, H). In the whole draw all three come, in the order they are called,
    from one generator.
    """
    if draw not in ("stable", "whole"):
        raise ValueError(f"unknown draw {draw!r}; choose stable or whole")
    if draw == "stable":
        return (
            lambda b, h: torch.stack([line(seed, "x", i, h) for i in range(b)]),  # row i: line ("x", i)
            lambda name, b: line(seed, name, 0, b)[:, None],
            lambda name, h: line(seed, name, 0, h)[None, :],
        )
    g = generator(seed)
    return (
        lambda b, h: torch.randn(b, h, generator=g, dtype=torch.float64),
        lambda name, b: torch.randn(b, 1, generator=g, dtype=torch.float64),
        lambda name, h: torch.randn(1, h, generator=g, dtype=torch.float64),
    )


def make_activations(
    dist: str,
    batch: int,
    features: int,
    seed: int,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float64,
    draw: str = "stable",
) -> Tensor:
    """x of shape (B, H) = (batch, features) for the distribution ``dist``, seeded by ``seed``.

    The numbers are drawn in float64 on the CPU and then cast and moved, so a
    seed means the same grid on any device. ``draw`` is "stable" (x[i, j]
    depends on seed, dist and (i, j) only; see the module) or "whole" (the old draw, one generator).
    """
    if batch < 1 or features < 1:
        raise ValueError(f"batch and features must be >= 1, got ({batch}, {features})")
    grid, per_sample, per_feature = _normals(draw, seed)
    z = grid(batch, features)  # (B, H)
    if dist == "heterogeneous features":
        loc = 3.0 * per_feature("feature loc", features)  # (1, H)
        scale = torch.exp(per_feature("feature scale", features))  # (1, H)
        x = loc + scale * z
    elif dist == "heterogeneous samples":
        loc = 3.0 * per_sample("sample loc", batch)  # (B, 1)
        scale = torch.exp(per_sample("sample scale", batch))  # (B, 1)
        x = loc + scale * z
    elif dist == "outlier feature":
        x = z.clone()
        j = outlier_feature(features, draw)
        if j < features:
            x[:, j] = OUTLIER_SCALE * (1.0 + z[:, j].abs())
    elif dist == "near-constant row":
        x = z.clone()
        x[0] = 0.5 + NEAR_CONSTANT_SCALE * z[0]
    elif dist == "constant row":
        x = z.clone()
        x[0] = 0.5
    elif dist == "standard normal":
        x = z
    else:
        raise ValueError(f"unknown dist {dist!r}; the Input control lists them (lnviz.views.state.DIST)")
    return x.to(device=device, dtype=dtype)


def random_affine(features: int, seed: int, draw: str = "stable") -> tuple[Tensor, Tensor]:
    """Per-feature γ ~ 1 + 0.5·N(0,1) and β ~ 0.5·N(0,1), shape (H,), float64, seeded.

    Drawn apart from x, so turning the per-feature affine on does not change x: in the stable draw from
    the lines "gain" and "bias" (feature j's γ and β do not depend on H), in the whole draw from one
    generator of its own (seed + 1).
    """
    if draw == "stable":
        return 1.0 + 0.5 * line(seed, "gain", 0, features), 0.5 * line(seed, "bias", 0, features)  # (H,), (H,)
    g = generator(int(seed) + 1)
    gain = 1.0 + 0.5 * torch.randn(features, generator=g, dtype=torch.float64)  # (H,)
    bias = 0.5 * torch.randn(features, generator=g, dtype=torch.float64)  # (H,)
    return gain, bias
