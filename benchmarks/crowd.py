"""``make load`` modes for a crowd: many viewers of one link (not the class poll), and a server's rerun throughput.

    python -m benchmarks.load --mode class                         # 200 sessions, one process
    python -m benchmarks.load --mode class --replicas 2            # through nginx (docs/deploy.md's block)
    python -m benchmarks.load --mode class --sessions 50 --arrive 20 --seconds 60
    python -m benchmarks.load --mode throughput                     # gain moves back to back, one process

**A class in a box** (``--mode class``). ``--sessions`` clients arrive spread
evenly over ``--arrive`` seconds. Most open the lecturer's link (one seed, one
preset, B and H); one in ``--own-every`` opens a link of its own. Each, like
a browser, first GETs the page (through the balancer this gives it its
routing cookie), then speaks Streamlit's protocol over its WebSocket
(harness/wsclient.py): the first run, then a gain step every ``--every`` seconds
(±50 % jitter, three up, three down) until ``--seconds`` after the last
arrival. After every answer the numbers on the session's stage are checked against torch
in float64 for its own link and γ: a number from another session is a
mismatch. Reported: p50/p95 of the first view (WebSocket opened to the first
``script_finished``) and of interactions (rerun request out to
``script_finished``), both at the client on this machine, so server side in
all but the loopback hop; reruns per second while every session is in; errors;
mismatches; the servers' RSS, idle and with everyone in, and per session.

**Throughput** (``--mode throughput``): ``--sessions`` clients on one process
each move the gain slider again as soon as the answer is in, for
``--seconds``; reruns per second is what the process completes.

The clients share this machine's cores with the server, as a real class's
browsers would not: the client side is kept light (the stage's numbers are read
from its data, not drawn) and its cost is part of what the numbers include.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import urllib.request
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.memory import Memory, sample_memory
from benchmarks.oracle import GAIN_STEP, Plan, Shown, check, plan
from harness import nginx
from harness.server import AppProcess, free_port, start_app, stop, wait_app, wait_healthy
from harness.wsclient import Session

LECTURE = Plan(index=-1, dist="heterogeneous samples", batch=16, features=32, seed=2024)
OPEN_TIMEOUT = 240.0


@dataclass
class Student:
    plan: Plan
    own_link: bool
    first_view_ms: float | None = None
    moves: list[float] = field(default_factory=list)  # interaction latencies, ms
    moves_at: list[float] = field(default_factory=list)  # when each answer came, monotonic
    checks: int = 0
    mismatches: int = 0
    errors: list[str] = field(default_factory=list)
    rerouted: bool = False  # the websocket went somewhere its cookie did not send it


def shown(session: Session) -> Shown:
    """The numbers on the stage in the last run, read straight from its data (no element tree)."""
    for msg in session.run:
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            continue
        element = msg.delta.new_element
        if element.WhichOneof("type") == "bidi_component":
            return Shown.from_stage(json.loads(element.bidi_component.json))
    return Shown({})


def exceptions(session: Session) -> int:
    return sum(
        m.WhichOneof("type") == "delta"
        and m.delta.WhichOneof("type") == "new_element"
        and m.delta.new_element.WhichOneof("type") == "exception"
        for m in session.run
    )


def routing_cookie(base: str, query: str) -> dict[str, str]:
    """GET the page as a browser does first; the balancer's routing cookie, as a header to send back."""
    with urllib.request.urlopen(f"{base}/?{query}", timeout=OPEN_TIMEOUT) as r:
        cookies = [c.split(";", 1)[0] for c in r.headers.get_all("Set-Cookie") or [] if c.startswith("lnviz_route=")]
    return {"Cookie": "; ".join(cookies)} if cookies else {}


async def attend(base: str, student: Student, arrive_at: float, until: float, every: float, rng: random.Random) -> None:
    """One student: arrive, open the link, move the gain slider every few seconds until ``until``."""
    await asyncio.sleep(max(0.0, arrive_at - time.monotonic()))
    p = student.plan
    session = Session(base, query=p.query())
    try:
        session.headers = await asyncio.to_thread(routing_cookie, base, p.query())
        start = time.perf_counter()
        await asyncio.wait_for(session.open(), OPEN_TIMEOUT)
        student.first_view_ms = (time.perf_counter() - start) * 1e3
        verify(session, student)
        n = 0
        while True:
            await asyncio.sleep(every * rng.uniform(0.5, 1.5))
            if time.monotonic() >= until:
                break
            p.steps += 1 if (n // 3) % 2 == 0 else -1
            session.query = p.query()
            ms = await session.rerun([session.widget("gain", double_array_value=[p.gain])])
            student.moves.append(ms)
            student.moves_at.append(time.monotonic())
            verify(session, student)
            n += 1
    except Exception as e:  # this student's failure is counted; the others go on
        student.errors.append(f"{type(e).__name__}: {e}"[:300])
    finally:
        try:
            await session.close()
        except Exception as e:  # a session that can't close is worth knowing about
            student.errors.append(f"close: {type(e).__name__}: {e}"[:300])


def verify(session: Session, student: Student) -> None:
    student.checks += 1
    problems = check(shown(session), student.plan)
    if problems:
        student.mismatches += 1
        student.errors.extend(problems[:1])
    if exceptions(session):
        student.errors.append("an exception element")


def students(n: int, own_every: int) -> list[Student]:
    """Most on the lecturer's link; every ``own_every``-th on a link of its own."""
    out = []
    for i in range(n):
        own = own_every > 0 and i % own_every == own_every - 1
        base = plan(i) if own else LECTURE
        out.append(Student(Plan(i, base.dist, base.batch, base.features, base.seed), own))
    return out


@dataclass
class ClassReport:
    mode: str
    replicas: int
    sessions: int
    arrive: float
    seconds: float
    every: float
    students: list[Student]
    memory: list[Memory]  # one per replica
    drive: tuple[float, float]  # monotonic: every session in, the end
    setup_errors: list[str] = field(default_factory=list)
    spread: dict[str, int] = field(default_factory=dict)  # replica -> WebSockets the balancer sent it

    @property
    def errors(self) -> list[str]:
        return [*self.setup_errors, *(f"session {s.plan.index}: {e}" for s in self.students for e in s.errors)]

    def rss(self, mark: str) -> float:
        return sum(m.at(mark) for m in self.memory)


async def run_class(
    sessions: int, replicas: int, arrive: float, seconds: float, every: float, own_every: int, log_dir: Path
) -> ClassReport:
    apps = start_replicas(replicas, log_dir)
    proxy = None
    memories = [Memory() for _ in apps]
    stop_sampling = asyncio.Event()
    t0 = time.monotonic()
    samplers = [
        asyncio.create_task(sample_memory(a.proc.pid, m, t0, stop_sampling))
        for a, m in zip(apps, memories, strict=True)
    ]
    group = students(sessions, own_every)
    report = ClassReport("class", replicas, sessions, arrive, seconds, every, group, memories, (0.0, 0.0))
    try:
        proxy, base = await balance(apps, warm_up)
        for m in memories:
            m.marks["idle"] = time.monotonic() - t0
        rng = random.Random(14)
        start = time.monotonic() + 1.0
        all_in = start + arrive
        until = all_in + seconds
        await asyncio.gather(
            *(
                attend(base, s, start + arrive * i / max(1, sessions - 1), until, every, random.Random(rng.random()))
                for i, s in enumerate(group)
            ),
            sample_marks(memories, t0, all_in, until),
        )
        report.drive = (all_in, until)
        for app in apps:
            if app.proc.poll() is not None:
                report.setup_errors.append(f"{app.log.name}: the server exited with {app.proc.returncode}")
    finally:
        stop_sampling.set()
        report.spread = stop_replicas(apps, proxy)
        await asyncio.gather(*samplers)
    return report


def start_replicas(replicas: int, log_dir: Path, env: Mapping[str, str] | None = None) -> list[AppProcess]:
    """``replicas`` app processes on free ports, logging to ``log_dir``/replica_i.log; not waited for."""
    return [start_app(free_port(), log_dir / f"replica_{i}.log", env=env) for i in range(replicas)]


async def balance(apps: list[AppProcess], warm: Callable[[str], Awaitable[None]]) -> tuple[nginx.Nginx | None, str]:
    """Wait for every replica, ``warm`` each (not counted), and put docs/deploy.md's nginx block in front of
    them when there are several: the balancer (None for one replica) and the base URL clients use."""
    for app in apps:
        await asyncio.to_thread(wait_app, app)
        await warm(app.url)
    if len(apps) == 1:
        return None, apps[0].url
    lb = free_port()
    proxy = nginx.start(nginx.balancer([int(a.url.rsplit(":", 1)[1]) for a in apps], lb))
    base = f"http://127.0.0.1:{lb}"
    await asyncio.to_thread(wait_healthy, base, 30, proxy.alive)
    return proxy, base


def stop_replicas(apps: list[AppProcess], proxy: nginx.Nginx | None) -> dict[str, int]:
    """Stop the balancer and the replicas; the WebSockets the balancer sent each replica (from its log)."""
    spread: dict[str, int] = {}
    if proxy is not None:
        stop(proxy.proc)  # nginx logs a websocket when it closes
        for request in proxy.log():
            if request.websocket:
                spread[request.upstream] = spread.get(request.upstream, 0) + 1
        proxy.stop()
    for app in apps:
        stop(app.proc)
    return spread


async def warm_up(base: str) -> None:
    """The lecturer opens the link before the class: torch and the page's modules are loaded (not counted)."""
    session = Session(base, query=LECTURE.query())
    await asyncio.wait_for(session.open(), OPEN_TIMEOUT)
    await session.close()


async def sample_marks(memories: list[Memory], t0: float, all_in: float, until: float) -> None:
    await asyncio.sleep(max(0.0, all_in - time.monotonic()))
    for m in memories:
        m.marks["everyone in"] = time.monotonic() - t0
    await asyncio.sleep(max(0.0, until - time.monotonic()))
    for m in memories:
        m.marks["end"] = time.monotonic() - t0


async def run_throughput(
    sessions: int, seconds: float, log_dir: Path, idle: int = 0
) -> tuple[int, float, list[float], list[str]]:
    """Reruns completed by one process while ``sessions`` clients move the gain slider back to back.

    ``idle`` more sessions are opened first and left open, doing nothing: what other sessions in the
    process cost each rerun.
    """
    app = start_app(free_port(), log_dir / "throughput.log")
    errors: list[str] = []
    try:
        await asyncio.to_thread(wait_app, app)
        await warm_up(app.url)
        bystanders = [Session(app.url, query=LECTURE.query()) for _ in range(idle)]
        for chunk in range(0, idle, 20):
            await asyncio.gather(*(c.open() for c in bystanders[chunk : chunk + 20]))
        clients = [Session(app.url, query=LECTURE.query()) for _ in range(sessions)]
        await asyncio.gather(*(c.open() for c in clients))
        latencies: list[float] = []
        until = time.monotonic() + seconds

        async def drive(c: Session, k: int) -> int:
            done = 0
            try:
                while time.monotonic() < until:
                    steps = 1 + (done + k) % 6
                    latencies.append(await c.rerun([c.widget("gain", double_array_value=[1 + steps * GAIN_STEP])]))
                    done += 1
            except Exception as e:  # counted, the others go on
                errors.append(f"{type(e).__name__}: {e}"[:300])
            return done

        start = time.monotonic()
        done = sum(await asyncio.gather(*(drive(c, k) for k, c in enumerate(clients))))
        elapsed = time.monotonic() - start
        for c in [*clients, *bystanders]:
            await c.close()
    finally:
        stop(app.proc)
    return done, elapsed, sorted(latencies), errors
