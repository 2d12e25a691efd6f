"""The race's tasks and models: seeded batches, the norm layer, an MLP and a recurrent network.

Two tasks, generated in code from a seed: ``spirals`` (an MLP classifies two
interleaved spirals, x (B, 2)) and ``adding`` (a recurrent network adds the
two marked numbers of a sequence of variable length, x (B, T, 2), with the
norm inside the recurrence, as in Ba et al. §3.1). Every model normalizes its
summed inputs a, shape (B, H), with one of :data:`VARIANTS`, computed by
:mod:`lnviz.maths.norms`. Nothing here touches the global RNG.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lnviz.maths import norms
from lnviz.maths.data import generator
from lnviz.views.state import LAYER, TASK, VARIANT

VARIANTS = VARIANT.options  # ("none", "BN", "LN", "RMSNorm"): the Model control's, in the race's order

TASKS: dict[str, str] = dict(TASK.meanings)  # what each task is, as the state table says

SPIRAL_HIDDEN = 64
SPIRAL_LAYERS = LAYER.hi  # the spirals MLP's norm layers: as many as the Normalized layer control offers
SPIRAL_NOISE = 0.05
ADDING_HIDDEN = 32
SHORTEST, LONGEST = 5, 15
ADDING_TOLERANCE = 0.1  # an adding answer counts as right within ±0.1 of the sum


@dataclass(frozen=True)
class Batch:
    """One batch of a task: inputs ``x``, targets ``y``, and sequence ``lengths`` (adding only).

    spirals: x (B, 2), y (B,) class 0 or 1. adding: x (B, T, 2) zero-padded
    after each length, y (B,) the sum, lengths (B,) in [SHORTEST, LONGEST].
    """

    x: Tensor
    y: Tensor
    lengths: Tensor | None = None

    def to(self, device: torch.device | str) -> Batch:
        lengths = None if self.lengths is None else self.lengths.to(device)
        return Batch(self.x.to(device), self.y.to(device), lengths)


def spirals(n: int, g: torch.Generator) -> Batch:
    """Two interleaved spirals: n points in the plane, x (n, 2), labels y (n,).

    Angle t ∈ [0, 3π) with radius t / 3π; class 1 is class 0 turned by π.
    Gaussian noise of σ = SPIRAL_NOISE is added to each coordinate.
    """
    y = torch.randint(0, 2, (n,), generator=g)  # (n,)
    t = 3 * math.pi * torch.rand(n, generator=g).sqrt()  # (n,): sqrt spreads points evenly along the arm
    angle = t + math.pi * y  # (n,)
    r = t / (3 * math.pi)  # (n,)
    x = torch.stack([r * angle.cos(), r * angle.sin()], dim=1)  # (n, 2)
    x = x + SPIRAL_NOISE * torch.randn(n, 2, generator=g)  # (n, 2)
    return Batch(x.float(), y)


def adding(n: int, g: torch.Generator) -> Batch:
    """The adding problem with variable lengths: x (n, T, 2), y (n,), lengths (n,).

    Each sequence has a length L in [SHORTEST, LONGEST] (T = LONGEST, zeros
    after L). Channel 0 holds numbers drawn from U(0, 1); channel 1 marks one
    position in the first half and one in the second half of the sequence.
    The target is the sum of the two marked numbers.
    """
    lengths = torch.randint(SHORTEST, LONGEST + 1, (n,), generator=g)  # (n,)
    values = torch.rand(n, LONGEST, generator=g)  # (n, T)
    half = lengths // 2  # (n,)
    first = (torch.rand(n, generator=g) * half).long()  # (n,) in [0, L/2)
    second = half + (torch.rand(n, generator=g) * (lengths - half)).long()  # (n,) in [L/2, L)
    rows = torch.arange(n)
    alive = torch.arange(LONGEST).unsqueeze(0) < lengths.unsqueeze(1)  # (n, T)
    values = values * alive
    markers = torch.zeros(n, LONGEST)  # (n, T)
    markers[rows, first] = 1.0
    markers[rows, second] = 1.0
    x = torch.stack([values, markers], dim=2)  # (n, T, 2)
    y = values[rows, first] + values[rows, second]  # (n,)
    return Batch(x, y, lengths)


def make_batch(task: str, n: int, g: torch.Generator) -> Batch:
    """n fresh samples of ``task``, drawn from ``g``."""
    if task == "spirals":
        return spirals(n, g)
    if task == "adding":
        return adding(n, g)
    raise ValueError(f"unknown task {task!r}; choose one of {list(TASKS)}")


class Norm(nn.Module):
    """One normalization of the summed inputs a, shape (B, H) → (B, H), by lnviz.maths.norms.

    "none" is the identity. "LN" and "RMSNorm" reduce over the H features of
    each row (γ, β of shape (H,); RMSNorm has no β). "BN" reduces over the B
    rows of each feature while training, and updates running statistics as
    ``nn.BatchNorm1d`` does (momentum 0.1, running variance unbiased, n/(n-1));
    in eval mode it uses them. ε = 1e-5, inside the square root.
    """

    def __init__(self, kind: str, features: int, eps: float = 1e-5, momentum: float = 0.1) -> None:
        super().__init__()
        if kind not in VARIANTS:
            raise ValueError(f"unknown norm {kind!r}; choose one of {list(VARIANTS)}")
        self.kind, self.eps, self.momentum = kind, eps, momentum
        if kind != "none":
            self.weight = nn.Parameter(torch.ones(features))  # γ (H,)
        if kind in ("BN", "LN"):
            self.bias = nn.Parameter(torch.zeros(features))  # β (H,)
        if kind == "BN":
            self.register_buffer("running_mean", torch.zeros(features))  # (H,)
            self.register_buffer("running_var", torch.ones(features))  # (H,)

    def reset(self) -> None:
        """γ = 1, β = 0, and for BN running mean 0 and running variance 1."""
        with torch.no_grad():
            for name, value in (("weight", 1.0), ("bias", 0.0), ("running_mean", 0.0), ("running_var", 1.0)):
                if hasattr(self, name):
                    getattr(self, name).fill_(value)

    def forward(self, a: Tensor) -> Tensor:
        if self.kind == "none":
            return a
        if self.kind == "LN":
            return norms.layer_norm(a, self.weight, self.bias, self.eps).y
        if self.kind == "RMSNorm":
            return norms.rms_norm(a, self.weight, self.eps).y
        if not self.training:
            return norms.batch_norm(a, self.weight, self.bias, self.eps, False, self.running_mean, self.running_var).y
        r = norms.batch_norm(a, self.weight, self.bias, self.eps)  # raises ValueError at batch 1
        with torch.no_grad():
            unbiased = r.var.view(-1) * r.count / (r.count - 1)  # (H,)
            self.running_mean.lerp_(r.mean.view(-1), self.momentum)
            self.running_var.lerp_(unbiased, self.momentum)
        return r.y


class MLP(nn.Module):
    """x (B, 2) → logits (B, 2): [Linear → Norm → ReLU] × layers → Linear."""

    def __init__(self, kind: str, hidden: int = SPIRAL_HIDDEN, layers: int = SPIRAL_LAYERS) -> None:
        super().__init__()
        widths = [2] + [hidden] * layers
        self.linears = nn.ModuleList(nn.Linear(i, o) for i, o in itertools.pairwise(widths))
        self.norms = nn.ModuleList(Norm(kind, hidden) for _ in range(layers))
        self.head = nn.Linear(hidden, 2)

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        h = x  # (B, 2)
        for linear, norm in zip(self.linears, self.norms, strict=True):
            h = torch.relu(norm(linear(h)))  # (B, H)
        return self.head(h)  # (B, 2)


class RNN(nn.Module):
    """x (B, T, 2), lengths (B,) → prediction (B,), with the norm inside the recurrence.

    h_t = tanh(Norm(a_t)), a_t = W_x x_t + W_h h_{t-1} + b: the summed inputs
    a_t of shape (B, H) are normalized at every step with the same γ, β, as in
    Ba et al. §3.1. A sequence's state stops changing after its length; the
    prediction reads h at each sequence's last step. BN pools each step's batch,
    padded sequences included, and keeps one set of running statistics.
    """

    def __init__(self, kind: str, hidden: int = ADDING_HIDDEN) -> None:
        super().__init__()
        self.hidden = hidden
        self.inp = nn.Linear(2, hidden)
        self.rec = nn.Linear(hidden, hidden, bias=False)
        self.norms = nn.ModuleList([Norm(kind, hidden)])
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        batch, steps, _ = x.shape
        u = self.inp(x)  # (B, T, H): the input's share of every a_t
        h = x.new_zeros(batch, self.hidden)  # (B, H)
        for t in range(steps):
            a = u[:, t] + self.rec(h)  # (B, H)
            alive = (lengths > t).unsqueeze(1)  # (B, 1)
            h = torch.where(alive, torch.tanh(self.norms[0](a)), h)  # (B, H)
        return self.head(h).squeeze(1)  # (B,)


def build_model(task: str, variant: str, seed: int) -> nn.Module:
    """A fresh model for ``task`` with ``variant``'s norm, initial weights drawn from ``seed``.

    The modules are made on the meta device, so building draws nothing from
    the global RNG. Then every nn.Linear gets PyTorch's default bounds,
    U(±1/√fan_in) for weight and bias, drawn in module order from one
    generator, and the norms start at γ = 1, β = 0 (BN: running mean 0,
    variance 1). So all four variants share their initial linear weights.
    """
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose one of {list(TASKS)}")
    with torch.device("meta"):
        model: nn.Module = MLP(variant) if task == "spirals" else RNN(variant)
    model.to_empty(device="cpu")
    g = generator(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                bound = 1.0 / math.sqrt(module.in_features)
                nn.init.uniform_(module.weight, -bound, bound, generator=g)
                if module.bias is not None:
                    nn.init.uniform_(module.bias, -bound, bound, generator=g)
            elif isinstance(module, Norm):
                module.reset()
    return model


def loss_and_accuracy(task: str, model: nn.Module, batch: Batch) -> tuple[Tensor, Tensor]:
    """(loss, accuracy) of ``model`` on ``batch``, both 0-d tensors.

    spirals: cross-entropy, and the share of points put in the right class.
    adding: mean squared error, and the share of sums within ±ADDING_TOLERANCE.
    """
    out = model(batch.x, batch.lengths)
    if task == "spirals":
        loss = F.cross_entropy(out, batch.y)
        accuracy = (out.argmax(dim=1) == batch.y).float().mean()
    else:
        loss = F.mse_loss(out, batch.y)
        accuracy = ((out - batch.y).abs() < ADDING_TOLERANCE).float().mean()
    return loss, accuracy


def layers(task: str) -> int:
    """How many normalized layers ``task``'s model has."""
    return SPIRAL_LAYERS if task == "spirals" else 1
