"""The training race's Streamlit side: a session's races by their settings, a race run live under the heavy-work
gate, and one drawn in again from what it recorded (the slider and Play).

The race, its replay's pace and its story are :mod:`lnviz.labs.training`; its words are
:mod:`lnviz.labs.training.text`. Nothing here acts on import.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from lnviz.labs import training
from lnviz.labs.training import text
from server import heavy
from ui.kit.page import Page

GO = "_training_go"  # set by a suggested race's button: run it on this rerun
PLAY = "_training_play"  # set by Play, or by a race too fast to watch: draw the race in again on this rerun
RACES = "training_races"  # finished and stopped races of this session, by their settings
KEEP = 8  # races kept per session
REDRAW_SECONDS = 0.5  # the live chart is redrawn at most this often, and at most 20% of the time
# The replayed step is a view of the race in this session, like the race itself: not a control of the link.
REPLAY = "replay"
REPLAY_OF = "_training_replay_of"  # the race the replay slider was drawn for


def _suggest(settings: dict) -> None:
    st.session_state.update(settings)
    st.session_state[GO] = True


def buttons() -> bool:
    """Run, Stop and a Try button per suggested race, in one row; whether to run the race now."""
    run_col, stop_col, *try_cols = st.columns([1, 1, 2, 2, 2], vertical_alignment="center")
    run = run_col.button("Run", key="run", type="primary", icon=":material/sports_score:")
    stop_col.button("Stop", key="stop", icon=":material/stop:", help=text.STOP_HELP)
    for col, (name, (label, why, settings)) in zip(try_cols, training.SUGGESTED.items(), strict=True):
        col.button(f"Try: {label}", key=f"try_{name}", help=why, on_click=_suggest, args=(settings,))
    return run or st.session_state.pop(GO, False)


class Arena:
    """The race in view under the buttons, for one set of settings ``key`` (task, batch, lr, steps, seed,
    device): its progress, the replay's controls, who leads at the step shown, and the chart, in that order."""

    def __init__(self, page: Page, key: tuple) -> None:
        self.page, self.key = page, key
        self.races: dict = st.session_state.setdefault(RACES, {})
        self.progress = st.empty()
        self.replay_box = st.container()
        self.said = st.empty()
        self.chart = st.empty()

    @property
    def result(self) -> training.Race | None:
        return self.races.get(self.key)

    def run(self) -> None:
        """Run the race, redrawing the chart as it goes; a click on Stop reruns the page, which ends it.

        A race is heavy work: it runs under the server's limits (a CPU budget, and a cap on how many run at
        once), and a visitor over them is told to try again in a while.
        """
        with heavy.heavy("the training race") as ticket:
            if ticket is not None:
                self._race(ticket.check)

    def _race(self, tick: Callable[[], None]) -> None:
        """The race itself; ``tick`` is called before every step and raises once the gate ends the race."""
        task, batch, lr, steps, seed, device = self.key
        self.races.pop(self.key, None)
        st.session_state.pop(REPLAY_OF, None)  # a new race: the replay starts at its end
        next_draw = 0.0
        try:
            for snapshot in training.race(task, batch, lr, steps, seed, device, every=max(1, steps // 50), tick=tick):
                self.races[self.key] = snapshot
                self.progress.progress(snapshot.done / steps, text=text.progress(snapshot))
                if time.perf_counter() >= next_draw:
                    start = time.perf_counter()
                    self.page.chart(training.fig_race(snapshot), key=None, alt=text.LIVE_ALT, where=self.chart)
                    next_draw = time.perf_counter() + max(REDRAW_SECONDS, 4 * (time.perf_counter() - start))
        except ValueError as error:
            st.warning(f"The race could not run: {error}")
        else:
            if training.too_fast_to_watch(self.races[self.key]):
                st.session_state[PLAY] = True  # drawn in again, at a pace one can follow, once the page is drawn
        while len(self.races) > KEEP:
            self.races.pop(next(iter(self.races)))

    def replay_controls(self, result: training.Race) -> int:
        """Play and a slider over the race's evaluation steps; the step the chart shows (the last unless moved)."""
        marks = result.eval_steps
        if st.session_state.get(REPLAY_OF) != self.key or st.session_state.get(REPLAY) not in marks:
            st.session_state[REPLAY_OF] = self.key
            st.session_state[REPLAY] = marks[-1]
        play_col, slider_col = self.replay_box.columns([1, 4], vertical_alignment="bottom")
        play_col.button(
            "Play",
            key="play",
            icon=":material/play_arrow:",
            help=text.PLAY_HELP,
            on_click=lambda: st.session_state.update({REPLAY: marks[-1], PLAY: True}),
        )
        return slider_col.select_slider(text.REPLAY_LABEL, options=marks, key=REPLAY, help=text.REPLAY_HELP)

    def _chart(self, result: training.Race, step: int, chart_key: str | None) -> training.Summary:
        """The race chart at ``step`` (on the whole race's axes), its alt text the story of what it shows; that
        story's summary."""
        shown = result.at(step)
        summary = training.summarize(shown)
        alt = training.story_alt(summary)
        self.page.chart(training.fig_race(shown, whole=result), key=chart_key, alt=alt, where=self.chart)
        return summary

    def show(self, result: training.Race, step: int, chart_key: str | None) -> None:
        """The chart at ``step`` and, under the replay, who led then (``said`` of the race cut there), unless the
        step is the race's last."""
        summary = self._chart(result, step, chart_key)
        if step < result.done:
            self.said.caption(training.story(summary)[0])
        else:
            self.said.empty()

    def draw(self, result: training.Race, step: int, playing: bool) -> None:
        """The race as it stands at ``step``; or, ``playing``, at its step 0, drawn in again by :meth:`play`."""
        if playing:
            self.progress.progress(0.0, text=text.replay(result, 0))
            self._chart(result, 0, chart_key=None)  # the keyed chart comes at the end of the replay
        else:
            self.progress.progress(result.done / result.steps, text=text.progress(result))
            self.show(result, step, chart_key="race")

    def play(self, result: training.Race) -> None:
        """Draw the recorded race in again over ``training.REPLAY_SECONDS``, one evaluation step after another
        from the page's step 0, then the whole race (keyed). The progress bar follows the step."""
        marks = result.eval_steps
        pause = training.replay_pause(result)
        for step in marks[1:-1]:
            time.sleep(pause)
            self.progress.progress(step / result.steps, text=text.replay(result, step))
            self.show(result, step, chart_key=None)
        time.sleep(pause)
        self.progress.progress(result.done / result.steps, text=text.progress(result))
        self.show(result, marks[-1], chart_key="race")


def summary(page: Page, result: training.Race) -> None:
    """How the race ended: the story in words, and the table. The finish and LN against no norm stay in lecture
    mode (they are measured); accuracy and the targets, which the table holds, are prose a lecturer speaks."""
    ended = training.summarize(result)
    st.subheader(text.ended(result))
    brief = training.story(ended, brief=True)
    headline, *rest = training.story(ended)
    st.markdown(f"**{headline}**")
    for said in rest:
        if said in brief:
            st.markdown(said)
        else:
            page.say(said)
    st.table(training.story_table(ended), hide_index=True, alt=text.TABLE_ALT)
    st.caption(text.TABLE_CAPTION)


def failures(result: training.Race) -> None:
    """A warning for each model that stopped, with its reason."""
    for curve in result.curves:
        if curve.failed:
            st.warning(f"**{curve.variant}** · {curve.failed}", icon="⚠️")


def bn_is_noisy(result: training.Race, batch: int) -> bool:
    """Whether BN trained on a batch so small (at most 4) that its statistics are noise."""
    return batch <= 4 and any(c.variant == "BN" and not c.failed for c in result.curves)
