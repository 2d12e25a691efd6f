"""Streamlit glue shared by the pages: widgets from the state table, link modes, sharing.

Importing this package also guards the router. A Streamlit server whose main
script has a ``pages/`` folder beside it runs its first session in the legacy
folder mode until ``st.navigation`` has been called once; a deep link such as
``/sequences`` would then run that page without ``app.py`` (no router, no
shared controls). Every page imports ``ui``, so the first such run switches the
legacy mode off and reruns, which goes through ``app.py`` as intended.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:
    PagesManager.uses_pages_directory = False
    st.rerun()
