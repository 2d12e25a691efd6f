"""Uploads take turns: one file's request body at a time is read and parsed by the server.

Streamlit parses an upload's multipart body (``request.form()``) on the server's event loop, the loop every
session's messages go through. Eight 31 MiB uploads parsed at once held it long enough that a bystander's γ move
took 2-5× its quiet time while they came in (issue 30's attack 8, ``benchmarks/upload_burst.py``). In turns, the
loop has one body's chunks to parse between two of its other messages, not eight. A waiting upload's bytes wait in
the socket: its browser sees its progress pause, and nothing is refused or lost.

A turn is waited for at most :data:`WAIT_S`. A body that comes slowly (a phone's uplink, or a client that sends a
byte at a time to hold the turn) costs the loop little, so whoever waits longer than that goes ahead beside it: one
slow upload delays the others by seconds, never holds them. Behind nginx, which reads a whole body before it
passes it on (``proxy_request_buffering``, on by default), bodies come fast.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.middleware import Middleware

PATH = "/_stcore/upload_file/"
AT_ONCE = 1  # bodies parsed at once: each one more adds its chunks to every turn of the loop
WAIT_S = 5.0  # eight 31 MiB bodies sent at once over the loopback are all parsed within it


class UploadTurns:
    """ASGI middleware: a PUT to Streamlit's upload route waits for its turn."""

    def __init__(self, app: Any, at_once: int = AT_ONCE, wait_s: float = WAIT_S) -> None:
        self.app = app
        self.at_once, self.wait_s = at_once, wait_s
        self._turns: asyncio.Semaphore | None = None  # made on the server's loop, at the first upload

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "PUT" or PATH not in scope.get("path", ""):
            await self.app(scope, receive, send)
            return
        if self._turns is None:
            self._turns = asyncio.Semaphore(self.at_once)
        try:
            await asyncio.wait_for(self._turns.acquire(), self.wait_s)
        except TimeoutError:  # a slow body holds the turn: go ahead beside it
            await self.app(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._turns.release()


def middleware() -> Middleware:
    """The ``st.App`` middleware entry for :class:`UploadTurns`."""
    return Middleware(UploadTurns)
