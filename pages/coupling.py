"""Batch coupling: change one sample, and see which outputs move under BN and under LN."""

import streamlit as st

from lnviz.labs import coupling
from ui.kit.page import Page

page = Page.start(
    intro="**Claim:** in training mode, BatchNorm couples the samples of a batch; LayerNorm does not. "
    "Ba, Kiros and Hinton (2016, *Layer Normalization*, §3) make the point: BN's statistics are "
    "taken over the mini-batch, LN's over one case's own hidden units.\n\n"
    "Below, one sample i of a batch x (B samples × H features) is changed. Under "
    ":orange[**BN**] each feature's μ and σ are pooled over all B samples, so every row of the "
    "output moves. Under :blue[**LN**] each sample is normalized on its own, so the other rows "
    "stay exactly where they were.\n\n"
    "The second chart keeps one sample fixed and redraws the rest of its batch.",
)
with page.sidebar("Batch"):
    batch, features, seed = page.controls("batch", "features", "seed")
    draw = page.control("draw", horizontal=True)
pick_sample, pick_kind, pick_amount = st.columns([1, 2, 2])
sample = page.index("sample", batch, where=pick_sample)
kind = page.control("perturb", where=pick_kind, horizontal=True)
amount = page.control("amount", where=pick_amount)

result = page.compute(coupling.couple, batch, features, seed, sample, kind, amount, draw=draw)

st.subheader(f"|Δy| after changing sample {sample}")
st.caption(
    f"{kind}: {coupling.PERTURBATIONS[kind]} (a = {amount:g}). Colour is |Δy| on a log scale; "
    f"exact zeros sit at the bottom ({coupling.FLOOR:.0e}). Row {sample} is outlined."
)
bn_rows, ln_rows = result.bn_rows_changed, result.ln_rows_changed
page.metrics(
    {
        "BN: rows whose output moved": f"{len(bn_rows)} of {batch}",
        "LN: rows whose output moved": f"{len(ln_rows)} of {batch}",
    }
)
page.chart(
    coupling.fig_delta(result),
    key="delta_chart",
    alt=f"|Δy| per cell after changing sample {sample}: under BN {len(bn_rows)} of {batch} rows moved, "
    f"under LN {len(ln_rows)}.",
)
why = coupling.why_ln_row_moves(kind, amount, sample)
if why:
    page.say(why)

st.subheader("One sample, many batches")
st.caption(
    f"x★ is sample {sample} before the change. Each line puts it among one of {coupling.SWEEP_DRAWS} sets of "
    "standard-normal batch-mates, a batch that grows as B does. Its BN output (here x̂: γ = 1, β = 0) moves with "
    "its batch-mates. At small B the batch also hems it in: with B samples |x̂| ≤ √(B − 1), so at B = 2 it is at most "
    "1 in size, and close to ±1 unless the two values nearly coincide. As B grows, the batch's μ and σ² approach the population's (0 and 1), so "
    "the lines close in on the dotted limit. Its LN output is one number for every batch."
)
sweep = page.compute(coupling.sweep_for, batch, features, seed, sample, draw)
page.chart(
    coupling.fig_sweep(sweep),
    key="sweep_chart",
    alt=f"Sample {sample}'s output on one feature against batch size: BN's differs with every set of "
    "batch-mates, LN's is one line.",
)
page.finish()
