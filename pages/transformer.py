"""Inside a transformer: a pretrained BERT encoder's LayerNorms, on the sentences you type."""

import streamlit as st
import torch

from lnviz.labs import transformer
from lnviz.labs.transformer import figures, model, text
from lnviz.text import quote
from ui.page import Page

WIDTH = 12  # features in the grid's window, as the explorer's stage shows

page = Page.start(intro=text.INTRO)


def forward(typed: str, device: str) -> transformer.Run:
    return transformer.run(model.shared(), typed, torch.device(device))


with page.sidebar("Sentences"):
    typed = page.control("text")
    st.caption("Examples:")
    # Not a function of this script: as a callback, it would keep this run's globals (its run of the model, about
    # 16 MiB) alive for as long as Streamlit keeps the session, 2 minutes after it closes (issue 47, attack 2).
    for name, sentences in text.EXAMPLES.items():
        st.button(name, key=f"example_{name}", on_click=st.session_state.update, args=({"text": sentences},))
with page.sidebar("LayerNorm"):
    layer, site_name = page.controls("layer", "site")
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
cols = transformer.window(site.x, start, WIDTH, order == "largest")
s, t, j, value = site.largest
ws, wt, std = site.widest

st.badge(text.check(site), icon=":material/check:", color="green" if site.check <= 1e-4 else "red")
page.metrics(
    {
        "Largest |x|": f"{value:.4g}",
        "At token, feature": f"{quote(lab.tokens[s][t])}, {j}",  # a metric's value is Markdown: a token is quoted
        "Largest σ": f"{std:.4g} ({quote(lab.tokens[ws][wt])})",
        "Median token's σ": f"{site.median_std:.4g}",
    },
    helps={"Largest |x|": "Over the real tokens (padding left out) and all 384 features of this LayerNorm's input."},
)
st.markdown(text.largest(lab, site))
if site_name == "embeddings" and layer:
    st.caption(text.EMBEDDINGS_LAYER)
if text.unknown(lab):
    st.caption(text.unknown(lab))
st.caption(f"{lab.device}, {lab.dtype}: the forward took {lab.seconds * 1000:.0f} ms.")

st.subheader("LN, token by token")
page.say(text.window(order, start, len(cols), site.x.shape[-1]))
page.chart(
    figures.fig_ln(lab, site, cols, output),
    key="tf_ln",
    alt=f"x at {site_name} LayerNorm of layer {site.layer}: {len(figures.row_labels(lab))} tokens by {len(cols)} "
    "features, LN's σ and μ per token, and LN's output.",
)
page.say(text.ln_vs_bn(lab, site))

st.subheader("BN over the tokens, per feature")
page.chart(
    figures.fig_bn(lab, site, cols, output),
    key="tf_bn",
    alt=f"BN's σ per feature over the tokens, and BN's output, for the same {len(cols)} features.",
)
page.say(text.massive(lab, site))

st.subheader("The model's own γ and β")
page.say(text.affine(site))
page.chart(
    figures.fig_affine(site, j),
    key="tf_affine",
    alt=f"γ and β of this LayerNorm for all {site.x.shape[-1]} features; feature {j} marked.",
)

st.subheader("A batch: padding")
page.say(text.batch(lab, site))
if len(lab.sentences) > 1:
    page.chart(
        figures.fig_padding(lab, site, j),
        key="tf_padding",
        alt=f"Feature {j} of x for each sentence and token position; padding marked.",
    )
else:
    page.say("Type two or more sentences of different lengths, one per line, to see the padding.")
st.page_link("pages/sequences.py", label="Padding and per-step BN, on sequences", icon=":material/timeline:")
page.finish()
