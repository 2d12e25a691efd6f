"""The platform's floor: a bare Streamlit page with one slider and one line of text.

``benchmarks.browser_latency`` serves it beside the app and presses its slider,
which has the same key and range as the explorer's ``gain``, so the two pages
differ only in what the app computes and draws.
"""

import streamlit as st

gain = st.slider("Gain γ", min_value=-5.0, max_value=5.0, value=1.0, step=0.05, key="gain")
st.write(f"γ = {gain:.2f}")
