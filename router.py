"""lnviz: the page router, the script that ``app.py``'s ``st.App`` runs for each session. Its navigation is the
page registry, lnviz/views/pages.py: each page one file in pages/.

The explorer is the default page, at /, and also at /explorer (a hidden second
entry for the same file), so a link to /explorer opens it.

App-wide things live here: the page config (lecture mode collapses the
sidebar), the lecture style and the garbage collector. Nothing here imports
torch: on a fresh server a page paints its title while torch loads.
"""

import streamlit as st

from lnviz.views import pages
from server import heavy
from ui.kit import boot, mode

boot.router()
st.set_page_config(
    page_title="lnviz: LayerNorm vs BatchNorm",
    # A local SVG goes to the browser inline, as a data: URL. A ":material/…:" icon would be fetched from a
    # font CDN, which an offline classroom can't reach.
    page_icon=mode.ASSETS / "favicon.svg",
    layout="wide",
    initial_sidebar_state="collapsed" if mode.presenting() else "auto",
)


def navigation() -> dict[str, list[st.Page]]:
    """The navigation's sections, each a list of pages, from the page registry (lnviz/views/pages.py).

    Streamlit serves the default page at / only, so a page's aliases (the explorer's /explorer) are the same
    script again, hidden from the navigation, which lists it once. Not a redirect to /: that would push a
    history entry, and Back would land on /explorer and bounce.
    """
    sections: dict[str, list[st.Page]] = {}
    for entry in pages.PAGES:
        common = dict(title=entry.title, icon=entry.icon)
        listed = st.Page(entry.file, url_path=entry.url_path, default=entry.default, **common)
        hidden = [st.Page(entry.file, url_path=alias, visibility="hidden", **common) for alias in entry.aliases]
        sections.setdefault(entry.section, []).extend([listed, *hidden])
    return sections


# In lecture mode the navigation moves to the top bar, so the sidebar starts with the controls that matter.
heavy.install()  # before any page can take a file or draw the stage
page = st.navigation(navigation(), position="top" if mode.presenting() else "sidebar")
mode.apply_style()
if mode.presenting():
    st.sidebar.link_button("Leave lecture mode", "?", icon=":material/close_fullscreen:")
page.run()

boot.freeze_long_lived()  # after the page: once it has imported torch, pandas and plotly
