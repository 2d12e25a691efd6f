"""The training race: one model with no norm, BN, LN or RMSNorm, trained side by side.

Ba, Kiros and Hinton (2016) claim that layer normalization helps recurrent
networks converge faster, and that it does not care about the batch size,
where batch normalization's statistics turn into noise. The race lets a user
watch that happen. Every variant gets the same data, the same initial weights
for the layers they share (one seed) and the same optimizer (Adam); only the
normalization differs:

=========  =============================================  ==================
variant    normalizes the summed inputs a, shape (B, H)   one (μ, σ²) per
=========  =============================================  ==================
none       not at all                                     -
BN         over the B samples of each feature             feature (dim 0)
LN         over the H features of each sample             sample (dim 1)
RMSNorm    like LN, with μ fixed at 0                     sample (dim 1)
=========  =============================================  ==================

Two tasks, generated in code from a seed: ``spirals`` (an MLP classifies two
interleaved spirals) and ``adding`` (a recurrent network adds the two marked
numbers of a sequence of variable length, with the norm inside the recurrence,
as in the paper). :func:`race` is a generator: it yields a :class:`Race`
snapshot every few steps, so a page can draw curves while the models train.
Nothing here touches the global RNG or keeps a model between calls.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import plotly.graph_objects as go
import torch
import torch.nn.functional as F
from plotly.subplots import make_subplots
from torch import Tensor, nn

from lnviz import norms
from lnviz.data import generator
from lnviz.device import timed
from lnviz.param import format_number
from lnviz.theme import ROLES

VARIANTS = ("none", "BN", "LN", "RMSNorm")

TASKS: dict[str, str] = {
    "spirals": "An MLP (2 → 64 → 64 → 2, ReLU, a norm before each ReLU) sorts points of two interleaved spirals.",
    "adding": "A recurrent network (32 tanh units, the norm inside the recurrence) reads 5 to 15 pairs "
    "(number, marker) and outputs the sum of the two marked numbers: the adding problem.",
}

SPIRAL_HIDDEN = 64
SPIRAL_LAYERS = 2
SPIRAL_NOISE = 0.05
ADDING_HIDDEN = 32
SHORTEST, LONGEST = 5, 15
ADDING_TOLERANCE = 0.1  # an adding answer counts as right within ±0.1 of the sum
EVAL_SAMPLES = 256
EVAL_POINTS = 30  # held-out evaluations per race, besides step 0

BN_BATCH_ONE = (
    "BN cannot train at batch 1. With one sample, each feature's batch mean is the value itself, so x − μ = 0 "
    "and the batch variance is 0: every normalized value would be 0/√ε = 0, whatever the input, and no signal "
    "would pass. PyTorch refuses instead (“Expected more than 1 value per channel when training”). "
    "LN and RMSNorm normalize each sample over its own features, so they train as usual."
)


# Races that put one claim of the paper to the test: (button label, what to look for, settings).
SUGGESTED: dict[str, tuple[str, str, dict]] = {
    "rnn": (
        "LN in a recurrent net",
        "The adding problem at a small learning rate: watch how fast each held-out loss falls.",
        {"task": "adding", "batch": 32, "lr": 0.002},
    ),
    "small": (
        "Batch of 2",
        "BN trains on the statistics of two samples: compare its held-out curve with its training curve, and with LN.",
        {"task": "spirals", "batch": 2, "lr": 0.01},
    ),
    "one": (
        "Batch of 1",
        "BN cannot train at all; LN and RMSNorm do not notice.",
        {"task": "spirals", "batch": 1, "lr": 0.01},
    ),
}


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
    """One normalization of the summed inputs a, shape (B, H) → (B, H), by lnviz.norms.

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


@dataclass(frozen=True)
class Curve:
    """One variant's race so far.

    ``loss`` and ``accuracy`` are measured on a fixed held-out set of
    EVAL_SAMPLES samples, in eval mode (BN with its running statistics), at
    the steps ``eval_steps`` (0 = the initial weights). ``train_loss`` holds
    the loss of every training batch, in training mode (BN with the batch's
    own statistics). ``state`` is the model's weights after the last step, on
    the CPU. ``failed`` says in words why the variant stopped early, if it did.
    """

    variant: str
    eval_steps: tuple[int, ...]
    loss: tuple[float, ...]
    accuracy: tuple[float, ...]
    train_loss: tuple[float, ...]
    step_seconds: tuple[float, ...]
    state: dict[str, Tensor]
    failed: str | None = None

    @property
    def ms_per_step(self) -> float:
        """Median wall time of one training step on the device, in milliseconds (NaN before any)."""
        if not self.step_seconds:
            return math.nan
        return 1000.0 * float(torch.tensor(self.step_seconds, dtype=torch.float64).median())


@dataclass(frozen=True)
class Race:
    """A snapshot of the race after ``done`` of ``steps`` steps, one :class:`Curve` per variant."""

    task: str
    batch: int
    lr: float
    steps: int
    seed: int
    device: str
    done: int
    elapsed: float  # seconds since the race started
    curves: tuple[Curve, ...]

    @property
    def complete(self) -> bool:
        return self.done == self.steps

    @property
    def steps_per_second(self) -> float:
        """Race steps per second (each one step of every variant still running)."""
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    def curve(self, variant: str) -> Curve:
        for c in self.curves:
            if c.variant == variant:
                return c
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")


def check(task: str, batch: int, lr: float, steps: int) -> None:
    """Raise ValueError in words if the race's settings cannot run."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose one of {list(TASKS)}")
    if not (isinstance(batch, int) and batch >= 1):
        raise ValueError(f"batch must be a whole number >= 1, got {batch!r}")
    if not (isinstance(steps, int) and steps >= 1):
        raise ValueError(f"steps must be a whole number >= 1, got {steps!r}")
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"the learning rate must be a finite number > 0, got {lr!r}")


class _Runner:
    """One variant's model, optimizer and records while the race runs."""

    def __init__(self, task: str, variant: str, seed: int, lr: float, device: torch.device) -> None:
        self.task, self.variant, self.device = task, variant, device
        self.model = build_model(task, variant, seed).to(device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.eval_steps: list[int] = []
        self.loss: list[float] = []
        self.accuracy: list[float] = []
        self.train_loss: list[float] = []
        self.step_seconds: list[float] = []
        self.failed: str | None = None

    def step(self, batch: Batch, number: int) -> None:
        def update() -> Tensor:
            self.optimizer.zero_grad(set_to_none=True)
            loss, _ = loss_and_accuracy(self.task, self.model, batch)
            loss.backward()
            self.optimizer.step()
            return loss.detach()

        try:
            loss, seconds = timed(update, self.device)
        except ValueError as error:
            if self.variant == "BN" and "more than 1 value per channel" in str(error):
                self.failed = BN_BATCH_ONE
                return
            raise
        value = float(loss)
        if not math.isfinite(value):
            self.failed = f"{self.variant} diverged: its training loss became {value} at step {number}. Try a smaller learning rate."
            return
        self.train_loss.append(value)
        self.step_seconds.append(seconds)

    def evaluate(self, held_out: Batch, number: int) -> None:
        self.model.eval()
        with torch.no_grad():
            loss, accuracy = loss_and_accuracy(self.task, self.model, held_out)
        self.model.train()
        self.eval_steps.append(number)
        self.loss.append(float(loss))
        self.accuracy.append(float(accuracy))

    def curve(self) -> Curve:
        state = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
        return Curve(
            variant=self.variant,
            eval_steps=tuple(self.eval_steps),
            loss=tuple(self.loss),
            accuracy=tuple(self.accuracy),
            train_loss=tuple(self.train_loss),
            step_seconds=tuple(self.step_seconds),
            state=state,
            failed=self.failed,
        )


def race(
    task: str,
    batch: int,
    lr: float,
    steps: int,
    seed: int,
    device: torch.device | str = "cpu",
    every: int = 10,
) -> Iterator[Race]:
    """Train the four variants side by side; yield a :class:`Race` every ``every`` steps and at the end.

    Step k draws one batch of ``batch`` samples, shape (B, ...), from the
    training stream (seed + 1) and gives it to every variant in turn; each
    variant's step is timed on ``device``. The held-out set (seed + 2) is
    scored at step 0 and about EVAL_POINTS times more. A variant that fails
    (BN at batch 1, or a loss that is no longer finite) stops with a message in
    ``Curve.failed`` while the others go on. Stopping early is simply not
    asking for the next snapshot.
    """
    check(task, batch, lr, steps)
    device = torch.device(device)
    runners = [_Runner(task, v, seed, lr, device) for v in VARIANTS]
    train_stream = generator(seed + 1)
    held_out = make_batch(task, EVAL_SAMPLES, generator(seed + 2)).to(device)
    eval_every = max(1, steps // EVAL_POINTS)
    every = max(1, int(every))
    start = time.perf_counter()

    def snapshot(done: int) -> Race:
        return Race(
            task=task,
            batch=batch,
            lr=lr,
            steps=steps,
            seed=seed,
            device=str(device),
            done=done,
            elapsed=time.perf_counter() - start,
            curves=tuple(r.curve() for r in runners),
        )

    for r in runners:
        r.evaluate(held_out, 0)
    for number in range(1, steps + 1):
        data = make_batch(task, batch, train_stream).to(device)
        for r in runners:
            if r.failed is None:
                r.step(data, number)
                if r.failed is None and (number % eval_every == 0 or number == steps):
                    r.evaluate(held_out, number)
        if number % every == 0 or number == steps:
            yield snapshot(number)


def run(task: str, batch: int, lr: float, steps: int, seed: int, device: torch.device | str = "cpu") -> Race:
    """The finished race: :func:`race` run to its end."""
    return list(race(task, batch, lr, steps, seed, device, every=steps))[-1]


def activations(result: Race, variant: str, layer: int, rows: int = 256) -> Tensor:
    """x of shape (rows, H), float64 on the CPU: the input to norm layer ``layer`` of a trained model.

    Rebuilds ``variant``'s model from ``result`` (its weights after the last
    step), runs it in eval mode on ``rows`` fresh samples (seed + 3) and keeps
    the summed inputs a that enter the chosen norm, before it normalizes them.
    For the recurrent task that is a_t at each sequence's last step. ``layer``
    counts from 1. Raises ValueError for a variant that failed or a layer the
    model does not have.
    """
    curve = result.curve(variant)
    if curve.failed:
        raise ValueError(curve.failed)
    if not 1 <= rows <= 1024:
        raise ValueError(f"rows must be in 1..1024, got {rows}")
    model = build_model(result.task, variant, result.seed)
    model.load_state_dict(curve.state)
    model.eval()
    count = len(model.norms)
    if not 1 <= layer <= count:
        raise ValueError(f"the {result.task} model has {count} normalized layer(s); layer {layer} does not exist")
    seen: list[Tensor] = []
    hook = model.norms[layer - 1].register_forward_pre_hook(lambda _m, args: seen.append(args[0].detach()))
    data = make_batch(result.task, rows, generator(result.seed + 3))
    with torch.no_grad():
        model(data.x, data.lengths)
    hook.remove()
    if data.lengths is None:
        return seen[0].double()  # (rows, H)
    steps = torch.stack(seen)  # (T, rows, H): a_t at every step
    return steps[data.lengths - 1, torch.arange(rows)].double()  # (rows, H)


def layers(task: str) -> int:
    """How many normalized layers ``task``'s model has."""
    return SPIRAL_LAYERS if task == "spirals" else 1


def _downsample(values: tuple[float, ...], points: int) -> tuple[list[float], list[float]]:
    """(steps, means): ``values`` (one per step, from step 1) averaged in at most ``points`` equal blocks."""
    n = len(values)
    if n == 0:
        return [], []
    size = max(1, math.ceil(n / points))
    xs, ys = [], []
    for start in range(0, n, size):
        block = values[start : start + size]
        xs.append(start + (len(block) + 1) / 2)
        ys.append(sum(block) / len(block))
    return xs, ys


def fig_race(result: Race, train_points: int = 60) -> go.Figure:
    """Loss (left) and accuracy (right) against the step, one colour per variant.

    Solid lines: the held-out set in eval mode. Dotted, faint: the training
    batches' loss, averaged into at most ``train_points`` points. A failed
    variant is named in the legend.
    """
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("Loss (solid: held-out · dotted: training batches)", "Held-out accuracy"),
        horizontal_spacing=0.08,
    )
    for c in result.curves:
        color = ROLES[c.variant]
        name = c.variant if not c.failed else f"{c.variant} (failed)"
        fig.add_trace(
            go.Scatter(
                x=list(c.eval_steps),
                y=list(c.loss),
                name=name,
                legendgroup=c.variant,
                mode="lines+markers",
                marker=dict(size=4),
                line=dict(color=color, width=2),
            ),
            row=1,
            col=1,
        )
        xs, ys = _downsample(c.train_loss, train_points)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                name=f"{c.variant} · training",
                legendgroup=c.variant,
                showlegend=False,
                mode="lines",
                line=dict(color=color, width=1, dash="dot"),
                opacity=0.6,
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=list(c.eval_steps),
                y=list(c.accuracy),
                name=name,
                legendgroup=c.variant,
                showlegend=False,
                mode="lines+markers",
                marker=dict(size=4),
                line=dict(color=color, width=2),
            ),
            row=1,
            col=2,
        )
    fig.update_xaxes(title_text="step", range=[0, result.steps])
    fig.update_yaxes(title_text="loss", type="log", dtick="D2", row=1, col=1)
    fig.update_yaxes(title_text="accuracy", range=[0, 1.02], row=1, col=2)
    fig.update_layout(
        height=380, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.2), uirevision="race"
    )
    return fig


def fig_step_time(result: Race) -> go.Figure:
    """Median wall time of one training step per variant, in ms, on the race's device."""
    variants = [c.variant for c in result.curves if c.step_seconds]
    times = [c.ms_per_step for c in result.curves if c.step_seconds]
    fig = go.Figure(
        go.Bar(
            x=times,
            y=variants,
            orientation="h",
            marker_color=[ROLES[v] for v in variants],
            text=[f"{t:.2f} ms" for t in times],
            textposition="auto",
        )
    )
    fig.update_layout(
        title=f"Wall time per step on {result.device} (median)",
        xaxis_title="ms per step",
        height=220,
        margin=dict(l=10, r=10, t=40, b=10),
    )
    fig.update_yaxes(autorange="reversed")
    return fig


def describe(result: Race) -> str:
    """A one-line summary of the settings, e.g. for the explorer's source line."""
    return f"{result.task}, batch {result.batch}, lr {format_number(result.lr)}, seed {result.seed}, step {result.done}"
