"""Sequences: per-step BN statistics under padding and at unseen lengths, against per-token LN."""

import streamlit as st

from lnviz import sequences
from ui.page import Page

page = Page.start(
    "Sequences: why LN suits recurrent models",
    "sequences",
    intro="**The claim.** In a recurrent model BN must keep separate statistics for every time step. "
    "Padding pollutes them, late steps rest on a handful of samples, and a test sequence longer than any "
    "training sequence reaches steps with no statistics at all. LN normalizes each token by its own features, "
    "so none of this touches it. The argument is from Ba, Kiros and Hinton, *Layer Normalization* (2016), "
    "§1 and §3.1.\n\n"
    "Below, sequences of different lengths are padded into one batch. Per-step BN is computed twice: over the "
    "whole padded batch, and over the real tokens only. Then a longer test sequence arrives.",
)
with page.sidebar("Sequences"):
    batch, length, features, spread, pad, extra, seed = page.controls(
        "batch", "length", "features", "spread", "pad", "extra", ("seed", "number")
    )
    feature = page.index("feature", features, "slider")

lab = page.compute(sequences.sequence_lab, batch, length, features, seed, spread, pad, extra)

padded = int((~lab.mask).sum())
thin = int((~lab.masked.defined).sum())
page.metrics(
    {
        "Padded cells": f"{padded} of {lab.mask.numel()}",
        "LN shift from padding": f"{lab.ln_shift:.3f}",
        "BN shift from padding": f"{lab.bn_shift:.3f}",
        "Steps without BN stats": f"{thin} of {length}",
    },
    helps={
        "LN shift from padding": "Largest change, over every real token, between its LN output in the padded batch "
        "and in its sequence alone.",
        "BN shift from padding": "Largest change, over real tokens at steps with statistics, between per-step BN "
        "over the padded batch and over real tokens only.",
        "Steps without BN stats": f"Training steps with fewer than 2 real samples. The test sequence adds {extra} "
        "more, past step T.",
    },
)

st.subheader("The batch and its padding")
page.chart(
    sequences.fig_batch(lab, feature),
    key="seq_batch",
    alt=f"{batch} sequences of up to {length} steps, feature {feature}; {padded} padded cells marked.",
)

st.subheader("BN's per-step statistics")
page.say(
    "Over the padded batch, the pad value drags μ towards it and inflates σ² wherever sequences have ended. "
    "Over real tokens only, the statistics are right but rest on fewer samples as t grows; below two they do not "
    "exist. LN's statistics are one per token and never look at another sequence."
)
page.chart(
    sequences.fig_step_stats(lab, feature),
    key="seq_stats",
    alt=f"BN's per-step mean and variance of feature {feature}, over the padded batch and over real tokens only.",
)

st.subheader("A test sequence longer than any in training")
page.say(
    f"BN at test time uses the statistics stored for each step, and there are none after step {length - 1}. "
    "Steps that had only two or three training samples give wild outputs even before that. "
    "LN computes its statistics from the token itself, at any length."
)
page.chart(
    sequences.fig_test(lab, feature),
    key="seq_test",
    alt=f"A test sequence of {length + extra} steps: its LN output stays on scale, its per-step BN output does "
    f"not after step {length - 1}.",
)
page.finish()
