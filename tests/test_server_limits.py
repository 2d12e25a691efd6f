"""One real server, as configured for hosting: big pastes and many uploads can't take it down.

The server is ``streamlit run app.py`` from the repository root, so it reads
.streamlit/config.toml. Clients speak Streamlit's protocol over the WebSocket
(harness/wsclient.py), as a browser's frontend does, or PUT files as its
uploader does. The server's resident memory (VmRSS) is sampled throughout.
"""

from __future__ import annotations

import asyncio
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
import websockets

from harness import aio
from harness.server import rss_mib, serving
from harness.upload import put_file, xsrf_cookie
from harness.wsclient import Session
from lnviz.labs.explorer import upload

RSS_LIMIT_MIB = 1536  # the target: three big pastes at once stay under 1.5 GB
PASTE_BYTES = 24_000_000  # just under Streamlit's default widget-state limit (25 MB), which let such pastes in


class Peak:
    """The highest RSS of a process, sampled every 20 ms while in use."""

    def __init__(self, pid: int) -> None:
        self.pid, self.mib, self._stop = pid, rss_mib(pid), threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.mib = max(self.mib, rss_mib(self.pid))

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.mib = max(self.mib, rss_mib(self.pid))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    # A server of its own for the memory test: it measures the process's peak RSS, which other tests' cached
    # results and uploads in the shared default server would be part of.
    with serving(tmp_path_factory.mktemp("limits") / "streamlit.log") as app:
        yield app


async def opened(base: str) -> Session:
    session = Session(base)
    await session.open()
    return session


def paste(session: Session, text: str) -> list:
    return [session.widget("paste", string_value=text), session.widget("use_paste", trigger_value=True)]


async def three_pasters(base: str, text: str) -> list[object]:
    """Three sessions paste ``text`` at once; each one's outcome: its warnings, or how its connection closed."""
    sessions = await asyncio.gather(*(opened(base) for _ in range(3)))

    async def one(session: Session) -> object:
        try:
            await session.rerun(paste(session, text))
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
        finally:
            await session.close()
        return session.texts("warning")

    return await asyncio.gather(*(one(s) for s in sessions))


def test_three_big_pastes_at_once_are_refused_and_the_server_stays_small(server):
    with Peak(server.proc.pid) as peak:
        # A client that sends a 24 MB paste (a browser can't: the box holds MAX_PASTE_CHARS) is closed
        # with 1009, "message too big", before the server parses it.
        outcomes = aio.run(three_pasters(server.url, "1\n" * (PASTE_BYTES // 2)))
        assert outcomes == [1009, 1009, 1009], outcomes
        # What a browser sends of the same paste: the box's fill, cut at its limit. Each paster is told.
        outcomes = aio.run(three_pasters(server.url, "1\n" * (upload.MAX_PASTE_CHARS // 2)))
        for warnings in outcomes:
            assert any("cut off" in w for w in warnings), outcomes
    assert server.proc.poll() is None, server.log_tail()
    assert peak.mib < RSS_LIMIT_MIB, f"the server reached {peak.mib:.0f} MiB"
    # And everyone else is still served.
    assert aio.run(stage_and_exceptions(server.url)) == (1, 0)


async def stage_and_exceptions(base: str) -> tuple[int, int]:
    """A new session on the main page: how many stages it drew (1), and how many exceptions (0)."""
    session = await opened(base)
    await session.close()
    return len(session.tree.get("bidi_component")), len(session.tree.get("exception"))


# Streamlit computes the metrics' cache_memory_bytes at most every 5 s and answers from a cache in between, a
# constant of its server: a read waits out the rest of that time since this process's last read of that server.
METRICS_CACHE_S = 5.0
_metrics_read: dict[str, float] = {}  # base URL: when this process last had its cache_memory_bytes computed


def held_upload_bytes(base: str) -> int:
    """What the server's store of uploaded files holds now, from its metrics (0 when it holds none).

    The real time is waited out (no clock to inject into the server): only the part of the 5 s that has not
    passed since the last read, and nothing for a server whose metrics these tests have not read yet.
    """
    if base in _metrics_read:
        time.sleep(max(0.0, _metrics_read[base] + METRICS_CACHE_S + 0.1 - time.monotonic()))
    with urllib.request.urlopen(base + "/_stcore/metrics?families=cache_memory_bytes", timeout=30) as r:
        text = r.read().decode()
    _metrics_read[base] = time.monotonic()  # after the answer, so after the server computed it
    lines = [line for line in text.splitlines() if "UploadedFileManager" in line and not line.startswith("#")]
    return int(float(lines[0].rsplit(" ", 1)[1])) if lines else 0


async def upload_file_after_file(base: str) -> tuple[list[int], int, int, int]:
    """One session PUTs 1 MiB files: the first six's statuses, the bytes held then, the 21st's status, held then."""
    session = await opened(base)  # the explorer's first run installs the quota
    xsrf, file = xsrf_cookie(base), b"1,2\n" * 2**18
    try:
        before = held_upload_bytes(base)
        first = [put_file(base, session.session_id, xsrf, file) for _ in range(6)]
        held = held_upload_bytes(base) - before
        for _ in range(14):
            put_file(base, session.session_id, xsrf, file)
        last = put_file(base, session.session_id, xsrf, file)
        return first, held // len(file), last, (held_upload_bytes(base) - before) // len(file)
    finally:
        await session.close()


def test_a_session_that_uploads_file_after_file_holds_two_and_is_then_refused(app_process):
    first, held, last, held_after = aio.run(upload_file_after_file(app_process.url))
    assert first == [204] * 6
    assert held == 2  # files: each upload pushed out the session's oldest beyond two, so 2 MiB held, not 6
    assert last == 429  # the 21st upload in ten minutes
    assert held_after == 2
    time.sleep(0.5)  # a server that falls over does so a moment after its last answer: real time, on the server
    assert app_process.proc.poll() is None, app_process.log_tail()
