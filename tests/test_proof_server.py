"""The proved client on a real server (the session's default one, tests/conftest.py's app_process): the page's
HTML gives a new browser its signed cookie, a WebSocket session that sends it back may open a room and upload,
and a script that discards its cookies is told, in one sentence, that it needs them, and may do neither."""

from __future__ import annotations

import asyncio
import urllib.request

from harness import aio
from harness.upload import put_file, xsrf_cookie
from harness.wsclient import Session
from lnviz.serving import proof


def set_cookies(url: str) -> list[str]:
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.headers.get_all("Set-Cookie") or []


def test_the_pages_html_sets_a_signed_first_party_cookie_and_the_health_check_does_not(app_server):
    (cookie,) = [c for c in set_cookies(app_server + "/class") if c.startswith(proof.COOKIE + "=")]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Max-Age=2592000" in cookie
    assert cookie.split(";")[0].split("=", 1)[1].startswith("1.")
    assert not [c for c in set_cookies(app_server + "/_stcore/health") if c.startswith(proof.COOKIE)]


async def start_and_upload(base: str, keeps_cookies: bool) -> tuple[list[str], bool, int]:
    """A session of /class presses Start; one of the explorer PUTs a file: the warnings, whether a room opened, and
    the upload's HTTP status."""
    poll = Session(base, page="class", keeps_cookies=keeps_cookies)
    explorer = Session(base, keeps_cookies=keeps_cookies)
    try:
        await asyncio.gather(poll.open(), explorer.open())
        await poll.rerun([poll.widget("class_start", trigger_value=True)])
        opened = any("Code " in m for m in poll.texts("markdown"))
        status = put_file(base, explorer.session_id, xsrf_cookie(base), b"1,2\n3,4\n")
        return poll.texts("warning"), opened, status
    finally:
        await asyncio.gather(poll.close(), explorer.close())


def test_a_browser_that_keeps_the_cookie_opens_a_room_and_uploads_and_a_script_that_does_not_is_told(app_server):
    warnings, opened, status = aio.run(start_and_upload(app_server, keeps_cookies=True))
    assert opened and status == 204 and proof.NEEDS not in warnings
    warnings, opened, status = aio.run(start_and_upload(app_server, keeps_cookies=False))
    assert not opened and status == 403
    assert proof.NEEDS in warnings
