"""The proved client (:mod:`server.proof`) on the server: the proof of work a browser pays for its cookie,
and what a run asks of it.

- :class:`Middleware`: a page's HTML (a GET whose answer is ``text/html``) for a browser without a valid proof
  boots the page through lnviz/web/proof/boot.js (:func:`with_proof`): the browser asks ``GET {base}/api/proof``
  for a challenge, solves it (no click, nothing shown: about a second of a phone's CPU) and sends it back
  (``POST {base}/api/proof``, :func:`redeem`), whose answer sets the cookie, first-party and ``HttpOnly``; only
  then does Streamlit's own script start, so the WebSocket it opens carries the cookie and the session is proved
  from its first run. Whatever fails, Streamlit starts all the same, unproved. ``app.py`` puts it in front of
  Streamlit; :func:`routes` are its routes.
- :func:`client`: the proved client of this run, or None. :func:`refusal` is the one sentence a run without
  one is told, and :func:`require` says it where an action would change shared state. ``LNVIZ_LIMITS=off``
  asks no proof.
- :func:`note` and :func:`noted`: which sessions of this process were proved on a run, for the upload hook
  (:mod:`server.heavy`), which sees only a session id.

AppTest runs have no HTTP request and so no cookie: a test gives a run a real proof, signed with this process's
:func:`secret`, by setting the cookie where a connection's would be (``harness/proofs.py``); nothing in
production reads one from anywhere else.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections import OrderedDict
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import anyio
import streamlit as st
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from server import limits, proof, quota, streamlit_private, who

NEEDS = proof.NEEDS  # what a run, or an upload, without a proof is told
_REMEMBERED = 10_000  # proved sessions remembered for the upload hook, the least recently seen forgotten first
_noted: OrderedDict[str, str] = OrderedDict()
_lock = threading.Lock()


@functools.cache
def secret() -> bytes:
    """This process's signing key (``LNVIZ_SECRET``, else drawn once)."""
    return proof.secret_from_env(os.environ)


@functools.cache
def price() -> proof.Price:
    """This process's price of new proofs, counted in the Redis every replica shares when there is one."""
    return proof.Price(limits.current(), quota.storage_from_env(os.environ))


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
    return None if not limits.current().enabled or client() is not None else proof.NEEDS


def require(where: Any = None) -> bool:
    """Whether this run's browser is proved; if not, the sentence why it can't act is drawn in ``where``
    (default: the main area)."""
    why = refusal()
    if why is not None:
        (st if where is None else where).warning(why, icon=":material/cookie:")
    return why is None


def note() -> None:
    """Remember that the current session is proved, when it is (for :func:`noted`)."""
    session = streamlit_private.session_id()
    if not session or refusal() is not None:
        return
    with _lock:
        _noted[session] = "proved"
        _noted.move_to_end(session)
        while len(_noted) > _REMEMBERED:
            _noted.popitem(last=False)


def noted(session_id: str) -> bool:
    """Whether a run of ``session_id`` was proved (:func:`note`): what the upload hook asks."""
    if not limits.current().enabled:
        return True
    with _lock:
        return session_id in _noted


PROOF_PATH = "/api/proof"
WEB = Path(__file__).resolve().parents[1] / "lnviz" / "web" / "proof"
SCRIPTS = ("boot.js", "solve.js")  # what GET {base}/api/proof/{name} serves
# Streamlit's own script in its page (streamlit/static/index.html): the one tag the proof boots after.
ENTRY = re.compile(rb'<script type="module" crossorigin src="(\./static/js/index\.[\w-]+\.js)"></script>')
_BOOT = """<script type="module">
import("{base}/api/proof/boot.js").then((m) => m.prove("{base}/api/proof")).catch(() => false)
  .finally(() => import("{entry}"));
</script>"""
_NO_STORE = {"Cache-Control": "no-store"}


def with_proof(html: bytes, base: str) -> bytes:
    """A page's HTML whose Streamlit starts once the browser has its proof (or failed to get one): its entry
    script's tag replaced by one that proves first, then imports it. A page without that tag is left as it is."""
    found = ENTRY.search(html)
    if found is None:
        return html
    boot = _BOOT.format(base=base, entry=found[1].decode()).encode()
    return html[: found.start()] + boot + html[found.end() :]


class Middleware:
    """ASGI middleware: a page's HTML for a browser without a valid proof boots through the proof (see the
    module's docstring). Anything else passes untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if (
            scope.get("type") != "http"
            or scope.get("method") != "GET"
            or not limits.current().enabled
            or proof.client(secret(), _request_cookie(scope), time.time()) is not None
        ):
            await self.app(scope, receive, send)
            return
        # The whole page, uncompressed and never "not modified", so that its script tag can be replaced.
        asked = [(k, v) for k, v in scope.get("headers", []) if k not in _NOT_ASKED]
        start: dict[str, Any] = {}
        body: list[bytes] = []

        async def rewrite(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                if not _is_html(message):
                    await send(message)
                    return
                start.update(message)
                return
            if not start:
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            from server.base_path import prefix

            page = with_proof(b"".join(body), prefix())
            keep = [(k, v) for k, v in start.get("headers", []) if k not in _REWRITTEN]
            headers = [*keep, (b"content-length", str(len(page)).encode()), (b"cache-control", b"no-store")]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": page})

        await self.app({**scope, "headers": asked}, receive, rewrite)


_NOT_ASKED = (b"accept-encoding", b"if-none-match", b"if-modified-since")
_REWRITTEN = (b"content-length", b"cache-control", b"etag", b"last-modified")


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


def _address(request: Request) -> str:
    return who.address(request.client.host if request.client else None)


async def give_challenge(request: Request) -> Response:
    """``GET {base}/api/proof``: a new challenge, at the price of a proof for this visitor's address now."""
    work = await anyio.to_thread.run_sync(price().work, _address(request))  # Redis, perhaps: off the event loop
    return JSONResponse(proof.challenge(secret(), work, time.time()), headers=_NO_STORE)


def redeem(payload: str, address: str, now: float) -> tuple[int, str | None]:
    """A solved challenge sent back from ``address``: (HTTP status, a new proof or None). 204 with a proof; 409
    when the price there rose since the challenge was given (the browser asks for another); 403 for anything
    that is no solution of ours, expired or spent."""
    done = proof.solved(secret(), payload)
    if done is None:
        return 403, None
    spent = price().spend(done, address)
    if spent == "cheap":
        return 409, None
    if spent != "ok":
        return 403, None
    return 204, proof.mint(secret(), now)


async def take_solution(request: Request) -> Response:
    """``POST {base}/api/proof``: a solved challenge; its answer sets the proof's cookie (see :func:`redeem`)."""
    body = await request.body()
    if len(body) > 1024:
        return Response(status_code=413, headers=_NO_STORE)
    status, token = await anyio.to_thread.run_sync(
        redeem, body.decode("ascii", "replace"), _address(request), time.time()
    )
    answer = Response(status_code=status, headers=_NO_STORE)
    if token is not None:
        answer.headers.append("set-cookie", _cookie_header(token, request.url.scheme == "https"))
    return answer


async def script(request: Request) -> Response:
    """``GET {base}/api/proof/{name}``: the browser's side of the proof, lnviz/web/proof/."""
    name = request.path_params["name"]
    if name not in SCRIPTS:
        return Response(status_code=404)
    return FileResponse(WEB / name, media_type="text/javascript", headers={"Cache-Control": "no-cache"})


def _cookie_header(value: str, secure: bool) -> str:
    flags = "; Secure" if secure else ""
    return f"{proof.COOKIE}={value}; Max-Age={proof.MAX_AGE_S}; Path=/; HttpOnly; SameSite=Lax{flags}"


def routes() -> list[Route]:
    """The proof's routes, under ``server.baseUrlPath`` (:func:`ui.poll.routes.routes` lists them)."""
    from server.base_path import prefix

    return [
        Route(prefix() + PROOF_PATH, give_challenge, methods=["GET"]),
        Route(prefix() + PROOF_PATH, take_solution, methods=["POST"]),
        Route(prefix() + PROOF_PATH + "/{name}", script, methods=["GET"]),
    ]
