"""Batch coupling: change one sample, and see which outputs move under BN and under LN."""

import streamlit as st

from lnviz import coupling
from ui.controls import control, share_box, show_notes

st.title("Batch coupling")
st.markdown(
    "**Claim:** BatchNorm couples the samples of a batch; LayerNorm does not. "
    "Ba, Kiros and Hinton (2016, *Layer Normalization*, §3) make the point: BN's statistics are "
    "taken over the mini-batch, LN's over one case's own hidden units.\n\n"
    "Below, one sample i of a batch x (B samples × H features) is changed. Under "
    ":orange[**BN**] each feature's μ and σ are pooled over all B samples, so every row of the "
    "output moves. Under :blue[**LN**] each sample is normalized on its own, so the other rows "
    "stay exactly where they were.\n\n"
    "The second chart keeps one sample fixed and redraws the rest of its batch."
)

with st.sidebar:
    st.header("Batch")
    batch = control(coupling.BATCH)
    features = control(coupling.FEATURES)
    seed = control(coupling.SEED, "number")

# Keep the perturbed row inside the batch when B shrinks (the widget then shows the clamped value).
if st.session_state.get(coupling.SAMPLE.key, 0) > batch - 1:
    st.session_state[coupling.SAMPLE.key] = batch - 1
pick_sample, pick_kind, pick_amount = st.columns([1, 2, 2])
sample = control(coupling.SAMPLE, "number", where=pick_sample)
kind = control(coupling.PERTURB, "radio", where=pick_kind, horizontal=True)
amount = control(coupling.AMOUNT, where=pick_amount)
show_notes()

if sample > batch - 1:
    st.info(f"Sample {sample} is past the batch's last row (B = {batch}); using sample {batch - 1}.")
    sample = batch - 1


@st.cache_data(max_entries=64, show_spinner=False)
def _couple(batch: int, features: int, seed: int, sample: int, kind: str, amount: float) -> coupling.Coupling:
    return coupling.couple(batch, features, seed, sample, kind, amount)


@st.cache_data(max_entries=64, show_spinner=False)
def _sweep(batch: int, features: int, seed: int, sample: int) -> coupling.BatchSweep:
    return coupling.batch_sweep(coupling.base(batch, features, seed)[sample], seed)


try:
    result = _couple(batch, features, seed, sample, kind, amount)
except ValueError as err:
    st.warning(f"This combination cannot be computed: {err}.")
    st.stop()

st.subheader(f"|Δy| after changing sample {sample}")
st.caption(
    f"{kind}: {coupling.PERTURBATIONS[kind]} (a = {amount:g}). Colour is |Δy| on a log scale; "
    f"exact zeros sit at the bottom ({coupling.FLOOR:.0e}). Row {sample} is outlined."
)
bn_rows, ln_rows = result.bn_rows_changed, result.ln_rows_changed
m1, m2 = st.columns(2)
m1.metric("BN: rows whose output moved", f"{len(bn_rows)} of {batch}")
m2.metric("LN: rows whose output moved", f"{len(ln_rows)} of {batch}")
st.plotly_chart(coupling.fig_delta(result), key="delta_chart", width="stretch")
if kind in ("scale", "shift"):
    st.caption(
        "LN removes each sample's own mean and scale, so shifting sample i, or scaling it by a > 0, "
        "barely moves even row i: only ε's share of √(σ² + ε) changes. BN still moves every row."
    )

st.subheader("One sample, many batches")
st.caption(
    f"x★ is sample {sample} before the change. Each line puts it among one of {coupling.SWEEP_DRAWS} sets of "
    "standard-normal batch-mates, a batch that grows as B does. Its BN output moves with its batch-mates, less "
    "as B grows (with B samples, |BN output| ≤ √(B − 1)); its LN output is one number for every batch."
)
sweep = _sweep(batch, features, seed, sample)
st.plotly_chart(coupling.fig_sweep(sweep), key="sweep_chart", width="stretch")

share_box(coupling.PARAMS)
