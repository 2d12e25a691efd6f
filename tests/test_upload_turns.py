"""Uploads take turns (server/upload_turns.py): one upload body at a time reaches Streamlit's parser, a turn is waited
for at most a bound, and nothing else waits. Then through the session's real server: a body that has not all
come holds a second upload back, which goes on once the first is in."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid

from test_server_limits import opened

from harness import aio
from harness.upload import put_file, xsrf_cookie
from server.upload_turns import PATH, UploadTurns


def scope(method: str, path: str) -> dict:
    return {"type": "http", "method": method, "path": path}


class Held:
    """An ASGI app that holds each request until released, counting how many it holds at once."""

    def __init__(self) -> None:
        self.inside, self.most, self.order = 0, 0, []
        self.release = asyncio.Event()

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        self.inside += 1
        self.most = max(self.most, self.inside)
        self.order.append(scope["path"])
        await self.release.wait()
        self.inside -= 1


def test_two_uploads_at_once_reach_the_app_one_after_the_other():
    async def go() -> tuple[int, list[str]]:
        app = Held()
        turns = UploadTurns(app)
        tasks = [asyncio.create_task(turns(scope("PUT", f"/_stcore/upload_file/s/{i}"), None, None)) for i in "ab"]
        await asyncio.sleep(0.05)
        waiting = list(app.order)
        app.release.set()
        await asyncio.gather(*tasks)
        return app.most, waiting

    most, waiting = aio.run(go())
    assert waiting == ["/_stcore/upload_file/s/a"]  # the second waited for its turn
    assert most == 1


def test_other_requests_and_a_turn_waited_for_too_long_go_ahead():
    async def go() -> tuple[list[str], list[str]]:
        app = Held()
        turns = UploadTurns(app, wait_s=0.2)
        first = asyncio.create_task(turns(scope("PUT", "/lnviz/_stcore/upload_file/s/a"), None, None))
        await asyncio.sleep(0.02)
        others = [
            asyncio.create_task(turns(s, None, None))
            for s in (scope("GET", "/_stcore/upload_file/s/a"), scope("PUT", "/api/x"), {"type": "websocket", "path": PATH})
        ]  # fmt: skip
        second = asyncio.create_task(turns(scope("PUT", "/lnviz/_stcore/upload_file/s/b"), None, None))
        await asyncio.sleep(0.1)
        before_bound = list(app.order)
        await asyncio.sleep(0.3)  # past wait_s: the held turn is not given up, the waiter goes beside it
        after_bound = list(app.order)
        app.release.set()
        await asyncio.gather(first, second, *others)
        return before_bound, after_bound

    before_bound, after_bound = aio.run(go())
    assert before_bound == ["/lnviz/_stcore/upload_file/s/a", "/_stcore/upload_file/s/a", "/api/x", PATH]
    assert after_bound == [*before_bound, "/lnviz/_stcore/upload_file/s/b"]


def test_a_turn_is_given_back_when_the_upload_fails():
    async def go() -> list[str]:
        seen: list[str] = []

        async def failing(scope: dict, receive: object, send: object) -> None:
            seen.append(scope["path"])
            raise ConnectionResetError

        turns = UploadTurns(failing, wait_s=10)
        for name in "ab":
            try:
                await asyncio.wait_for(turns(scope("PUT", f"{PATH}s/{name}"), None, None), 1)
            except ConnectionResetError:
                pass
        return seen

    assert aio.run(go()) == [f"{PATH}s/a", f"{PATH}s/b"]  # the second did not wait out the bound


def one_then_another(base: str, session_id: str, xsrf: str) -> tuple[bool, str, int, float]:
    """A PUT of which only 100 bytes of the body are sent, then a whole one beside it: whether the second was
    answered within 1.5 s, the first's status line once its body is all sent, the second's status and seconds."""
    host, port = base.removeprefix("http://").split("/")[0].split(":")
    boundary, rows = uuid.uuid4().hex, "1,2\n" * 1024
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n'
        f"Content-Type: text/csv\r\n\r\n{rows}\r\n--{boundary}--\r\n"
    ).encode()
    head = (
        f"PUT /_stcore/upload_file/{session_id}/{uuid.uuid4()} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(body)}\r\n"
        f"X-Xsrftoken: {xsrf}\r\nCookie: _streamlit_xsrf={xsrf}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port))) as slow:
        slow.sendall(head + body[:100])
        time.sleep(0.3)  # the first upload is in the app, waiting for the rest of its body
        second: list[tuple[int, float]] = []
        started = time.monotonic()
        thread = threading.Thread(
            target=lambda: second.append((put_file(base, session_id, xsrf, b"1,2\n"), time.monotonic() - started))
        )
        thread.start()
        thread.join(1.5)
        answered_early = bool(second)
        slow.sendall(body[100:])
        answer = slow.recv(4096).decode()
    thread.join(10)
    return answered_early, answer.split("\r\n")[0], *second[0]


def test_the_server_parses_a_second_upload_once_the_first_body_is_in(app_process):
    """Through the session's real server: a PUT whose body is half sent holds the turn, and a second PUT is
    answered only once the first is sent whole (within the bound of 5 s here); then both are taken."""

    async def go() -> tuple[bool, str, int, float]:
        base = app_process.url
        xsrf = await asyncio.to_thread(xsrf_cookie, base)
        session = await opened(base)
        try:
            return await asyncio.to_thread(one_then_another, base, session.session_id, xsrf)
        finally:
            await session.close()

    answered_early, first, status, seconds = aio.run(go())
    assert not answered_early  # the second waited for its turn
    assert first == "HTTP/1.1 204 No Content" and status == 204
    assert seconds < 4.5  # it went on when the first was in, not when the bound ran out
