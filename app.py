"""lnviz: the router. Each page is one file in pages/, with an explicit url_path."""

import streamlit as st

st.set_page_config(page_title="lnviz: LayerNorm vs BatchNorm", page_icon="📐", layout="wide")

PAGES = {
    "Explore": [
        st.Page("pages/explorer.py", title="LayerNorm vs BatchNorm", icon="📐", url_path="explorer", default=True),
    ],
}

st.navigation(PAGES).run()
