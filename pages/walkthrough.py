"""Walkthrough: the stage, lit step by step: one sample's LayerNorm, then one feature's BatchNorm."""

import streamlit as st

from lnviz.labs import explorer, walkthrough
from lnviz.labs.explorer import stage
from lnviz.maths import data, device
from ui.kit import keys, mode
from ui.kit.controls import normalization_controls
from ui.kit.page import Page
from ui.stage import stage as live

INTRO = (
    "**The claim:** LayerNorm and BatchNorm are the same four moves (subtract a mean, divide by a standard "
    "deviation, scale by γ, shift by β) along different axes of x. LN follows one sample, row i, across its "
    "features (Ba, Kiros and Hinton, 2016); BN follows one feature, column j, down the samples of the batch "
    "(Ioffe and Szegedy, 2015).\n\n"
    "Steps 1–6 walk LN along row i, steps 7–12 BN down column j, on the same stage as the explorer's: each step "
    "lights up what it uses, the chosen row or column of x shows the values after the step, and the formula "
    "on the stage carries torch's own numbers. Click a cell to choose i and j."
)

# On a projector the step's heading names the page: its height goes to the stage, so that BN's output
# column is on a 1280 × 720 screen with the step's words and formula.
page = Page.start(title=not mode.presenting())
if not page.presenting:  # lecture mode leaves the prose out (the lecturer talks), and its box too
    # On a phone the introduction goes under the stage and its step controls (assets/style.css): Back, Next
    # and the stage come first.
    with st.container(key="walk_intro"):
        page.say(INTRO)
with page.sidebar("Input"):
    dist = page.control("dist")
    st.caption(page.table["dist"].meaning(dist))
    batch, features, seed = page.controls("batch", "features", "seed")
    draw = page.control("draw", horizontal=True)
norm = normalization_controls(page.control)
with page.sidebar("Compute"):
    picked = page.device()


def _move(by: int) -> None:
    st.session_state["step"] = min(max(st.session_state.get("step", 1) + by, 1), walkthrough.N_STEPS)


locked = "step" in page.hidden  # a link that hides the step pins it
if not locked and (asked := keys.asked("walk_keys")) is not None:
    st.session_state["step"] = min(max(asked, 1), walkthrough.N_STEPS)
# The step's title with Back and Next beside it (as wide as their words, assets/style.css), then the stage, lit by
# the step, with its formula; under it the step, sample i and feature j as controls of their own (a link carries them).
indicator, back_col, next_col = st.columns([6, 1, 1], vertical_alignment="bottom")
note_box = st.container()
stage_box = st.container()  # the stage: drawn once the chosen cell is known
step_col, row_col, col_col = st.columns([4, 1, 1], vertical_alignment="bottom")
step = page.control("step", where=step_col)
i = page.index("sample", batch, where=row_col)
j = page.index("feature", features, where=col_col)
if not locked:
    keys.listen("walk_keys", step, walkthrough.N_STEPS)
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


def walk_on(dev):
    """Both norms of x with γ and β (the stage's numbers), and the twelve steps for cell (i, j)."""
    base = page.compute(explorer.generated, dist, batch, features, seed, dev.type, norm.eps, draw, shared=True)
    g, b = data.random_affine(features, seed, draw) if norm.affine else (None, None)  # (H,) each
    result = explorer.with_affine(base, norm.gain, norm.bias, g, b)
    return result, walkthrough.steps(base.x, result.affine.gamma, result.affine.beta, norm.eps, i, j)


(result, walk), dev = page.on_device(walk_on, picked)
now = walk[step - 1]

indicator.subheader(f"Step {step} of {walkthrough.N_STEPS}: :{page.prose_color(now.norm)}[{now.norm}] · {now.title}")
if now.note:
    note_box.warning(now.note, icon=":material/warning:")
with stage_box:
    rows, cols = stage.window(batch, features, i, j)
    note = live.resized(("walkthrough", dist, seed, draw, norm), result)
    payload = stage.payload(result, rows, cols, locked=page.hidden, resized=note, dist=dist)
    sizes = live.steppers(page.table, page.hidden, batch, features)
    live.draw(payload, (i, j), walk=step, formula=now.latex, sizes=sizes)
    if (rows.stop - rows.start, cols.stop - cols.start) != (batch, features):
        st.caption(
            f"The stage draws from samples {rows.start}–{rows.stop - 1} and features {cols.start}–{cols.stop - 1} "
            f"of the {batch} × {features} grid, around cell ({i}, {j}), as many as fit the screen with their numbers; "
            f"μ, σ and the formula are over the whole {'row' if now.norm == 'LN' else 'column'}."
        )
st.caption(f"Computed by torch on {device.label(dev)}, in {str(result.x.dtype).removeprefix('torch.')}.")
page.finish(rerun_follows=live.waiting())
