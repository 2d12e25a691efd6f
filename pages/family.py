"""The norm family: BN, LN, InstanceNorm, GroupNorm and RMSNorm pool different elements of one tensor."""

from dataclasses import asdict

import streamlit as st

from lnviz.labs import family
from ui.kit.page import Page

page = Page.start(
    intro="**The claim.** In training mode, BatchNorm (Ioffe and Szegedy 2015), LayerNorm (Ba, Kiros and Hinton "
    "2016), InstanceNorm (Ulyanov, Vedaldi and Lempitsky 2016) and GroupNorm (Wu and He 2018) use one formula and "
    "differ only in which elements share a mean and a variance (at test time BN uses running statistics instead). "
    "The picture follows Figure 2 of Wu and He, *Group Normalization* (2018), which draws a batch of feature maps "
    "as an N × C × (H·W) block. RMSNorm (Zhang and Sennrich 2019) pools like LayerNorm but does not subtract the "
    "mean.\n\n"
    "Pick an element and a norm: the highlighted elements are the ones averaged together with it. "
    "The table shows what each norm makes of that one element.",
)
with page.sidebar("Tensor"):
    batch, channels, positions, groups, seed = page.controls("batch", "channels", "positions", "groups", "seed")
    draw = page.control("draw", horizontal=True)
# On a projector (1280 × 720) the controls stand left of the cube, so that both fit the first screen.
controls, picture = st.columns([1, 3], vertical_alignment="top") if page.presenting else (st, st)
norm = page.control("norm", where=controls, horizontal=not page.presenting)
pick_n, pick_c, pick_pos = (controls,) * 3 if page.presenting else st.columns(3)
pick = (
    page.index("sample", batch, where=pick_n),
    page.index("channel", channels, where=pick_c),
    page.index("position", positions, where=pick_pos),
)

x = family.make_tensor(batch, channels, positions, seed, draw)  # (N, C, H·W)
try:
    family.check_groups(channels, groups)
    usable = family.NORMS
except ValueError as err:
    st.warning(f"{err} GroupNorm is left out until then.", icon=":material/warning:")
    usable = tuple(name for name in family.NORMS if name != "GroupNorm")
results = {name: family.normalize(x, name, groups) for name in usable}
masks = {name: family.pooled_mask(tuple(x.shape), name, pick, groups) for name in usable}

where = f"x[{pick[0]}, {pick[1]}, {pick[2]}]"
if norm in masks:
    if page.presenting:  # the wide cube has no legend of its own: what its marks are, in words
        picture.markdown("Squares: pooled with the pick, the diamond ◆. Dots: not pooled.")
    page.chart(
        family.fig_cube(x, masks[norm], pick, norm, wide=page.presenting),
        key="family_cube",
        where=picture,
        alt=f"The tensor as an N × C × H·W block; the {int(masks[norm].sum())} elements {norm} pools with {where} "
        "are highlighted.",
    )
page.chart(
    family.fig_family(masks, pick, norm, note=f"G = {groups} does not<br>divide C = {channels}"),
    key="family_panels",
    alt=f"For each norm, the elements pooled with {where}: "
    + ", ".join(f"{name} {int(mask.sum())}" for name, mask in masks.items())
    + ".",
)

page.say(family.ln_here(channels, positions))

st.subheader(f"What each norm makes of {where}")
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
st.caption(
    "ε = 1e-5, biased variance, as PyTorch. γ = 1 and β = 0, so the output y equals x̂. RMSNorm's x̂ is "
    f"x / √(E[x²] + ε): {family.RMS_EPS}"
)
page.finish()
