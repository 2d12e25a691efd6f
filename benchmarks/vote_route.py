"""Issue 31: a vote through the page (a script run) against a vote by a POST route, on one replica with Redis.

    python -m benchmarks.vote_route                     # 40 phones
    python -m benchmarks.vote_route --phones 10 --blocks 2

The route is a throwaway, for this measurement only: :func:`vote` is served at
``POST {base}/api/class/{code}/vote`` by a server that :mod:`benchmarks.vote_route_serve` starts, ``app.py``
with this route beside its own. It keeps the page's limits: the proof cookie (``lnviz_proof``), the voter cookie
(``lnviz_voter``), the address as the poll counts it, and the store's once per voter per round
(``store().vote``), with a check of the request's ``Origin``.

Each of ``--phones`` phones opens ``/class?room=CODE`` (a light client, :mod:`benchmarks.class_faults`), then
votes by turns, by the page (the element's trigger value, the page's callback, the run after it) and by the route
(one request on a kept-alive connection), ``--blocks`` blocks of one vote per phone each way, one vote at a time;
then all phones at once, each way. Measured: each vote's time at the client, from the request to the answer that
confirms it, and the server's CPU (``/proc``) per vote over each block.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import class_faults
from benchmarks.class_stream import cpu_seconds, quantiles
from harness import redis as redis_harness
from harness.replicas import SECRET
from harness.server import free_port, start_app, stop, wait_app
from server import poll
from server.store import RedisStore

VOTE_PATH = "/api/class/{code}/vote"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")  # as ui.poll.classroom reads the voter cookie
MAX_BODY = 1024


def _store_vote(code: str, voter: str, sent: dict, client: str, address: str) -> str:
    """What ``ui.poll.phone.vote`` does with a vote, off the event loop: the room, the answer parsed, the store's vote."""
    from lnviz.labs.classroom import questions
    from server.process_store import store

    room = store().room(code)
    index, round_ = sent.get("index"), sent.get("round")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (index, round_)):
        return "bad"
    if room is None or not 0 <= index < len(room.questions):
        return "unknown" if room is None else "moved"
    choice = questions.by_id(room.questions[index]).parse(sent.get("answer"))
    if choice is None:
        return "bad"
    return store().vote(code, voter, index, round_, choice, client, address)


async def vote(request: Any) -> Any:
    """``POST {base}/api/class/{code}/vote`` with ``{index, round, answer}``: ``{"outcome": ...}``, as the store
    answered (``counted``, ``changed`` or a key of :data:`server.poll.REFUSED`)."""
    import anyio
    from starlette.responses import JSONResponse

    from server import limits, proved, who
    from server import proof as proofs
    from server.limits import StoreDown

    origin, host = request.headers.get("origin", ""), request.headers.get("host", "")
    if origin.split("://", 1)[-1] != host:
        return JSONResponse({"outcome": "origin"}, status_code=403)
    client = proofs.client(proved.secret(), request.cookies.get(proofs.COOKIE, ""), time.time())
    if client is None and limits.current().enabled:
        return JSONResponse({"outcome": "proof"}, status_code=403)
    voter = request.cookies.get("lnviz_voter", "")
    code = poll.valid_code(request.path_params["code"])
    body = await request.body()
    if not _TOKEN.fullmatch(voter) or code is None or len(body) > MAX_BODY:
        return JSONResponse({"outcome": "bad"}, status_code=400)
    try:
        sent = json.loads(body)
    except ValueError:
        return JSONResponse({"outcome": "bad"}, status_code=400)
    address = who.counted(request.client.host if request.client else None)
    try:
        outcome = await anyio.to_thread.run_sync(_store_vote, code, voter, sent, client or "", address)
    except StoreDown:
        return JSONResponse({"outcome": "down"}, status_code=503)
    return JSONResponse({"outcome": outcome}, headers={"Cache-Control": "no-store"})


def route() -> Any:
    from starlette.routing import Route

    from ui.poll import routes

    return Route(routes.prefix() + VOTE_PATH, vote, methods=["POST"])


class Poster:
    """One phone's kept-alive HTTP/1.1 connection for its votes by the route."""

    def __init__(self, port: int, cookies: dict[str, str]) -> None:
        self.port, self.cookies = port, cookies
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: dict) -> tuple[int, dict]:
        """POST ``body`` as JSON; the status and the JSON answer (framed by its Content-Length). A kept-alive
        connection the server has closed meanwhile (uvicorn keeps one 5 s) is opened again, as a browser does."""
        if self.writer is not None:
            try:
                return await self._post(path, body)
            except (asyncio.IncompleteReadError, ConnectionError):
                await self.close()
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return await self._post(path, body)

    async def _post(self, path: str, body: dict) -> tuple[int, dict]:
        data = json.dumps(body).encode()
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nOrigin: http://127.0.0.1:{self.port}\r\n"
            f"Cookie: {cookie}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        )
        self.writer.write(head.encode() + data)
        got = await self.reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", got)
        answer = await self.reader.readexactly(int(length.group(1))) if length else b"{}"
        return int(got.split(b" ", 2)[1]), json.loads(answer)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


@dataclass
class Way:
    """One way of voting: each vote's time (s) and the server's CPU seconds over its blocks."""

    name: str
    took: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    votes: int = 0
    failed: int = 0
    sent: int = 0  # votes sent, in blocks and bursts
    burst_s: list[float] = field(default_factory=list)  # all phones at once: until the last confirmation
    burst_cpu_s: float = 0.0

    def line(self, phones: int) -> str:
        p50, p95, _ = quantiles(self.took)
        per = 1e3 * self.cpu_s / max(1, self.votes)
        burst = 1e3 * self.burst_cpu_s / max(1, phones * len(self.burst_s))
        return (
            f"| {self.name} | {p50 * 1e3:.0f} | {p95 * 1e3:.0f} | {per:.1f} | "
            f"{', '.join(f'{b:.2f}' for b in self.burst_s)} | {burst:.1f} | {self.failed} of {self.sent} |"
        )


async def by_page(phone: class_faults.Phone, session: Any, answer: str, n: int) -> bool:
    element = class_faults.bidi(session, "lnviz.class")
    await asyncio.wait_for(session.rerun([class_faults.vote_state(element, answer, n)]), 60)
    drawn = class_faults.bidi(session, "lnviz.class")
    return drawn is not None and class_faults.confirmed(json.loads(drawn.json), answer)


async def by_route(poster: Poster, code: str, answer: str) -> bool:
    status, got = await poster.post(VOTE_PATH.format(code=code), {"index": 0, "round": 1, "answer": answer})
    return status == 200 and got.get("outcome") in (poll.COUNTED, poll.CHANGED)


async def measure(args: argparse.Namespace, port: int, pid: int, store: RedisStore) -> list[str]:
    room, _ = poll.open_room(store, class_faults.QUESTIONS)
    base = f"http://127.0.0.1:{port}"
    phones = [class_faults.Phone(f"phone-{i}", []) for i in range(args.phones)]
    sessions = [await class_faults.open_page(p, base, room.code) for p in phones]
    posters = [Poster(port, p.cookies) for p in phones]
    page, post = Way("by the page (a script run)"), Way("by a POST route")
    counter = iter(range(1, 10**9))

    async def one(way: Way, i: int, answer: str) -> float | None:
        way.sent += 1
        start = time.perf_counter()
        if way is page:
            ok = await by_page(phones[i], sessions[i], answer, next(counter))
        else:
            ok = await by_route(posters[i], room.code, answer)
        return time.perf_counter() - start if ok else None

    await asyncio.sleep(args.settle)
    for block in range(args.blocks):
        for way in (page, post) if block % 2 == 0 else (post, page):
            before = cpu_seconds(pid)
            for i in range(len(phones)):
                took = await one(way, i, class_faults.CHOICES[(block + i) % 4])
                way.took += [took] if took is not None else []
                way.failed += took is None
            way.cpu_s += cpu_seconds(pid) - before
            way.votes += len(phones)
            await asyncio.sleep(args.pause)  # the rate limit: at most 30 votes a voter a minute
    for k, way in enumerate((page, post, post, page)):
        before, start = cpu_seconds(pid), time.perf_counter()
        got = await asyncio.gather(*(one(way, i, class_faults.CHOICES[(k + i) % 4]) for i in range(len(phones))))
        way.burst_s.append(time.perf_counter() - start)
        way.burst_cpu_s += cpu_seconds(pid) - before
        way.failed += sum(t is None for t in got)
        await asyncio.sleep(args.pause)
    for session in sessions:
        await session.close()
    for poster in posters:
        await poster.close()
    return [
        f"# A vote by the page against a vote by a POST route: {args.phones} phones, one replica, Redis",
        "",
        "| way | p50 ms | p95 ms | server CPU ms per vote | all phones at once, s | CPU ms per vote then | failed |",
        "|---|---|---|---|---|---|---|",
        page.line(len(phones)),
        post.line(len(phones)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vote_route", description=__doc__.split("\n")[0])
    parser.add_argument("--phones", type=int, default=40)
    parser.add_argument("--blocks", type=int, default=4, help="blocks of one vote per phone, each way")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between blocks")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after the pages open, unmeasured")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lnviz-vote-") as logs, redis_harness.running() as redis:
        serve = [sys.executable, "-m", "benchmarks.vote_route_serve"]
        app = start_app(free_port(), Path(logs) / "app.log", env={"LNVIZ_REDIS_URL": redis.url, **SECRET}, prefix=serve)
        try:
            wait_app(app)
            port = int(app.url.rsplit(":", 1)[1])
            lines = asyncio.run(measure(args, port, app.proc.pid, RedisStore(redis.url)))
        finally:
            stop(app.proc)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
