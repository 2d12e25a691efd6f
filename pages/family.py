"""The norm family: BN, LN, InstanceNorm, GroupNorm and RMSNorm pool different elements of one tensor."""

from dataclasses import asdict

import streamlit as st

from lnviz import family, state
from ui.controls import control, share_box, show_notes

st.title("The norm family on one tensor")
st.markdown(
    "**The claim.** BatchNorm, LayerNorm, InstanceNorm and GroupNorm use one formula and differ only in which "
    "elements share a mean and a variance. The picture follows Figure 2 of Wu and He, *Group Normalization* "
    "(2018), which draws a batch of feature maps as an N × C × (H·W) block. RMSNorm (Zhang and Sennrich, 2019) "
    "pools like LayerNorm but does not subtract the mean.\n\n"
    "Pick an element and a norm: the highlighted elements are the ones averaged together with it. "
    "The table shows what each norm makes of that one element."
)

batch = control(family.BATCH)
channels = control(family.CHANNELS)
positions = control(family.POSITIONS)
groups = control(family.GROUPS)
seed = control(state.SEED, widget="number")
norm = control(family.NORM, widget="radio", where=st, horizontal=True)
pick_n, pick_c, pick_pos = st.columns(3)
n = control(family.N_PICK, widget="number", where=pick_n)
c = control(family.C_PICK, widget="number", where=pick_c)
pos = control(family.POS, widget="number", where=pick_pos)
show_notes()

x = family.make_tensor(batch, channels, positions, seed)  # (N, C, H·W)
pick, moved = family.clamp_pick(tuple(x.shape), (n, c, pos))
if moved:
    st.info("The picked element must lie inside the tensor:\n\n" + "\n".join(f"- {m}" for m in moved))

groups_error = ""
try:
    family.check_groups(channels, groups)
except ValueError as err:
    groups_error = str(err)
    st.warning(groups_error + " GroupNorm is left out until then.")

usable = [name for name in family.NORMS if not (name == "GroupNorm" and groups_error)]
results = {name: family.normalize(x, name, groups) for name in usable}
masks = {name: family.pooled_mask(tuple(x.shape), name, pick, groups) for name in usable}

if norm in masks:
    st.plotly_chart(family.fig_cube(x, masks[norm], pick, norm), key="family_cube")
st.plotly_chart(
    family.fig_family(masks, pick, norm, note=f"G = {groups} does not<br>divide C = {channels}"), key="family_panels"
)

st.subheader(f"What each norm makes of x[{pick[0]}, {pick[1]}, {pick[2]}]")
st.dataframe(
    [asdict(family.cell_stats(name, results[name], pick)) for name in usable],
    key="family_table",
    column_config={
        "norm": "norm",
        "count": st.column_config.NumberColumn("pooled elements |S|"),
        "x": st.column_config.NumberColumn("x", format="%.4f"),
        "mean": st.column_config.NumberColumn("μ", format="%.4f"),
        "var": st.column_config.NumberColumn("σ² (RMSNorm: E[x²])", format="%.4f"),
        "x_hat": st.column_config.NumberColumn("x̂ = (x − μ)/√(σ² + ε)", format="%.4f"),
    },
    hide_index=True,
)
st.caption("ε = 1e-5, biased variance, as PyTorch. γ = 1 and β = 0, so the output y equals x̂.")

share_box(family.PARAMS)
