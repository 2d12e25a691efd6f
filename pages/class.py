"""The class poll: the class predicts, then sees its answers beside torch's.

The presenter starts a room; students join at /class?room=CODE on their phones
and answer; the presenter reveals the class's answers, asks again after the
neighbours have argued, shows torch's answer, and moves on; a concept check before and after measures what the
class learnt. The store is server.store, the poll's rules server.poll; who is who, and following a room, are
ui.poll.classroom; the presenter's screen is ui.poll.projector, their own view (?view=presenter) ui.poll.presenter, taking it to
another device (?take=CODE) ui.poll.handover, the concept check's screens ui.poll.concept_check, a student's ui.poll.phone; the
words are lnviz.labs.classroom.text.
"""

import streamlit as st

from lnviz.labs.classroom import questions, text
from server import poll
from ui.kit.page import Page
from ui.poll import classroom, concept_check, handover, phone, presenter, projector

# In a room the question is the heading, on the projector and on a phone: the page's title is left out, and its
# height goes to the question, the buttons and the whole results chart (a 1280 × 720 projector, a 390 × 844 phone).
page = Page.start(title=not st.query_params.get("room"))


def lobby() -> None:
    """Join first (most visitors are students on phones), in a form so that Enter after the code joins; then
    starting a room, a secondary button under its own heading."""
    page.say(text.INTRO)
    classroom.said()
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Join a class")
        with st.form("class_join_form", border=False, enter_to_submit=True):
            st.text_input("Room code", key="class_join", max_chars=4 * poll.CODE_LENGTH, placeholder="e.g. K7PM-Q2XD")
            st.form_submit_button(
                "Join", key="class_join_go", on_click=phone.join, type="primary", icon=":material/login:"
            )
    with right:
        st.subheader("Teach one")
        st.caption(text.TEACH.format(n=len(questions.bank())))
        st.button("Start a room", key="class_start", on_click=projector.start, icon=":material/co_present:")
        handover.take_form()
    page.finish(caveat=text.LOBBY_CAVEAT)


if st.query_params.get("take"):  # a presenter's link to take the room to this browser
    with classroom.down_shown(None):
        handover.take_from_link()
code = poll.valid_code(st.query_params.get("room", ""))
with classroom.down_shown(code):  # the next run that reaches the store says so and shows what it holds
    if code is None:
        if st.query_params.get("room"):
            st.warning(classroom.not_a_code(st.query_params["room"], text.BAD_LINK))
        lobby()
    elif (room := classroom.look_up(code)) is None:  # it says why: no proof, too many codes tried, or no room
        lobby()
    elif (secret := classroom.secret_for(code)) and poll.presenter_of(room, secret):
        if st.query_params.get("view") == handover.VIEW:
            presenter.view(page, room, secret)
        elif concept_check.shown(room):  # the presenter's choice, in the sidebar: the questions or the concept check
            concept_check.screen(page, room, secret)
        else:
            projector.projector(page, room, secret)
    else:
        phone.phone(room, page.presenting)
classroom.keep_cookies()
if not page.presenting:
    st.caption(text.KEPT)
