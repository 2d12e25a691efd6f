"""Where lnviz's own HTTP routes sit: under ``server.baseUrlPath``, which Streamlit puts before its own routes
but not before those an ``st.App`` is given (:mod:`ui.poll.routes` does). The routes, and the pages and middleware
that name one of them to a browser, ask here."""

from __future__ import annotations

import streamlit as st


def prefix() -> str:
    """``server.baseUrlPath`` as a route's prefix: "" or "/lnviz"."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""
