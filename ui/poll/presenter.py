"""The presenter's own view of a class room (issue 49).

The projector (:mod:`ui.poll.projector`) shows what the class should see: the
question, how to join, how many answered, the class's answers once a round is
revealed and torch's once the presenter shows it. The presenter's own view
(``/class?room=CODE&view=presenter``, in a browser that presents the room)
shows, beside the same buttons, what only the presenter should: torch's answer
from the start, the share of the class that is right (as the answers come in,
and once the round is over), what peer instruction advises by it
(:mod:`lnviz.labs.classroom.peer`), what the class got once torch's answer is
out, the next question, and the room's controls. It is drawn again when the room
moves, whichever browser moved it, and as answers come in: the class's element
follows the room's stream and asks for a run (:mod:`ui.poll.live`); the share right
is read here, never sent on the stream. It opens in a new tab of the browser
that started the room, or on another device the room is taken to
(:mod:`ui.poll.handover`).
"""

from __future__ import annotations

import streamlit as st

from lnviz.labs.classroom import peer, questions, text
from lnviz.labs.classroom.question import Question
from server import poll
from server.process_store import store
from ui.kit.page import Page
from ui.poll import classroom, handover, live, projector

_ADVICE_KINDS = {"explain": "warning", "discuss": "info", "answer": "success", "last": "success"}  # its banner


def torch_answer(question: Question) -> str:
    """torch's answer as the presenter reads it: the option, the value and what counts as right, or the cells."""
    if question.kind == "choice":
        return f"**{chr(65 + question.answer)}.** {question.answer_text}"
    if question.kind == "cells":
        return f"**{question.answer_text}** (only exactly these cells count as right)"
    return f"**{question.answer_text}** (guesses within {question.tolerance:g} count as right)"


def share(room: poll.Room, question: Question) -> None:
    """The share of this round that is right, and, once the round is over, what to do next; once torch's answer
    is out, what the class got."""
    votes = store().votes(room.code, room.index, room.round)
    found = peer.share_right(question, votes.values())
    if room.phase == "ask":
        st.markdown(text.RIGHT_SO_FAR.format(share=f"**{found.said}**"))
        return
    if room.phase == "answer":
        st.markdown(peer.outcome(question, classroom.votes_of(room)))
        return
    st.markdown(text.RIGHT_NOW.format(share=f"**{found.said}**"))
    advice = peer.advice(found, room.round)
    if advice is not None:
        with st.container(key="class_advice"):
            getattr(st, _ADVICE_KINDS[advice])(text.ADVICE[advice])
    st.link_button("See why, live", question.link + "&present=1", icon=":material/play_circle:")


def next_question(room: poll.Room) -> None:
    following = room.questions[room.index + 1] if room.index + 1 < len(room.questions) else None
    st.caption(text.NEXT_QUESTION.format(prompt=questions.by_id(following).prompt) if following else text.LAST_QUESTION)


def view(page: Page, room: poll.Room, secret: str) -> None:
    """The presenter's own view of ``room``: see the module's docstring."""
    classroom.said()
    question = questions.by_id(room.question) if room.question else None
    st.caption(text.VIEW_NOTE)
    if room.closed:
        st.info(text.CLOSED)
        return
    main, side = st.columns([3, 2], gap="large")
    with main:
        if question is None:
            st.success(text.LAST)
        else:
            classroom.ask(question, room, large=False)
            if question.kind == "choice":
                st.markdown("  \n".join(f"**{chr(65 + i)}.** {c}" for i, c in enumerate(question.choices)))
            try:
                st.markdown(text.TORCH_FOR_YOU.format(answer=torch_answer(question)))
                share(room, question)
            except ValueError as why:  # a live question's model is missing: said, as its reveal says it
                st.warning(text.TORCH_LATER.format(why=why))
        projector.buttons(room, secret)
    with side:
        follow(room)
        if question is not None:
            next_question(room)
        projector.door(room, secret)
        projector.counts_toggle(room, secret)
        handover.links(room, secret)


def follow(room: poll.Room) -> None:
    """The count, live, and a run of this page when the room moves or, while it asks, when answers come in."""
    n = store().count(room.code, room.index, room.round)
    live.element("class_count", projector.count_data(room, n) | {"follow_answers": room.phase == "ask", "answers": n})
