"""The state table: every control that defines a view, declared once.

A view is a page plus the values of its controls. Each control is a
:class:`~lnviz.param.Param` whose ``key`` is at once the widget key, the URL
query parameter, the lnviz argument name and the name in figure labels:
``batch``, ``features``, ``seed``, ``gain``, ``bias``, ``eps``, ...

Each key is declared exactly once, below. Where a page needs the same control
with another range, default or label (BN needs two samples, a cube draws one
marker per element), the page's table at the end of this module says so with
``.but(...)``; the key and its meaning stay the same. A control that older
links named differently lists the old names in ``old_keys`` there, and those
links keep working.
"""

from __future__ import annotations

from typing import Any

from lnviz import bench, coupling, family, numerics, sequences, training, walkthrough
from lnviz.data import DISTS
from lnviz.param import Param

# The largest integer a seed may be: what torch.Generator.manual_seed and a
# JavaScript number (a slider in the browser) both hold exactly.
MAX_SEED = 2**31 - 1


def eps_options() -> tuple[float, ...]:
    """ε choices: exactly 0, then 1, 2, 5 per decade from 1e-12 to 1 (log scale)."""
    values = [0.0]
    for exponent in range(-12, 0):
        for mantissa in (1, 2, 5):
            values.append(float(f"{mantissa}e{exponent}"))
    values.append(1.0)
    return tuple(values)


def lr_options() -> tuple[float, ...]:
    """Learning rates: 1, 2, 5 per decade from 1e-4 to 1 (log scale)."""
    values = [float(f"{m}e{e}") for e in range(-4, 0) for m in (1, 2, 5)]
    return (*values, 1.0)


# The data: a grid x of B samples by H features, drawn from a seeded distribution.
# Small by default, so the stage's cells are large enough to read: 8 samples of 12 features.
BATCH = Param("batch", "Batch size B", "int", 8, lo=1, hi=1024, help="Rows: samples in the mini-batch.")
FEATURES = Param("features", "Features H", "int", 12, lo=2, hi=1024, help="Columns: features of each sample.")
SEED = Param("seed", "Seed", "int", 0, lo=0, hi=MAX_SEED, help="Same seed, same numbers, on any machine.")
DIST = Param(
    "dist", "Input", "choice", "heterogeneous features", options=tuple(DISTS), help="What kind of activations x holds."
)

# The normalization: y = γ (x − μ) / √(σ² + ε) + β.
GAIN = Param("gain", "Gain γ", "float", 1.0, lo=-5.0, hi=5.0, step=0.05, help="Scales every normalized value.")
BIAS = Param("bias", "Bias β", "float", 0.0, lo=-5.0, hi=5.0, step=0.05, help="Shifts every normalized value.")
AFFINE = Param(
    "affine", "Per-feature γ, β", "bool", False, help="Use a seeded random γ and β for each feature instead of scalars."
)
EPS = Param(
    "eps", "Epsilon ε", "choice", 1e-5, options=eps_options(), help="Added to σ² inside the square root: √(σ² + ε)."
)

# One chosen element: its sample (row) and its feature (column). Pages clamp them to their grid.
SAMPLE = Param("sample", "Sample i", "int", 0, lo=0, hi=1023, help="The chosen sample (row): the one LN normalizes.")
FEATURE = Param(
    "feature", "Feature j", "int", 0, lo=0, hi=1023, help="The chosen feature (column): the one BN normalizes."
)

# How the explorer shows it, and where torch runs.
STAGE = Param(
    "stage",
    "Outputs shown",
    "choice",
    "y",
    options=("y", "x_hat"),
    help="y: after γ and β. x_hat: the normalized values before them, with mean 0 and variance σ²/(σ² + ε) per row "
    "(LN) or column (BN): about 1 when ε ≪ σ².",
)
VIEW = Param(
    "view",
    "Details",
    "choice",
    "cell",
    options=("cell", "charts", "distributions", "numbers", "downloads"),
    help="What the details below the stage show, one at a time. cell: the chosen cell's formulas, step by step. "
    "charts: x with each norm's μ and σ, and the outputs. distributions: histograms before and after. numbers: "
    "the grid as tables. downloads: x, the outputs and a script that reproduces the view.",
)
DEVICE = Param(
    "device",
    "Device",
    "choice",
    "auto",
    options=("auto", "cuda", "mps", "cpu"),
    help="Where torch computes. auto: CUDA, then MPS, else CPU.",
)
STEP = Param(
    "step",
    "Step",
    "int",
    1,
    lo=1,
    hi=walkthrough.N_STEPS,
    help="Steps 1–6 follow LayerNorm along row i, 7–12 BatchNorm down column j.",
)

# Batch coupling: one sample is changed.
PERTURB = Param(
    "perturb", "Perturbation", "choice", "outlier", options=tuple(coupling.PERTURBATIONS), help="How row i is changed."
)
AMOUNT = Param(
    "amount",
    "Amount a",
    "float",
    5.0,
    lo=-10.0,
    hi=10.0,
    step=0.5,
    help="The outlier's scale, the scale factor, or the shift, by perturbation.",
)

# Training: batches stream through a model (train vs eval, the training race).
STEPS = Param("steps", "Training steps", "int", 50, lo=1, hi=3000, help="How many batches the model is trained on.")
MOMENTUM = Param(
    "momentum",
    "Momentum m",
    "float",
    0.1,
    lo=0.01,
    hi=1.0,
    step=0.01,
    help="Weight of each new batch in the running statistics (PyTorch's default is 0.1).",
)
SHIFT = Param(
    "shift",
    "Test shift",
    "float",
    2.0,
    lo=-5.0,
    hi=5.0,
    step=0.1,
    help="The test batch's mean moves by this many of each feature's standard deviations.",
)
TASK = Param(
    "task", "Task", "choice", "spirals", options=tuple(training.TASKS), help="Which synthetic problem to train on."
)
LR = Param("lr", "Learning rate", "choice", 0.01, options=lr_options(), help="Adam's step size, the same for all.")
VARIANT = Param("variant", "Model", "choice", "LN", options=training.VARIANTS, help="Whose activations to send.")
LAYER = Param(
    "layer",
    "Normalized layer",
    "int",
    1,
    lo=1,
    hi=training.SPIRAL_LAYERS,
    help="Which norm layer's input to send (1 = first).",
)
DEPTH = Param("depth", "Depth (blocks)", "int", 12, lo=1, hi=32, help="How many residual blocks are stacked.")

# Sequences: a padded batch of B sequences of up to T tokens.
LENGTH = Param(
    "length",
    "Time steps T",
    "int",
    24,
    lo=2,
    hi=sequences.MAX_LENGTH,
    help="The longest training sequence; shorter ones are padded up to T.",
)
SPREAD = Param(
    "spread",
    "Length spread",
    "float",
    0.75,
    lo=0.0,
    hi=1.0,
    step=0.05,
    help="0: every sequence has T steps. 1: lengths anywhere from 1 to T.",
)
PAD = Param(
    "pad", "Pad value", "float", 0.0, lo=-10.0, hi=10.0, step=0.5, help="What fills the steps after a sequence ends."
)
EXTRA = Param(
    "extra",
    "Extra test steps",
    "int",
    12,
    lo=1,
    hi=sequences.MAX_EXTRA,
    help="How many steps the test sequence runs past the longest training sequence.",
)

# The norm family: a batch of feature maps (N, C, H·W).
CHANNELS = Param("channels", "Channels C", "int", 6, lo=1, hi=16, help="Feature maps per sample.")
POSITIONS = Param(
    "positions", "Positions H·W", "int", 8, lo=2, hi=16, help="Spatial positions per feature map, flattened."
)
GROUPS = Param("groups", "Groups G", "int", 2, lo=1, hi=16, help="GroupNorm's groups; G must divide C.")
NORM = Param("norm", "Norm", "choice", "GroupNorm", options=family.NORMS, help="Whose pooled set to highlight.")
CHANNEL = Param("channel", "Channel c", "int", 2, lo=0, hi=15, help="The picked element's channel.")
POSITION = Param("position", "Position", "int", 3, lo=0, hi=15, help="The picked element's position in H·W.")

# The kernel benchmark.
DTYPE = Param(
    "dtype", "dtype", "choice", "float32", options=bench.SWEEP_DTYPES, help="The precision the kernels run in."
)
THREADS = Param(
    "threads",
    "CPU threads",
    "int",
    1,
    lo=1,
    hi=bench.MAX_THREADS,
    help="torch.set_num_threads for the measurement only; the previous value is restored afterwards.",
)
COMPILE = Param(
    "compile",
    "Sweep torch.compile too",
    "bool",
    False,
    help="Compiling takes seconds per size on a CPU; it is never part of the per-rerun measurement.",
)
OFFSET = Param(
    "offset",
    "Mean offset",
    "choice",
    1e3,
    options=numerics.OFFSETS,
    help="Added to every x (spread stays 1): the larger it is, the more E[x²] − E[x]² cancels.",
)


class Controls:
    """The controls of one page, by key: ``COUPLING.batch`` is the batch control as that page draws it."""

    def __init__(self, *params: Param) -> None:
        self._params = {p.key: p for p in params}
        if len(self._params) != len(params):
            raise ValueError("a page lists the same control twice")

    def __getattr__(self, key: str) -> Param:
        try:
            return self.__dict__["_params"][key]
        except KeyError:
            raise AttributeError(key) from None

    def __iter__(self):
        return iter(self._params.values())

    def __len__(self) -> int:
        return len(self._params)

    def __getitem__(self, key: str) -> Param:
        return self._params[key]

    def keys(self) -> list[str]:
        return list(self._params)


def defaults(controls: Controls) -> dict[str, Any]:
    """Every control's default value, by key."""
    return {p.key: p.default for p in controls}


# Each page's controls. A `.but(...)` is the same control with this page's range, default or label.
EXPLORER = Controls(
    BATCH,
    FEATURES,
    SEED,
    DIST,
    GAIN,
    BIAS,
    AFFINE,
    EPS,
    SAMPLE.but(old_keys=("row",)),
    FEATURE.but(old_keys=("col",)),
    STAGE,
    VIEW,
    DEVICE,
)
# The explorer's controls, so a link carries over between the two pages, and the step. Its own γ and β
# make the last step visible (with γ = 1, β = 0, y would equal x̂).
WALKTHROUGH = Controls(
    *(p.but(default=1.5) if p is GAIN else p.but(default=0.5) if p is BIAS else p for p in EXPLORER), STEP
)
# Coupling needs two samples (PyTorch refuses BN on one); the heatmaps draw every cell (2 × B × H), so the grid stays small.
COUPLING = Controls(
    BATCH.but(
        default=16,
        lo=2,
        hi=64,
        help="Rows: samples in the mini-batch. At least 2: with one, BN's output is β, and PyTorch refuses it in "
        "training mode.",
    ),
    FEATURES.but(default=16, hi=32),
    SEED,
    SAMPLE.but(label="Perturbed sample i", hi=63, help="The row that is changed."),
    PERTURB,
    AMOUNT,
)
TRAIN_EVAL = Controls(
    BATCH.but(
        default=16,
        lo=2,
        hi=256,
        help="Samples per batch. At least 2: the running variance takes the unbiased B/(B − 1) · σ²_B.",
    ),
    FEATURES.but(default=8, hi=64, help="Features of each sample."),
    STEPS.but(hi=300, help="How many batches stream through BN."),
    MOMENTUM,
    SHIFT,
    SEED,
)
INVARIANCE = Controls(EPS, SEED)
# The (B, T) grid stays light.
SEQUENCES = Controls(
    BATCH.but(default=8, lo=2, hi=64, help="Sequences in the training batch."),
    LENGTH.but(old_keys=("steps",)),
    FEATURES.but(default=8, hi=64, help="Features of each token."),
    SPREAD,
    PAD,
    EXTRA,
    SEED,
    FEATURE.but(hi=63, old_keys=("col",), help="The feature whose per-step statistics are plotted."),
)
# The cube draws one marker per element.
FAMILY = Controls(
    BATCH.but(label="Batch N", default=4, lo=1, hi=8, help="Samples in the batch."),
    CHANNELS,
    POSITIONS,
    GROUPS,
    SEED,
    NORM,
    SAMPLE.but(label="Sample n", default=1, hi=7, old_keys=("n",), help="The picked element's sample."),
    CHANNEL.but(old_keys=("c",)),
    POSITION.but(old_keys=("pos",)),
)
TRAINING = Controls(
    TASK,
    BATCH.but(
        label="Batch size",
        default=32,
        hi=512,
        help="Samples per training step. At 1 each feature's batch holds one value, BN's output would be β, and "
        "PyTorch refuses to train. At 2 each BN-normalized value is about ±1: only which of the two samples is "
        "larger survives.",
    ),
    LR,
    STEPS.but(label="Steps", default=300, lo=10, step=10, help="Optimizer steps per variant."),
    SEED,
    VARIANT,
    LAYER,
    DEPTH,
    DEVICE,
)
BENCH = Controls(
    BATCH.but(
        label="Rows B",
        default=128,
        hi=8192,
        old_keys=("rows",),
        help="Samples (tokens): one LN row each. The per-rerun case keeps x and y under 1 MiB; the sweep sizes its own.",
    ),
    FEATURES.but(
        label="Hidden size H",
        default=1024,
        hi=16384,
        old_keys=("hidden",),
        help="Features per row. Try 1023 against 1024: a row that is not a multiple of 4 takes a slower path.",
    ),
    DTYPE,
    SEED,
    DEVICE,
    THREADS,
    COMPILE,
    OFFSET,
)

PAGES: dict[str, Controls] = {
    "explorer": EXPLORER,
    "walkthrough": WALKTHROUGH,
    "coupling": COUPLING,
    "train_eval": TRAIN_EVAL,
    "invariance": INVARIANCE,
    "sequences": SEQUENCES,
    "family": FAMILY,
    "training": TRAINING,
    "bench": BENCH,
}
