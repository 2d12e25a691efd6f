"""Train against eval: BN's running statistics, and what they do to a shifted test batch; LN's one computation."""

import streamlit as st

from lnviz import train_eval
from ui.controls import control, share_box, show_notes

st.title("Train vs eval")
st.markdown(
    "**Claim:** BatchNorm computes one thing in training and another at test time; LayerNorm "
    "computes the same thing always. Ioffe and Szegedy (2015, §3.1) replace the batch's μ and σ² "
    "at inference by averages kept during training; Ba, Kiros and Hinton (2016, abstract) note that LN "
    "performs exactly the same computation at training and test times.\n\n"
    "Below, batches stream through BN in training mode and its running μ̂ and σ̂² follow them, "
    "as `torch.nn.BatchNorm1d` does (σ̂² takes the *unbiased* batch variance).\n\n"
    "Then a test batch whose mean has shifted goes through both norms in both modes."
)

with st.sidebar:
    st.header("Training stream")
    batch = control(train_eval.BATCH)
    features = control(train_eval.FEATURES)
    steps = control(train_eval.STEPS)
    momentum = control(train_eval.MOMENTUM)
    seed = control(train_eval.SEED, "number")
    st.header("Test batch")
    shift = control(train_eval.SHIFT)
show_notes()


@st.cache_data(max_entries=64, show_spinner=False)
def _train_eval(
    batch: int, features: int, steps: int, momentum: float, shift: float, seed: int
) -> train_eval.TrainEval:
    return train_eval.train_eval(batch, features, steps, momentum, shift, seed)


try:
    result = _train_eval(batch, features, steps, momentum, shift, seed)
except ValueError as err:
    st.warning(f"This combination cannot be computed: {err}.")
    st.stop()
stats = result.stats

st.subheader("Training: the running statistics")
st.caption(
    f"Each step draws a batch of {batch} samples from N(μ, σ²), one μ and σ per feature (dotted: the "
    f"true values), and updates μ̂ ← (1 − m) μ̂ + m μ_B and σ̂² ← (1 − m) σ̂² + m · B/(B − 1) · σ²_B "
    f"with m = {momentum:g}, from μ̂ = 0, σ̂² = 1. "
    f"The first {min(train_eval.SHOWN_FEATURES, features)} of {features} features are drawn."
)
err_mean, err_var = st.columns(2)
err_mean.metric("Mean |μ̂ − μ| after the last step", f"{float(stats.mean_error[-1]):.3g}")
err_var.metric("Mean |σ̂² − σ²| after the last step", f"{float(stats.var_error[-1]):.3g}")
st.plotly_chart(train_eval.fig_running(stats), key="running_chart", width="stretch")

st.subheader("Evaluation: a test batch shifted by " + f"{shift:g} σ")
st.caption(
    "Train mode normalizes the test batch with its own μ and σ², so the shift disappears. "
    "Eval mode uses μ̂ and σ̂² from training, so the shift passes into the output. LN has no mode: "
    "its two curves lie on top of each other."
)
gap_bn, gap_ln = st.columns(2)
gap_bn.metric("BN: max |train − eval| over the test batch", f"{float(result.bn_gap.max()):.3g}")
gap_ln.metric("LN: max |train − eval| over the test batch", f"{float(result.ln_gap.max()):.3g}")
st.plotly_chart(train_eval.fig_outputs(result), key="outputs_chart", width="stretch")

share_box(train_eval.PARAMS)
