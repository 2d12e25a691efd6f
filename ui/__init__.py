"""Streamlit glue shared by the pages: the page kit, widgets from the state table, link modes.

Importing this package also guards the router: the first run of a fresh server
may be in Streamlit's legacy ``pages/`` folder mode, which would run a deep-linked
page without ``app.py``. That run switches the mode off and reruns, which goes
through ``app.py`` as intended (see :mod:`ui.streamlit_private`).
"""

import streamlit as st

from ui import streamlit_private

if streamlit_private.leave_legacy_pages_mode():
    st.rerun()
