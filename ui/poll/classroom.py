"""Streamlit's side of the class poll: who is the presenter, who is a voter, and a page that lost the store.

- The store is the process's one :class:`server.store.Store`
  (:mod:`server.process_store`): Redis when ``LNVIZ_REDIS_URL`` is set, else this
  process's memory.
- A voter is a random id in a cookie of the browser's (``lnviz_voter``), so a
  reload, a reconnect or a move to another replica keeps the same vote. It is
  no name and says nothing about the person.
- Who sends a vote or opens a room (:func:`sender`): the proved browser
  (:mod:`server.proved`; without a proof nothing is sent), and its address
  (``st.context.ip_address``: the connection's, or the visitor's as the
  documented nginx block forwards it), hashed, when it is a public one, else
  one address for every other. The store limits both (:mod:`server.poll`).
  Room codes that open no room are counted (:func:`look_up`).
- The presenter is the session that started the room: it holds the room's
  secret, in its session and in a cookie scoped to this site
  (``lnviz_host``), so a reload of the projector's tab keeps the role. The
  secret is never in a link, the QR code or the page.
- Phones wait at no cost: the class's element (:mod:`ui.poll.live`) follows the
  room's stream in the browser and draws each change, with no script run on
  the server; so does the projector's count. (A fragment on a timer per phone
  cost a replica about 4.5 ms of CPU per phone per second, and a server-started
  rerun of each phone about 25 ms per phone at each reveal, one after another.)
- :func:`follow` is the one timer left: a page that could not reach the store.
- A store that can't be reached is said, never raised: :func:`down_said` for a
  press, :func:`down_shown` for the page's run (a banner, then a poll that
  reruns the page once the store answers, and that run says it is back).
- What the projector (:mod:`ui.poll.projector`) and the phone (:mod:`ui.poll.phone`)
  both draw: the question (:func:`ask`), why (:func:`explain`), the revealed
  rounds (:func:`rounds_of`) and what the last action came to (:func:`said`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import string
from collections.abc import Iterator
from typing import Any

import streamlit as st

from lnviz.labs.classroom import text
from lnviz.labs.classroom.question import Question, tally
from lnviz.text import quote
from server import heavy, limits, poll, proved, quota, who
from server.limits import StoreDown, StoreFull
from server.process_store import store

VOTER_COOKIE, HOST_COOKIE = "lnviz_voter", "lnviz_host"
COOKIE_S = 12 * 3600
POLL_S = 1.0  # a page waiting for the store to come back looks this often
TRIES = "Too many codes that open no room were tried from this browser or your network: try again in {s} s."
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")

# A browser's cookies, set from the page: components v2 runs this in the page itself (no iframe).
_COOKIE_JS = """
export default function ({ data }) {
  const secure = location.protocol === "https:" ? "; Secure" : "";
  for (const [name, value, maxAge] of data.cookies || []) {
    document.cookie = `${name}=${value}; Max-Age=${maxAge}; Path=/; SameSite=Strict${secure}`;
  }
}
"""


@functools.cache
def _cookies() -> Any:
    """The cookie setter, registered on first use; each mount registers it again on a runtime that lacks it (AppTest
    makes one per test)."""
    return st.components.v2.component("lnviz_cookies", js=_COOKIE_JS)


def _cookie(name: str) -> str:
    """The browser's cookie ``name`` as it came with this session's connection; "" if none."""
    found = st.context.cookies.get(name, "")
    return found if isinstance(found, str) else ""


def class_link(query: str) -> str:
    """The class page with ``query``, at this page's own address as the browser reached it."""
    base = (st.context.url or "").split("?")[0].rstrip("/")
    if not base.endswith("/class"):
        base = base.rsplit("/", 1)[0] + "/class" if base else "/class"
    return f"{base}?{query}"


def voter() -> str:
    """This browser's voter id: its cookie's, or a new random one that :func:`keep_cookies` will store."""
    found = st.session_state.get("class_voter")
    if not found:
        cookie = _cookie(VOTER_COOKIE)
        found = cookie if _TOKEN.fullmatch(cookie) else secrets.token_urlsafe(16)
        st.session_state["class_voter"] = found
    return found


def sender() -> tuple[str, str]:
    """(client, address) of this run, as the store's limits count them: the proved browser's key
    (:func:`server.heavy.client`), and a hash of the address, so the store never holds an address as it is.

    An address that is not a public one is :data:`server.who.UNSEEN`, one
    address for all such: a private or loopback address is a proxy's that the
    server does not trust to forward the visitor's (a Kubernetes ingress, a
    hosting platform's front), shared by every visitor, or a LAN's.
    """
    try:
        ip = st.context.ip_address
    except Exception:  # no request behind this run
        ip = None
    return heavy.client(), who.counted(ip)


@functools.cache
def _code_tries() -> quota.CodeTries:
    return quota.CodeTries(limits.current(), quota.storage_from_env(os.environ))


def _listed(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def not_a_code(typed: str, template: str = text.BAD_CODE) -> str:
    """Why ``typed`` (what was typed, or a link's ``room``) can't be a room code, in ``template``'s words
    (:data:`text.BAD_CODE` or :data:`text.BAD_LINK`): its length, or the characters no code has, then what a
    code is, from :data:`server.poll.CODE_ALPHABET` and :data:`~server.poll.CODE_LENGTH`."""
    alphabet, length = poll.CODE_ALPHABET, poll.CODE_LENGTH
    code = typed.upper().replace(" ", "").replace("-", "")  # as poll.valid_code reads it
    wrong = list(dict.fromkeys(c for c in code if c not in alphabet))  # each once, in the order typed
    if wrong:
        chars = _listed([quote(c) for c in wrong])
        why = text.WRONG_CHARACTERS.format(chars=chars, verb="is" if len(wrong) == 1 else "are")
    else:
        why = text.WRONG_LENGTH.format(n=len(code))
    letters = [c for c in string.ascii_uppercase if c not in alphabet]
    digits = sorted(c for c in alphabet if c.isdigit())
    rule = text.CODE_RULE.format(length=length, left_out=_listed(letters), digits=f"{digits[0]} to {digits[-1]}")
    return template.format(code=quote(typed), why=why, rule=rule)


def too_many_tries() -> str | None:
    """Why this browser may not try another code now (room codes, or presenter's codes, that opened nothing), in a
    sentence; None while it may."""
    wait = _code_tries().wait_s(*sender())
    return TRIES.format(s=wait) if wait else None


def missed() -> None:
    """A code that opened nothing: counted against this browser and its address
    (:class:`server.quota.CodeTries`), so a script can't try codes at speed."""
    _code_tries().missed(*sender())


def look_up(code: str) -> poll.Room | None:
    """The room ``code``, for a proved browser within its tries of codes (:func:`too_many_tries`); None (and why,
    on the page) otherwise."""
    if not proved.require():
        return None
    if (why := too_many_tries()) is not None:
        st.warning(why)
        return None
    room = store().room(code)
    if room is None:
        missed()
        st.warning(poll.REFUSED["unknown"] + text.UNKNOWN)
    return room


def secret_for(code: str) -> str | None:
    """The presenter's secret for room ``code``, if this browser started it: from the session, else the cookie."""
    held = st.session_state.get("class_secret")
    if isinstance(held, dict) and held.get("code") == code:
        return held.get("secret")
    cookie = _cookie(HOST_COOKIE)
    found_code, _, secret = cookie.partition(".")
    if found_code == code and _TOKEN.fullmatch(secret):
        st.session_state["class_secret"] = {"code": code, "secret": secret}
        return secret
    return None


def become_presenter(code: str, secret: str) -> None:
    st.session_state["class_secret"] = {"code": code, "secret": secret}


def keep_cookies() -> None:
    """Store the voter id and, for the presenter, the room's secret in this browser, renewed on each run."""
    cookies: list[list[Any]] = [[VOTER_COOKIE, voter(), COOKIE_S]]
    held = st.session_state.get("class_secret")
    if isinstance(held, dict):
        cookies.append([HOST_COOKIE, f"{held['code']}.{held['secret']}", COOKIE_S])
    _cookies()(key="class_cookies", data={"cookies": cookies})


def follow(code: str) -> None:
    """Every :data:`POLL_S`, while the page could not reach the store: rerun it once the store answers again.

    Nothing else reruns a class page on a timer: phones and the projector's count follow the room's stream
    (:mod:`ui.poll.live`).
    """

    def check() -> None:
        try:
            store().room(code)
        except StoreDown:
            return
        st.rerun(scope="app")

    st.fragment(check, run_every=POLL_S)()


def say(kind: str, message: str) -> None:
    """From a callback: have the run that follows say ``message`` (``st.error``, ``st.warning`` or ``st.success``,
    by ``kind``) where the page draws :func:`said`."""
    st.session_state["class_said"] = (kind, message)


def taken() -> tuple[str, str] | None:
    """What the last action came to, (kind, message) as :func:`say` left it, taken so that it is said once."""
    return st.session_state.pop("class_said", None)


_TOAST_ICONS = {"error": ":material/error:", "warning": ":material/warning:", "success": ":material/check_circle:"}


def said(toast: bool = False) -> bool:
    """What the last action came to, said once; whether there was anything to say. ``toast``: over the page, for
    10 s, not in it (a projector, whose buttons a banner above them would push below a 1280 × 720 screen)."""
    found = taken()
    if found:
        kind, message = found
        if toast:
            st.toast(message, icon=_TOAST_ICONS.get(kind), duration="long")
        else:
            getattr(st, kind)(message)
    return bool(found)


@contextlib.contextmanager
def down_said() -> Iterator[None]:
    """A press (a presenter's button, Start a room) whose store can't be reached: the next run says so."""
    try:
        yield
    except StoreDown as error:
        say("error", text.FULL if isinstance(error, StoreFull) else text.DOWN)


def went_down() -> None:
    """The store could not be reached, perhaps mid-write: the next run that reaches it says it is back."""
    st.session_state["class_down"] = True


def came_back() -> bool:
    """Whether the store was down since this session's last run that reached it (see :func:`went_down`)."""
    return st.session_state.pop("class_down", False)


@contextlib.contextmanager
def down_shown(code: str | None) -> Iterator[None]:
    """The page's run, for room ``code``: if the store can't be reached, a banner instead of the room, and a poll
    that reruns the page once the store answers."""
    try:
        yield
    except StoreDown:
        went_down()
        st.error(text.DOWN, icon=":material/cloud_off:")
        if code is not None:
            follow(code)


def ask(question: Question, room: poll.Room, large: bool = True) -> None:
    """Which question and round this is, and the question: a heading, or bold text where room is short."""
    st.caption(
        f"Question {room.index + 1} of {len(room.questions)} · round {room.round}: {text.PHASE_NAMES[room.round]}"
    )
    st.markdown(f"### {question.prompt}" if large else f"**{question.prompt}**")


def explain(question: Question, presenting: bool) -> None:
    """Why torch gives that answer, and the live view that shows it (in lecture mode on the projector)."""
    st.markdown(question.why)
    st.link_button("See why, live", question.link + ("&present=1" if presenting else ""), icon=":material/play_circle:")


def votes_of(room: poll.Room) -> list[dict[str, str]]:
    """Each revealed round's votes, voter → choice, round 1 first."""
    last = room.round if room.phase != "ask" else room.round - 1
    return [store().votes(room.code, room.index, r) for r in range(1, last + 1)]


def rounds_of(room: poll.Room, question: Question) -> list[dict[str, int]]:
    """Each revealed round's counts, round 1 first."""
    return [tally(question, found.values()) for found in votes_of(room)]
