"""lnviz: the router. Each page is one file in pages/, with an explicit url_path."""

import streamlit as st

st.set_page_config(page_title="lnviz: LayerNorm vs BatchNorm", page_icon="📐", layout="wide")

PAGES = {
    "Explore": [
        st.Page("pages/explorer.py", title="LayerNorm vs BatchNorm", icon="📐", url_path="explorer", default=True),
    ],
    "Labs": [
        st.Page("pages/coupling.py", title="Batch coupling", icon="🔗", url_path="coupling"),
        st.Page("pages/train_eval.py", title="Train vs eval", icon="🔁", url_path="train-eval"),
        st.Page("pages/invariance.py", title="Invariance table", icon="⚖️", url_path="invariance"),
        st.Page("pages/sequences.py", title="Sequences", icon="🧵", url_path="sequences"),
        st.Page("pages/family.py", title="The norm family", icon="🧊", url_path="family"),
    ],
    "Experiments": [
        st.Page("pages/training.py", title="Training race", icon="🏁", url_path="training"),
        st.Page("pages/bench.py", title="Kernel benchmark", icon="⏱️", url_path="bench"),
    ],
}

st.navigation(PAGES).run()
