"""Sequences: per-step BN statistics under padding and at unseen lengths, against per-token LN."""

import streamlit as st

from lnviz.labs import sequences
from ui.kit.page import Page

page = Page.start(
    intro='**The claim.** Applied to a recurrent network "in the obvious way", BN computes and stores separate '
    "statistics for each time step (Ba, Kiros and Hinton 2016, *Layer Normalization*, §3.1); their introduction "
    'says BN "appears to require" them (§1). Other variants normalize only the input-to-hidden term W xₜ and leave '
    "the recurrent term U hₜ₋₁ as it is (Laurent et al. 2016; Amodei et al. 2016, who pool that term's statistics "
    "over every step of the batch's sequences). Cooijmans et al. (2016, *Recurrent Batch Normalization*) keep "
    "per-step "
    "statistics up to the longest training length T_max, and reuse T_max's for every test step beyond it. With "
    "per-step statistics, padding changes them, late steps rest on a handful of samples, and "
    "a test sequence longer than any training sequence reaches steps with none. LN normalizes each token by its "
    "own features, so none of this touches it.\n\n"
    "The same section, §3.1, gives a second reason for LN in recurrent networks, beside the statistics. The summed "
    "inputs of a plain RNN tend to grow or shrink at every step, which makes gradients explode or vanish. LN is "
    "invariant to "
    're-scaling all the summed inputs to a layer, "which results in much more stable hidden-to-hidden '
    'dynamics".\n\n'
    "Below, sequences of different lengths are padded into one batch. Per-step BN is computed twice: over the "
    "whole padded batch, and over the real tokens only. Then a longer test sequence arrives.",
)
with page.sidebar("Sequences"):
    batch, length, features, spread, pad, extra, seed = page.controls(
        "batch", "length", "features", "spread", "pad", "extra", "seed"
    )
    feature = page.index("feature", features)

lab = page.compute(sequences.sequence_lab, batch, length, features, seed, spread, pad, extra)

padded = int((~lab.mask).sum())
thin = int((~lab.masked.defined).sum())
added = f"step {length}" if extra == 1 else f"steps {length} to {length + extra - 1}"  # T … T + extra − 1
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
        f"more, counted from 0 as every step is: {added}.",
    },
)

st.subheader("The batch and its padding")
page.chart(
    sequences.fig_batch(lab, feature),
    key="seq_batch",
    alt=f"{batch} sequences of up to {length} steps, feature {feature}; {padded} padded cells marked.",
)

st.subheader("BN's per-step statistics")
# Steps with some padding and at least two real values: where padding can move σ² either way.
mixed = (lab.masked.count < batch) & (lab.masked.count >= 2)  # (T,)
naive_var, real_var = lab.naive.var[0][mixed], lab.masked.var[0][mixed]  # (k, H) each
shrunk = (
    f" Here padding shrinks σ² in {int((naive_var < real_var).sum())} of the {naive_var.numel()} padded "
    "(step, feature) cells with at least two real values."
    if naive_var.numel()
    else ""
)
page.say(
    "Over the padded batch, each step pools its n real values (mean μ, variance σ²) with B − n copies of the pad "
    "value p. The mean moves towards p: (n μ + (B − n) p)/B. The variance becomes "
    "(n/B)·σ² + (n/B)(1 − n/B)(μ − p)²: it grows when p is far from the step's mean, (μ − p)² > σ²·B/n, and "
    f"shrinks when p is near it.{shrunk}\n\n"
    "Over real tokens only, the statistics are the real tokens' own, but they rest on fewer samples as t grows. "
    "Below two the page leaves them out: with one value σ² is 0, BN's output would be β (ε > 0), and PyTorch refuses it."
    "\n\nLN's statistics are one per token and never look at another sequence."
)
page.chart(
    sequences.fig_step_stats(lab, feature),
    key="seq_stats",
    alt=f"BN's per-step mean and variance of feature {feature}, over the padded batch and over real tokens only.",
)

st.subheader("A test sequence longer than any in training")
page.say(
    "Here BN at test time uses the statistics stored for each step, taken from this one training batch: there "
    f"are none after step {length - 1}, nor at steps that had fewer than two training samples. (Cooijmans et "
    "al. reuse the statistics of the last training step, T_max, for every step beyond it instead.) In this "
    "one-batch example a step that only two or three sequences reach has statistics from only two or three "
    "samples, poor estimates, so its outputs can be far off even before the end. Running statistics averaged "
    "over many training batches would rest on many more samples, though late steps would still see fewer than "
    "early ones. LN computes its statistics from the token itself, at any length."
)
page.chart(
    sequences.fig_test(lab, feature),
    key="seq_test",
    alt=f"A test sequence of {length + extra} steps: its LN output stays on scale, its per-step BN output does "
    f"not after step {length - 1}.",
)
page.finish()
