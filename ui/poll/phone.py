"""The class poll on a student's phone: joining a room, answering, the class's answers after the reveal, and
torch's once the presenter shows it.

A phone waits at no cost to the server: its page draws the class's element
(:mod:`ui.poll.live`), which follows the room's stream and draws the question, the
answer controls, this phone's answer and the results from it, with no script
run at the reveal, Ask again, Show answer or Next. The page run gives the element what the
stream does not carry: the room's questions, this voter's stored answer (the
store's, never a widget's, so a vote that failed in an outage is never shown as
sent) and what the last vote came to.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from lnviz.labs.classroom import questions, render, text
from lnviz.labs.classroom.question import Question, number, plain, unmask
from server import events, poll, proved
from server.limits import StoreDown, StoreFull
from server.process_store import store
from ui.kit import boot
from ui.poll import classroom, concept_check, live, routes

KEY = "class_phone"  # the element's key: its trigger values are in st.session_state[KEY]
_VOTED = "class_voted"  # the number of the last vote this session's callback took (the element's own count)


def join() -> None:
    """The lobby's Join: open the room whose code was typed, if it can be one."""
    typed = st.session_state.get("class_join", "")
    code = poll.valid_code(typed)
    if code is None:
        classroom.say("warning", classroom.not_a_code(str(typed)))
    else:
        st.query_params["room"] = code


def sent_vote() -> dict[str, Any] | None:
    """The element's vote of this run, ``{index, round, answer, n}``, if it is one."""
    found = (st.session_state.get(KEY) or {}).get("vote")
    if not isinstance(found, dict):
        return None
    index, round_, n = found.get("index"), found.get("round"), found.get("n")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (index, round_, n)):
        return None
    return {"index": index, "round": round_, "answer": found.get("answer"), "n": n}


def vote(code: str) -> None:
    """The student's choice, sent as it is made (a tap, or Send): one vote per voter per round, a change
    replaces it. It is for the question and round the element drew, which the store checks against the room's:
    a phone behind the room is told it moved on. The page then shows the answer the store holds."""
    if (why := proved.refusal()) is not None:
        classroom.say("warning", why)
        return
    sent = sent_vote()
    if sent is None:
        return
    st.session_state[_VOTED] = sent["n"]
    try:
        room = store().room(code)
        qid = room.questions[sent["index"]] if room is not None and 0 <= sent["index"] < len(room.questions) else None
        if qid is None:
            classroom.say("warning", poll.REFUSED["unknown" if room is None else "moved"])
            return
        question = questions.by_id(qid)
        choice = question.parse(sent["answer"])
        if choice is None:
            guess = number(sent["answer"]) if question.kind == "number" else None
            if guess is not None:
                classroom.say("warning", text.OUT_OF_RANGE.format(guess=plain(guess), span=question.span))
            else:
                classroom.say("warning", text.NOT_AN_ANSWER)
            return
        outcome = store().vote(code, classroom.voter(), sent["index"], sent["round"], choice, *classroom.sender())
    except StoreFull:  # refused, not counted: the store answers, so there is no outage to come back from
        classroom.say("warning", text.FULL)
        return
    except StoreDown:  # perhaps counted, perhaps not: once the store answers, the page shows which
        classroom.went_down()
        return
    if outcome in poll.REFUSED:
        classroom.say("warning", poll.said(poll.REFUSED, outcome, store().limits))
    else:
        classroom.say("success", text.SENT)


def back_from_outage(question: Question, mine: str | None) -> None:
    """After the store could not be reached: say that it is back and which answer of this phone's it holds."""
    if mine is None:
        held = text.HELD_NONE
    elif question.kind == "choice":
        held = text.HELD_CHOICE.format(letter=chr(65 + int(mine)), choice=question.choices[int(mine)])
    elif question.kind == "cells":
        held = text.HELD_CELLS.format(cells=question.where(unmask(mine)))
    else:
        held = text.HELD_GUESS.format(guess=mine)
    st.info(text.BACK.format(held=held), icon=":material/cloud_done:")


def words() -> dict[str, Any]:
    """The page's words the element draws (:mod:`lnviz.labs.classroom.text`)."""
    return {
        "phases": text.PHASE_NAMES,
        "sent": text.SENT,
        "sending": text.SENDING,
        "not_answered": text.NOT_ANSWERED,
        "none": text.NONE_REVEALED,
        "closed": text.CLOSED_PHONE,
        "round_over": text.ROUND_OVER,
        "hidden": text.HIDDEN_PHONE,
        "done": text.LAST,
        "gone": text.GONE,
        "missing": text.MISSING,
        "reconnecting": text.RECONNECTING,
        "coming_back": text.COMING_BACK,
    }


def initial(room: poll.Room) -> dict[str, Any]:
    """The room as the stream's first event will give it: the element's picture until the stream connects."""
    answers = store().count(room.code, room.index, room.round) if room.question is not None else 0
    return events.state(room, answers, routes.revealed, events.check_part(store(), room))


def phone(room: poll.Room, presenting: bool) -> None:
    """A student's view of ``room``: the class's element, which follows the room from here on."""
    live.count_run("phone")
    boot.rerun_on_reconnect()  # a phone whose replica went is drawn again, with its stored answer, on its next one
    if room.closed:
        st.info(text.CLOSED_PHONE)
        return
    # Past the last question the element stays, saying so: the presenter may still open the concept check.
    question = questions.by_id(room.question) if room.question else None
    mine = store().mine(room.code, classroom.voter(), room.index, room.round) if question else None
    if classroom.came_back() and question:
        back_from_outage(question, mine)
    answered = room.phase == "answer"
    found = classroom.taken()  # what the last vote came to: the element says it
    said = None
    if found:
        said = {"kind": found[0], "text": found[1], "index": room.index, "round": room.round, "phase": room.phase}
    live.element(
        KEY,
        {
            "mode": "phone",
            "url": live.stream_url(room.code),
            "room": initial(room),
            "reveal_url": live.reveal_url(room.code),
            # torch's answers and reasons only for the question whose answer is shown now: the element asks for them
            # when the presenter shows it
            "questions": {
                qid: render.entry(questions.by_id(qid), reveal=answered and qid == room.question)
                for qid in dict.fromkeys(room.questions)
            },
            "mine": {"index": room.index, "round": room.round, "answer": mine, "n": st.session_state.get(_VOTED)},
            "said": said,
            "presenting": presenting,
            "text": words(),
            "check": concept_check.phone_part(room),
        },
        on_vote=lambda: vote(room.code),
        on_check=lambda: concept_check.answer(room.code),
    )
