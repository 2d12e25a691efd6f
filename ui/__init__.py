"""Streamlit glue shared by the pages: the page kit, widgets from the state table, link modes, the stage.

Importing it does nothing else: what must run before a page draws is in
:mod:`ui.boot`, called by the router and the page kit.
"""
