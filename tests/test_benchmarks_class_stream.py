"""benchmarks/class_stream.py's own parts: its light phone reads a chunked event stream event by event, however
the chunks cut it, and its quantiles are what the report says."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time

import pytest

from benchmarks import class_stream, load
from harness import aio


def test_a_light_phone_reads_each_room_event_whatever_the_chunks_and_skips_comments_and_other_events():
    first = {"version": 0, "answers": 0, "phase": "ask"}
    second = {"version": 1, "answers": 3, "phase": "reveal"}
    body = (
        f"event: room\r\nid: 0.0\r\ndata: {json.dumps(first)}\r\n\r\n: ping\r\n\r\n"
        f"event: room\r\nid: 1.3\r\ndata: {json.dumps(second)}\r\n\r\nevent: gone\r\ndata: {{}}\r\n\r\n"
    ).encode()
    cuts = [0, 7, 40, len(body) // 2, len(body) // 2 + 1, len(body) - 3, len(body)]  # a line cut across chunks

    async def main() -> tuple[class_stream.Phone, bytes]:
        got: list[bytes] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            got.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            for a, b in itertools.pairwise(cuts):
                writer.write(f"{b - a:x}\r\n".encode() + body[a:b] + b"\r\n")
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        phone = class_stream.Phone()
        await asyncio.wait_for(class_stream.follow(phone, "127.0.0.1", port, "/api/class/X/events", "k"), 10)
        server.close()
        return phone, got[0]

    phone, request = aio.run(main())
    assert phone.status == 200
    assert [state for _, state in phone.seen] == [first, second]
    assert (
        request.startswith(b"GET /api/class/X/events HTTP/1.1\r\n")
        and b"Cookie: lnviz_route=k; lnviz_proof=" in request
    )


def test_the_quantiles_are_the_median_and_the_95th_of_the_delays():
    p50, p95, n = class_stream.quantiles([i / 100 for i in range(100, 0, -1)])
    assert (p50, p95, n) == (0.505, 0.96, 100)
    assert class_stream.quantiles([])[2] == 0


def test_cpu_is_a_percentage_of_one_core_read_from_proc():
    assert class_stream.cpu_percent(10.0, 12.0, 20.0) == pytest.approx(10.0)
    before = class_stream.cpu_seconds(os.getpid())
    start = time.process_time()
    while time.process_time() - start < 0.05:  # 50 ms of CPU, however long a loaded machine takes to give it:
        pass  # /proc counts in 10 ms ticks, and a fixed loop of 15 ms was sometimes not one
    assert class_stream.cpu_seconds(os.getpid()) > before > 0


def test_load_hands_the_poll_mode_to_the_stream_benchmark(monkeypatch):
    seen: list[list[str]] = []
    monkeypatch.setattr(class_stream, "main", lambda argv: seen.append(argv) or 0)
    assert load.main(["--mode", "poll"]) == 0
    assert seen == [["--phones", "400", "--window", "20.0", "--faults", "100"]]


def test_a_cells_question_first_gets_votes_its_question_takes_half_of_them_right():
    from lnviz.labs.classroom import questions

    question = questions.by_id("bn-mu-cells")
    cast = [class_stream.a_vote(question.id, k) for k in range(1, 5)]
    assert [question.parse(v) for v in cast] == cast  # stored as the page stores a phone's taps
    assert [question.right(v) for v in cast] == [True, False, True, False]
    assert [class_stream.a_vote("bn-one-sample", k) for k in range(1, 3)] == ["1", "0"]
