"""The page registry: every page of lnviz, declared once.

An entry names the page's file, its title, icon, section of the navigation,
URL path and controls. ``router.py`` builds the navigation from it, the page kit
(:mod:`ui.kit.page`) finds a page's controls in it, and tests and benchmarks list
the pages from it. A page's controls are controls of the state table
(:mod:`lnviz.views.state`); a ``.but(...)`` is the same control with this page's
range, default, label or widget.

Like the state table it imports no torch: the router reads it before any page
has loaded torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from lnviz.views.param import Controls
from lnviz.views.state import (
    AFFINE,
    AMOUNT,
    BATCH,
    BIAS,
    CHANNEL,
    CHANNELS,
    COMPILE,
    DEPTH,
    DEVICE,
    DIST,
    DRAW,
    DTYPE,
    EPS,
    EXTRA,
    FEATURE,
    FEATURES,
    GAIN,
    GROUPS,
    LAYER,
    LENGTH,
    LR,
    MOMENTUM,
    NORM,
    OFFSET,
    ORDER,
    OUTPUT,
    PAD,
    PERTURB,
    POSITION,
    POSITIONS,
    SAMPLE,
    SEED,
    SHIFT,
    SITE,
    SPREAD,
    START,
    STEP,
    STEPS,
    TASK,
    TEXT,
    THREADS,
    VARIANT,
    VIEW,
)

# Each page's controls. A `.but(...)` is the same control with this page's range, default or label.
EXPLORER = Controls(
    BATCH,
    FEATURES,
    SEED,
    DRAW,
    DIST,
    GAIN,
    BIAS,
    AFFINE,
    EPS,
    SAMPLE.but(old_keys=("row",)),
    FEATURE.but(old_keys=("col",)),
    OUTPUT,
    VIEW,
    DEVICE,
)
# The explorer's data, normalization, chosen cell and device, so a link carries over between the two pages,
# and the step; not the explorer's details (view, output), which the walkthrough does not draw. Its own γ and β
# make the last step visible (with γ = 1, β = 0, y would equal x̂).
WALKTHROUGH = Controls(
    *(
        p.but(default=1.5) if p is GAIN else p.but(default=0.5) if p is BIAS else p
        for p in EXPLORER
        if p.key not in (VIEW.key, OUTPUT.key)
    ),
    STEP,
)
# Coupling needs two samples (PyTorch refuses BN on one); the heatmaps draw every cell (2 × B × H), so the grid stays small.
COUPLING = Controls(
    BATCH.but(
        default=16,
        lo=2,
        hi=64,
        help="Rows: samples in the mini-batch. At least 2: with one, BN's output is β (for ε > 0), and PyTorch refuses "
        "it in training mode.",
    ),
    FEATURES.but(default=16, hi=32),
    SEED,
    DRAW,
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
    FEATURE.but(hi=63, old_keys=("col",), widget="slider", help="The feature whose per-step statistics are plotted."),
)
# The cube draws one marker per element.
FAMILY = Controls(
    BATCH.but(label="Batch N", default=4, lo=1, hi=8, help="Samples in the batch."),
    CHANNELS,
    POSITIONS,
    GROUPS,
    SEED,
    DRAW,
    NORM,
    SAMPLE.but(label="Sample n", default=1, hi=7, old_keys=("n",), help="The picked element's sample."),
    CHANNEL.but(old_keys=("c",)),
    POSITION.but(old_keys=("pos",)),
)
# A BERT-architecture encoder, all-MiniLM-L6-v2: 6 layers, H = 384 (lnviz.labs.transformer).
TRANSFORMER = Controls(
    TEXT,
    LAYER.but(
        label="Layer l",
        default=0,
        lo=0,
        hi=5,
        help="The encoder layer, 0 to 5 (the embeddings' LayerNorm comes before layer 0).",
    ),
    SITE,
    OUTPUT.but(label="Outputs show"),
    ORDER,
    START,
    DEVICE,
)
TRAINING = Controls(
    TASK,
    BATCH.but(
        label="Batch size",
        widget="number",
        default=32,
        hi=512,
        help="Samples per training step. At 1 each feature's batch holds one value, BN's output would be β (ε > 0), and "
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
        widget="number",
        default=128,
        hi=8192,
        old_keys=("rows",),
        help="Samples (tokens): one LN row each. The per-rerun case keeps x and y under 1 MiB; the sweep sizes its own.",
    ),
    FEATURES.but(
        label="Hidden size H",
        widget="number",
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


@dataclass(frozen=True)
class PageEntry:
    """One page: ``pages/{name}.py``, shown as ``title`` under ``section``, at ``/{url_path}``.

    The default page is served at ``/``; its ``url_path`` only names it, and
    ``aliases`` are further paths that open the same file (hidden from the
    navigation).
    """

    name: str
    title: str
    icon: str
    section: str
    url_path: str
    controls: Controls
    default: bool = False
    aliases: tuple[str, ...] = ()
    heading: str = ""  # the title at the top of the page, where it says more than the navigation's

    def __post_init__(self) -> None:
        if not self.heading:
            object.__setattr__(self, "heading", self.title)

    @property
    def file(self) -> str:
        """The page's script, relative to the repository's root."""
        return f"pages/{self.name}.py"

    @property
    def paths(self) -> tuple[str, ...]:
        """Every URL path that opens the page, without the leading slash: "" for the default page."""
        return ("" if self.default else self.url_path, *self.aliases)


PAGES: tuple[PageEntry, ...] = (
    # The explorer is served at / and also at /explorer (a hidden second entry for the same file), so a link
    # to /explorer opens it. Streamlit's default page needs a url_path of its own ("home"): it names it only.
    PageEntry(
        "explorer", "LayerNorm vs BatchNorm", ":material/grid_on:", "Explore", "home", EXPLORER, True, ("explorer",)
    ),
    PageEntry("walkthrough", "Walkthrough", ":material/stairs:", "Explore", "walkthrough", WALKTHROUGH),
    PageEntry("coupling", "Batch coupling", ":material/link:", "Labs", "coupling", COUPLING),
    PageEntry("train_eval", "Train vs eval", ":material/sync_alt:", "Labs", "train_eval", TRAIN_EVAL),
    PageEntry("invariance", "Invariance table", ":material/balance:", "Labs", "invariance", INVARIANCE),
    PageEntry(
        "sequences",
        "Sequences",
        ":material/timeline:",
        "Labs",
        "sequences",
        SEQUENCES,
        heading="Sequences: why LN suits recurrent models",
    ),
    PageEntry(
        "family",
        "The norm family",
        ":material/view_in_ar:",
        "Labs",
        "family",
        FAMILY,
        heading="The norm family on one tensor",
    ),
    PageEntry(
        "transformer",
        "Inside a transformer",
        ":material/psychology:",
        "Labs",
        "transformer",
        TRANSFORMER,
        heading="Inside a transformer's LayerNorms",
    ),
    PageEntry(
        "class",
        "Class poll",
        ":material/how_to_vote:",
        "Teach",
        "class",
        Controls(),
        heading="Class poll: predict, then see torch's answer",
    ),
    PageEntry("training", "Training race", ":material/sports_score:", "Experiments", "training", TRAINING),
    PageEntry("bench", "Kernel benchmark", ":material/speed:", "Experiments", "bench", BENCH),
)
BY_NAME: dict[str, PageEntry] = {entry.name: entry for entry in PAGES}


def controls(name: str) -> Controls:
    """The controls of the page ``name``."""
    return BY_NAME[name].controls


CONTROLS: dict[str, Controls] = {entry.name: entry.controls for entry in PAGES}
