"""The race itself: every variant trained side by side on the same batches, and what it leaves behind.

Every variant gets the same data, the same initial weights for the layers
they share (one seed) and the same optimizer (Adam); only the normalization
differs. :func:`race` is a generator: it yields a :class:`Race` snapshot
every few steps, so a page can draw curves while the models train. A
finished race's weights give :func:`activations`, the inputs a (rows, H) of
one norm layer, for the explorer. :data:`SUGGESTED` holds the races a page
offers as buttons. Nothing here touches the global RNG or keeps a model
between calls.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from lnviz.labs.training.tasks import TASKS, VARIANTS, Batch, build_model, loss_and_accuracy, make_batch
from lnviz.maths.data import generator
from lnviz.maths.device import timed
from lnviz.text import format_number

EVAL_SAMPLES = 256
EVAL_POINTS = 30  # held-out evaluations per race, besides step 0
# A replay draws a recorded race in over this many seconds, one frame per evaluation step. A race that
# trained faster (300 steps of the spirals take about a second on a laptop) is replayed as soon as it ends:
# drawn live, it would be over before anyone saw it.
REPLAY_SECONDS = 8.0

BN_BATCH_ONE = (
    "BN cannot train at batch 1 in this model, where each feature has one value per sample. With one sample, "
    "each feature's batch mean is the value itself, so x − μ = 0 and the batch variance is 0: every normalized "
    "value would be 0/√ε = 0, so y = β whatever the input, and no signal "
    "would pass. PyTorch refuses instead (“Expected more than 1 value per channel when training”). "
    "LN and RMSNorm normalize each sample over its own features, so they train, with the noise of one-sample "
    "gradients."
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
        "BN cannot train at all. LN and RMSNorm normalize each sample on its own, so they train, with the noise of "
        "one-sample gradients. Whether that makes them train better than no norm at all, the summary after the race "
        "says.",
        {"task": "spirals", "batch": 1, "lr": 0.01},
    ),
}


def too_fast_to_watch(result: Race) -> bool:
    """Whether a race that just ran, complete, took less than :data:`REPLAY_SECONDS`: the page replays it."""
    return result.complete and result.elapsed < REPLAY_SECONDS


def replay_pause(result: Race) -> float:
    """Seconds between two frames of a replay, which draws ``result``'s evaluation steps in
    :data:`REPLAY_SECONDS`."""
    return REPLAY_SECONDS / max(1, len(result.eval_steps) - 1)


def eval_every(steps: int) -> int:
    """How many steps apart a race of ``steps`` steps scores the held-out set: about EVAL_POINTS times."""
    return max(1, steps // EVAL_POINTS)


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

    @property
    def failed_at(self) -> int | None:
        """The step at which the variant failed (every step before it was recorded), or None."""
        return len(self.train_loss) + 1 if self.failed else None

    def at(self, step: int) -> Curve:
        """The curve as it stood after ``step`` steps: its records up to that step, without weights.

        A failure after ``step`` had not happened yet. Weights are kept only for
        the last step, so ``state`` is empty.
        """
        kept = bisect.bisect_right(self.eval_steps, step)  # evaluations at steps <= step
        failed = self.failed if self.failed_at is not None and self.failed_at <= step else None
        return replace(
            self,
            eval_steps=self.eval_steps[:kept],
            loss=self.loss[:kept],
            accuracy=self.accuracy[:kept],
            train_loss=self.train_loss[:step],  # one per step, from step 1
            step_seconds=self.step_seconds[:step],
            state={},
            failed=failed,
        )


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

    @property
    def eval_every(self) -> int:
        """The held-out set is scored every this many steps (and at the last step)."""
        return eval_every(self.steps)

    @property
    def eval_steps(self) -> tuple[int, ...]:
        """Every step at which some variant was scored on the held-out set, in order (0 first)."""
        return tuple(sorted(set().union(*(c.eval_steps for c in self.curves))))

    def at(self, step: int) -> Race:
        """The race as it stood after ``step`` of its ``done`` steps: what a live snapshot then held.

        For a replay: every curve cut at ``step`` (:meth:`Curve.at`), with no
        weights, and ``elapsed`` unknown (NaN). ``race.at(race.done)`` is the race.
        """
        if step == self.done:
            return self
        if not (isinstance(step, int) and 0 <= step < self.done):
            raise ValueError(f"the race has steps 0 to {self.done}, not {step!r}")
        return replace(self, done=step, elapsed=math.nan, curves=tuple(c.at(step) for c in self.curves))

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
    tick: Callable[[], object] | None = None,
) -> Iterator[Race]:
    """Train the four variants side by side; yield a :class:`Race` every ``every`` steps and at the end.

    Step k draws one batch of ``batch`` samples, shape (B, ...), from the
    training stream (seed + 1) and gives it to every variant in turn; each
    variant's step is timed on ``device``. The held-out set (seed + 2) is
    scored at step 0 and about EVAL_POINTS times more. A variant that fails
    (BN at batch 1, or a loss that is no longer finite) stops with a message in
    ``Curve.failed`` while the others go on. Stopping early is simply not
    asking for the next snapshot. ``tick``, if given, is called before every
    step and every first evaluation: what it raises stops the race there (a shared server's limit on
    heavy work, which must not wait for the next snapshot).
    """
    check(task, batch, lr, steps)
    device = torch.device(device)
    runners = [_Runner(task, v, seed, lr, device) for v in VARIANTS]
    train_stream = generator(seed + 1)
    held_out = make_batch(task, EVAL_SAMPLES, generator(seed + 2)).to(device)
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
        if tick is not None:
            tick()
        r.evaluate(held_out, 0)
    for number in range(1, steps + 1):
        if tick is not None:
            tick()
        data = make_batch(task, batch, train_stream).to(device)
        for r in runners:
            if r.failed is None:
                r.step(data, number)
                if r.failed is None and (number % eval_every(steps) == 0 or number == steps):
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
        raise ValueError(
            f"the {result.task} model has {count} normalized layer{'' if count == 1 else 's'}; layer {layer} does not exist"
        )
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


def describe(result: Race) -> str:
    """A one-line summary of the settings, e.g. for the explorer's source line."""
    return f"{result.task}, batch {result.batch}, lr {format_number(result.lr)}, seed {result.seed}, step {result.done}"
