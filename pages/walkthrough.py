"""Walkthrough: one sample's LayerNorm, then one feature's BatchNorm, step by step."""

import streamlit as st
import torch

from lnviz import data, device, explorer, state, walkthrough
from ui import mode
from ui.controls import control, device_picker, normalization_controls, share_box, show_notes

LAST = walkthrough.N_STEPS - 1

mode.apply_lesson()
st.title("Walkthrough")
mode.show_lesson()
mode.say(
    "**The claim:** LayerNorm and BatchNorm are the same four moves (subtract a mean, divide by a standard "
    "deviation, scale by γ, shift by β) along different axes of x. LN follows one sample, row i, across its "
    "features (Ba, Kiros and Hinton, 2016); BN follows one feature, column j, down the samples of the batch "
    "(Ioffe and Szegedy, 2015).\n\n"
    "Steps 1–6 walk LN along row i, steps 7–12 BN down column j. Each step highlights the cells it uses, "
    "the bars show that row or column after the step, and the formula carries torch's own numbers."
)

with st.sidebar:
    st.header("Input")
    dist = control(state.DIST, "select")
    st.caption(data.PRESETS[dist])
    batch = control(state.BATCH)
    features = control(state.FEATURES)
    seed = control(state.SEED, "number")
    norm = normalization_controls()
    gain, bias, affine, eps = norm.gain, norm.bias, norm.affine, norm.eps
    st.header("Compute")
    picked = device_picker()

# The chosen cell: clamp to the grid before its pickers are drawn, so a smaller
# B or H (or a link) never leaves it outside.
for key, limit in (("row", batch - 1), ("col", features - 1)):
    if st.session_state.get(key, 0) > limit:
        st.session_state[key] = limit


def _move(by: int) -> None:
    st.session_state["step"] = min(max(st.session_state.get("step", 0) + by, 0), LAST)


indicator = st.container()
back_col, next_col, step_col, row_col, col_col = st.columns([1, 1, 4, 1.3, 1.3], vertical_alignment="bottom")
step = control(walkthrough.STEP, "slider", where=step_col, format="step=%d")  # the link's value, from 0
i = control(state.ROW, "number", where=row_col)
j = control(state.COL, "number", where=col_col)
i, j = min(i, batch - 1), min(j, features - 1)  # a link read on the first run may name a cell past the grid
locked = walkthrough.STEP.key in mode.hidden()  # a link that hides the step pins it
back_col.button(
    "Back",
    key="back",
    on_click=_move,
    args=(-1,),
    disabled=locked or step <= 0,
    icon=":material/arrow_back:",
    width="stretch",
)
next_col.button(
    "Next",
    key="next",
    on_click=_move,
    args=(1,),
    disabled=locked or step >= LAST,
    icon=":material/arrow_forward:",
    width="stretch",
)
show_notes()


@st.cache_resource(max_entries=8, show_spinner=False)
def activations(dist: str, batch: int, features: int, seed: int, device_type: str) -> torch.Tensor:
    """x (B, H), drawn again only when the data change: Back and Next only re-index it.

    Shared between sessions and never mutated: the walkthrough reads one row and one column.
    """
    dev = torch.device(device_type)
    return data.make_activations(dist, batch, features, seed, device=dev, dtype=device.compute_dtype(dev))


def walk_on(dev: torch.device) -> tuple[torch.Tensor, tuple[walkthrough.Step, ...]]:
    x = activations(dist, batch, features, seed, dev.type)  # (B, H)
    gamma, beta = data.affine(features, seed, gain, bias, affine, like=x)
    return x, walkthrough.steps(x, gamma, beta, eps, i, j)


try:
    (x, walk), dev, fallback = device.with_fallback(walk_on, picked)
except ValueError as err:
    st.warning(f"This walkthrough cannot be computed: {err}.", icon=":material/warning:")
    st.stop()
if fallback:
    st.warning(fallback, icon=":material/memory:")
now = walk[step]

with indicator:
    color = "blue" if now.norm == "LN" else "orange"
    st.subheader(f"Step {step + 1} of {walkthrough.N_STEPS}: :{color}[{now.norm}] · {now.title}")
    mode.say(now.text)

if now.note:
    st.warning(now.note, icon=":material/warning:")
rows, cols = explorer.window(batch, features, i, j)
if (rows.stop - rows.start, cols.stop - cols.start) != (batch, features):
    mode.say(
        f"The grid shows the {rows.stop - rows.start} × {cols.stop - cols.start} window around cell ({i}, {j}); "
        "the statistics and the bars are over the full row or column."
    )
st.plotly_chart(walkthrough.fig_step(x, now, rows, cols), key="step_chart", width="stretch")
st.latex(now.latex)
st.caption(f"Computed by torch on {device.label(dev)}, in {str(x.dtype).removeprefix('torch.')}.")

share_box(walkthrough.PARAMS)
