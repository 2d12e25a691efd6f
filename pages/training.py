"""Training race: no norm, BN, LN and RMSNorm trained side by side; then Pre-LN against Post-LN gradients."""

import time

import streamlit as st

from lnviz.labs import training
from lnviz.labs.training import transformer, transformer_text
from lnviz.maths.device import label
from lnviz.serving import slots
from ui import heavy, own_data
from ui.page import Page

GO = "_training_go"  # set by a suggested race's button: run it on this rerun
PLAY = "_training_play"  # set by Play, or by a race too fast to watch: draw the race in again on this rerun
RACES = "training_races"  # finished and stopped races of this session, by their settings
KEEP = 8  # races kept per session
REDRAW_SECONDS = 0.5  # the live chart is redrawn at most this often, and at most 20% of the time
# The replayed step is a view of the race in this session, like the race itself: not a control of the link.
REPLAY = "replay"
REPLAY_OF = "_training_replay_of"  # the race the replay slider was drawn for


def suggest(settings: dict) -> None:
    for key, value in settings.items():
        st.session_state[key] = value
    st.session_state[GO] = True


def progress_text(result: training.Race) -> str:
    return (
        f"Step {result.done} of {result.steps} · {result.steps_per_second:.1f} steps/s "
        f"(each step trains every model still running) · {result.elapsed:.1f} s"
    )


def replay_text(result: training.Race, step: int) -> str:
    return (
        f"Replay: step {step} of {result.done}, drawn from what was recorded "
        f"(the race trained in {result.elapsed:.1f} s)"
    )


page = Page.start(
    intro="Ba, Kiros and Hinton (2016) find that recurrent networks benefit most from layer normalization, "
    '"especially for long sequences and small mini-batches" (§7). LN places no constraint on the batch size and '
    "works with a batch of 1 (§3), while the effect of batch normalization depends on the mini-batch size "
    "(abstract). In preliminary experiments they found BN better than LN for convolutional networks (§6.7); "
    "those are not raced here.\n\n"
    "Here one model is trained four times side by side, with no norm, BN, LN and RMSNorm: the same data, the "
    "same initial weights, the same optimizer (Adam). Press **Run** and watch: a race that trains faster than "
    f"you could follow is drawn in again over {training.REPLAY_SECONDS:g} s. Each **Try** button sets up a race "
    "that puts one claim to the test.",
)
with page.sidebar("Race"):
    task, batch, lr, steps, seed = page.controls("task", "batch", "lr", "steps", "seed")
with page.sidebar("Compute"):
    device = page.device()

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
# The race in view under Run: its progress, the replay's controls, who leads at the step shown, the chart.
progress = st.empty()
replay_box = st.container()
said = st.empty()
chart = st.empty()


def race_live() -> None:
    """Run the race, redrawing the chart as it goes; a click on Stop reruns the page, which ends it.

    A race is heavy work: it runs under the server's limits (a CPU budget, and a cap on how many run at
    once), and a visitor over them is told to try again in a while.
    """
    with heavy.heavy("the training race") as ticket:
        if ticket is not None:
            _race(ticket)


def _race(ticket: slots.Ticket) -> None:
    races.pop(key, None)
    st.session_state.pop(REPLAY_OF, None)  # a new race: the replay starts at its end
    next_draw = 0.0
    try:
        for snapshot in training.race(
            task, batch, lr, steps, seed, device, every=max(1, steps // 50), tick=ticket.check
        ):
            races[key] = snapshot
            progress.progress(snapshot.done / steps, text=progress_text(snapshot))
            if time.perf_counter() >= next_draw:
                start = time.perf_counter()
                page.chart(training.fig_race(snapshot), key=None, alt="The race so far.", where=chart)
                next_draw = time.perf_counter() + max(REDRAW_SECONDS, 4 * (time.perf_counter() - start))
    except ValueError as error:
        st.warning(f"The race could not run: {error}")
    else:
        if training.too_fast_to_watch(races[key]):
            st.session_state[PLAY] = True  # drawn in again, at a pace one can follow, once the page is drawn
    while len(races) > KEEP:
        races.pop(next(iter(races)))


def replay_controls(result: training.Race) -> int:
    """Play and a slider over the race's evaluation steps; the step the chart shows (the last one unless moved)."""
    marks = result.eval_steps
    if st.session_state.get(REPLAY_OF) != key or st.session_state.get(REPLAY) not in marks:
        st.session_state[REPLAY_OF] = key
        st.session_state[REPLAY] = marks[-1]
    play_col, slider_col = replay_box.columns([1, 4], vertical_alignment="bottom")
    play_col.button(
        "Play",
        key="play",
        icon=":material/play_arrow:",
        help="Draws this race in again from step 0, from what was recorded: nothing is trained again.",
        on_click=lambda: st.session_state.update({REPLAY: marks[-1], PLAY: True}),
    )
    return slider_col.select_slider(
        "Replay: the race at step",
        options=marks,
        key=REPLAY,
        help="The curves as they stood at this step, on the axes of the whole race.",
    )


def commentary(result: training.Race, step: int, summary: training.Summary, where) -> None:
    """Under the replay: who led at the replayed step (``summary``, of the race cut there), in its words."""
    if step < result.done:
        where.caption(training.story(summary)[0])
    else:
        where.empty()


def draw(result: training.Race, step: int, chart_key: str | None) -> training.Summary:
    """The race chart at ``step`` (on the whole race's axes), its alt text the story of what it shows; that
    story's summary."""
    shown = result.at(step)
    summary = training.summarize(shown)
    page.chart(training.fig_race(shown, whole=result), key=chart_key, alt=training.story_alt(summary), where=chart)
    return summary


def play(result: training.Race, said) -> None:
    """Draw the recorded race in again over ``training.REPLAY_SECONDS``, one evaluation step after another
    from the page's step 0, then the whole race (keyed). The progress bar follows the step."""
    marks = result.eval_steps
    pause = training.replay_pause(result)
    for step in marks[1:-1]:
        time.sleep(pause)
        progress.progress(step / result.steps, text=replay_text(result, step))
        commentary(result, step, draw(result, step, chart_key=None), said)
    time.sleep(pause)
    progress.progress(result.done / result.steps, text=progress_text(result))
    commentary(result, marks[-1], draw(result, marks[-1], chart_key="race"), said)


def summary(result: training.Race) -> None:
    """How the race ended: the story in words, and the table. The finish and LN against no norm stay in lecture
    mode (they are measured); accuracy and the targets, which the table holds, are prose a lecturer speaks."""
    ended = training.summarize(result)
    st.subheader("How the race ended" if result.complete else f"Where the race stopped, at step {result.done}")
    brief = training.story(ended, brief=True)
    headline, *rest = training.story(ended)
    st.markdown(f"**{headline}**")
    for text in rest:
        if text in brief:
            st.markdown(text)
        else:
            page.say(text)
    st.table(
        training.story_table(ended),
        hide_index=True,
        alt="Each model's final held-out loss and accuracy, and the first step at which it reached each target.",
    )
    st.caption(
        "Final values are one evaluation each, on the same 256 held-out samples; the curves show how much they "
        "move between evaluations. “By step” is the first evaluation at which the curve reached the target."
    )


cached = races.get(key)
if run and cached is not None and cached.complete:
    st.caption("This race already ran with these settings in this session: shown from the cache.")
elif run:
    race_live()

result = races.get(key)
playing = st.session_state.pop(PLAY, False) and result is not None
if result is None:
    chart.info("Press **Run** to start the race with these settings.", icon=":material/sports_score:")
else:
    step = replay_controls(result)
    if playing:
        progress.progress(0.0, text=replay_text(result, 0))
        draw(result, 0, chart_key=None)  # the keyed chart comes at the end of the replay, below
    else:
        progress.progress(result.done / result.steps, text=progress_text(result))
        commentary(result, step, draw(result, step, chart_key="race"), said)
    if not result.complete:
        st.info(f"Stopped at step {result.done} of {result.steps}. Press **Run** to race again from the start.")
    summary(result)
    for curve in result.curves:
        if curve.failed:
            st.warning(f"**{curve.variant}** · {curve.failed}", icon="⚠️")
    if batch <= 4 and any(c.variant == "BN" and not c.failed for c in result.curves):
        page.say(
            f"At batch {batch}, BN trains on the mean and variance of {batch} samples: noisy numbers that change at "
            "every step. At test time it uses running averages instead, so its held-out curve (solid) can sit "
            "far from its training curve (dotted)."
        )
    page.chart(training.fig_step_time(result), key="step_time", alt="Median time of one optimizer step for each model.")
    st.caption(
        "Median wall time of one optimizer step per model, waiting for the device before reading the clock. "
        "The norms here are computed step by step (lnviz.maths.norms, several kernels each), not by PyTorch's fused "
        "kernels: the Kernel benchmark page times those."
    )

st.subheader("Explore a trained layer")
page.say(
    "Send the activations entering one normalization layer of a trained model, on 256 fresh samples, to the "
    "main explorer: real activations instead of synthetic ones, under every tool there."
)
variant_col, layer_col, send_col = st.columns([2, 2, 2], vertical_alignment="bottom")
variant = page.control("variant", where=variant_col)
layer = page.control("layer", where=layer_col)
if send_col.button("Send to the explorer", key="send", icon=":material/grid_on:"):
    if result is None:
        st.info("Run a race first: there is no trained model yet with these settings.")
    else:
        try:
            x = training.activations(result, variant, layer)
        except ValueError as error:
            st.warning(f"Nothing was sent: {error}")
        else:
            source = f"input of {variant} layer {layer} after training ({training.describe(result)})"
            refused = own_data.send(x, source)
            if refused:
                st.warning(f"Nothing was sent: {refused}")
            else:
                st.switch_page("pages/explorer.py", query_params={})

st.subheader("Pre-LN or Post-LN")
intro_box = st.container()  # above the depth slider; it names the number of draws, known once computed
depth = page.control("depth", where=st)
profile = page.compute(transformer.grad_profile, depth, seed, str(device))
page.say(transformer_text.intro(profile.draws), where=intro_box)
page.chart(
    transformer.fig_grad_profile(profile),
    key="gradients",
    alt=f"Gradient norm of each of {depth} blocks, Post-LN against Pre-LN.",
)
st.markdown(transformer_text.after_chart(profile))  # the measured ratios: kept in lecture mode
page.say(transformer_text.WARM_UP)
page.finish()
if playing:  # last, so the whole page is drawn while the race draws in again
    play(result, said)
