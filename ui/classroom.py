"""Streamlit's side of the class poll: who is the presenter, who is a voter, and the poll that notices changes.

- The store is the process's one :class:`lnviz.serving.rooms.Store`
  (:mod:`ui.store`): Redis when ``LNVIZ_REDIS_URL`` is set, else this
  process's memory.
- A voter is a random id in a cookie of the browser's (``lnviz_voter``), so a
  reload, a reconnect or a move to another replica keeps the same vote. It is
  no name and says nothing about the person.
- The presenter is the session that started the room: it holds the room's
  secret, in its session and in a cookie scoped to this site
  (``lnviz_host``), so a reload of the projector's tab keeps the role. The
  secret is never in a link, the QR code or the page.
- :func:`poll` is a fragment on a timer: it reads the room (one key) and, for
  the presenter, the count (one more); only when the presenter has acted since
  this page was drawn does it rerun the page.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

import streamlit as st

from lnviz.serving import rooms
from ui.store import store

VOTER_COOKIE, HOST_COOKIE = "lnviz_voter", "lnviz_host"
COOKIE_S = 12 * 3600
POLL_S = 1.0  # phones and projector look for the presenter's next move this often
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
_cookies = st.components.v2.component("lnviz_cookies", js=_COOKIE_JS)


def _cookie(name: str) -> str:
    """The browser's cookie ``name`` as it came with this session's connection; "" if none."""
    found = st.context.cookies.get(name, "")
    return found if isinstance(found, str) else ""


def voter() -> str:
    """This browser's voter id: its cookie's, or a new random one that :func:`keep_cookies` will store."""
    found = st.session_state.get("class_voter")
    if not found:
        cookie = _cookie(VOTER_COOKIE)
        found = cookie if _TOKEN.fullmatch(cookie) else secrets.token_urlsafe(16)
        st.session_state["class_voter"] = found
    return found


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
    _cookies(key="class_cookies", data={"cookies": cookies})


def poll(code: str, version: int | None, show_count: Any = None) -> None:
    """Every :data:`POLL_S`: rerun the page if the room changed since it was drawn at ``version``.

    ``version`` None: the page could not reach the store; rerun it once the
    store answers again. ``show_count(room)``, for the presenter, draws how
    many have answered.
    """

    def check() -> None:
        try:
            room = store().room(code)
        except rooms.StoreDown:
            if version is not None:
                st.warning(DOWN, icon=":material/cloud_off:")
            return
        if room is None or room.version != version:
            st.rerun(scope="app")
        if show_count is not None:
            show_count(room)

    st.fragment(check, run_every=POLL_S)()


DOWN = (
    "The class's shared store can't be reached just now, so answers can't be sent or shown. The rest of lnviz "
    "works as usual. This page tries again every second and carries on by itself once the store is back."
)
