"""``python -m benchmarks.class_stream``: issue 31's targets for the class stream, with light phones.

    python -m benchmarks.class_stream                                  # 400 phones, then 1,000 idle, 2 replicas
    python -m benchmarks.class_stream --phones 40 --idle 100 --window 5  # a dry run
    python -m benchmarks.class_stream --question bn-mu-cells          # a tap-the-cells question first

Two replicas sharing one Redis behind docs/deploy.md's nginx block (:func:`harness.replicas.running_replicas`).
The room is opened in Redis (:func:`server.poll.open_room`), and the presenter's actions and the votes are
written there as the pages write them (``store.act``, ``store.vote``): what is measured is the stream, from the
store's write to the event in each phone's socket. Each phone is one HTTP/1.1 connection reading the stream
(asyncio, no browser), through the balancer with a routing cookie of its own, so the phones spread over both
replicas as a class does.

Measured, each as the issue's target has it:

- **Reveal**, **Ask again**, **Next**: from the write to each phone's event, p50 and p95 over ``--phones``.
- **A vote reaches the projector's count**: from each of ``--votes`` votes to the projector stream's event that
  counts it.
- **Waiting**: each replica's CPU (% of one core, ``/proc``) over ``--window`` s with no stream, with the phones
  waiting, and with ``--idle`` phones waiting (straight to the replicas, half each: nginx's block holds 600
  streams per address, and every phone here comes from 127.0.0.1); and with ``--rooms`` rooms of one phone each,
  the cost of one more room watched.
- **Faults**, last: ``--faults`` phones vote through the page while replica A is killed and Redis restarted,
  and the votes lost or doubled are counted (:mod:`benchmarks.class_faults`).

The machine is shared and loaded: compare figures of one run, and say what ran beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import class_faults
from harness.replicas import Replicas, proved, running_replicas
from lnviz.labs.classroom import questions
from lnviz.labs.classroom.question import mask
from server import poll
from server.store import RedisStore

QUESTIONS = ("bn-one-sample", "ln-invariance", "train-eval-shift")
TARGET_S = 1.0  # reveal, next, ask again, a vote: 95 % within this
IDLE_CPU_PCT = 5.0  # 1,000 idle phones: each replica under this share of a core


@dataclass
class Phone:
    """One stream: every ``room`` event's state and when it came (monotonic s)."""

    seen: list[tuple[float, dict]] = field(default_factory=list)
    status: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def first(self, test: Callable[[dict], bool]) -> float | None:
        return next((at for at, state in self.seen if test(state)), None)


async def follow(phone: Phone, host: str, port: int, path: str, route: str) -> None:
    """Read the stream at ``path`` into ``phone`` until it ends: the HTTP/1.1 chunked body, event by event."""
    reader, writer = await asyncio.open_connection(host, port, limit=2**20)
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
    writer.write((request + f"Cookie: lnviz_route={route}; {proved()}\r\n\r\n").encode())
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        phone.status = int(head.split(b" ", 2)[1])
        phone.changed.set()
        buffer = b""
        while True:
            size = int((await reader.readline()).strip() or b"0", 16)
            if size == 0:
                return
            buffer += await reader.readexactly(size + 2)
            buffer = buffer[:-2] if buffer.endswith(b"\r\n") else buffer
            *events, buffer = buffer.replace(b"\r\n", b"\n").split(b"\n\n")
            now = time.monotonic()
            for event in events:
                data = [line[5:].strip() for line in event.split(b"\n") if line.startswith(b"data:")]
                if b"event: room" in event and data:
                    phone.seen.append((now, json.loads(data[0])))
                    phone.changed.set()
    except (asyncio.IncompleteReadError, ConnectionError):
        return
    finally:
        writer.close()


async def until(phones: list[Phone], test: Callable[[Phone], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not all(test(p) for p in phones) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


def cpu_seconds(pid: int) -> float:
    """utime + stime of process ``pid`` (all its threads), in seconds, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_percent(before: float, after: float, seconds: float) -> float:
    """CPU seconds spent over a window, as % of one core."""
    return 100.0 * (after - before) / seconds if seconds > 0 else float("nan")


def quantiles(delays: list[float]) -> tuple[float, float, int]:
    """p50 and p95 of ``delays`` (s), and how many there are."""
    if not delays:
        return float("nan"), float("nan"), 0
    ordered = sorted(delays)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], len(ordered)


async def window(replicas: Replicas, seconds: float) -> list[float]:
    """Each replica's CPU over ``seconds``, % of one core."""
    pids = [app.proc.pid for app in replicas.apps]
    before, start = [cpu_seconds(p) for p in pids], time.monotonic()
    await asyncio.sleep(seconds)
    took = time.monotonic() - start
    return [cpu_percent(b, cpu_seconds(p), took) for b, p in zip(before, pids, strict=True)]


def a_vote(question_id: str, k: int) -> str:
    """Vote ``k`` as the store keeps it: alternately option 0 and 1, or, for a cells question, torch's cells and
    the marked cell alone (a cells reveal's event carries a count per cell)."""
    question = questions.by_id(question_id)
    if question.kind == "cells":
        return mask(question.answer if k % 2 else [question.marked], question.cells)
    return str(k % 2)


async def run(args: argparse.Namespace, replicas: Replicas) -> list[str]:
    store = RedisStore(replicas.redis.url)
    asked = (args.question, *QUESTIONS[1:]) if args.question else QUESTIONS
    room, secret = poll.open_room(store, asked)
    path = f"/api/class/{room.code}/events"
    tasks: list[asyncio.Task] = []

    def connect(phones: list[Phone], port: int, path: str, prefix: str) -> None:
        for i, phone in enumerate(phones):
            tasks.append(asyncio.create_task(follow(phone, "127.0.0.1", port, path, f"{prefix}-{i}")))

    lines = [f"# The class stream: {args.phones} phones over 2 replicas, Redis, nginx; first question {asked[0]}", ""]
    quiet = await window(replicas, args.window)
    lines.append(f"- no stream: CPU per replica {', '.join(f'{c:.1f} %' for c in quiet)} of a core")
    phones = [Phone() for _ in range(args.phones)]
    projector = Phone()
    connect([projector], replicas.lb_port, path, "projector")
    connect(phones, replicas.lb_port, path, "phone")
    await until([*phones, projector], lambda p: bool(p.seen) or p.status >= 400, 120)
    refused = sum(p.status != 200 for p in phones)
    lines.append(f"- {args.phones} phones connected ({refused} refused); first state on each")
    await asyncio.sleep(args.settle)  # each replica builds the question bank on its first stream (torch)
    waiting = await window(replicas, args.window)
    lines.append(f"- {args.phones} phones waiting: CPU per replica {', '.join(f'{c:.1f} %' for c in waiting)}")

    delays = []
    for k in range(1, args.votes + 1):
        wrote = time.monotonic()
        await asyncio.to_thread(store.vote, room.code, f"voter-{k}", 0, 1, a_vote(asked[0], k))
        await until([projector], lambda p, k=k: p.first(lambda s: s["answers"] >= k) is not None, 10)
        seen = projector.first(lambda s, k=k: s["answers"] >= k)
        delays.append((seen or float("inf")) - wrote)
        await asyncio.sleep(0.2)  # votes apart, as a class's come
    p50, p95, n = quantiles(delays)
    lines.append(f"- a vote to the projector's count: p50 {p50:.2f} s, p95 {p95:.2f} s of {n} votes")

    version = 0
    for action, test in (
        ("reveal", lambda s: s["phase"] == "reveal" and s["index"] == 0),
        ("again", lambda s: s["round"] == 2 and s["phase"] == "ask"),
        ("next", lambda s: s["index"] == 1),
    ):
        wrote = time.monotonic()
        moved = await asyncio.to_thread(store.act, room.code, secret, action, version)
        version = moved.version if moved else version
        await until(phones, lambda p, t=test: p.first(t) is not None, 30)
        got = [at - wrote for p in phones if (at := p.first(test)) is not None]
        p50, p95, n = quantiles(got)
        verdict = "PASS" if n == len(phones) and p95 <= TARGET_S else "MISS"
        lines.append(f"- {action}: p50 {p50:.2f} s, p95 {p95:.2f} s, {n} of {len(phones)} phones: {verdict}")
        await asyncio.sleep(1.0)

    idle = [Phone() for _ in range(max(0, args.idle - args.phones - 1))]
    half = len(idle) // 2
    connect(idle[:half], replicas.port_a, path, "idle-a")
    connect(idle[half:], replicas.port_b, path, "idle-b")
    await until(idle, lambda p: bool(p.seen) or p.status >= 400, 120)
    total = sum(bool(p.seen) for p in [*phones, projector, *idle])
    cpu = await window(replicas, args.window)
    verdict = "PASS" if max(cpu) < IDLE_CPU_PCT else "MISS"
    lines.append(f"- {total} phones waiting: CPU per replica {', '.join(f'{c:.1f} %' for c in cpu)}: {verdict}")

    rooms = [poll.open_room(store, asked)[0] for _ in range(args.rooms)]
    lonely = [Phone() for _ in rooms]
    for i, (phone, other) in enumerate(zip(lonely, rooms, strict=True)):
        port = (replicas.port_a, replicas.port_b)[i % 2]
        tasks.append(asyncio.create_task(follow(phone, "127.0.0.1", port, f"/api/class/{other.code}/events", "r")))
    await until(lonely, lambda p: bool(p.seen) or p.status >= 400, 120)
    more = await window(replicas, args.window)
    per_room = [(m - c) / max(1, args.rooms / 2) for m, c in zip(more, cpu, strict=True)]
    lines.append(
        f"- and {args.rooms} more rooms of one phone each: CPU per replica {', '.join(f'{c:.1f} %' for c in more)}"
        f" (about {', '.join(f'{r:.2f}' for r in per_room)} % of a core per room watched)"
    )
    for task in tasks:
        task.cancel()
    if args.faults:  # last: it kills a replica and restarts Redis
        await asyncio.sleep(1.0)
        faults = class_faults.parser().parse_args(["--phones", str(args.faults)])
        report = await class_faults.run(faults, replicas)
        lines += ["", report[0].replace("# ", "## ", 1), *report[1:]]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.class_stream", description=__doc__.split("\n")[0])
    parser.add_argument("--phones", type=int, default=400, help="phones streaming through the balancer")
    parser.add_argument("--idle", type=int, default=1000, help="phones waiting in all, for the idle CPU")
    parser.add_argument("--rooms", type=int, default=100, help="rooms of one phone each, for a room's cost")
    parser.add_argument("--votes", type=int, default=20, help="votes timed to the projector's count")
    parser.add_argument("--window", type=float, default=20.0, help="seconds each CPU window lasts")
    parser.add_argument("--faults", type=int, default=100, help="phones voting through faults, last (0: none)")
    parser.add_argument("--settle", type=float, default=15.0, help="seconds after the phones connect, unmeasured")
    parser.add_argument("--question", default=None, help="the room's first question, e.g. bn-mu-cells (a bank id)")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lnviz-stream-") as logs, running_replicas(Path(logs)) as replicas:
        lines = asyncio.run(run(args, replicas))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
