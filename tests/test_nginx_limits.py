"""docs/deploy.md's nginx block limits one address as docs/deploy.md says ("Limits per address"): 300 connections
at once and 100 requests a second after a burst of 500 outside /static/, 429 past them; /static/ has a rate of its
own. nginx runs the documented block (harness/nginx.py) in front of a stand-in upstream that holds or answers at
once: what is measured is nginx's limits, not Streamlit. Each test comes from an address of its own (all of
127.0.0.0/8 is this machine), so it finds a full burst and no connection held without waiting for the rate to
refill."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness import aio, nginx
from harness.server import free_port, wait_healthy

CONNECTIONS, RATE, BURST = 300, 100, 500  # docs/deploy.md; tests/test_k8s.py ties them to the ingress


class Upstream:
    """A stand-in replica: ``/hold`` waits until released, anything else answers "ok" at once."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.held = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        path = head.split(b" ", 2)[1]
        if path == b"/_stcore/health":
            body = b"ok"
        elif path.startswith(b"/hold"):
            self.held += 1
            await self.release.wait()
            body = b"released"
        else:
            body = b"ok"
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()


def address(n: int) -> str:
    """The ``n``-th client address of these tests: a loopback address nginx keys its limits by, used by no other."""
    return f"127.0.0.{10 + n}"


async def status(port: int, path: str, source: str) -> int:
    """The status nginx on ``port`` answers ``GET path`` from the client address ``source``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    line = await reader.readline()
    writer.close()
    return int(line.split()[1])


@pytest.fixture(scope="module")
def balancer() -> Iterator[tuple[int, Upstream, asyncio.AbstractEventLoop]]:
    """nginx's port, the stand-in and its loop, which runs in a thread of its own."""
    loop = asyncio.new_event_loop()
    upstream = Upstream()
    port = free_port()
    pool = ThreadPoolExecutor(1)
    # In the loop's own thread: Playwright's sync API (other tests in this worker) keeps a loop in this one.
    start = asyncio.start_server(upstream.handle, "127.0.0.1", port, backlog=1024)
    server = pool.submit(loop.run_until_complete, start).result()
    pool.submit(loop.run_forever)
    lb = free_port()
    proxy = nginx.start(nginx.balancer([port, port], lb))
    try:
        wait_healthy(f"http://127.0.0.1:{lb}", 20, proxy.alive)
        yield lb, upstream, loop
    finally:
        proxy.stop()
        loop.call_soon_threadsafe(upstream.release.set)
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        pool.shutdown(wait=True)


def test_one_address_gets_300_connections_at_once_and_then_429(balancer):
    lb, upstream, loop = balancer
    source = address(1)

    async def crowd() -> list[int]:
        holders = [asyncio.create_task(status(lb, f"/hold/{i}", source)) for i in range(CONNECTIONS + 20)]
        deadline = time.monotonic() + 30
        while upstream.held < CONNECTIONS and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)  # real time: the 20 past the limit reach nginx and are answered by it
        loop.call_soon_threadsafe(upstream.release.set)
        return await asyncio.gather(*holders)

    statuses = aio.run(crowd())
    assert upstream.held == CONNECTIONS
    assert sorted(set(statuses)) == [200, 429]
    assert statuses.count(200) == CONNECTIONS and statuses.count(429) == 20


def test_one_address_gets_the_burst_then_100_a_second_and_429_past_it(balancer):
    lb, _, _ = balancer
    source = address(2)
    wave = CONNECTIONS - 20  # at once, under the connection limit: a slow machine can't refill the rate between them

    async def hammer() -> tuple[list[int], list[int], float]:
        start = time.monotonic()
        burst = [await status(lb, f"/page?{i}", source) for i in range(BURST)]
        past = await asyncio.gather(*(status(lb, f"/page?past{i}", source) for i in range(wave)))
        return burst, list(past), time.monotonic() - start

    burst, past, seconds = aio.run(hammer())
    assert burst == [200] * BURST  # a class opening the link together
    assert past.count(429) > 0
    assert BURST + past.count(200) <= BURST + RATE * seconds + 2, (past.count(200), seconds)


def test_static_files_have_a_rate_of_their_own(balancer):
    lb, _, _ = balancer
    source = address(3)

    async def load() -> list[int]:
        app = [await status(lb, f"/page?{i}", source) for i in range(BURST)]  # the app's burst used up
        files = [await status(lb, f"/static/js/{i}.js", source) for i in range(1000)]  # 200 students' pages: more
        return app + files

    statuses = aio.run(load())
    assert statuses == [200] * (BURST + 1000)
