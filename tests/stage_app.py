"""A scratch page for the stage's browser tests: lnviz computes, ui.stage draws (issue 12).

Until the main page shows the stage, tests/test_browser_stage.py and
benchmarks/stage.py serve this file. Its sidebar holds the app's own widgets
(drawn from the state table, bound to the URL), so a value released on the
stage has to reach them, and the link.
"""

import gc

import streamlit as st

from ui import mode

st.set_page_config(
    page_title="lnviz: the stage",
    layout="wide",
    initial_sidebar_state="collapsed" if mode.presenting() else "auto",
)
mode.apply_lecture_style()
st.title("LayerNorm vs BatchNorm")

from lnviz import data, explorer, stage, state  # noqa: E402
from ui import stage as live  # noqa: E402
from ui.controls import control, normalization_controls  # noqa: E402

with st.sidebar:
    dist = control(state.DIST, "select")
    batch = control(state.BATCH, "number")
    features = control(state.FEATURES, "number")
    seed = control(state.SEED, "number")
norm = normalization_controls()
for key, limit in (("row", batch - 1), ("col", features - 1)):
    if st.session_state.get(key, 0) > limit:
        st.session_state[key] = limit
with st.sidebar:
    row = min(control(state.ROW, "number"), batch - 1)
    col = min(control(state.COL, "number"), features - 1)

x = data.make_activations(dist, batch, features, seed)  # (B, H), float64
gamma, beta = data.affine(features, seed, norm.gain, norm.bias, norm.affine)
result = explorer.with_affine(explorer.normalize(x, norm.eps), gamma, beta)
size = (stage.LECTURE_ROWS, stage.LECTURE_COLS) if mode.presenting() else (stage.ROWS, stage.COLS)
rows, cols = stage.window(batch, features, row, col, *size)
per_feature = data.random_affine(features, seed) if norm.affine else None
live.draw(stage.payload(result, rows, cols, norm.gain, norm.bias, per_feature), (row, col))

# As app.py does: Streamlit collects all garbage after every run, and with torch loaded that walk
# costs hundreds of ms; the modules stay for the process's life, so they leave the collector's sight.
if not gc.get_freeze_count():
    gc.collect()
    gc.freeze()
