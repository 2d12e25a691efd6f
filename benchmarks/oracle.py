"""What a load session must see: its settings (a :class:`Plan`), and torch's numbers for them.

Used by :mod:`benchmarks.load` and :mod:`benchmarks.crowd`. A session's x
is ``lnviz.maths.data.make_activations(dist, B, H, seed)`` and its outputs
``F.batch_norm``/``F.layer_norm`` of it times γ, in float64; :func:`check`
sets what the session shows against them, on the same window of the grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import numpy as np
import torch.nn.functional as F

from harness.apptest import stage_grid
from lnviz.maths import data
from lnviz.views import links, state

SEED_EVERY = 5
BATCHES = (8, 16, 24, 32, 48, 64)
FEATURES = (8, 12, 16, 32, 48, 64)
GAIN_STEP = 0.05
EPS = state.EPS.default
# The charts carry float32: a relative error of a few units of its roundoff (6e-8).
RTOL = 1e-6


@dataclass
class Plan:
    """One session's settings: everything its numbers must follow from."""

    index: int
    dist: str
    batch: int
    features: int
    seed: int
    steps: int = 0  # gain = 1 + steps × 0.05

    @property
    def gain(self) -> float:
        return 1.0 + self.steps * GAIN_STEP

    def query(self) -> str:
        """The link's query string for these settings, as the frontend keeps it."""
        values = {
            "dist": self.dist,
            "batch": self.batch,
            "features": self.features,
            "seed": self.seed,
            "v": links.LINK_VERSION,
        }
        if self.steps:
            values["gain"] = round(self.gain, 2)
        return urlencode(values)

    def next_action(self, n: int) -> str:
        """The ``n``-th action, applied to the plan: "gain" (three steps up, three down) or every fifth "seed"."""
        if n % SEED_EVERY == SEED_EVERY - 1:
            self.seed += 1
            return "seed"
        self.steps += 1 if (n // 3) % 2 == 0 else -1
        return "gain"


def plan(index: int) -> Plan:
    presets = list(state.DIST.options)
    return Plan(
        index=index,
        dist=presets[index % len(presets)],
        batch=BATCHES[index % len(BATCHES)],
        features=FEATURES[(index + index // len(BATCHES)) % len(FEATURES)],
        seed=1000 + 37 * index,
    )


def expected(p: Plan) -> dict[str, np.ndarray]:
    """The session's grid and outputs, from its own settings, by torch in float64."""
    x = data.make_activations(p.dist, p.batch, p.features, p.seed)  # (B, H) float64
    ln = F.layer_norm(x, (p.features,), eps=EPS) * p.gain
    bn = F.batch_norm(x, None, None, training=True, eps=EPS) * p.gain
    return {"x": x.numpy(), "LN y": ln.numpy(), "BN y": bn.numpy()}


@dataclass(frozen=True)
class Shown:
    """What a session shows of its numbers: arrays by name ("x", "BN y", "LN y"), each the same window of the grid,
    whose first row and column are ``r0`` and ``c0``."""

    arrays: dict[str, np.ndarray]
    r0: int = 0
    c0: int = 0

    @classmethod
    def from_stage(cls, payload: dict) -> Shown:
        """The stage's data (:func:`lnviz.labs.explorer.stage.payload`): torch's numbers for its window of the grid."""
        arrays = {"x": stage_grid(payload, payload["x"]), "LN y": stage_grid(payload, payload["ln"]["y"])}
        if payload["bn"] is not None:
            arrays["BN y"] = stage_grid(payload, payload["bn"]["y"])
        return cls(arrays, payload["r0"], payload["c0"])


def _close(got: np.ndarray | None, want: np.ndarray) -> bool:
    if got is None:
        return False
    got = np.asarray(got, dtype=np.float64)
    scale = max(float(np.abs(want).max()), 1.0)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=RTOL, atol=RTOL * scale))


def check(shown: Shown, p: Plan) -> list[str]:
    """What the session shows against :func:`expected`, on the same window: what differs."""
    want = expected(p)
    some = next(iter(shown.arrays.values()), np.zeros((0, 0)))
    rows, cols = slice(shown.r0, shown.r0 + some.shape[0]), slice(shown.c0, shown.c0 + some.shape[1])
    problems = []
    if not some.size or not _close(shown.arrays.get("x"), want["x"][rows, cols]):
        problems.append("the grid shown is not this session's x")
    for name in ("BN y", "LN y"):
        if not _close(shown.arrays.get(name), want[name][rows, cols]):
            problems.append(f"{name} does not match this session's x and γ = {p.gain:.2f}")
    return problems
