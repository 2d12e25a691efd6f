"""Inside a transformer: the LayerNorms of a small BERT-architecture encoder, on the sentences you type."""

import streamlit as st
import torch

from lnviz.labs import transformer
from lnviz.labs.transformer import figures, model, text
from ui.kit import mode
from ui.kit.page import Page

WIDTH = 12  # features in the grid's window, as the explorer's stage shows

page = Page.start()  # no introduction: the box, then the point with its numbers, then the grid


def forward(typed: str, device: str) -> transformer.Run:
    return transformer.run(model.shared(), typed, torch.device(device))


# The box and its examples above the grid, in the first screen: the page is about what you type.
box, examples = st.columns([4, 3])  # the three examples in one row beside the box, lecture mode's type included
typed = page.control("text", where=box, height=96)  # two lines: Streamlit's least with a label
with examples:
    st.caption("Examples")
    # Not a function of this script: as a callback, it would keep this run's globals (its run of the model, about
    # 16 MiB) alive for as long as Streamlit keeps the session, 2 minutes after it closes (issue 47, attack 2).
    with st.container(horizontal=True, gap="small"):
        for name, sentences in text.EXAMPLES.items():
            st.button(
                name,
                key=f"example_{name}",
                help=text.EXAMPLE_HELP[name],
                on_click=st.session_state.update,
                args=({"text": sentences},),
            )
# The point, with its numbers, goes above the grid once the model has run; which LayerNorm beside the grid, so that
# a phone (the columns stacked: just above it) and lecture mode, whose sidebar is hidden behind », can change it.
head = st.container()
pickers, shown = st.columns([1, 5], gap="medium")  # assets/style.css sizes them: the grid wraps under on a narrow page
layer = page.control("layer", where=pickers)
site_name = page.control("site", where=pickers, horizontal=True)
with page.sidebar("Grid"):
    output, order, start = page.controls("output", "order", "start")
    dev = page.device()

with st.spinner("Loading the model, once per server…"):
    loaded = model.shared()
if isinstance(loaded, str):
    st.warning(loaded + " The rest of the app works without it.", icon=":material/warning:")
    page.finish()
    st.stop()
page.run(transformer.sentences, typed)  # a refused text: its one sentence, and nothing else
lab = page.compute(forward, typed, str(dev), shared=True, gate="the transformer's forward")
site = transformer.site(lab, layer, site_name)
cols = transformer.window(site.x, lab.mask, start, WIDTH, order == "largest")
j = site.largest[2]

if lab.cuts:
    head.caption(text.cuts(lab))
page.say(text.point(lab, site), where=head)
page.chart(
    mode.fit_numbers(figures.fig_ln(lab, site, cols, output), "tf_ln"),
    key="tf_ln",
    alt=f"x at {site_name} LayerNorm of layer {site.layer}: {len(figures.row_labels(lab))} tokens by {len(cols)} "
    "features, LN's σ and μ per token, and LN's output.",
    where=shown,
)
if not page.presenting:
    shown.caption(text.window(lab, order, start, len(cols), site.x.shape[-1]))
for caption in (text.EMBEDDINGS_LAYER if site_name == "embeddings" and layer else "", text.unknown(lab)):
    if caption:
        shown.caption(caption)
if site.off:
    page.say(text.off(lab, site), where=shown)

st.subheader("The largest values")
page.say(text.largest(lab, site))
page.say(text.massive(lab, site))

st.subheader("BN over the tokens, per feature, in training mode")
page.chart(
    mode.fit_numbers(figures.fig_bn(lab, site, cols, output), "tf_bn"),
    key="tf_bn",
    alt=f"BN's σ per feature over the tokens, and BN's output, for the same {len(cols)} features.",
)

# Built only while open, as the charts' data tables are: a typed sentence's answer stays small.
gains = st.expander("The model's own γ and β", icon=":material/tune:", key="tf_gains", on_change="rerun")
if gains.open:
    page.say(text.affine(site), where=gains)
    page.chart(
        figures.fig_affine(site, j),
        key="tf_affine",
        alt=f"γ and β of this LayerNorm for all {site.x.shape[-1]} features; feature {j} marked.",
        where=gains,
    )

if len(lab.sentences) > 1:
    st.subheader("A batch")
    page.say(text.batch(lab, site))
    page.chart(
        figures.fig_padding(lab, site, j),
        key="tf_padding",
        alt=f"Feature {j} of x for each sentence and token position; padding marked.",
    )
    st.page_link("pages/sequences.py", label="Padding and per-step BN, on sequences", icon=":material/timeline:")
else:
    page.say(text.ONE_SENTENCE)

with st.expander("The model, its hooks and the check", icon=":material/info:"):
    st.markdown(text.MODEL)
    st.badge(text.check(site), icon=":material/check:", color="green" if site.check <= 1e-4 else "red")
    st.markdown(text.check_words(lab, site))
    st.caption(f"{lab.device}, {lab.dtype}: the forward took {lab.seconds * 1000:.0f} ms.")
page.finish()
