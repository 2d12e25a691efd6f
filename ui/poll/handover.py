"""Taking a class room to another browser: a one-time take code, and the presenter's devices (issue 49).

A presenter opens their own view (:mod:`ui.poll.presenter`) in a new tab of the
browser that started the room, or on another device: there, the presenter makes
a one-time take code (:func:`make_take`, :func:`server.poll.hand_over`),
shown in a box that only a press opens, never on the projector's screen by
itself; the other browser opens its link (``/class?take=CODE``,
:func:`take_from_link`) or types it on the class page (:func:`take_typed`), and
presents the room with a secret of its own, in its own cookie. Both then act on
the room through the store. A code that opens nothing counts as a room code that
opens nothing (:func:`ui.poll.classroom.missed`). The browser that started the room
sees how many others present it, and may sign them out.
"""

from __future__ import annotations

import streamlit as st

from lnviz.figures.qr import qr_svg
from lnviz.labs.classroom import text
from lnviz.text import quote
from server import poll, proved
from server.process_store import store
from ui.poll import classroom

VIEW = "presenter"  # ?view=presenter: the presenter's own view, for a browser that presents the room
_TAKE = "class_take_made"  # session state: the take code this session made, {code, take, hosts}, until its box closes


def own_view_link(code: str) -> str:
    """The presenter's own view of room ``code``, relative to the class page."""
    return f"?room={code}&view={VIEW}"


def make_take(code: str, secret: str) -> None:
    """A press of :data:`text.TAKE`: a new take code, shown in a box at the run that follows."""
    with classroom.down_said():
        take = poll.hand_over(store(), code, secret)
        if take is None:
            classroom.say("warning", poll.REFUSED["closed"])
        else:
            hosts = len(store().room(code).hosts)
            st.session_state[_TAKE] = {"code": code, "take": take, "hosts": hosts}


def _forget() -> None:
    st.session_state.pop(_TAKE, None)


@st.dialog(text.TAKE, width="small", on_dismiss=_forget)
def _take_box(take: str) -> None:
    """The take code, its link and its QR code, until the presenter closes the box (the page's runs as answers come
    in draw it again), or another device has used it."""
    link = classroom.class_link(f"take={take}")
    st.markdown(text.TAKE_HOW)
    st.image(qr_svg(link), width=200, alt="QR code of the presenter's link")
    with st.container(key="class_take_shown"):
        st.markdown(f"## {take[:4]}\u2011{take[4:8]}\u2011{take[8:]}")  # never split at a hyphen
    st.markdown(f"**{link}**")
    st.warning(text.TAKE_CAUTION, icon=":material/visibility:")


def sign_out(code: str, secret: str) -> None:
    with classroom.down_said():
        if store().sign_out(code, secret):
            classroom.say("success", text.SIGNED_OUT)


def links(room: poll.Room, secret: str) -> None:
    """The presenter's own view, in a new tab of this browser or on another device; and, for the browser that
    started the room, how many others present it, and a press that signs them out."""
    st.markdown(f"**{text.OWN_VIEW}**")
    # As wide as the column, so that a label wraps in lecture mode's sidebar rather than being cut.
    st.link_button(
        text.OPEN_VIEW,
        own_view_link(room.code),
        icon=":material/open_in_new:",
        help=text.OWN_VIEW_HELP,
        width="stretch",
    )
    st.button(
        text.TAKE,
        key="class_take",
        on_click=make_take,
        args=(room.code, secret),
        icon=":material/devices:",
        help=text.TAKE_HELP,
        width="stretch",
    )
    if room.hosts and poll.first_presenter(room, secret):
        n = len(room.hosts)
        st.caption(text.HOSTS[min(n, 2)].format(n=n))
        st.button(text.SIGN_OUT, key="class_sign_out", on_click=sign_out, args=(room.code, secret))
    made = st.session_state.get(_TAKE)
    if isinstance(made, dict) and made.get("code") == room.code:
        if len(room.hosts) > made["hosts"]:  # used: the box has done its work
            _forget()
            st.toast(text.TAKEN_THERE, icon=":material/devices:")
        else:
            _take_box(made["take"])


def take(typed: str) -> str | None:
    """Present the room whose take code ``typed`` is, from this browser: None, with this session its presenter and
    the page's link its own view; or why not, in a sentence."""
    found = poll.valid_code(typed, poll.TAKE_LENGTH)
    if found is None:
        return text.BAD_TAKE.format(code=quote(typed[:40]), length=poll.TAKE_LENGTH, room_length=poll.CODE_LENGTH)
    if (why := proved.refusal()) is not None:
        return why
    if (why := classroom.too_many_tries()) is not None:
        return why
    outcome, code, secret = poll.take_over(store(), found)
    if outcome != poll.TAKEN:
        if outcome == "used":
            classroom.missed()
        return poll.said(poll.TAKE_REFUSED, outcome, store().limits)
    classroom.become_presenter(code, secret)
    st.query_params.from_dict({"room": code, "view": VIEW})
    return None


def take_from_link() -> None:
    """A link's ``take``: taken, or why not on the page; the link's code is gone from the address either way."""
    typed = st.query_params.get("take", "")
    del st.query_params["take"]
    why = take(typed)
    if why is not None:
        st.warning(why)
    else:
        st.success(text.TAKEN_HERE, icon=":material/devices:")


def take_typed() -> None:
    """The class page's form: the code typed under :data:`text.TAKE_HERE`."""
    with classroom.down_said():
        why = take(str(st.session_state.get("class_take_code", "")))
        if why is not None:
            classroom.say("warning", why)
        else:
            classroom.say("success", text.TAKEN_HERE)


def take_form() -> None:
    """The lobby's form for a take code, folded: most visitors are students."""
    with st.expander(text.TAKE_HERE, icon=":material/devices:"):
        with st.form("class_take_form", border=False, enter_to_submit=True):
            st.text_input(text.TAKE_FIELD, key="class_take_code", max_chars=4 * poll.TAKE_LENGTH)
            st.form_submit_button(text.TAKE_HERE, key="class_take_go", on_click=take_typed)
