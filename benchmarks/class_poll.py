"""``make load LOAD_ARGS="--mode poll"``: a class poll on /class, a presenter and 200 phones over 2 replicas
sharing one Redis (issue 21).

    python -m benchmarks.load --mode poll                                   # 200 phones, 2 replicas, 3 rounds
    python -m benchmarks.load --mode poll --phones 20 --arrive 5 --out /tmp/poll.md   # a dry run

One redis-server on a free port (:mod:`harness.redis`), ``--replicas`` app
processes pointed at it (``LNVIZ_REDIS_URL``) behind docs/deploy.md's nginx
block (:func:`benchmarks.crowd.balance`). The benchmark opens the room in
Redis itself (:func:`lnviz.serving.poll.open_room`) and gives the presenter
its ``lnviz_host`` cookie, as the browser that started the room would have.

Every client speaks Streamlit's protocol over its own WebSocket
(:mod:`harness.wsclient`) and, like the browser's frontend, sends each
``run_every`` fragment's rerun (``rerun_script`` with its ``fragment_id``,
``is_auto_rerun``) on the period the server announced in its ``auto_rerun``
message, whether or not anything changed, and takes the runs the server starts
itself: a phone's page has no poll of its own (the replica's watcher reruns it,
``ui.classroom.Watcher``), only the presenter's count has one.

The scenario: the presenter connects; the replicas' CPU and Redis's commands
are measured for ``--window`` s with no phone (the idle side). ``--phones``
phones arrive over ``--arrive`` s, each with its own random ``lnviz_voter``
cookie; each answers the question shown after a random delay (a seeded
``random.Random``), and one in :data:`CHANGE_ONE_IN` changes its answer a few
seconds later. The presenter reveals once every phone has answered (or
:data:`ROUND_LIMIT_S` passed): each phone's time from the press to the run
that carries ``class_results`` is taken. Then the same CPU/Redis window with
every phone waiting. Then "Ask again" (round 2): :data:`KILL_AFTER_S` into it
the last replica is killed (SIGKILL); its phones see their WebSocket drop and
open a new one through the balancer with the same cookies, as the frontend
does, and land on the current question; a phone that already saw its vote
confirmed does not vote again. Then "Next" (round 3, the next question's
first round). After each reveal the round's votes are read from Redis.

Reported: per round, votes counted in Redis against votes cast (distinct
voters whose vote the page confirmed), so lost and double; the reveal's p50 and
p95; join → question (WebSocket opened to the first run showing the question);
CPU per replica, idle and waiting, as % of one core, and Redis's commands per
second in both windows. The targets are issue 21's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.exceptions import ConnectionClosed

from benchmarks.crowd import balance, routing_cookie, start_replicas, stop_replicas
from benchmarks.run import load_average, machine, machine_table, verdict, write_section
from benchmarks.stats import percentile
from harness.server import AppProcess
from harness.wsclient import FINISHED, Session
from lnviz.serving import poll
from lnviz.serving.store import RedisStore

PAGE = "class"
CHANGE_ONE_IN = 5  # one phone in five changes its answer
VOTE_DELAY_S = (1.0, 12.0)  # a phone answers this long after its question appears (uniform)
CHANGE_DELAY_S = (1.0, 5.0)  # ... and changes it this much later
KILL_AFTER_S = 6.0  # into round 2: the last replica is killed, with phones still answering
ROUND_LIMIT_S = 60.0  # the presenter reveals after this even if some phone has not answered
REVEAL_WAIT_S = 60.0  # how long after the reveal a phone may take to show the results
ANSWER_TIMEOUT = 60.0
PRESENTER_TIMEOUT = 120.0  # a replica busy drawing 100 phones' results still lets the presenter through
OPEN_TIMEOUT = 120.0
RECONNECT_S = 60.0  # a dropped phone keeps trying this long
# Issue 21's targets.
TARGET_REVEAL_P95_S = 2.0
TARGET_ADDED_CPU = 10.0  # % of one core that 200 waiting phones may add to a replica
TARGET_JOIN_P95_S = 3.0


# ---- the pure parts: what was counted, what it costs ----


@dataclass(frozen=True)
class Tally:
    """One round: who the page told "counted/changed" (cast) against what Redis holds (stored)."""

    cast: int
    counted: int
    lost: int  # confirmed on a phone, absent from Redis
    double: int  # in Redis under an id no phone holds: a phone counted a second time under another id
    differ: int  # in Redis, but not the answer the phone last saw confirmed
    unconfirmed: int = 0  # in Redis from a phone whose page never said so (its answer came too late, or never)


def tally(confirmed: dict[str, str], stored: dict[str, str], voters: Iterable[str] | None = None) -> Tally:
    """``confirmed``: voter → the last choice the page confirmed; ``stored``: voter → choice, from Redis;
    ``voters``: every phone's id (default: the confirmed ones)."""
    known = set(confirmed if voters is None else voters) | set(confirmed)
    lost = sum(voter not in stored for voter in confirmed)
    double = sum(voter not in known for voter in stored)
    unconfirmed = sum(voter in known and voter not in confirmed for voter in stored)
    differ = sum(voter in stored and not same(stored[voter], choice) for voter, choice in confirmed.items())
    return Tally(len(confirmed), len(stored), lost, double, differ, unconfirmed)


def same(stored: str, shown: str) -> bool:
    """Whether Redis's answer is the one the phone chose: the same text, or the same number (it stores it rounded)."""
    if stored == shown:
        return True
    try:
        return abs(float(stored) - float(shown)) < 1e-9
    except ValueError:
        return False


def cpu_seconds(pid: int) -> float:
    """utime + stime of process ``pid`` (all its threads), in seconds, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_percent(before: float, after: float, seconds: float) -> float:
    """CPU seconds spent over a window, as % of one core."""
    return 100.0 * (after - before) / seconds if seconds > 0 else float("nan")


@dataclass(frozen=True)
class Window:
    """A measuring window: each replica's CPU (% of one core) and Redis's commands per second."""

    name: str
    seconds: float
    cpu: list[float]  # per replica
    redis_ops: float


def added(idle: Window, busy: Window) -> list[float]:
    """Per replica: percentage points of one core the busy window added to the idle one."""
    return [b - i for i, b in zip(idle.cpu, busy.cpu, strict=True)]


# ---- a client: a browser tab on /class, as its frontend drives it ----


@dataclass(frozen=True)
class Answer:
    """The question's widget: a radio's options, or a number input's bounds (as its label says them) and its
    form's Send button."""

    id: str
    kind: str  # "radio" or "number_input"
    options: tuple[str, ...] = ()
    lo: float = 0.0
    hi: float = 20.0
    send: str = ""  # a number input: the id of the Send button that submits it


@dataclass
class Screen:
    """What one full run of the page drew: the question's widget, the results, the buttons, the alerts."""

    at: float  # monotonic, when the run finished
    answer: Answer | None = None
    results: bool = False
    buttons: dict[str, str] = field(default_factory=dict)  # key -> widget id
    alerts: list[str] = field(default_factory=list)  # st.success, st.warning, ...: what an action came to


def key_of(element_id: str) -> str:
    """The user key of a keyed element's id (``$$ID-<hash>-<key>``), less the room's version that a presenter's
    button carries (``class_next_v3`` is ``class_next``); "" for an id without one."""
    key = element_id.rsplit("-", 1)[1] if element_id.startswith("$$ID-") and element_id.count("-") >= 2 else ""
    return re.sub(r"_v\d+$", "", key) if key.startswith("class_") else key


CONFIRMED = "Your answer is in."  # what pages/class.py says when the store counted or changed a vote


def outcome(alerts: Iterable[str]) -> str | None:
    """What the page said of a vote, from its alerts: "in" (counted or changed), the refusal's key, or None."""
    for text in alerts:
        if text.startswith(CONFIRMED):
            return "in"
        for key, message in poll.REFUSED.items():
            if text.startswith(message):
                return key
    return None


class Client:
    """One browser tab on /class through the balancer: its WebSocket, the frontend's timer, reconnection."""

    def __init__(self, base: str, code: str, cookies: dict[str, str]) -> None:
        self.base, self.query, self.cookies = base, f"room={code}", cookies
        self.session: Session | None = None
        self.fragment: str | None = None
        self.interval = 1.0
        self.screen: Screen | None = None
        self.results_at: list[float] = []  # when a run carrying class_results began to arrive
        self.widgets: dict[str, WidgetState] = {}  # the states this tab set on the current page
        self.updated = asyncio.Condition()
        self.closing = False
        self.drops = 0
        self.rejoin_ms: list[float] = []
        self.errors: list[str] = []
        self._tasks: list[asyncio.Task] = []
        self._fragments: dict[str, str] = {}

    async def open(self) -> float:
        """Connect and wait for the first full run: the milliseconds from the WebSocket's opening."""
        if "lnviz_route" not in self.cookies:
            headers = await asyncio.to_thread(routing_cookie, self.base, self.query)
            route = headers.get("Cookie", "")
            if route.startswith("lnviz_route="):
                self.cookies["lnviz_route"] = route.split("=", 1)[1]
        start = time.monotonic()
        await self._connect()
        await self.wait(lambda s: s.at >= start, OPEN_TIMEOUT)
        self._tasks.append(asyncio.create_task(self._timer()))
        return (time.monotonic() - start) * 1e3

    async def _connect(self) -> None:
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        session = Session(self.base, query=self.query, page=PAGE, headers={"Cookie": cookie})
        await asyncio.wait_for(session.connect(), OPEN_TIMEOUT)
        self.session, self.fragment, self.widgets = session, None, {}
        self._tasks.append(asyncio.create_task(self._read(session)))
        await self.send()

    async def send(self, widgets: Iterable[WidgetState] = (), fragment: str | None = None) -> float:
        """A rerun request as the frontend sends it; the monotonic time it left."""
        session = self.session
        for w in widgets:
            self.widgets[w.id] = w
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = session.page_hash
        if not session.page_hash:
            msg.rerun_script.page_name = PAGE
        msg.rerun_script.widget_states.widgets.extend(self.widgets.values())
        if fragment:
            msg.rerun_script.fragment_id = fragment
            msg.rerun_script.is_auto_rerun = True
        at = time.monotonic()
        await session.ws.send(msg.SerializeToString())
        return at

    async def _timer(self) -> None:
        """The frontend's ``run_every``: the fragment's rerun every interval, answered or not."""
        while not self.closing:
            await asyncio.sleep(self.interval)
            if self.fragment and self.session is not None:
                with contextlib.suppress(Exception):  # a dropped socket: the reader reconnects
                    await self.send(fragment=self.fragment)

    async def _read(self, session: Session) -> None:
        run: list[ForwardMsg] = []
        results_seen, done = False, True
        try:
            while True:
                fwd = ForwardMsg.FromString(await session.ws.recv())
                kind = fwd.WhichOneof("type")
                if fwd.hash:
                    session.seen[fwd.hash] = fwd
                if kind == "ref_hash":
                    fwd = session._dereference(fwd)
                    kind = fwd.WhichOneof("type")
                if kind == "new_session":
                    if done:  # a run cut short by the next keeps its messages: what it said was shown
                        run, results_seen, done = [], False, False
                elif kind == "navigation":
                    session.page_hash = fwd.navigation.page_script_hash
                elif kind == "auto_rerun":
                    self.fragment, self.interval = fwd.auto_rerun.fragment_id, fwd.auto_rerun.interval or 1.0
                elif kind == "stop_auto_rerun" and self.fragment in fwd.stop_auto_rerun.fragment_ids:
                    self.fragment = None
                elif kind == "delta":
                    if not results_seen and fwd.delta.WhichOneof("type") == "add_block":
                        if key_of(fwd.delta.add_block.id) == "class_results":
                            results_seen = True
                            self.results_at.append(time.monotonic())
                    run.append(fwd)
                elif kind == "script_finished":
                    done = fwd.script_finished in FINISHED
                    if fwd.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                        await self._drawn(run)
        except (ConnectionClosed, OSError) as e:  # the socket closed: ours, or the replica went away
            if self.closing:
                return
            self.drops += 1
            self.errors.append(f"dropped: {type(e).__name__}: {e}"[:200])
            await self._reconnect()

    async def _reconnect(self) -> None:
        dropped = time.monotonic()
        while not self.closing and time.monotonic() - dropped < RECONNECT_S:
            try:
                await self._connect()
                await self.wait(lambda s: s.at >= dropped, OPEN_TIMEOUT)
                self.rejoin_ms.append((time.monotonic() - dropped) * 1e3)
                return
            except Exception as e:  # the balancer may not know yet; try again, as the frontend does
                self.errors.append(f"reconnect: {type(e).__name__}: {e}"[:200])
                await asyncio.sleep(0.5)

    async def _drawn(self, run: list[ForwardMsg]) -> None:
        screen = Screen(at=time.monotonic())
        for fwd in run:
            delta = fwd.delta
            which = delta.WhichOneof("type")
            if which == "add_block":
                screen.results |= key_of(delta.add_block.id) == "class_results"
                continue
            if which != "new_element":
                continue
            element = delta.new_element
            kind = element.WhichOneof("type")
            body = getattr(element, kind) if kind else None
            element_id = getattr(body, "id", "") or ""
            key = key_of(element_id)
            if kind in ("radio", "number_input") and key == "answer":
                if kind == "radio":
                    screen.answer = Answer(element_id, kind, tuple(body.options))
                else:
                    screen.answer = Answer(element_id, kind, (), *bounds(body.label))
            elif kind == "button" and key and not body.disabled:
                screen.buttons[key] = element_id
            elif kind == "alert":
                screen.alerts.append(body.body)
            if element_id and delta.fragment_id:
                self._fragments[element_id] = delta.fragment_id
        if screen.answer is not None and screen.answer.kind == "number_input":
            screen.answer = replace(screen.answer, send=screen.buttons.get("class_send", ""))
        self.widgets = {}  # the page now holds what this tab set; its next rerun sends nothing stale
        async with self.updated:
            self.screen = screen
            self.updated.notify_all()

    async def wait(self, ready: Callable[[Screen], bool], timeout: float) -> Screen:
        """The first screen (this one or a later) for which ``ready`` holds."""

        async def until() -> Screen:
            async with self.updated:
                await self.updated.wait_for(lambda: self.screen is not None and ready(self.screen))
                return self.screen

        return await asyncio.wait_for(until(), timeout)

    async def press(self, key: str) -> float:
        """Press the button ``key`` on the current screen: the monotonic time the request left."""
        button = self.screen.buttons[key]
        state = WidgetState(id=button, trigger_value=True)
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.session.page_hash
        msg.rerun_script.widget_states.widgets.extend([*self.widgets.values(), state])
        if button in self._fragments:
            msg.rerun_script.fragment_id = self._fragments[button]
        at = time.monotonic()
        await self.session.ws.send(msg.SerializeToString())
        return at

    async def close(self) -> None:
        self.closing = True
        for task in self._tasks:
            task.cancel()
        if self.session is not None:
            with contextlib.suppress(Exception):
                await self.session.close()


# ---- a phone ----


@dataclass
class Phone:
    index: int
    voter: str
    rng: random.Random
    client: Client | None = None
    join_ms: float | None = None
    confirmed: dict[int, str] = field(default_factory=dict)  # round (0-based) -> the last choice confirmed
    confirmed_at: dict[int, float] = field(default_factory=dict)  # round -> when the first one was
    trail: dict[int, list[str]] = field(default_factory=dict)  # round -> each choice sent, and what was said
    outcomes: dict[int, list[str]] = field(default_factory=dict)  # round -> what the page said, in order
    revealed_ms: dict[int, float] = field(default_factory=dict)  # round -> press to class_results
    errors: list[str] = field(default_factory=list)


def choice_for(answer: Answer, rng: random.Random, avoid: str | None = None) -> str:
    """A choice for the question's widget: one of a radio's options, or a number within the input's bounds."""
    if answer.kind == "radio":
        return rng.choice([o for o in answer.options if o != avoid] or list(answer.options))
    while True:
        value = f"{rng.uniform(answer.lo, answer.hi):.2f}"
        if value != avoid:
            return value


def stored_as(answer: Answer, choice: str) -> str:
    """A choice as pages/class.py stores it: a radio's option by its index, a number as it is."""
    return str(answer.options.index(choice)) if answer.kind == "radio" else choice


_RANGE = re.compile(r"from (\S+) to (\S+)$")


def bounds(label: str) -> tuple[float, float]:
    """A number question's range as its label says it ("Your guess, from −10 to 10"); (0, 20) if it says none.

    The input itself has no bounds: a value out of them reaches the page, which says so in words.
    """
    found = _RANGE.search(label)
    if not found:
        return 0.0, 20.0
    lo, hi = (float(g.replace("\u2212", "-")) for g in found.groups())
    return lo, hi


def widget_states(answer: Answer, value: str) -> list[WidgetState]:
    """What the frontend sends for an answer: a radio's choice; a number and its form's Send."""
    sent = [widget_state(answer, value)]
    return [*sent, WidgetState(id=answer.send, trigger_value=True)] if answer.send else sent


def widget_state(answer: Answer, value: str) -> WidgetState:
    state = WidgetState(id=answer.id)
    if answer.kind == "radio":
        state.string_value = value
    else:
        state.double_value = float(value)
    return state


async def vote(phone: Phone, k: int, opened: float, avoid: str | None = None) -> str | None:
    """Answer the question of round ``k`` (opened at ``opened``): the choice, once the page confirmed it."""
    client = phone.client
    for _ in range(3):  # a vote lost with its socket is sent again on the new one, as a person would
        asking = await client.wait(lambda s: s.at >= opened and s.answer is not None and not s.results, ANSWER_TIMEOUT)
        choice = choice_for(asking.answer, phone.rng, avoid)
        sent = await client.send(widget_states(asking.answer, choice))
        try:
            said = await client.wait(lambda s, sent=sent: s.at > sent and outcome(s.alerts) is not None, ANSWER_TIMEOUT)
        except TimeoutError:
            if client.drops:
                continue
            raise
        said = outcome(said.alerts) or ""
        phone.trail.setdefault(k, []).append(f"{choice} -> {said}")
        phone.outcomes.setdefault(k, []).append(said)
        if said != "in":
            phone.errors.append(f"round {k + 1}: the page said {said!r}")
            return None
        phone.confirmed[k] = stored_as(asking.answer, choice)
        phone.confirmed_at.setdefault(k, time.monotonic())
        return choice
    return None


async def take_round(phone: Phone, k: int, opened: float) -> None:
    """One round on one phone: answer after a random delay; maybe change it a little later."""
    try:
        await asyncio.sleep(phone.rng.uniform(*VOTE_DELAY_S))
        if k in phone.confirmed:
            return
        first = await vote(phone, k, opened)
        if first is not None and phone.rng.randrange(CHANGE_ONE_IN) == 0:
            await asyncio.sleep(phone.rng.uniform(*CHANGE_DELAY_S))
            await vote(phone, k, opened, avoid=first)
    except Exception as e:  # this phone's failure is counted; the others go on
        phone.errors.append(f"round {k + 1}: {type(e).__name__}: {e}"[:200])


async def arrive(phone: Phone, base: str, code: str, at: float) -> None:
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    phone.client = Client(base, code, {"lnviz_voter": phone.voter})
    try:
        start = time.monotonic()
        await phone.client.open()
        await phone.client.wait(lambda s: s.answer is not None or s.results, OPEN_TIMEOUT)
        phone.join_ms = (time.monotonic() - start) * 1e3
        await take_round(phone, 0, 0.0)
    except Exception as e:
        phone.errors.append(f"join: {type(e).__name__}: {e}"[:200])


# ---- the run ----


@dataclass
class Round:
    label: str  # "question 1, round 1"
    index: int
    round: int
    tally: Tally | None = None
    revealed: list[float] = field(default_factory=list)  # ms, one per phone that showed the results
    missing: int = 0  # phones alive that never showed them
    killed: str = ""
    killed_at: float | None = None
    changed: int = 0  # phones that changed their answer (confirmed twice)
    kept: int = 0  # phones whose replica died after their vote was in: none voted again, and Redis kept it


@dataclass
class PollReport:
    phones: int
    replicas: int
    arrive: float
    window: float
    rounds: list[Round]
    windows: list[Window]
    join_ms: list[float]
    rejoin_ms: list[float]
    drops: int
    errors: list[str]
    spread: dict[str, int] = field(default_factory=dict)


def question_ids(n: int) -> tuple[str, ...]:
    """``n`` question ids of the class's bank (any ids before it exists)."""
    try:
        from lnviz.labs.classroom.questions import bank
    except ImportError:
        return tuple(f"q{i}" for i in range(n))
    return tuple(q.id for q in bank()[:n])


def plan_rounds(rounds: int) -> list[tuple[str, int, int]]:
    """The presenter's action before each round, and its (question index, round): ask, again, next, again, ..."""
    out, index, rnd = [("open", 0, 1)], 0, 1
    while len(out) < rounds:
        index, rnd, action = (index, 2, "again") if rnd == 1 else (index + 1, 1, "next")
        out.append((action, index, rnd))
    return out


def redis_commands(r) -> int:
    return int(r.info("stats")["total_commands_processed"])


async def measure(name: str, apps: list[AppProcess], r, seconds: float) -> Window:
    live = [a for a in apps if a.proc.poll() is None]
    before = [cpu_seconds(a.proc.pid) for a in live]
    ops = redis_commands(r)
    start = time.monotonic()
    await asyncio.sleep(seconds)
    elapsed = time.monotonic() - start
    after = [cpu_seconds(a.proc.pid) for a in live]
    ops = (redis_commands(r) - ops) / elapsed
    return Window(name, elapsed, [cpu_percent(b, a, elapsed) for b, a in zip(before, after, strict=True)], ops)


async def run_poll(
    phones: int, replicas: int, rounds: int, arrive_s: float, window: float, log_dir: Path
) -> PollReport:
    import redis

    from harness.redis import RedisServer

    server = RedisServer()
    server.start()
    r = redis.Redis.from_url(server.url)
    store = RedisStore(server.url)
    plan = plan_rounds(rounds)
    room, secret = poll.open_room(store, question_ids(max(i for _, i, _ in plan) + 1))
    apps = start_replicas(replicas, log_dir, env={"LNVIZ_REDIS_URL": server.url})
    proxy = None
    master = random.Random(21)
    crowd = [
        Phone(i, secrets.token_urlsafe(16), random.Random(master.random())) for i in range(phones)
    ]  # 22-character urlsafe ids, as the page makes them
    presenter = None
    report = PollReport(phones, replicas, arrive_s, window, [], [], [], [], 0, [])
    try:

        async def warm(url: str) -> None:  # a first visit to /class loads the page's modules (not counted)
            c = Client(url, room.code, {"lnviz_route": "warm"})
            await c.open()
            await c.close()

        proxy, base = await balance(apps, warm)
        presenter = Client(base, room.code, {"lnviz_host": f"{room.code}.{secret}"})
        await presenter.open()
        await presenter.wait(lambda s: "class_reveal" in s.buttons, OPEN_TIMEOUT)
        report.windows.append(await measure("idle: the presenter alone", apps, r, window))
        start = time.monotonic() + 1.0
        arrivals = [
            asyncio.create_task(arrive(p, base, room.code, start + arrive_s * i / max(1, phones - 1)))
            for i, p in enumerate(crowd)
        ]
        await drive(report, plan, crowd, arrivals, presenter, store, room.code, apps, r)
    except Exception as e:  # the report says how far it got
        report.errors.append(f"the run stopped: {type(e).__name__}: {e}"[:300])
    finally:
        for p in crowd:
            if p.client:
                await p.client.close()
        if presenter is not None:
            await presenter.close()
        report.spread = stop_replicas(apps, proxy)
        server.stop()
    report.join_ms = sorted(p.join_ms for p in crowd if p.join_ms is not None)
    report.rejoin_ms = sorted(ms for p in crowd if p.client for ms in p.client.rejoin_ms)
    report.drops = sum(p.client.drops for p in crowd if p.client)
    report.errors += [f"phone {p.index}: {e}" for p in crowd for e in p.errors]
    for app in apps[:-1] if replicas > 1 else apps:
        if "Traceback" in app.log_tail():
            report.errors.append(f"{app.log.name}: a traceback in the log")
    return report


async def act(presenter: Client, store: RedisStore, code: str, action: str) -> float:
    """The presenter presses ``action``'s button once it is enabled: when the press left, once Redis shows it."""
    version = store.room(code).version
    await presenter.wait(lambda s: f"class_{action}" in s.buttons, PRESENTER_TIMEOUT)
    at = await presenter.press(f"class_{action}")
    while store.room(code).version == version:
        if time.monotonic() - at > PRESENTER_TIMEOUT:
            raise TimeoutError(f"the presenter's {action} was not applied in {PRESENTER_TIMEOUT:.0f} s")
        await asyncio.sleep(0.05)
    return at


async def drive(
    report: PollReport,
    plan: list[tuple[str, int, int]],
    crowd: list[Phone],
    arrivals: list[asyncio.Task],
    presenter: Client,
    store: RedisStore,
    code: str,
    apps: list[AppProcess],
    r: object,
) -> None:
    """The rounds: open, wait for the answers, reveal, count; the waiting window after the first."""
    phones, replicas, window, arrive_s = report.phones, report.replicas, report.window, report.arrive
    for k, (action, index, rnd) in enumerate(plan):
        current = Round(f"question {index + 1}, round {rnd}", index, rnd)
        report.rounds.append(current)
        if k == 0:
            tasks = arrivals
        else:
            opened = await act(presenter, store, code, action)
            tasks = [asyncio.create_task(take_round(p, k, opened)) for p in crowd if p.client]
            if k == 1 and replicas > 1:
                tasks.append(asyncio.create_task(kill_later(apps[-1], opened + KILL_AFTER_S, current)))
        await asyncio.wait(tasks, timeout=ROUND_LIMIT_S + (arrive_s if k == 0 else 0))
        marks = {p.index: len(p.client.results_at) for p in crowd if p.client}
        pressed = await act(presenter, store, code, "reveal")
        await reveal_seen(crowd, marks, pressed, k, current)
        confirmed = {p.voter: p.confirmed[k] for p in crowd if k in p.confirmed}
        stored = store.votes(code, index, rnd)
        current.tally = tally(confirmed, stored, [p.voter for p in crowd])
        for p in crowd:
            if k in p.confirmed and p.voter in stored and not same(stored[p.voter], p.confirmed[k]):
                p.errors.append(
                    f"round {k + 1}: Redis kept {stored[p.voter]!r}, the page confirmed "
                    f"{p.confirmed[k]!r} last ({p.trail.get(k)})"
                )
        current.changed = sum(len(p.outcomes.get(k, [])) > 1 for p in crowd)
        if current.killed_at is not None:
            current.kept = sum(
                p.client.drops > 0
                and p.confirmed_at.get(k, current.killed_at) < current.killed_at
                and len(p.outcomes.get(k, [])) == 1
                and p.voter in stored
                for p in crowd
                if p.client
            )
        if k == 0:
            report.windows.append(await measure(f"{phones} phones waiting", apps, r, window))


async def kill_later(app: AppProcess, at: float, current: Round) -> None:
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    app.proc.kill()
    current.killed_at = time.monotonic()
    current.killed = f"{app.url} killed {KILL_AFTER_S:.0f} s into the round"


async def reveal_seen(crowd: list[Phone], marks: dict[int, int], pressed: float, k: int, current: Round) -> None:
    """Wait until every connected phone showed the results after the press (or :data:`REVEAL_WAIT_S`)."""
    deadline = pressed + REVEAL_WAIT_S
    while time.monotonic() < deadline:
        if all(len(p.client.results_at) > marks[p.index] for p in crowd if p.index in marks):
            break
        await asyncio.sleep(0.2)
    for p in crowd:
        if p.index not in marks:
            continue
        later = [t for t in p.client.results_at[marks[p.index] :] if t >= pressed]
        if later:
            p.revealed_ms[k] = (later[0] - pressed) * 1e3
            current.revealed.append(p.revealed_ms[k])
        else:
            current.missing += 1


# ---- the report ----


def poll_markdown(r: PollReport, load_start: str, load_end: str) -> str:
    idle, busy = [*r.windows, None, None][:2]
    lost = sum(x.tally.lost for x in r.rounds if x.tally)
    double = sum(x.tally.double for x in r.rounds if x.tally)
    reveals = sorted(ms for x in r.rounds for ms in x.revealed)
    missing = sum(x.missing for x in r.rounds)
    within = sum(ms <= TARGET_REVEAL_P95_S * 1e3 for ms in reveals) / (len(reveals) + missing) if reveals else 0.0
    more = added(idle, busy) if idle and busy and len(idle.cpu) == len(busy.cpu) else []
    p95_join = percentile(r.join_ms, 95)
    lines = [
        f"### The class poll: a presenter and {r.phones} phones on {r.replicas} replicas sharing one Redis",
        "",
        machine_table(machine(), load_start, load_end),
        f"{r.phones} phones arrive over {r.arrive:.0f} s on `/class?room=CODE` through docs/deploy.md's nginx, each "
        f"a WebSocket client with its own `lnviz_voter` cookie that sends every timer fragment's rerun on the period "
        f"the server announced, as the frontend does, and takes the runs the server starts; each answers {VOTE_DELAY_S[0]:.0f}–{VOTE_DELAY_S[1]:.0f} s after its question appears "
        f"and one in {CHANGE_ONE_IN} changes its answer {CHANGE_DELAY_S[0]:.0f}–{CHANGE_DELAY_S[1]:.0f} s later; "
        f"the presenter reveals once all have answered. Round 2: the last replica is killed {KILL_AFTER_S:.0f} s in; "
        "its phones reconnect through the balancer with the same cookies.",
        "",
        "| round | votes cast (confirmed on the phone) | of them changed | counted in Redis | lost | double "
        "| in Redis, never confirmed on the phone | stored ≠ last confirmed | reveal p50 ms | reveal p95 ms "
        "| phones without the results | |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for x in r.rounds:
        t = x.tally or Tally(0, 0, 0, 0, 0)
        lines.append(
            f"| {x.label} | {t.cast} | {x.changed} | {t.counted} | {t.lost} | {t.double} | {t.unconfirmed} "
            f"| {t.differ} "
            f"| {percentile(x.revealed, 50):.0f} | {percentile(x.revealed, 95):.0f} | {x.missing} | {x.killed}"
            + (f": {x.kept} phones on it had voted; none voted again and Redis kept each vote" if x.killed else "")
            + " |"
        )
    lines += ["", "| window | seconds | CPU per replica (% of one core) | Redis commands/s |", "|---|---:|---|---:|"]
    for w in r.windows:
        lines.append(f"| {w.name} | {w.seconds:.0f} | {' · '.join(f'{c:.1f}' for c in w.cpu)} | {w.redis_ops:.0f} |")
    lines += [
        "",
        "| target (issue 21) | result | |",
        "|---|---|---|",
        f"| 0 votes lost, 0 double | {lost} lost, {double} double | {verdict(lost == 0 and double == 0)} |",
        f"| the reveal on 95 % of phones within {TARGET_REVEAL_P95_S:.0f} s | {within:.1%} within "
        f"(p95 {percentile(reveals, 95) / 1e3:.2f} s; {missing} never) | {verdict(within >= 0.95)} |",
        f"| {r.phones} waiting phones add ≤ {TARGET_ADDED_CPU:.0f} % of a core to a replica | "
        f"{' · '.join(f'+{m:.1f}' for m in more) or 'not measured'} points | "
        f"{verdict(bool(more) and max(more) <= TARGET_ADDED_CPU)} |",
        f"| join → question p95 ≤ {TARGET_JOIN_P95_S:.0f} s | {p95_join / 1e3:.2f} s (p50 "
        f"{percentile(r.join_ms, 50) / 1e3:.2f} s, {len(r.join_ms)} of {r.phones} joined) "
        f"| {verdict(p95_join <= TARGET_JOIN_P95_S * 1e3 and len(r.join_ms) == r.phones)} |",
        f"| reconnected after the kill | {r.drops} drops, {len(r.rejoin_ms)} back on the question (p50 "
        f"{percentile(r.rejoin_ms, 50) / 1e3:.1f} s, p95 {percentile(r.rejoin_ms, 95) / 1e3:.1f} s) | |",
    ]
    if r.spread:
        lines.append(
            f"| WebSockets per replica (the balancer's log) | {', '.join(f'{n} to {a}' for a, n in sorted(r.spread.items()))} | |"
        )
    other = [e for e in r.errors if "dropped:" not in e and "reconnect:" not in e]
    if other:
        lines += ["", f"Errors ({len(other)}, first 10):", "", *(f"- {e}" for e in other[:10])]
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    """``python -m benchmarks.load --mode poll``: run it, print it, file it under artifacts/ and in the doc."""
    load_start = load_average()
    run = run_poll(args.phones, args.replicas, args.rounds, args.arrive, args.window, args.log.parent)
    limit = args.arrive + args.rounds * (ROUND_LIMIT_S + REVEAL_WAIT_S + 30) + 2 * args.window + 3 * OPEN_TIMEOUT
    report = asyncio.run(asyncio.wait_for(run, limit))
    text = poll_markdown(report, load_start, load_average())
    print(text)
    artifact = Path("artifacts") / f"poll-{args.replicas}x{args.phones}.md"
    artifact.parent.mkdir(parents=True, exist_ok=True)
    artifact.write_text(text)
    write_section("poll", text, args.out)
    return 0
