import math
import time

import streamlit as st

from lnviz import training, transformer
from lnviz.device import label
from lnviz.state import DEVICE, SEED
from ui.controls import control, device_picker, share_box, show_notes

GO = "_training_go"  # set by a suggested race's button: run it on this rerun
RACES = "training_races"  # finished and stopped races of this session, by their settings
KEEP = 8  # races kept per session
REDRAW_SECONDS = 0.5  # the live chart is redrawn at most this often, and at most 20% of the time


@st.cache_data(show_spinner=False, max_entries=32)
def grad_profile(depth: int, seed: int, device: str) -> transformer.GradProfile:
    return transformer.grad_profile(depth, seed, device)


def suggest(settings: dict) -> None:
    for key, value in settings.items():
        st.session_state[key] = value
    st.session_state[GO] = True


def progress_text(result: training.Race) -> str:
    return (
        f"Step {result.done} of {result.steps} · {result.steps_per_second:.1f} steps/s "
        f"(each step trains all four models) · {result.elapsed:.1f} s"
    )


st.title("Training race")
st.markdown(
    "Ba, Kiros and Hinton (2016) claim that layer normalization helps recurrent networks train faster, and that "
    "it works at any batch size, where batch normalization's statistics turn into noise. (They also found BN "
    "still better for convolutional networks, which are not raced here.)\n\n"
    "Here one model is trained four times side by side, with no norm, BN, LN and RMSNorm: the same data, the "
    "same initial weights, the same optimizer (Adam). Press **Run** and watch.\n\n"
    "Each **Try** button sets up a race that puts one claim to the test."
)

task = control(training.TASK, "radio")
batch = control(training.BATCH, "number")
lr = control(training.LR, "select_slider")
steps = control(training.STEPS, "slider")
seed = control(SEED, "number")
with st.sidebar:
    device = device_picker()
show_notes()

st.caption(f"{training.TASKS[task]} Device: {label(device)}.")

run_col, stop_col, *try_cols = st.columns([1, 1, 2, 2, 2], vertical_alignment="center")
run = run_col.button("Run", key="run", type="primary", icon=":material/sports_score:")
stop_col.button(
    "Stop", key="stop", icon=":material/stop:", help="Stops the race; the steps done so far stay on the page."
)
for col, (name, (text, why, settings)) in zip(try_cols, training.SUGGESTED.items(), strict=True):
    col.button(f"Try: {text}", key=f"try_{name}", help=why, on_click=suggest, args=(settings,))
run = run or st.session_state.pop(GO, False)

races: dict = st.session_state.setdefault(RACES, {})
key = (task, batch, lr, steps, seed, str(device))
progress = st.empty()
chart = st.empty()

cached = races.get(key)
if run and cached is not None and cached.complete:
    st.caption("This race already ran with these settings in this session: shown from the cache.")
elif run:
    races.pop(key, None)
    next_draw = 0.0
    try:
        # A click on Stop reruns the page, which ends this loop at the next Streamlit call.
        for snapshot in training.race(task, batch, lr, steps, seed, device, every=max(1, steps // 50)):
            races[key] = snapshot
            progress.progress(snapshot.done / steps, text=progress_text(snapshot))
            if time.perf_counter() >= next_draw:
                start = time.perf_counter()
                chart.plotly_chart(training.fig_race(snapshot))
                spent = time.perf_counter() - start
                next_draw = time.perf_counter() + max(REDRAW_SECONDS, 4 * spent)
    except ValueError as error:
        st.warning(f"The race could not run: {error}")
    while len(races) > KEEP:
        races.pop(next(iter(races)))

result = races.get(key)
if result is None:
    chart.info("Press **Run** to start the race with these settings.", icon=":material/sports_score:")
else:
    progress.progress(result.done / result.steps, text=progress_text(result))
    chart.plotly_chart(training.fig_race(result), key="race")
    if not result.complete:
        st.info(f"Stopped at step {result.done} of {result.steps}. Press **Run** to race again from the start.")
    for curve in result.curves:
        if curve.failed:
            st.warning(f"**{curve.variant}** · {curve.failed}", icon="⚠️")
    if batch <= 4 and any(c.variant == "BN" and not c.failed for c in result.curves):
        st.caption(
            f"At batch {batch}, BN trains on the mean and variance of {batch} samples: noisy numbers that change at "
            "every step. At test time it uses running averages instead, so its held-out curve (solid) can sit "
            "far from its training curve (dotted)."
        )
    st.plotly_chart(training.fig_step_time(result), key="step_time")
    st.caption(
        "Median wall time of one optimizer step per model, waiting for the device before reading the clock. "
        "The norms here are computed step by step (lnviz.norms, several kernels each), not by PyTorch's fused "
        "kernels: the Kernel benchmark page times those."
    )

st.subheader("Explore a trained layer")
st.markdown(
    "Send the activations entering one normalization layer of a trained model, on 256 fresh samples, to the "
    "main explorer: real activations instead of synthetic ones, under every tool there."
)
variant_col, layer_col, send_col = st.columns([2, 2, 2], vertical_alignment="bottom")
variant = control(training.VARIANT, "select", where=variant_col)
layer = control(training.LAYER, "number", where=layer_col)
if send_col.button("Send to the explorer", key="send", icon=":material/grid_on:"):
    if result is None:
        st.info("Run a race first: there is no trained model yet with these settings.")
    else:
        try:
            x = training.activations(result, variant, layer)
        except ValueError as error:
            st.warning(f"Nothing was sent: {error}")
        else:
            st.session_state["explorer_activations"] = {
                "x": x.numpy(),
                "source": f"input of {variant} layer {layer} after training ({training.describe(result)})",
            }
            st.switch_page("pages/explorer.py", query_params={})

st.subheader("Pre-LN or Post-LN")
st.markdown(
    "Where LN sits in a Transformer changes its gradients at initialization (Xiong et al. 2020). Post-LN "
    "normalizes after each residual add; Pre-LN before each sublayer, plus once at the end. Both stacks below "
    "get the same weights and inputs; the gradient norm of each block's parameters is computed live."
)
depth = control(transformer.DEPTH, "slider", where=st)
try:
    profile = grad_profile(depth, seed, str(device))
except ValueError as error:
    st.warning(f"The profile could not be computed: {error}")
else:
    st.plotly_chart(transformer.fig_grad_profile(profile), key="gradients")
    top_post, top_pre = profile.post[-1], profile.pre[-1]
    st.markdown(
        f"At the last block Post-LN's gradient is **{top_post / top_pre:.1f}×** Pre-LN's; Xiong et al.'s theorem "
        f"says about √{depth} = {math.sqrt(depth):.1f}×. Large gradients near the output are why Post-LN needs a "
        "learning-rate warm-up. Post-LN's gradients grow towards the output; Pre-LN's do not, and here they "
        "shrink a little, as Shleifer et al. (2021) also measured."
    )

share_box((*training.PARAMS, *transformer.PARAMS, DEVICE))
