"""Seeded activation grids x of shape (B, H): B samples by H features.

Each distribution (``dist``) shows which differences each norm removes. Randomness comes from a
``torch.Generator`` seeded by ``seed`` on the CPU, never from the global RNG, so
the same (dist, B, H, seed) gives the same numbers on every machine and in
every concurrent session; the tensor is moved to the device afterwards.
"""

from __future__ import annotations

import torch
from torch import Tensor

DISTS: dict[str, str] = {
    "heterogeneous features": "Each feature has its own mean and scale, the same for every sample: "
    "BN removes these differences; LN, which normalizes across the features, keeps them.",
    "heterogeneous samples": "Each sample has its own offset and scale across all its features: "
    "LN removes these differences; BN, which normalizes across the samples, keeps them.",
    "standard normal": "Every entry drawn from N(0, 1): the true mean and variance are 0 and 1, so x̂ differs "
    "from x only by each norm's estimation error, which grows as B (BN) or H (LN) shrinks.",
    "outlier feature": "One feature is 25·(1 + |z|), at least 25 and about 45 on average, while the others are "
    "standard normal (mean 0, σ = 1). With up to a few dozen features it dominates every sample's LN statistics.",
    "near-constant row": "Sample 0 is almost constant (σ ≈ 0.001, so σ² ≈ 1e-6, below the default ε = 1e-5): "
    "ε decides its output.",
    "constant row": "Sample 0 is exactly constant (σ = 0): with ε = 0 its LN output is 0/0.",
}

OUTLIER_SCALE = 25.0
NEAR_CONSTANT_SCALE = 1e-3


def outlier_feature(features: int) -> int:
    """The index of the outlier feature in the "outlier feature" distribution."""
    return features // 3


def generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed``; the only source of randomness in lnviz."""
    return torch.Generator(device="cpu").manual_seed(int(seed))


def make_activations(
    dist: str,
    batch: int,
    features: int,
    seed: int,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float64,
) -> Tensor:
    """x of shape (B, H) = (batch, features) for the distribution ``dist``, seeded by ``seed``.

    The numbers are drawn in float64 on the CPU and then cast and moved, so a
    seed means the same grid on any device.
    """
    if dist not in DISTS:
        raise ValueError(f"unknown dist {dist!r}; choose one of {list(DISTS)}")
    if batch < 1 or features < 1:
        raise ValueError(f"batch and features must be >= 1, got ({batch}, {features})")
    g = generator(seed)
    z = torch.randn(batch, features, generator=g, dtype=torch.float64)  # (B, H)
    if dist == "heterogeneous features":
        loc = 3.0 * torch.randn(1, features, generator=g, dtype=torch.float64)  # (1, H)
        scale = torch.exp(torch.randn(1, features, generator=g, dtype=torch.float64))  # (1, H)
        x = loc + scale * z
    elif dist == "heterogeneous samples":
        loc = 3.0 * torch.randn(batch, 1, generator=g, dtype=torch.float64)  # (B, 1)
        scale = torch.exp(torch.randn(batch, 1, generator=g, dtype=torch.float64))  # (B, 1)
        x = loc + scale * z
    elif dist == "outlier feature":
        x = z.clone()
        j = outlier_feature(features)
        x[:, j] = OUTLIER_SCALE * (1.0 + z[:, j].abs())
    elif dist == "near-constant row":
        x = z.clone()
        x[0] = 0.5 + NEAR_CONSTANT_SCALE * z[0]
    elif dist == "constant row":
        x = z.clone()
        x[0] = 0.5
    else:
        x = z
    return x.to(device=device, dtype=dtype)


def affine(
    features: int, seed: int, gain: float, bias: float, affine: bool, like: Tensor | None = None
) -> tuple[Tensor | float, Tensor | float]:
    """γ and β as the explorer and the walkthrough apply them.

    The scalars ``gain`` and ``bias``; with ``affine`` (per-feature γ, β), the
    seeded γ = gain·g and β = bias + b of :func:`random_affine`, shape (H,), in
    ``like``'s dtype and device when given.
    """
    if not affine:
        return gain, bias
    g, b = random_affine(features, seed)  # (H,), (H,)
    gains, biases = gain * g, bias + b  # (H,), (H,)
    return (gains, biases) if like is None else (gains.to(like), biases.to(like))


def random_affine(features: int, seed: int) -> tuple[Tensor, Tensor]:
    """Per-feature γ ~ 1 + 0.5·N(0,1) and β ~ 0.5·N(0,1), shape (H,), float64, seeded.

    Drawn from a generator of its own (seed + 1), so turning the per-feature
    affine on does not change x.
    """
    g = generator(int(seed) + 1)
    gain = 1.0 + 0.5 * torch.randn(features, generator=g, dtype=torch.float64)  # (H,)
    bias = 0.5 * torch.randn(features, generator=g, dtype=torch.float64)  # (H,)
    return gain, bias
