"""The class poll's projector: the presenter's screen and its buttons (:mod:`ui.poll.classroom` says who presents).

The screen is the question and the buttons; beside them, how to join and how
many have answered. After a reveal the chart of the class's answers takes the
choices' place, without torch's answer (peer instruction: the class may yet
argue and vote again), or, if the presenter hides them, a line that the round
is over; **Show answer** marks torch's, says what the class got and why.
The join box keeps the QR code, the link and the code for a student who comes
late, smaller, beside the count, to leave room for why; a 1280 × 720 screen
shows it all. What is for the presenter only (the door, Close room, whether a reveal shows
the class's answers, the presenter's own view: :mod:`ui.poll.presenter`) is in the
sidebar in lecture mode, and the share right is never on this screen. The store
applies a button only with the room's secret and only at the version of the
room the page drew.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import streamlit as st

from lnviz.figures.qr import qr_svg
from lnviz.labs.classroom import figures, peer, questions, text
from lnviz.labs.classroom.question import Question
from server import address_seen, events, poll, proved
from server.process_store import store
from ui.kit.page import Page
from ui.poll import classroom, handover, live


class Button(NamedTuple):
    """One of the presenter's buttons: the store's ``action`` and what it shows. It can be pressed where the action
    applies to the room as drawn (:meth:`server.poll.Room.after`), the rule the store itself follows."""

    action: str
    label: str
    icon: str
    help: str | None = None


BUTTONS = (  # in one row, in this order; the first that can be pressed is the primary one
    Button("reveal", "Reveal", ":material/visibility:", text.REVEAL_HELP),
    Button("again", "Ask again", ":material/replay:", text.AGAIN_HELP),
    Button("answer", "Show answer", ":material/task_alt:", text.ANSWER_HELP),
    Button("next", "Next", ":material/skip_next:"),
)
CLOSE = Button(
    "close", "Close room", ":material/close:", "Ends the room: no phone may answer, and no question follows."
)


def start() -> None:
    """Start a room of the whole bank, with this session as its presenter, and open it."""
    if (why := proved.refusal()) is not None:
        classroom.say("warning", why)
        return
    with classroom.down_said():
        try:
            room, secret = poll.open_room(store(), tuple(q.id for q in questions.bank()), *classroom.sender())
        except poll.OpenRefused as refused:
            classroom.say("warning", str(refused))
            return
        classroom.become_presenter(room.code, secret)
        st.query_params["room"] = room.code


def act(code: str, secret: str, action: str, version: int) -> None:
    """A presenter's button, pressed on a page that drew the room at ``version``: the store applies it only with
    the room's secret and only at that version. A press the room has moved past (the second click of a double
    click, a second tab that is behind) changes nothing, silently: this run draws the room as it is."""
    with classroom.down_said():
        store().act(code, secret, action, version)


def button_key(action: str, version: int) -> str:
    """A presenter's button is a new widget at each version of the room (``class_next_v3``), so a press of a page
    drawn earlier (a double click's second click) reaches the store with the version that page drew."""
    return f"class_{action}_v{version}"


def buttons(room: poll.Room, secret: str) -> None:
    """:data:`BUTTONS` in one row, each as wide as its label, above the results so the projector never scrolls;
    once the last question is done, :data:`CLOSE` with them."""
    row = (*BUTTONS, CLOSE) if room.phase == "done" else BUTTONS
    first = next((b.action for b in row if room.after(b.action) is not None), None)
    with st.container(horizontal=True, key="class_buttons"):
        for button in row:
            draw(room, secret, button, primary=button.action == first)


def draw(room: poll.Room, secret: str, button: Button, primary: bool = False) -> None:
    """``button``, pressable where its action applies to ``room`` as drawn."""
    st.button(
        button.label,
        key=button_key(button.action, room.version),
        on_click=act,
        args=(room.code, secret, button.action, room.version),
        disabled=room.after(button.action) is None,
        type="primary" if primary else "secondary",
        icon=button.icon,
        help=button.help,
        width="content",
    )


DOOR = {  # the door's button, by whether it is shut: (action, label, icon, help)
    False: ("shut", "Close the door", ":material/door_front:", "No new phones may join; those in answer on."),
    True: ("reopen", "Open the door", ":material/door_open:", "New phones may join again."),
}


def joined_text(count: int, ago_s: float | None, shut: bool) -> str:
    """How many phones have joined, and when the last did: what the presenter closes the door on."""
    if not count:
        return "No phone has answered yet."
    when = "under a minute ago" if ago_s is not None and ago_s < 60 else f"{int((ago_s or 0) // 60)} min ago"
    phones = "1 phone has" if count == 1 else f"{count:,} phones have"
    return f"{phones} joined, the last {when}." + (" The door is closed." if shut else "")


def door(room: poll.Room, secret: str) -> None:
    """How many phones joined and when (as of this run), the button that closes the door to new ones, or
    opens it again (:attr:`server.poll.Room.shut`), and, until the last question is done, :data:`CLOSE`:
    apart from Next, so a hurried hand never ends the room, and the row of :data:`BUTTONS` fits a projector's
    column."""
    count, ago = store().joined(room.code)
    st.caption(joined_text(count, ago, room.shut))
    with st.container(horizontal=True):
        draw(room, secret, Button(*DOOR[room.shut]))
        if room.phase != "done":
            draw(room, secret, CLOSE)


def join_link(code: str) -> str:
    """The link a phone joins room ``code`` at."""
    return classroom.class_link(f"room={code}")


def count_data(room: poll.Room, n: int) -> dict:
    """The count's element for ``room`` with ``n`` answers so far (:func:`count_of`; the presenter's own view's)."""
    return {
        "mode": "count",
        "url": live.stream_url(room.code),
        "room": events.state(room, n, lambda r, answer: ([], None, None)),  # the count needs no results
        "version": room.version,
        "text": {"count_help": text.COUNT_HELP},
    }


def count_of(room: poll.Room) -> None:
    """How many have answered this round, what they answered hidden: the class's element follows the room's
    stream, so the count moves with each vote and no timer reruns this page. If the room moves on in another
    tab of the presenter's, or on the presenter's own view, the element asks for a run of this page, which draws it
    as it is."""
    live.count_run("projector")
    if room.closed:
        return
    live.element("class_count", count_data(room, store().count(room.code, room.index, room.round)))


def chart(page: Page, room: poll.Room, question: Question) -> None:
    """The revealed rounds as a chart, and the same counts as text (``class_results``): without torch's answer
    until the presenter shows it, and then with what the class got; or, while the presenter hides the class's
    answers, only that the round is over."""
    answer = room.phase == "answer"
    if room.hidden and not answer:
        st.info(text.HIDDEN_PROJECTOR.format(round=room.round), icon=":material/visibility_off:")
        return
    rounds = classroom.rounds_of(room, question)
    fig = figures.fig_results(question, rounds, presenting=page.presenting, answer=answer)
    page.chart(fig, key="class_chart", alt=text.CHART_ALT if answer else text.CHART_ALT_OPEN)
    with st.container(key="class_results"):
        st.text(figures.results_text(question, rounds, answer=answer))


HIDE = {  # whether a reveal shows the class's answers, by whether they are hidden: (action, label, icon, help)
    False: ("hide", text.HIDE, ":material/visibility_off:", text.HIDE_HELP),
    True: ("show", text.SHOW, ":material/bar_chart:", text.SHOW_HELP),
}


def counts_toggle(room: poll.Room, secret: str) -> None:
    """The press that hides the class's answers at a reveal, or shows them again (:attr:`poll.Room.hidden`)."""
    draw(room, secret, Button(*HIDE[room.hidden]))


def outcome(room: poll.Room, question: Question) -> None:
    """What the class got, once torch's answer is out: each round's share right and the shift between them."""
    st.markdown(peer.outcome(question, classroom.votes_of(room)))


QR_WIDTH = 260  # px, while the room answers; after a reveal, beside the code and the count
QR_WIDTH_REVEALED = 140
NB_HYPHEN = "\u2011"
QR_ALT = "QR code of the join link"  # the image's alt text; the link itself is written beside it


def join(room: poll.Room, revealed: bool, count: Callable[[poll.Room], None] = count_of) -> None:
    """How to join, always on screen: the QR code, the link as text and the room's code; and how many have
    answered (``count`` draws it; the concept check's screen gives its own). After a reveal the QR code
    stands smaller, beside the code and the count, so why fits below."""
    link = join_link(room.code)
    code = f"Code {room.code[:4]}-{room.code[4:]}"
    if not revealed:
        st.image(qr_svg(link), width=QR_WIDTH, alt=QR_ALT)
        st.markdown(f"Join at **{link}**")
        with st.container(key="class_code"):
            st.markdown(f"## {code}")
        count(room)
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.image(qr_svg(link), width=QR_WIDTH_REVEALED, alt=QR_ALT)
        with st.container():
            with st.container(key="class_code"):  # the code never split at its hyphen (a no-break one)
                st.markdown(f"#### {code.replace('-', NB_HYPHEN)}")
            count(room)
    st.markdown(f"Join at **{link}**")


def how_to_answer(question: Question) -> str:
    """What a phone asks of the class for a number or cells question, under its prompt before the reveal."""
    if question.kind == "cells":
        return text.CELLS_HOW
    return (text.DRAG_HOW if question.drag else text.NUMBER_HOW).format(span=question.span)


def projector(page: Page, room: poll.Room, secret: str) -> None:
    """The presenter's screen of ``room``: see the module's docstring."""
    question = questions.by_id(room.question) if room.question else None
    revealed = question is not None and room.phase in ("reveal", "answer") and not room.closed
    answered = revealed and room.phase == "answer"
    classroom.said(toast=page.presenting)  # in lecture mode over the screen: the buttons stay where they are
    main, side = st.columns([3, 2], gap="large")
    with side:
        join(room, revealed)
        if answered:
            outcome(room, question)
            classroom.explain(question, page.presenting)
    # For the presenter, not the room: in lecture mode in the sidebar, so the count stays in view at 1280 × 720.
    with st.sidebar if page.presenting else side:
        if not room.closed:
            door(room, secret)
            counts_toggle(room, secret)
            handover.links(room, secret)
        address_seen.say_if_unseen()
    with main:
        if room.closed:
            st.info(text.CLOSED)
            return
        if question is None:
            st.success(text.LAST)
        else:
            classroom.ask(question, room, large=not revealed)
            if not revealed:  # once revealed, the chart names the choices
                if question.kind == "choice":
                    st.markdown("\n\n".join(f"**{chr(65 + i)}.** {c}" for i, c in enumerate(question.choices)))
                else:
                    st.markdown(how_to_answer(question))
        buttons(room, secret)
        if revealed:
            chart(page, room, question)
