"""lnviz's server: Streamlit's ``st.App`` running the page router (``router.py``), with lnviz's own routes beside it.

``streamlit run app.py`` finds ``app`` and serves it, so ``make run``, the Dockerfile and the Kubernetes
manifests start the app as before.
"""

import streamlit as st

from ui import routes

app = st.App("router.py", routes=routes.routes())
