"""The proved client (:mod:`lnviz.serving.proof`) on the server: the middleware that gives a browser its cookie,
and what a run asks of it.

- :class:`Middleware`: on each page's HTML (a GET whose answer is ``text/html``)
  from a browser without a valid proof, a new one in a first-party cookie,
  ``HttpOnly``, if the address's budget allows (:class:`lnviz.serving.proof.Minter`);
  else a cookie that says when to come back. ``app.py`` puts it in front of
  Streamlit. The session then finds the cookie in ``st.context.cookies``:
  the browser sends it with the WebSocket it opens from that page.
- :func:`client`: the proved client of this run, or None. :func:`refusal` is
  the one sentence a run without one is told, and :func:`require` says it where
  an action would change shared state. ``LNVIZ_LIMITS=off`` asks no proof.
- :func:`note` and :func:`noted`: which sessions of this process were proved on
  a run, for the upload hook (:mod:`ui.heavy`), which sees only a session id.

AppTest runs have no HTTP request and so no cookie: a test gives a run a real
proof, signed with this process's :func:`secret`, by setting the cookie where a
connection's would be (``harness/proofs.py``); nothing in production reads one
from anywhere else.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections import OrderedDict
from http.cookies import SimpleCookie
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from lnviz.serving import limits, proof, quota, who

NEEDS = proof.NEEDS  # what a run, or an upload, without a proof is told
_REMEMBERED = 10_000  # proved sessions remembered for the upload hook, the least recently seen forgotten first
_noted: OrderedDict[str, str] = OrderedDict()
_lock = threading.Lock()


@functools.cache
def secret() -> bytes:
    """This process's signing key (``LNVIZ_SECRET``, else drawn once)."""
    return proof.secret_from_env(os.environ)


@functools.cache
def minter() -> proof.Minter:
    """This process's budget of new proofs, counted in the Redis every replica shares when there is one."""
    return proof.Minter(limits.current(), quota.storage_from_env(os.environ))


def _token() -> str:
    try:
        found = st.context.cookies.get(proof.COOKIE, "")
    except Exception:  # no session behind this call
        found = ""
    return found if isinstance(found, str) else ""


def client() -> str | None:
    """The client this run's browser is proved as ("proved …"), or None."""
    return proof.client(secret(), _token(), time.time())


def refusal() -> str | None:
    """Why this run may not change shared state, in one sentence; None when its browser is proved (or the limits
    are off)."""
    if not limits.current().enabled or client() is not None:
        return None
    wait = proof.wait_s(_token(), time.time())
    return proof.NEEDS if wait is None else proof.WAIT.format(s=wait)


def require(where: Any = None) -> bool:
    """Whether this run's browser is proved; if not, the sentence why it can't act is drawn in ``where``
    (default: the main area)."""
    why = refusal()
    if why is not None:
        (st if where is None else where).warning(why, icon=":material/cookie:")
    return why is None


def note() -> None:
    """Remember that the current session is proved, when it is (for :func:`noted`)."""
    ctx = get_script_run_ctx()
    if ctx is None or refusal() is not None:
        return
    with _lock:
        _noted[ctx.session_id] = "proved"
        _noted.move_to_end(ctx.session_id)
        while len(_noted) > _REMEMBERED:
            _noted.popitem(last=False)


def noted(session_id: str) -> bool:
    """Whether a run of ``session_id`` was proved (:func:`note`): what the upload hook asks."""
    if not limits.current().enabled:
        return True
    with _lock:
        return session_id in _noted


def _cookie_header(value: str, max_age_s: int, secure: bool) -> bytes:
    flags = "; Secure" if secure else ""
    return f"{proof.COOKIE}={value}; Max-Age={max_age_s}; Path=/; HttpOnly; SameSite=Lax{flags}".encode("latin-1")


class Middleware:
    """ASGI middleware: a page's HTML gives a browser without a valid proof a new one, within its address's
    budget (see the module's docstring). Anything else passes untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        token = _request_cookie(scope)
        now = time.time()
        if proof.client(secret(), token, now) is not None:
            await self.app(scope, receive, send)
            return

        async def send_with_proof(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start" and _is_html(message):
                message = dict(message, headers=[*message.get("headers", []), await _new_cookie(scope, token, now)])
            await send(message)

        await self.app(scope, receive, send_with_proof)


def _request_cookie(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed Cookie header is no proof
                return ""
            if proof.COOKIE in jar:
                return jar[proof.COOKIE].value
    return ""


def _is_html(message: dict[str, Any]) -> bool:
    return any(k == b"content-type" and v.startswith(b"text/html") for k, v in message.get("headers", []))


async def _new_cookie(scope: dict[str, Any], token: str, now: float) -> tuple[bytes, bytes]:
    """A new proof for this visitor, or (over its address's budget) when to come back: a Set-Cookie header."""
    import anyio.to_thread

    secure = scope.get("scheme") == "https"
    wait = proof.wait_s(token, now)
    if wait is None:  # not waiting already: ask the budget (Redis, perhaps: off the event loop)
        client = scope.get("client")
        address = who.address(client[0] if client else None)
        wait = await anyio.to_thread.run_sync(minter().admit, address) or None
        if wait is None:
            return b"set-cookie", _cookie_header(proof.mint(secret(), now), proof.MAX_AGE_S, secure)
    return b"set-cookie", _cookie_header(proof.waiting(wait, now), wait, secure)
