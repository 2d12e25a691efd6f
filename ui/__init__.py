"""Streamlit glue, a folder per concept: the page kit (``ui.kit``), the stage's glue (``ui.stage``), each lab's
Streamlit side (``ui.labs``) and the class poll's glue (``ui.poll``); what a shared server hosts and limits is
the package ``server``.

Importing it does nothing else: what must run before a page draws is in
:mod:`ui.kit.boot`, called by the router and the page kit.
"""
