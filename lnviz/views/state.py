"""The state table: every control that defines a view, declared once.

It imports no lab and no torch, so a lab, the page registry (:mod:`lnviz.views.pages`), the stage
and the links can all import it. A control's options and range are written here, once, with what
each option is where a page says it (:meth:`~lnviz.views.param.Param.meaning`); the labs that
implement them (the inputs, the perturbations, the tasks, the norms, the dtypes, ...) take them
from here, and ``tests/test_state.py`` runs each one in its lab.

A view is a page plus the values of its controls. Each control is a
:class:`~lnviz.views.param.Param` whose ``key`` is at once the widget key, the URL
query parameter, the lnviz argument name and the name in figure labels:
``batch``, ``features``, ``seed``, ``gain``, ``bias``, ``eps``, ...

Each key is declared exactly once, below. Where a page needs the same control with another
range, default or label (BN needs two samples, a cube draws one marker per element), its entry in
the page registry says so with ``.but(...)``; the key and its meaning stay the same. A control
that older links named differently lists the old names in ``old_keys``, and those links keep working.
"""

from __future__ import annotations

import os

from lnviz.views.param import Param
from lnviz.views.scales import eps_options, lr_options, size_options

# The largest integer a seed may be: what torch.Generator.manual_seed and a
# JavaScript number (a slider in the browser) both hold exactly.
MAX_SEED = 2**31 - 1


# The data: a grid x of B samples by H features, drawn from a seeded distribution.
# Small by default, so the stage's cells are large enough to read: 8 samples of 12 features.
BATCH = Param(
    "batch",
    "Batch size B",
    "int",
    8,
    lo=1,
    hi=1024,
    options=size_options(),
    help="Rows: samples in the mini-batch.",
    widget="select_slider",
)
FEATURES = Param(
    "features",
    "Features H",
    "int",
    12,
    lo=2,
    hi=1024,
    options=size_options(),
    help="Columns: features of each sample.",
    widget="select_slider",
)
SEED = Param(
    "seed", "Seed", "int", 0, lo=0, hi=MAX_SEED, help="Same seed, same numbers, on any machine.", widget="number"
)
DIST = Param(
    "dist",
    "Input",
    "choice",
    "heterogeneous features",
    options={  # drawn by lnviz.maths.data.make_activations
        "heterogeneous features": "Each feature has its own mean and scale, the same for every sample: "
        "BN removes these differences; LN, which normalizes across the features, keeps them.",
        "heterogeneous samples": "Each sample has its own offset and scale across all its features: "
        "LN removes these differences; BN, which normalizes across the samples, keeps them.",
        "standard normal": "Every entry drawn from N(0, 1): the true mean and variance are 0 and 1, so x̂ differs "
        "from x only by each norm's estimation error, which grows as B (BN) or H (LN) shrinks.",
        "outlier feature": "Feature 1 is 25·(1 + |z|), at least 25 and about 45 on average, while the others are "
        "standard normal (mean 0, σ = 1). With up to a few dozen features it dominates every sample's LN statistics.",
        "near-constant row": "Sample 0 is almost constant (σ ≈ 0.001, so σ² ≈ 1e-6, below the default ε = 1e-5): "
        "ε decides its output.",
        "constant row": "Sample 0 is exactly constant (σ = 0): with ε = 0 its LN output is 0/0.",
    },
    help="What kind of activations x holds.",
    widget="select",
)

DRAW = Param(
    "draw",
    "Draw",
    "choice",
    "stable",
    options=("stable", "whole"),
    help="How x is drawn from the seed. stable: each sample and each feature from its own seeded stream, so "
    "a smaller B or H keeps the rest as they were. whole: the whole grid at once, as lnviz drew before "
    "(links from then keep it), so every value changes with B and H.",
    widget="radio",
)

# The normalization: y = γ (x − μ) / √(σ² + ε) + β.
GAIN = Param("gain", "Gain γ", "float", 1.0, lo=-5.0, hi=5.0, step=0.05, help="Scales every normalized value.")
BIAS = Param("bias", "Bias β", "float", 0.0, lo=-5.0, hi=5.0, step=0.05, help="Shifts every normalized value.")
AFFINE = Param(
    "affine", "Per-feature γ, β", "bool", False, help="Use a seeded random γ and β for each feature instead of scalars."
)
EPS = Param(
    "eps",
    "Epsilon ε",
    "choice",
    1e-5,
    options=eps_options(),
    help="Added to σ² inside the square root: √(σ² + ε).",
    widget="select_slider",
)

# One chosen element: its sample (row) and its feature (column). Pages clamp them to their grid.
SAMPLE = Param(
    "sample",
    "Sample i",
    "int",
    0,
    lo=0,
    hi=1023,
    help="The chosen sample (row): the one LN normalizes.",
    widget="number",
)
FEATURE = Param(
    "feature",
    "Feature j",
    "int",
    0,
    lo=0,
    hi=1023,
    help="The chosen feature (column): the one BN normalizes.",
    widget="number",
)

# How the explorer shows it, and where torch runs.
OUTPUT = Param(
    "output",
    "Outputs shown",
    "choice",
    "y",
    options=("y", "x_hat"),
    help="y: after γ and β. x_hat: the normalized values before them, with mean 0 and variance σ²/(σ² + ε) per row "
    "(LN) or column (BN): about 1 when ε ≪ σ².",
    widget="radio",
    old_keys=("stage",),  # its name until the stage (the picture of x and both outputs) took the word
    old_until=3,  # renamed while links carried v: a link naming it is not therefore of version 1
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
    widget="segmented",
)
DEVICE = Param(
    "device",
    "Device",
    "choice",
    "auto",
    options=("auto", "cuda", "mps", "cpu"),
    help="Where torch computes. auto: CUDA, then MPS, else CPU.",
    widget="select",
)
STEP = Param(
    "step",
    "Step",
    "int",
    1,
    lo=1,
    hi=12,
    help="Steps 1–6 follow LayerNorm along row i, 7–12 BatchNorm down column j.",
)

# Batch coupling: one sample is changed.
PERTURB = Param(
    "perturb",
    "Perturbation",
    "choice",
    "outlier",
    options={  # made by lnviz.labs.coupling.perturb
        "outlier": "row i is replaced by a·u, a fresh standard-normal row u scaled by a",
        "scale": "row i is multiplied by a",
        "shift": "a is added to every feature of row i",
    },
    help="How row i is changed.",
    widget="radio",
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
    "task",
    "Task",
    "choice",
    "spirals",
    options={  # lnviz.labs.training.tasks
        "spirals": "An MLP (2 → 64 → 64 → 2, ReLU, a norm before each ReLU) sorts points of two interleaved spirals.",
        "adding": "A recurrent network (32 tanh units, the norm inside the recurrence) reads 5 to 15 pairs "
        "(number, marker) and outputs the sum of the two marked numbers: the adding problem. Its BN normalizes "
        "each step's summed inputs over the batch at that step, finished sequences included, and keeps one set "
        "of running statistics for all 15 steps, updated at every step. Held-out evaluation uses that one set at "
        "every step. This is the simple baseline, not per-step recurrent BN (Cooijmans et al. 2016).",
    },
    help="Which synthetic problem to train on.",
    widget="radio",
)
LR = Param(
    "lr",
    "Learning rate",
    "choice",
    0.01,
    options=lr_options(),
    help="Adam's step size, the same for all.",
    widget="select_slider",
)
VARIANT = Param(
    "variant",
    "Model",
    "choice",
    "LN",
    options=("none", "BN", "LN", "RMSNorm"),
    help="Whose activations to send.",
    widget="select",
)
LAYER = Param(
    "layer",
    "Normalized layer",
    "int",
    1,
    lo=1,
    hi=2,
    help="Which norm layer's input to send (1 = first).",
    widget="number",
)
DEPTH = Param("depth", "Depth (blocks)", "int", 12, lo=1, hi=32, help="How many residual blocks are stacked.")

# Sequences: a padded batch of B sequences of up to T tokens.
LENGTH = Param(
    "length",
    "Time steps T",
    "int",
    24,
    lo=2,
    hi=64,
    options=size_options(),
    help="The longest training sequence; shorter ones are padded up to T.",
    widget="select_slider",
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
    hi=64,
    options=size_options(),
    help="How many steps the test sequence runs past the longest training sequence.",
    widget="select_slider",
)

# The norm family: a batch of feature maps (N, C, H·W).
CHANNELS = Param("channels", "Channels C", "int", 6, lo=1, hi=16, help="Feature maps per sample.")
POSITIONS = Param(
    "positions", "Positions H·W", "int", 8, lo=2, hi=16, help="Spatial positions per feature map, flattened."
)
GROUPS = Param("groups", "Groups G", "int", 2, lo=1, hi=16, help="GroupNorm's groups; G must divide C.")
NORM = Param(
    "norm",
    "Norm",
    "choice",
    "GroupNorm",
    options=("BN", "LN", "InstanceNorm", "GroupNorm", "RMSNorm"),
    help="Whose pooled set to highlight.",
    widget="radio",
)
CHANNEL = Param("channel", "Channel c", "int", 2, lo=0, hi=15, help="The picked element's channel.", widget="number")
POSITION = Param(
    "position", "Position", "int", 3, lo=0, hi=15, help="The picked element's position in H·W.", widget="number"
)

# Inside a transformer: the LayerNorms of a BERT-architecture encoder (lnviz.labs.transformer).
TEXT = Param(
    "text",
    "Sentences",
    "text",
    "The cat sat on the mat because it was tired.",
    hi=2000,
    help="One sentence per line. The first 8 sentences are kept, and of each its first 64 tokens ([CLS] and [SEP] "
    "included); the page says what it cut.",
)
SITE = Param(
    "site",
    "LayerNorm",
    "choice",
    "ffn",
    options=("embeddings", "attention", "ffn"),
    help="embeddings: the one after the embeddings are summed. attention: after layer l's self-attention and its "
    "residual add. ffn: after layer l's feed-forward block and its residual add.",
    widget="radio",
)
ORDER = Param(
    "order",
    "Features shown",
    "choice",
    "largest",
    options=("largest", "index"),
    help="largest: the features sorted by their largest |x| over the tokens, largest first. index: in their order.",
    widget="radio",
)
START = Param(
    "start",
    "From feature",
    "int",
    0,
    lo=0,
    hi=383,
    help="The window's first feature: its rank by largest |x|, or its index, as Features shown says.",
    widget="number",
)

# The kernel benchmark.
DTYPE = Param(
    "dtype",
    "dtype",
    "choice",
    "float32",
    options=("float32", "float16", "bfloat16"),
    help="The precision the kernels run in.",
    widget="radio",
)
THREADS = Param(
    "threads",
    "CPU threads",
    "int",
    1,
    lo=1,
    hi=max(2, os.cpu_count() or 1),
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
    options=(0.0, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6),
    help="Added to every x (spread stays 1): the larger it is, the more E[x²] − E[x]² cancels.",
    widget="select_slider",
)
