"""Sequences: per-step BN statistics under padding and at unseen lengths, against per-token LN."""

import streamlit as st

from lnviz import sequences, state
from lnviz.sequences import SequenceLab
from ui.controls import control, share_box, show_notes

st.title("Sequences: why LN suits recurrent models")
st.markdown(
    "**The claim.** In a recurrent model BN must keep separate statistics for every time step. "
    "Padding pollutes them, late steps rest on a handful of samples, and a test sequence longer than any "
    "training sequence reaches steps with no statistics at all. LN normalizes each token by its own features, "
    "so none of this touches it. The argument is from Ba, Kiros and Hinton, *Layer Normalization* (2016), "
    "§1 and §3.1.\n\n"
    "Below, sequences of different lengths are padded into one batch. Per-step BN is computed twice: over the "
    "whole padded batch, and over the real tokens only. Then a longer test sequence arrives."
)

batch = control(sequences.BATCH)
steps = control(sequences.STEPS)
features = control(sequences.FEATURES)
spread = control(sequences.SPREAD)
pad = control(sequences.PAD)
extra = control(sequences.EXTRA)
seed = control(state.SEED, widget="number")
col = control(sequences.COL)
show_notes()


@st.cache_data(max_entries=32, show_spinner=False)
def compute(batch: int, steps: int, features: int, seed: int, spread: float, pad: float, extra: int) -> SequenceLab:
    return sequences.sequence_lab(batch, steps, features, seed, spread, pad, extra)


if col >= features:
    st.info(f"Feature {col} does not exist with H = {features} features; showing feature {features - 1}.")
    col = features - 1

try:
    lab = compute(batch, steps, features, seed, spread, pad, extra)
except ValueError as err:
    st.warning(f"These settings cannot be computed: {err}")
    st.stop()

padded = int((~lab.mask).sum())
thin = int((~lab.masked.defined).sum())
m1, m2, m3, m4 = st.columns(4)
m1.metric("Padded cells", f"{padded} of {lab.mask.numel()}")
m2.metric(
    "LN shift from padding",
    f"{lab.ln_shift:.3f}",
    help="Largest change, over every real token, between its LN output in the padded batch and in its sequence alone.",
)
m3.metric(
    "BN shift from padding",
    f"{lab.bn_shift:.3f}",
    help="Largest change, over real tokens at steps with statistics, between per-step BN over the padded "
    "batch and over real tokens only.",
)
m4.metric(
    "Steps without BN stats",
    f"{thin} of {steps}",
    help=f"Training steps with fewer than 2 real samples. The test sequence adds {extra} more, past step T.",
)

st.subheader("The batch and its padding")
st.plotly_chart(sequences.fig_batch(lab, col), key="seq_batch")

st.subheader("BN's per-step statistics")
st.markdown(
    "Over the padded batch, the pad value drags μ towards it and inflates σ² wherever sequences have ended. "
    "Over real tokens only, the statistics are right but rest on fewer samples as t grows; below two they do not "
    "exist. LN's statistics are one per token and never look at another sequence."
)
st.plotly_chart(sequences.fig_step_stats(lab, col), key="seq_stats")

st.subheader("A test sequence longer than any in training")
st.markdown(
    f"BN at test time uses the statistics stored for each step, and there are none after step {steps - 1}. "
    "Steps that had only two or three training samples give wild outputs even before that. "
    "LN computes its statistics from the token itself, at any length."
)
st.plotly_chart(sequences.fig_test(lab, col), key="seq_test")

share_box(sequences.PARAMS)
