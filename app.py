"""lnviz's server: Streamlit's ``st.App`` running the page router (``router.py``), with lnviz's own routes beside it.

- ``routes``: the class room's public state as Server-Sent Events (:mod:`ui.poll.routes`).
- ``middleware``, on each page's HTML: a link read once, answered with today's link where it differs
  (:mod:`server.door`), the stage's modules to preload (:mod:`server.preload`), and the signed cookie that proves a
  browser keeps cookies (:mod:`server.proved`); on uploads, their turns (:mod:`server.upload_turns`).

``streamlit run app.py`` finds ``app`` and serves it, so ``make run``, the Dockerfile and the Kubernetes
manifests start the app as before.
"""

import streamlit as st
from starlette.middleware import Middleware

from server import door, preload, proved, upload_turns
from ui.kit import boot
from ui.poll import routes

boot.no_pages_folder_mode()  # before the first session, so that a deep link runs through router.py

app = st.App(
    "router.py",
    routes=routes.routes(),
    middleware=[door.middleware(), preload.middleware(), Middleware(proved.Middleware), upload_turns.middleware()],
)
