"""Train against eval: BN's running statistics, and what they do to a shifted test batch; LN's one computation."""

import streamlit as st

from lnviz.labs import train_eval
from ui.kit.page import Page

page = Page.start(
    intro="**Claim:** BatchNorm computes one thing in training and another at test time; LayerNorm "
    "computes the same thing always. Ioffe and Szegedy (2015, §3.1) replace the batch's μ and σ² "
    "at inference by averages kept during training; Ba, Kiros and Hinton (2016, abstract) note that LN "
    "performs exactly the same computation at training and test times.\n\n"
    "Below, batches stream through BN in training mode and its running μ̂ and σ̂² follow them, "
    "as `torch.nn.BatchNorm1d` does (σ̂² takes the *unbiased* batch variance).\n\n"
    "Then a test batch whose mean has shifted goes through both norms in both modes.",
)
with page.sidebar("Training stream"):
    batch, features, steps, momentum, seed = page.controls("batch", "features", "steps", "momentum", "seed")
with page.sidebar("Test batch"):
    shift = page.control("shift")

result = page.compute(train_eval.train_eval, batch, features, steps, momentum, shift, seed)
stats = result.stats

st.subheader("Training: the running statistics")
st.caption(
    f"Each step draws a batch of {batch} samples from N(μ, σ²), one μ and σ per feature (dotted: the "
    f"true values), and updates μ̂ ← (1 − m) μ̂ + m μ_B and σ̂² ← (1 − m) σ̂² + m · B/(B − 1) · σ²_B "
    f"with m = {momentum:g}, from μ̂ = 0, σ̂² = 1. {train_eval.momentum_words(momentum)} "
    f"The first {min(train_eval.SHOWN_FEATURES, features)} of {features} features are drawn."
)
page.metrics(
    {
        "Mean |μ̂ − μ| after the last step": f"{float(stats.mean_error[-1]):.3g}",
        "Mean |σ̂² − σ²| after the last step": f"{float(stats.var_error[-1]):.3g}",
    }
)
page.chart(
    train_eval.fig_running(stats),
    key="running_chart",
    alt=f"BN's running mean and variance over {steps} steps for the first features, against the true values.",
)

st.subheader(f"Evaluation: a test batch shifted by {shift:g} σ")
st.caption(
    "Train mode normalizes the test batch with its own μ and σ², so a shift shared by every sample disappears. "
    "Eval mode uses μ̂ and σ̂² from training, so the shift passes into the output. Even with no shift the two "
    "modes differ: a batch's own statistics are not the running ones. LN has no mode: its two curves lie on "
    "top of each other."
)
bn_gap, ln_gap = float(result.bn_gap.max()), float(result.ln_gap.max())
ln_moved = float(result.ln_shift_delta.max())
page.metrics(
    {
        "BN: max |train − eval| over the test batch": f"{bn_gap:.3g}",
        "LN: max |train − eval| over the test batch": f"{ln_gap:.3g}",
        "Shift's effect on LN: max |Δy|": f"{ln_moved:.3g}",
    },
    helps={
        "Shift's effect on LN: max |Δy|": "|LN(x) − LN(x without the shift)| over the same samples. "
        "BN in train mode moves by rounding only."
    },
)
page.chart(
    train_eval.fig_outputs(result),
    key="outputs_chart",
    alt=f"One test sample's outputs in train and eval mode: BN's differ by up to {bn_gap:.3g}, LN's by {ln_gap:.3g}.",
)
if shift == 0:
    page.say(
        "LN having no mode does not make it robust to a shift: move the shift, and LN's output moves with it, "
        "while BN in train mode removes it (up to rounding)."
    )
else:
    page.say(
        "LN having no mode does not make it robust to the shift. The shift is per feature (each feature moves by "
        f"{shift:g} of its own σ), so it changes each sample's own μ and σ, and LN's output changes: by up to "
        f"{ln_moved:.2f} against the same batch unshifted. BN in train mode removes the shift, up to rounding. This is "
        "the dataset re-centering column of the [invariance table](/invariance): BN ✓, LN ✗."
    )
page.finish()
