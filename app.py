"""lnviz: the router. Each page is one file in pages/, with an explicit url_path.

The explorer is the default page, at /, and also at /explorer (a hidden second
entry for the same file), so a link to /explorer opens it.

App-wide things live here: the page config (lecture mode collapses the
sidebar), the lecture style and the garbage collector. Nothing here imports
torch: on a fresh server a page paints its title while torch loads.
"""

import gc
import sys

import streamlit as st

from ui import heavy, mode

st.set_page_config(
    page_title="lnviz: LayerNorm vs BatchNorm",
    page_icon=":material/grid_on:",
    layout="wide",
    initial_sidebar_state="collapsed" if mode.presenting() else "auto",
)

PAGES = {
    "Explore": [
        # Streamlit serves the default page at / only; its url_path just names it ("must still be unique").
        st.Page(
            "pages/explorer.py",
            title="LayerNorm vs BatchNorm",
            icon=":material/grid_on:",
            url_path="home",
            default=True,
        ),
        # ... so /explorer is the same script again, hidden from the navigation, which lists the explorer once.
        # Not a redirect to /: that would push a history entry, and Back would land on /explorer and bounce.
        # (page= by keyword: the page lists in tests/ and benchmarks/ are the listed pages, read from the
        # positional st.Page("pages/...") calls.)
        st.Page(
            page="pages/explorer.py",
            title="LayerNorm vs BatchNorm",
            icon=":material/grid_on:",
            url_path="explorer",
            visibility="hidden",
        ),
        st.Page("pages/walkthrough.py", title="Walkthrough", icon=":material/stairs:", url_path="walkthrough"),
    ],
    "Labs": [
        st.Page("pages/coupling.py", title="Batch coupling", icon=":material/link:", url_path="coupling"),
        st.Page("pages/train_eval.py", title="Train vs eval", icon=":material/sync_alt:", url_path="train_eval"),
        st.Page("pages/invariance.py", title="Invariance table", icon=":material/balance:", url_path="invariance"),
        st.Page("pages/sequences.py", title="Sequences", icon=":material/timeline:", url_path="sequences"),
        st.Page("pages/family.py", title="The norm family", icon=":material/view_in_ar:", url_path="family"),
    ],
    "Experiments": [
        st.Page("pages/training.py", title="Training race", icon=":material/sports_score:", url_path="training"),
        st.Page("pages/bench.py", title="Kernel benchmark", icon=":material/speed:", url_path="bench"),
    ],
}

# In lecture mode the navigation moves to the top bar, so the sidebar starts with the controls that matter.
heavy.install_upload_quota()  # before any page can take a file
page = st.navigation(PAGES, position="top" if mode.presenting() else "sidebar")
mode.apply_style()
if mode.presenting():
    st.sidebar.link_button("Leave lecture mode", "?", icon=":material/close_fullscreen:")
page.run()

# Streamlit's server runs a full garbage collection after every script run
# (runner.postScriptGC). With torch, pandas and plotly loaded that walks about
# 250,000 objects: 250-700 ms per slider move on a 2-core CPU. Those modules
# live as long as the process, so once a page has loaded them they are moved
# out of the collector's sight; what the pages create afterwards is still
# collected as usual.
if not gc.get_freeze_count() and "torch" in sys.modules:
    gc.collect()
    gc.freeze()
