"""A link is read once, at the door: a page's HTML request answered with today's link when it differs.

:class:`Door` is an ``st.App`` middleware (``app.py``). A GET for a page's path (the registry's
:attr:`~lnviz.views.pages.PageEntry.paths`, under ``server.baseUrlPath``) reads its query string through the
page's state table (:func:`lnviz.views.links.canonical`): a link from an earlier version, an old name, a value its
widget can't take or off a select slider's stops, an index past the end of its grid. Where that changes the link,
the answer is a redirect (302, never cached: a later version may read the link otherwise) to the canonical one,
and the browser opens that: Streamlit's frontend sends its run the URL it is at, so the first run's
``st.query_params`` are the canonical link's, and every widget bound to the URL starts from a value its control
takes as it is, Streamlit's own binding seeding it. A canonical link passes untouched: a redirect never loops.

The notes that say what changed travel in the redirect's URL, as ``note=``: the notes themselves, signed and
timestamped with the deployment's secret (``itsdangerous``, :func:`server.proved.secret`, which every replica shares),
so that a link can't make the page print a sentence of its own; good for :data:`NOTE_S`. The page reads them
once and removes the parameter (:func:`take_notes`), so a reload or a copied URL shows the view without them. Not
a cookie: a page can't remove one (Streamlit has no public way to set a cookie from a run), and a reload within
its lifetime would show the notes again.

AppTest runs no HTTP request: ``harness.apptest.run_page`` passes its query through :func:`through`, the door's
own reading, as a browser's redirect would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode

import streamlit as st
from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.middleware import Middleware

from lnviz.views import links, pages
from server import proved

NOTE = "note"  # the link parameter that carries the door's notes to the page
NOTE_S = 600  # seconds a redirect's notes are good for: the page reads them at once
_SALT = "lnviz-link-notes"
_PATHS = {path: entry.name for entry in pages.PAGES for path in entry.paths}


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(proved.secret(), salt=_SALT)


def through(page: str, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]] | None:
    """The link the door sends a browser to for ``pairs`` (a query string's parameters) on ``page``, with its notes
    signed in ``note``; None when the link is canonical and passes."""
    read = links.canonical(page, pairs)
    if not read.changed:
        return None
    query = [(key, value) for key, value in read.query if key != NOTE]
    return [*query, (NOTE, _serializer().dumps(list(read.notes)))] if read.notes else query


def page_at(path: str, base: str) -> str | None:
    """The page a request for ``path`` opens under ``base`` (``server.baseUrlPath`` as a prefix, "" or "/lnviz"),
    by its name in the registry; None for anything else (a file, a route, the WebSocket)."""
    if base and not (path == base or path.startswith(base + "/")):
        return None
    return _PATHS.get(path[len(base) :].strip("/"))


def location(path: str, query: list[tuple[str, str]]) -> str:
    """The redirect's target for a request to ``path``: relative (``./walkthrough?…``), so that it stays under
    whatever path a proxy in front serves the app at."""
    return "./" + path.rsplit("/", 1)[-1] + "?" + urlencode(query)


class Door:
    """ASGI middleware: a GET or HEAD for a page whose link is not canonical is answered with a redirect to the
    canonical one (see the module's docstring); anything else passes untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD"):
            from server.base_path import prefix

            page = page_at(scope.get("path", ""), prefix())
            if page is not None:
                text = scope.get("query_string", b"").decode("utf-8", "replace")  # a browser escapes what is not ASCII
                target = through(page, parse_qsl(text, keep_blank_values=True))
                if target is not None:
                    headers = [(b"location", location(scope["path"], target).encode()), (b"cache-control", b"no-store")]
                    await send({"type": "http.response.start", "status": 302, "headers": headers})
                    await send({"type": "http.response.body", "body": b""})
                    return
        await self.app(scope, receive, send)


def middleware() -> Middleware:
    """The ``st.App`` middleware entry for :class:`Door`."""
    return Middleware(Door)


def take_notes() -> list[str]:
    """On a page's run: the door's notes (``note=``), if good, for the page kit to show, and the parameter removed
    from the address bar. A note that is not the door's is dropped unread."""
    token = st.query_params.get(NOTE)
    if token is None:
        return []
    del st.query_params[NOTE]
    try:
        notes = _serializer().loads(token, max_age=NOTE_S)
    except BadSignature:  # altered, another deployment's, or expired (SignatureExpired is one)
        return []
    return [note for note in notes if isinstance(note, str)] if isinstance(notes, list) else []
