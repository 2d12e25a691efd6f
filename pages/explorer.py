import streamlit as st

from lnviz import state
from ui.controls import control, show_notes

batch = control(state.BATCH)
st.write(batch)
show_notes()
