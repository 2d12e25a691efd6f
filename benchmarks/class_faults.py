"""Issue 31's faults target: votes through the page over 2 replicas, a replica killed mid-round and Redis restarted.

    python -m benchmarks.class_faults                       # 100 phones, 3 votes each over 20 s
    python -m benchmarks.class_faults --phones 20 --span 10  # a dry run

Also the last phase of ``python -m benchmarks.class_stream`` (``--faults N``), on its replicas.

Each phone is a light client (:class:`harness.wsclient.Session`) that does what a phone's browser does: it GETs
``/class?room=CODE`` through the balancer (its routing cookie and its proof cookie), opens the page's WebSocket,
keeps the voter cookie the page sets (``ui.poll.classroom.keep_cookies``), and votes as the element does, by its
trigger value ``vote`` (harness/apptest.py's ``class_vote``), which the page's callback stores (``ui.poll.phone.vote``).
A vote is *confirmed* when the run that follows draws the element saying it was sent, with that answer as the
store's. Each phone sends ``--votes`` answers, spread over ``--span`` seconds, the later ones changes of mind;
an answer that is not confirmed (its replica died, the store could not be reached) is sent again, as a student
taps again, after the page shows the store is back; a phone whose WebSocket closed reconnects through the
balancer with its cookies, to the other replica if its own is gone.

Meanwhile: replica A is killed (SIGKILL) at 30 % of the span and started again at once (it comes back when it
is healthy); Redis is shut down at 55 % of the span for ``--outage`` s and started again holding what it held
(``SHUTDOWN SAVE``: a Redis that keeps its data, as ``deploy/k8s/redis.yaml``'s does across a container
restart, from its append-only file; ``--empty-redis``: one that starts empty, as a replaced pod without a
PersistentVolumeClaim does, which loses the room itself, as docs/deploy.md says). Then, against what each phone last confirmed:

- **lost**: a phone whose last confirmed answer is not the one the store holds for its voter;
- **doubled**: answers in the store beyond one per phone (a phone that came back as a new voter, or a stranger);
- and the reveal's counts, read from a fresh stream, against the confirmed answers' counts.

Target: 0 lost and 0 doubled.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamlit.components.v2.bidi_component.main import _make_trigger_id

from harness.replicas import Replicas, proved, running_replicas
from harness.wsclient import Session
from lnviz.labs.classroom import text
from server import poll
from server.store import RedisStore

QUESTIONS = ("bn-one-sample", "ln-invariance")  # the first has four choices: "0" to "3"
CHOICES = ("0", "1", "2", "3")
RUN_TIMEOUT_S = 60.0  # one page run, on a loaded machine
RETRY_S = 1.0  # an answer not confirmed is sent again after this (the page's own poll looks every second)
TRIES = 60  # then the phone gives up on that answer, which stays unconfirmed
GONE = "the page showed no room"  # a restarted empty Redis lost it: the phone gives up


@dataclass
class Phone:
    """One student's phone: its cookies, the answers it means to send, and what came of each."""

    name: str
    plan: list[str]  # the answers it sends, in order: the last is its final one
    cookies: dict[str, str] = field(default_factory=dict)  # lnviz_route, lnviz_proof, lnviz_voter
    voters: list[str] = field(default_factory=list)  # each voter id its pages were given, in order
    sent: int = 0  # votes sent, retries included
    confirmed: list[str] = field(default_factory=list)  # each answer the page confirmed, in order
    reconnects: int = 0
    downs: int = 0  # runs that said the store can't be reached
    refused: list[str] = field(default_factory=list)  # what the page said to a vote it did not take
    took: list[float] = field(default_factory=list)  # from each answer's first send to its confirmation, s
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # its page opened (or failed to)

    def cookie_header(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}


@dataclass(frozen=True)
class Faults:
    """Votes lost or doubled, against what each phone last confirmed."""

    lost: list[str]  # phones whose last confirmed answer the store does not hold
    doubled: int  # answers held beyond one per phone
    unconfirmed: int  # phones with no confirmed answer at all
    expected: dict[str, int]  # each choice's count among the last confirmed answers
    held: dict[str, int]  # each choice's count in the store

    @property
    def passed(self) -> bool:
        return not self.lost and self.doubled == 0 and self.unconfirmed == 0 and self.expected == self.held


def count(phones: Iterable[Phone], votes: Mapping[str, str]) -> Faults:
    """Compare the store's ``votes`` (voter id → answer) with each phone's last confirmed answer."""
    phones = list(phones)
    lost = [p.name for p in phones if p.confirmed and (not p.voters or votes.get(p.voters[-1]) != p.confirmed[-1])]
    ours = {v for p in phones for v in p.voters}
    strangers = sum(v not in ours for v in votes)
    extra = sum(max(0, sum(v in votes for v in set(p.voters)) - 1) for p in phones)
    expected = Counter(p.confirmed[-1] for p in phones if p.confirmed)
    return Faults(
        lost=lost,
        doubled=strangers + extra,
        unconfirmed=sum(not p.confirmed for p in phones),
        expected=dict(sorted(expected.items())),
        held=dict(sorted(Counter(votes.values()).items())),
    )


def bidi(session: Session, name: str) -> Any | None:
    """The last run's element of component ``name`` (its proto: ``id``, ``json``), or None if it drew none."""
    found = None
    for msg in session.run:
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            continue
        element = msg.delta.new_element
        if element.WhichOneof("type") == "bidi_component" and element.bidi_component.component_name.endswith(name):
            found = element.bidi_component
    return found


def set_cookies(data: Mapping[str, Any]) -> dict[str, str]:
    """The cookies the page's cookie setter stores in the browser (``ui.poll.classroom.keep_cookies``): name → value."""
    return {str(c[0]): str(c[1]) for c in data.get("cookies") or [] if isinstance(c, list) and len(c) == 3}


def confirmed(data: Mapping[str, Any], answer: str) -> bool:
    """Whether the phone's element, as the run after a vote drew it, says ``answer`` was sent and is the store's."""
    said = data.get("said") or {}
    return said.get("kind") == "success" and (data.get("mine") or {}).get("answer") == answer


def vote_state(element: Any, answer: str, n: int) -> Any:
    """The element's trigger value for a tap on ``answer``, for the question and round it drew."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    drawn = json.loads(element.json)["room"]
    value = {"index": drawn["index"], "round": drawn["round"], "answer": answer, "n": n}
    state = WidgetState(id=_make_trigger_id(element.id, "events"))
    state.json_trigger_value = json.dumps([{"event": "vote", "value": value}])
    return state


async def open_page(phone: Phone, base: str, code: str) -> Session:
    """The phone's page, opened (a page run); the voter cookie it sets is kept, as the browser keeps it."""
    if "lnviz_proof" not in phone.cookies:  # the proof its page's script would pay for (tests/test_proof*.py)
        phone.cookies["lnviz_proof"] = proved().split("=", 1)[1]
    session = Session(base, query=f"room={code}", page="class", headers=phone.cookie_header())
    await asyncio.wait_for(session.open(), RUN_TIMEOUT_S)
    note(phone, session)
    return session


def note(phone: Phone, session: Session) -> None:
    """Keep the voter cookie the run set, and count a run that said the store can't be reached."""
    setter = bidi(session, "lnviz_cookies")
    voter = set_cookies(json.loads(setter.json)).get("lnviz_voter") if setter is not None else None
    if voter:
        phone.cookies["lnviz_voter"] = voter
        if not phone.voters or phone.voters[-1] != voter:
            phone.voters.append(voter)
    if any(down(msg) for msg in session.run):
        phone.downs += 1


def down(msg: Any) -> bool:
    """Whether a message of a run is the page's banner that the store can't be reached."""
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return False
    element = msg.delta.new_element
    return element.WhichOneof("type") == "alert" and element.alert.body == text.DOWN


async def attend(
    phone: Phone, base: str, code: str, offsets: list[float], go: asyncio.Future, votes: Iterator[int]
) -> None:
    """Open the phone's page; then, from the time ``go`` gives, send each answer of its plan ``offsets`` s after
    it, again until the page confirms it (at most :data:`TRIES` sends)."""
    from websockets.exceptions import WebSocketException

    session: Session | None = None
    try:  # the page first, as the student opens it before the question is asked
        session = await open_page(phone, base, code)
    except (WebSocketException, OSError, TimeoutError, RuntimeError):
        phone.reconnects += 1
    phone.ready.set()
    start = await go
    for answer, offset in zip(phone.plan, offsets, strict=True):
        when = start + offset
        await asyncio.sleep(max(0.0, when - time.monotonic()))
        first = time.monotonic()
        for _ in range(TRIES):
            try:
                if session is None:
                    session = await open_page(phone, base, code)
                element = bidi(session, "lnviz.class")
                if element is None and not any(down(msg) for msg in session.run):  # no room: the lobby
                    phone.refused.append(GONE)
                    break
                if element is None:  # the store can't be reached: the page's poll runs it again
                    await asyncio.sleep(RETRY_S)
                    await asyncio.wait_for(session.rerun([]), RUN_TIMEOUT_S)
                    note(phone, session)
                    continue
                phone.sent += 1
                await asyncio.wait_for(session.rerun([vote_state(element, answer, next(votes))]), RUN_TIMEOUT_S)
                note(phone, session)
                drawn = bidi(session, "lnviz.class")
                data = json.loads(drawn.json) if drawn is not None else {}
                if confirmed(data, answer):
                    phone.confirmed.append(answer)
                    phone.took.append(time.monotonic() - first)
                    break
                said = (data.get("said") or {}).get("text")
                if said and said not in phone.refused:
                    phone.refused.append(said)
                await asyncio.sleep(RETRY_S)
            except (WebSocketException, OSError, TimeoutError, RuntimeError):
                phone.reconnects += 1
                if session is not None:
                    await asyncio.gather(session.close(), return_exceptions=True)
                session = None
                await asyncio.sleep(RETRY_S)
    if session is not None:
        await asyncio.gather(session.close(), return_exceptions=True)


def first_state(base: str, code: str, route: str) -> dict:
    """The first ``room`` event of a fresh stream of room ``code`` (with routing key ``route``): the room now."""
    headers = {"Cookie": f"lnviz_route={route}; {proved()}", "Accept": "text/event-stream"}
    request = urllib.request.Request(f"{base}/api/class/{code}/events", headers=headers)
    with urllib.request.urlopen(request, timeout=RUN_TIMEOUT_S) as r:
        room = False
        for raw in r:
            line = raw.decode().strip()
            room = room or line == "event: room"
            if room and line.startswith("data:"):
                return json.loads(line[5:])
    return {}


async def faults(replicas: Replicas, span: float, outage: float, log: list[str], empty: bool = False) -> None:
    """Kill replica A at 30 % of ``span`` and start it again; shut Redis down at 55 % for ``outage`` s, saving
    what it holds (``empty``: not, as a replaced Redis pod without a PersistentVolumeClaim)."""
    start = time.monotonic()
    await asyncio.sleep(0.3 * span)
    replicas.apps[0].proc.kill()
    log.append(f"replica A killed at {time.monotonic() - start:.1f} s")

    def restart() -> None:
        replicas.restart(0)
        log.append(f"replica A healthy again at {time.monotonic() - start:.1f} s")

    back = asyncio.create_task(asyncio.to_thread(restart))
    await asyncio.sleep(max(0.0, start + 0.55 * span - time.monotonic()))
    await asyncio.to_thread(replicas.redis.stop, not empty)
    log.append(f"Redis {'stopped (nothing kept)' if empty else 'shut down'} at {time.monotonic() - start:.1f} s")
    await asyncio.sleep(outage)
    await asyncio.to_thread(replicas.redis.start)
    log.append(f"Redis back at {time.monotonic() - start:.1f} s")
    await back


async def run(args: argparse.Namespace, replicas: Replicas) -> list[str]:
    store = RedisStore(replicas.redis.url)
    room, secret = poll.open_room(store, QUESTIONS)
    rng = random.Random(args.seed)
    phones = [Phone(f"phone-{i}", [rng.choice(CHOICES) for _ in range(args.votes)]) for i in range(args.phones)]
    for phone in phones:
        phone.cookies["lnviz_route"] = f"faults-{args.seed}-{phone.name}"
    lines = [f"# Faults: {args.phones} phones voting through the page, 2 replicas, Redis, nginx", ""]
    votes = iter(range(1, 10**9))
    go: asyncio.Future = asyncio.get_running_loop().create_future()
    tasks = []
    for phone in phones:
        offsets = sorted(rng.uniform(0, args.span) for _ in phone.plan)
        tasks.append(asyncio.create_task(attend(phone, replicas.lb, room.code, offsets, go, votes)))
    opening = time.monotonic()
    await asyncio.wait([asyncio.create_task(p.ready.wait()) for p in phones], timeout=args.settle)
    opened = time.monotonic() - opening
    events: list[str] = [f"{sum(p.ready.is_set() for p in phones)} pages opened in {opened:.1f} s"]
    go.set_result(time.monotonic())
    await faults(replicas, args.span, args.outage, events, args.empty_redis)
    await asyncio.wait_for(asyncio.gather(*tasks), args.span + 600)
    lines.append(f"- {'; '.join(events)}")
    held = store.votes(room.code, 0, 1)
    found = count(phones, held)
    moved = store.act(room.code, secret, "reveal", room.version)
    shown = await asyncio.to_thread(first_state, replicas.lb, room.code, "faults-reveal") if moved else {}
    revealed = (shown.get("rounds") or [{}])[0]
    revealed = {k: v for k, v in sorted(revealed.items()) if v}
    took = sorted(t for p in phones for t in p.took)
    p95 = took[min(len(took) - 1, int(0.95 * len(took)))] if took else float("nan")
    lines += [
        f"- sent {sum(p.sent for p in phones)} votes for {sum(len(p.plan) for p in phones)} answers;"
        f" {sum(len(p.confirmed) for p in phones)} confirmed; {sum(p.reconnects for p in phones)} reconnects;"
        f" {sum(p.downs for p in phones)} runs said the store can't be reached;"
        f" an answer confirmed within p95 {p95:.2f} s of its first send",
        f"- phones that came back as another voter: {sum(len(set(p.voters)) > 1 for p in phones)}",
        f"- refused, as the page said it: {sorted({r for p in phones for r in p.refused}) or 'none'}",
        f"- the store holds {len(held)} answers for {len(phones)} phones: {found.held}; confirmed last: {found.expected}",
        f"- the reveal's counts on a fresh stream: {revealed}"
        f" ({'the same' if revealed == found.expected else 'NOT the confirmed ones'})",
        f"- lost {len(found.lost)}, doubled {found.doubled}, phones with no confirmed answer {found.unconfirmed}:"
        f" {'PASS' if found.passed and revealed == found.expected else 'MISS'}",
    ]
    return lines


def parser(prog: str = "python -m benchmarks.class_faults") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--phones", type=int, default=100, help="phones voting through the page")
    parser.add_argument("--votes", type=int, default=3, help="answers each phone sends (the later ones changes)")
    parser.add_argument("--span", type=float, default=20.0, help="seconds the answers are spread over")
    parser.add_argument("--outage", type=float, default=3.0, help="seconds Redis is down")
    parser.add_argument("--settle", type=float, default=120.0, help="seconds at most for the phones to open pages")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument(
        "--empty-redis", action="store_true", help="Redis restarts empty, as a replaced pod of redis.yaml's does"
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lnviz-faults-") as logs, running_replicas(Path(logs)) as replicas:
        lines = asyncio.run(run(args, replicas))
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if args.out:
        args.out.write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
