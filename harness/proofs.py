"""A proved browser for AppTest runs, which have no HTTP request and so no cookie (:mod:`ui.proof`).

:class:`Browser` puts a real proof, signed with this process's secret as the
middleware signs one, where a connection's cookies would be
(``st.context.cookies``): every run of the test then comes from that browser,
until :meth:`Browser.fresh` makes it another or :meth:`Browser.forget` drops
its cookies. Nothing in the app reads a proof from anywhere else.
"""

from __future__ import annotations

import time
from typing import Any

from harness import aio
from lnviz.serving import proof


class Browser:
    """The browser every AppTest run of a test comes from; ``cookies`` is what it sends."""

    def __init__(self, monkeypatch: Any) -> None:
        from streamlit.runtime.context import ContextProxy, StreamlitCookies

        self.cookies: dict[str, str] = {}
        self.fresh()
        monkeypatch.setattr(ContextProxy, "cookies", property(lambda _: StreamlitCookies(dict(self.cookies))))

    def fresh(self) -> str:
        """Become a browser with a new proof, as a first visit gets; the client it proves."""
        from ui import proof as ui_proof

        token = proof.mint(ui_proof.secret(), time.time())
        self.cookies = {proof.COOKIE: token}
        found = proof.client(ui_proof.secret(), token, time.time())
        assert found is not None
        return found

    def forget(self) -> None:
        """Send no cookies at all, as a script that discards them does."""
        self.cookies = {}


async def _html(scope: dict, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
    await send({"type": "http.response.body", "body": b""})


def first_visit(ip: str, cookie: str = "") -> str:
    """What a page's HTML sets in the ``lnviz_proof`` cookie for a visitor from ``ip`` who sends ``cookie`` (a
    proof, or "" as a script that discards its cookies), through :class:`ui.proof.Middleware`; "" for nothing."""

    from ui import proof as ui_proof

    headers = [(b"cookie", f"{proof.COOKIE}={cookie}".encode())] if cookie else []
    scope = {"type": "http", "method": "GET", "path": "/class", "headers": headers, "client": (ip, 40000)}
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    aio.run(ui_proof.Middleware(_html)(scope, None, send))
    for name, value in sent[0]["headers"]:
        if name == b"set-cookie":
            return value.decode().split(";")[0].split("=", 1)[1]
    return ""


def proved_client(token: str) -> str | None:
    """The client a session whose browser sent ``token`` is proved as (:func:`ui.proof.client`'s answer)."""
    from ui import proof as ui_proof

    return proof.client(ui_proof.secret(), token, time.time())
