"""Training race: no norm, BN, LN and RMSNorm trained side by side; then Pre-LN against Post-LN gradients."""

import streamlit as st

from lnviz.labs import training
from lnviz.labs.training import text, transformer, transformer_text
from lnviz.maths.device import label
from ui.kit.page import Page
from ui.labs import own_data, race

page = Page.start(intro=text.INTRO)
with page.sidebar("Race"):
    task, batch, lr, steps, seed = page.controls("task", "batch", "lr", "steps", "seed")
with page.sidebar("Compute"):
    device = page.device()

st.caption(f"{training.TASKS[task]} Device: {label(device)}.")
run = race.buttons()
arena = race.Arena(page, (task, batch, lr, steps, seed, str(device)))

cached = arena.result
if run and cached is not None and cached.complete:
    st.caption(text.CACHED)
elif run:
    arena.run()

result = arena.result
playing = st.session_state.pop(race.PLAY, False) and result is not None
if result is None:
    arena.chart.info(text.RUN_FIRST, icon=":material/sports_score:")
else:
    arena.draw(result, arena.replay_controls(result), playing)
    if not result.complete:
        st.info(text.stopped(result))
    race.summary(page, result)
    race.failures(result)
    if race.bn_is_noisy(result, batch):
        page.say(text.small_batch(batch))
    page.chart(training.fig_step_time(result), key="step_time", alt=text.STEP_TIME_ALT)
    st.caption(text.STEP_TIME_CAPTION)

st.subheader("Explore a trained layer")
page.say(text.EXPLORE)
variant_col, layer_col, send_col = st.columns([2, 2, 2], vertical_alignment="bottom")
variant = page.control("variant", where=variant_col)
layer = page.control("layer", where=layer_col)
if send_col.button("Send to the explorer", key="send", icon=":material/grid_on:"):
    if result is None:
        st.info(text.NO_RACE)
    else:
        try:
            x = training.activations(result, variant, layer)
        except ValueError as error:
            st.warning(f"Nothing was sent: {error}")
        else:
            refused = own_data.send(x, text.sent_source(variant, layer, training.describe(result)))
            if refused:
                st.warning(f"Nothing was sent: {refused}")
            else:
                st.switch_page("pages/explorer.py", query_params={})

st.subheader("Pre-LN or Post-LN")
intro_box = st.container()  # above the depth slider; it names the number of draws, known once computed
depth = page.control("depth", where=st)
profile = page.compute(transformer.grad_profile, depth, seed, str(device))
page.say(transformer_text.intro(profile.draws), where=intro_box)
page.chart(transformer.fig_grad_profile(profile), key="gradients", alt=transformer_text.chart_alt(depth))
st.markdown(transformer_text.after_chart(profile))  # the measured ratios: kept in lecture mode
page.say(transformer_text.WARM_UP)
page.finish()
if playing:  # last, so the whole page is drawn while the race draws in again
    arena.play(result)
