"""The invariance table of Ba, Kiros and Hinton (2016), computed from a random layer."""

import streamlit as st

from lnviz.labs import invariance
from ui.kit.page import Page

page = Page.start(
    intro="**Claim:** each normalization undoes some re-scalings and re-centerings of the weights or the "
    "data, and not others. This is Table 1 of Ba, Kiros and Hinton (2016, *Layer Normalization*, §5.1); "
    "the RMSNorm row is Table 1 of Zhang and Sennrich (2019).\n\n"
    "Here nothing is typed in: a random layer a = W x is transformed, each norm's output is computed "
    "before and after, and the cell shows max |Δ| with ✓ when it is at most "
    f"{invariance.TOL:g}.\n\n"
    "With ε > 0 the scale invariances are only approximate: raise ε and watch them fail.",
)
with page.sidebar("Layer"):
    eps, seed = page.controls("eps", "seed")

table = page.compute(invariance.invariance_table, eps, seed)
agree = invariance.agreement(table)
st.metric("Cells that agree with the papers (RMSNorm: Zhang and Sennrich's Table 1)", f"{agree} of {invariance.CELLS}")
page.chart(
    invariance.fig_table(table),
    key="table_chart",
    alt=f"Which norm is invariant to which transformation, computed at ε = {eps:g}: "
    f"{agree} of {invariance.CELLS} cells agree with the papers.",
)

with st.expander("What each transformation does, and the numbers used", expanded=True):
    st.markdown(
        f"The layer has N = {invariance.CASES} cases x (N × D, D = {invariance.INPUTS}) and "
        f"H = {invariance.UNITS} units with weights W (H × D), all standard normal from the seed. "
        f"Every scale factor is δ = {invariance.FACTOR:g} (positive: a negative δ flips signs, which no "
        "norm undoes); v is a standard-normal vector of length D, the vector a re-centering adds. Ba, Kiros and "
        "Hinton write it γ, and their gain g; on lnviz's other pages γ is the gain.\n\n"
        + "\n".join(
            f"- **{invariance.TRANSFORM_LABELS[k].replace('<br>', ' ')}**: {v}"
            for k, v in invariance.TRANSFORMS.items()
        )
        + "\n\nAs in the paper, the gain g and bias b are applied after normalizing and left unchanged: b cancels "
        "in Δ and g only scales it (Δy = g · Δ), so the table compares the normalized outputs themselves. Weight normalization divides each "
        "unit's a_i by ‖w_i‖ and has no ε. BN pools over the N cases, LN and RMSNorm over the H units of one case."
    )
page.say(
    "Why LN is invariant to re-centering W: adding the same vector v to every unit's weights adds vᵀx to "
    "every summed input of a case (an amount of its own for each case), and LN subtracts the case's mean. RMSNorm does not subtract a mean, so it is "
    "not; it survives only positive scalings of a case's whole vector a, exactly at ε = 0."
)
page.finish()
