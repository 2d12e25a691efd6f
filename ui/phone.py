"""The class poll on a student's phone: joining a room, answering, and the results after the reveal.

A phone waits at no cost: this replica's watcher (:mod:`ui.classroom`) reruns
it when the presenter acts. What it shows is always what the store holds: the
answer widget is set from the stored vote at each run, never left at a
widget's default, so a vote that failed in an outage is never shown as sent.
"""

from __future__ import annotations

import streamlit as st

from lnviz.labs.classroom import figures, questions, text
from lnviz.labs.classroom.question import Question, plain
from lnviz.serving import poll
from lnviz.serving.store import StoreDown
from ui import boot, classroom, proof
from ui.store import store


def join() -> None:
    """The lobby's Join: open the room whose code was typed, if it can be one."""
    code = poll.valid_code(st.session_state.get("class_join", ""))
    if code is None:
        classroom.say("warning", text.BAD_CODE)
    else:
        st.query_params["room"] = code


def vote(code: str, room: poll.Room, question: Question) -> None:
    """The student's choice, sent as it is made (a tap, or Send): one vote per voter per round, a change
    replaces it. The page then shows the answer the store holds, whatever this came to."""
    if proof.refusal() is not None:
        classroom.say("warning", proof.refusal())
        return
    raw = st.session_state.get("answer")
    choice = question.parse(raw)
    if choice is None:
        if question.kind == "number" and raw is not None:
            classroom.say("warning", text.OUT_OF_RANGE.format(guess=plain(raw), span=question.span))
        else:
            classroom.say("warning", text.NOT_AN_ANSWER)
        return
    try:
        outcome = store().vote(code, classroom.voter(), room.index, room.round, choice, *classroom.sender())
    except StoreDown:  # perhaps counted, perhaps not: once the store answers, the page shows which
        classroom.went_down()
        return
    if outcome in poll.REFUSED:
        classroom.say("warning", poll.REFUSED[outcome])
    else:
        classroom.say("success", text.SENT)


def stored_widget_value(question: Question, mine: str | None) -> int | float | None:
    return None if mine is None else int(mine) if question.kind == "choice" else float(mine)


def back_from_outage(question: Question, mine: str | None) -> None:
    """After the store could not be reached: say that it is back and which answer of this phone's it holds."""
    if mine is None:
        held = text.HELD_NONE
    elif question.kind == "choice":
        held = text.HELD_CHOICE.format(letter=chr(65 + int(mine)), choice=question.choices[int(mine)])
    else:
        held = text.HELD_GUESS.format(guess=mine)
    st.info(text.BACK.format(held=held), icon=":material/cloud_done:")


def answer_form(room: poll.Room, question: Question) -> None:
    """A tap sends a choice; a guess is typed, with its range beside it, and sent by Send or Enter."""
    if question.kind == "choice":
        st.radio(
            "Your answer",
            range(len(question.choices)),
            format_func=lambda i: f"{chr(65 + i)}. {question.choices[i]}",
            index=None,
            key="answer",
            on_change=vote,
            args=(room.code, room, question),
        )
        return
    with st.form("class_guess", border=False, enter_to_submit=True):
        st.number_input(  # no min or max: a value out of range is sent to vote(), which says so in words
            f"Your guess, {question.span}",
            value=None,
            step=10.0**-question.decimals,
            format=f"%.{question.decimals}f",
            key="answer",
        )
        st.form_submit_button("Send", key="class_send", on_click=vote, args=(room.code, room, question), type="primary")


def results(room: poll.Room, question: Question, mine: str | None, presenting: bool) -> None:
    """After the reveal: this phone's own answer, the class's as text, torch's, and why.

    No chart: every phone of the class reruns at the reveal, and a chart each cost a replica seconds of CPU
    with a hundred phones on it (``make load LOAD_ARGS="--mode poll"``); the projector shows the chart.
    """
    if mine is not None:
        shown = question.choices[int(mine)] if question.kind == "choice" else mine
        verdict = "right" if question.right(mine) else "not the answer torch gives"
        st.markdown(f"**Your answer:** {shown} ({verdict}).")
    else:
        st.markdown(text.NOT_ANSWERED)
    with st.container(key="class_results"):
        st.markdown(figures.results_markdown(question, classroom.rounds_of(room, question)))
    classroom.explain(question, presenting)


def phone(room: poll.Room, presenting: bool) -> None:
    """A student's view of ``room``: the question and the answer form, or the results once revealed."""
    classroom.watch(room.code, room.version)  # this replica's watcher reruns the page when the presenter acts
    boot.rerun_on_reconnect()  # a phone whose replica went lands on the current question on its next one
    if room.closed:
        st.info(text.CLOSED_PHONE)
        return
    if room.question is None:
        st.success(text.LAST)
        return
    question = questions.by_id(room.question)
    classroom.ask(question, room)
    mine = store().mine(room.code, classroom.voter(), room.index, room.round)
    if classroom.came_back():
        back_from_outage(question, mine)
    if room.phase == "ask":
        # The store's answer, never a widget's default: a run that could not reach the store drew no widget,
        # so Streamlit dropped its state, and a vote that failed may or may not have been counted.
        st.session_state["answer"] = stored_widget_value(question, mine)
        answer_form(room, question)
        if not classroom.said() and mine is not None:
            st.caption(text.SENT)
    else:
        classroom.said()
        results(room, question, mine, presenting)
