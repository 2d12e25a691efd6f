"""The proof of work on a real server (the session's default one, tests/conftest.py's app_process): a page's HTML
gives no cookie; Chromium solves the page's challenge without a click and its session is proved from its first
run (it opens a room); a script that solves one too earns a proof; one that does not, or discards its cookies,
may neither open a room nor upload, and is told why in one sentence."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

import pytest

from harness import aio
from harness.proofs import earn
from harness.upload import put_file, xsrf_cookie
from harness.wsclient import Session
from server import proof


def get(url: str, data: bytes | None = None) -> tuple[int, list[str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=60) as r:
            return r.status, r.headers.get_all("Set-Cookie") or [], r.read()
    except urllib.error.HTTPError as refused:
        return refused.code, [], b""


@pytest.mark.browser
def test_chromium_solves_the_pages_challenge_unasked_and_its_session_is_proved_from_its_first_run(app_server, contexts):
    status, cookies, html = get(app_server + "/class")
    assert status == 200 and b"/api/proof/boot.js" in html
    assert not [c for c in cookies if c.startswith(proof.COOKIE)]  # a GET earns nothing
    context = contexts({"width": 390, "height": 844})
    page = context.new_page()
    page.goto(app_server + "/class", wait_until="domcontentloaded")
    page.locator(".st-key-class_start button").click(timeout=60_000)
    page.get_by_text("Code ", exact=False).first.wait_for(timeout=60_000)  # a room opened: the session is proved
    (cookie,) = [c for c in context.cookies() if c["name"] == proof.COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and cookie["path"] == "/"
    assert not page.get_by_text(proof.NEEDS[:40]).count()


def test_a_script_earns_a_proof_only_by_solving_and_a_solution_buys_one_proof(app_server):
    assert get(app_server + "/api/proof", data=b"eyJub3QiOiAic29sdmVkIn0=")[0] == 403  # sent unsolved
    token = earn(app_server)
    assert token.count(".") == 2 and len(token) < 80


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
