"""The training race page's words: its introduction, the race's progress, and what is said around the charts.

The race itself is :mod:`lnviz.labs.training.loop`, the story of how it ended :mod:`~lnviz.labs.training.summary`
and the Pre-LN/Post-LN section's words :mod:`~lnviz.labs.training.transformer_text`.
"""

from __future__ import annotations

from lnviz.labs.training.loop import REPLAY_SECONDS, Race

INTRO = (
    "Ba, Kiros and Hinton (2016) find that recurrent networks benefit most from layer normalization, "
    '"especially for long sequences and small mini-batches" (§7). LN places no constraint on the batch size and '
    "works with a batch of 1 (§3), while the effect of batch normalization depends on the mini-batch size "
    "(abstract). In preliminary experiments they found BN better than LN for convolutional networks (§6.7); "
    "those are not raced here.\n\n"
    "Here one model is trained four times side by side, with no norm, BN, LN and RMSNorm: the same data, the "
    "same initial weights, the same optimizer (Adam). Press **Run** and watch: a race that trains faster than "
    f"you could follow is drawn in again over {REPLAY_SECONDS:g} s. Each **Try** button sets up a race "
    "that puts one claim to the test."
)
STOP_HELP = "Stops the race; the steps done so far stay on the page."
PLAY_HELP = "Draws this race in again from step 0, from what was recorded: nothing is trained again."
REPLAY_LABEL = "Replay: the race at step"
REPLAY_HELP = "The curves as they stood at this step, on the axes of the whole race."
RUN_FIRST = "Press **Run** to start the race with these settings."
CACHED = "This race already ran with these settings in this session: shown from the cache."
LIVE_ALT = "The race so far."
TABLE_ALT = "Each model's final held-out loss and accuracy, and the first step at which it reached each target."
TABLE_CAPTION = (
    "Final values are one evaluation each, on the same 256 held-out samples; the curves show how much they "
    "move between evaluations. “By step” is the first evaluation at which the curve reached the target."
)
STEP_TIME_ALT = "Median time of one optimizer step for each model."
STEP_TIME_CAPTION = (
    "Median wall time of one optimizer step per model, waiting for the device before reading the clock. "
    "The norms here are computed step by step (lnviz.maths.norms, several kernels each), not by PyTorch's fused "
    "kernels: the Kernel benchmark page times those."
)
EXPLORE = (
    "Send the activations entering one normalization layer of a trained model, on 256 fresh samples, to the "
    "main explorer: real activations instead of synthetic ones, under every tool there."
)
NO_RACE = "Run a race first: there is no trained model yet with these settings."


def progress(result: Race) -> str:
    """Over the race: how far it got, and how fast."""
    return (
        f"Step {result.done} of {result.steps} · {result.steps_per_second:.1f} steps/s "
        f"(each step trains every model still running) · {result.elapsed:.1f} s"
    )


def replay(result: Race, step: int) -> str:
    """Over a race drawn in again: the step shown."""
    return (
        f"Replay: step {step} of {result.done}, drawn from what was recorded "
        f"(the race trained in {result.elapsed:.1f} s)"
    )


def ended(result: Race) -> str:
    """The summary's heading."""
    return "How the race ended" if result.complete else f"Where the race stopped, at step {result.done}"


def stopped(result: Race) -> str:
    return f"Stopped at step {result.done} of {result.steps}. Press **Run** to race again from the start."


def small_batch(batch: int) -> str:
    """Under a race at a batch so small that BN's statistics are noise."""
    return (
        f"At batch {batch}, BN trains on the mean and variance of {batch} samples: noisy numbers that change at "
        "every step. At test time it uses running averages instead, so its held-out curve (solid) can sit "
        "far from its training curve (dotted)."
    )


def sent_source(variant: str, layer: int, described: str) -> str:
    """The explorer's name for activations sent from a trained model (``described`` by ``describe``)."""
    return f"input of {variant} layer {layer} after training ({described})"
