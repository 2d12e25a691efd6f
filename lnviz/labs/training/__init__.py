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

The package, one idea a module: :mod:`~lnviz.labs.training.tasks` (tasks, batches,
the norm layer and the models), :mod:`~lnviz.labs.training.loop` (the race, its
results, a past step of it for a replay, the activations it leaves, the
suggested races), :mod:`~lnviz.labs.training.summary` (who finished ahead, by how
much and how soon, in numbers and in words) and
:mod:`~lnviz.labs.training.figures`. Callers use the names re-exported here
(``training.race``, ``training.TASKS``, ``training.fig_race``). The loop's
module is not named ``race``: that name is the function's.
"""

from __future__ import annotations

from lnviz.labs.training.figures import fig_race, fig_step_time, log_ticks
from lnviz.labs.training.loop import (
    BN_BATCH_ONE,
    EVAL_POINTS,
    EVAL_SAMPLES,
    REPLAY_SECONDS,
    SUGGESTED,
    Curve,
    Race,
    activations,
    check,
    describe,
    eval_every,
    race,
    replay_pause,
    run,
    too_fast_to_watch,
)
from lnviz.labs.training.summary import CLOSE, Standing, Summary, story, story_alt, story_table, summarize
from lnviz.labs.training.tasks import (
    ADDING_HIDDEN,
    ADDING_TOLERANCE,
    LONGEST,
    MLP,
    RNN,
    SHORTEST,
    SPIRAL_HIDDEN,
    SPIRAL_LAYERS,
    SPIRAL_NOISE,
    TASKS,
    VARIANTS,
    Batch,
    Norm,
    adding,
    build_model,
    layers,
    loss_and_accuracy,
    make_batch,
    spirals,
)

__all__ = [
    "ADDING_HIDDEN",
    "ADDING_TOLERANCE",
    "BN_BATCH_ONE",
    "CLOSE",
    "EVAL_POINTS",
    "EVAL_SAMPLES",
    "LONGEST",
    "MLP",
    "REPLAY_SECONDS",
    "RNN",
    "SHORTEST",
    "SPIRAL_HIDDEN",
    "SPIRAL_LAYERS",
    "SPIRAL_NOISE",
    "SUGGESTED",
    "TASKS",
    "VARIANTS",
    "Batch",
    "Curve",
    "Norm",
    "Race",
    "Standing",
    "Summary",
    "activations",
    "adding",
    "build_model",
    "check",
    "describe",
    "eval_every",
    "fig_race",
    "fig_step_time",
    "layers",
    "log_ticks",
    "loss_and_accuracy",
    "make_batch",
    "race",
    "replay_pause",
    "run",
    "spirals",
    "story",
    "story_alt",
    "story_table",
    "summarize",
    "too_fast_to_watch",
]
