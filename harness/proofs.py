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
