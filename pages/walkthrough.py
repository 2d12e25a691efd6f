"""Walkthrough: one sample's LayerNorm, then one feature's BatchNorm, step by step."""

import streamlit as st
import torch

from lnviz.labs import explorer, walkthrough
from lnviz.maths import data, device
from ui import keys
from ui.controls import normalization_controls
from ui.page import Page

page = Page.start(
    intro="**The claim:** LayerNorm and BatchNorm are the same four moves (subtract a mean, divide by a standard "
    "deviation, scale by γ, shift by β) along different axes of x. LN follows one sample, row i, across its "
    "features (Ba, Kiros and Hinton, 2016); BN follows one feature, column j, down the samples of the batch "
    "(Ioffe and Szegedy, 2015).\n\n"
    "Steps 1–6 walk LN along row i, steps 7–12 BN down column j. Each step highlights the cells it uses, "
    "the bars show that row or column after the step, and the formula carries torch's own numbers.",
)
with page.sidebar("Input"):
    dist = page.control("dist")
    st.caption(data.DISTS[dist])
    batch, features, seed = page.controls("batch", "features", "seed")
norm = normalization_controls(page.control)
with page.sidebar("Compute"):
    picked = page.device()


def _move(by: int) -> None:
    st.session_state["step"] = min(max(st.session_state.get("step", 1) + by, 1), walkthrough.N_STEPS)


locked = "step" in page.hidden  # a link that hides the step pins it
if not locked and (move := keys.step_keys("walk_keys")):
    _move(move)
indicator = st.container()
# The picture left, the controls and the formula right: on a 1280 × 720 projector a step fits one screen.
picture, side = st.columns([5, 4], gap="medium")
with side:
    back_col, next_col = st.columns(2)
    step = page.control("step", where=st)
    row_col, col_col = st.columns(2)
i = page.index("sample", batch, where=row_col)
j = page.index("feature", features, where=col_col)
back_col.button(
    "Back",
    key="back",
    on_click=_move,
    args=(-1,),
    disabled=locked or step <= 1,
    icon=":material/arrow_back:",
    width="stretch",
)
next_col.button(
    "Next",
    key="next",
    on_click=_move,
    args=(1,),
    disabled=locked or step >= walkthrough.N_STEPS,
    icon=":material/arrow_forward:",
    width="stretch",
)


def activations(dist: str, batch: int, features: int, seed: int, device_type: str) -> torch.Tensor:
    """x (B, H), drawn again only when the data change: Back and Next only re-index it.

    Cached by the page kit (bounded by bytes) and shared between sessions, never mutated: the walkthrough
    reads one row and one column.
    """
    dev = torch.device(device_type)
    return data.make_activations(dist, batch, features, seed, device=dev, dtype=device.compute_dtype(dev))


def walk_on(dev: torch.device) -> tuple[torch.Tensor, tuple[walkthrough.Step, ...]]:
    x = page.compute(activations, dist, batch, features, seed, dev.type, shared=True)  # (B, H)
    gain, bias = data.affine(features, seed, norm.gain, norm.bias, norm.affine, like=x)
    return x, walkthrough.steps(x, gain, bias, norm.eps, i, j)


(x, walk), dev = page.on_device(walk_on, picked)
now = walk[step - 1]

with indicator:
    st.subheader(f"Step {step} of {walkthrough.N_STEPS}: :{page.prose_color(now.norm)}[{now.norm}] · {now.title}")
    page.say(now.text)

if now.note:
    st.warning(now.note, icon=":material/warning:")
rows, cols = explorer.window(batch, features, i, j)
if (rows.stop - rows.start, cols.stop - cols.start) != (batch, features):
    page.say(
        f"The grid shows the {rows.stop - rows.start} × {cols.stop - cols.start} window around cell ({i}, {j}); "
        "the statistics and the bars are over the full row or column."
    )
page.chart(
    walkthrough.fig_step(x, now, rows, cols, height=330 if page.presenting else 460),
    key="step_chart",
    alt=f"Step {step}: {now.label}, on {'row ' + str(i) if now.norm == 'LN' else 'column ' + str(j)} of x.",
    where=picture,
)
side.latex(now.latex)
side.caption(f"Computed by torch on {device.label(dev)}, in {str(x.dtype).removeprefix('torch.')}.")
page.finish()
