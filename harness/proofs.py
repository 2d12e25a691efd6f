"""A proved browser for AppTest runs, which have no HTTP request and so no cookie (:mod:`server.proved`).

:class:`Browser` puts a real proof, signed with this process's secret as the
middleware signs one, where a connection's cookies would be
(``st.context.cookies``): every run of the test then comes from that browser,
until :meth:`Browser.fresh` makes it another or :meth:`Browser.forget` drops
its cookies. Nothing in the app reads a proof from anywhere else.

:func:`earn` (from a real server) and :func:`redeemed` (from this process's :mod:`server.proved`) pay for a proof
as a new browser does: a challenge solved.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import altcha

from server import proof, who


class Browser:
    """The browser every AppTest run of a test comes from; ``cookies`` is what it sends."""

    def __init__(self, monkeypatch: Any) -> None:
        from streamlit.runtime.context import ContextProxy, StreamlitCookies

        self.cookies: dict[str, str] = {}
        self.fresh()
        monkeypatch.setattr(ContextProxy, "cookies", property(lambda _: StreamlitCookies(dict(self.cookies))))

    def fresh(self) -> str:
        """Become a browser with a new proof, as a first visit gets; the client it proves."""
        from server import proved

        token = proof.mint(proved.secret(), time.time())
        self.cookies = {proof.COOKIE: token}
        found = proof.client(proved.secret(), token, time.time())
        assert found is not None
        return found

    def forget(self) -> None:
        """Send no cookies at all, as a script that discards them does."""
        self.cookies = {}


def solution(challenge: dict[str, Any]) -> str:
    """ALTCHA's payload solving ``challenge`` (as ``GET /api/proof`` gives it), found by trying every number as the
    page's script does (``altcha.solve_challenge_v1``)."""
    found = altcha.solve_challenge_v1(
        challenge["challenge"], challenge["salt"], challenge["algorithm"], challenge["maxnumber"]
    )
    assert found is not None, "no number solves the challenge"
    parts = [challenge[k] for k in ("algorithm", "challenge")] + [found.number, challenge["salt"]]
    return altcha.PayloadV1(*parts, challenge["signature"]).to_base64()


def earn(base: str, headers: dict[str, str] | None = None) -> str:
    """A new browser's proof from the server at ``base``: a challenge asked, solved and sent back, as
    lnviz/web/proof/boot.js does; the cookie's value, or "" when the server sets none."""
    for _ in range(3):  # a 409: the price rose meanwhile; ask again
        asked = urllib.request.Request(base + "/api/proof", headers=headers or {})
        with urllib.request.urlopen(asked, timeout=60) as r:
            challenge = json.loads(r.read())
        sent = urllib.request.Request(
            base + "/api/proof", data=solution(challenge).encode(), method="POST", headers=headers or {}
        )
        try:
            with urllib.request.urlopen(sent, timeout=60) as r:
                for header in r.headers.get_all("Set-Cookie") or []:
                    if header.startswith(proof.COOKIE + "="):
                        return header.split(";", 1)[0].split("=", 1)[1]
                return ""
        except urllib.error.HTTPError as refused:
            if refused.code != 409:
                return ""
    return ""


def redeemed(ip: str, work: int | None = None) -> str:
    """A new browser's proof from :mod:`server.proved`'s own functions, for a visitor from ``ip``: a challenge at the
    price there (or ``work``), solved, and redeemed; the proof, or "" when refused."""
    from server import proved

    address = who.address(ip)
    price = proved.price().work(address) if work is None else work
    challenge = proof.challenge(proved.secret(), price, time.time())
    _, token = proved.redeem(solution(challenge), address, time.time())
    return token or ""


def proved_client(token: str) -> str | None:
    """The client a session whose browser sent ``token`` is proved as (:func:`server.proved.client`'s answer)."""
    from server import proved

    return proof.client(proved.secret(), token, time.time())
