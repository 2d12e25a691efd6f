"""The private Streamlit attributes lnviz relies on are still where ui.streamlit_private looks."""

from conftest import run_page

from ui import streamlit_private


def test_streamlit_still_has_the_private_attributes():
    assert streamlit_private.check() == []


def test_an_infinite_seed_in_a_link_leaves_the_page_working():
    # Without forget_initial_link_value, Streamlit's own int(inf) raises here.
    at = run_page("pages/explorer.py", {"seed": "inf"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="seed").value == 0
