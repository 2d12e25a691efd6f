"""``make load LOAD_ARGS="--mode attack"``: a class of 30 on one server while one client tries each attack of
issue 20 in turn; then issue 30's on the shared store and, with ``--before`` (a checkout of main), issue 47's eight
beside an honest user, before and after (:mod:`benchmarks.attack_cost`).

    python -m benchmarks.load --mode attack                      # 30 sessions, 15 s a phase: 5 to 10 minutes
    python -m benchmarks.load --mode attack --seconds 10 --out /tmp/attack.md

One ``streamlit run app.py`` on 127.0.0.1. A class of ``--sessions`` arrives
(:mod:`benchmarks.crowd`'s students: the lecturer's link, one in five on a
link of its own) and moves the gain slider every ``--every`` seconds (±50 %)
for the whole run, its numbers checked against torch. The run is a row of
phases, ``--seconds`` each: first the class alone (the baseline), then one
attack after another, each by clients speaking Streamlit's own protocol
(:mod:`harness.wsclient`), as a script of an anonymous visitor would:

- ``clear_cache``: ``BackMsg{clear_cache: true}`` once a second; and whether a
  second race is admitted while one runs, before and after such a message.
- ``stage list``: two sessions each send the stage one trigger list of
  :data:`STAGE_EVENTS` scrub events, again as soon as it is answered.
- ``1024² seeds``: one session opens B = H = 1024 with a new seed each rerun.
- ``uploads``: :data:`UPLOADERS` sessions each upload a 30 MiB CSV and have
  the page read it; a newcomer then uploads 16 KiB.
- ``Run hogging``: :data:`HOGS` sessions on the training page press Run again
  whenever refused; a legitimate visitor tries Run, for up to
  :data:`ADMIT_WITHIN_S` each time, a try at most every 10 s, over a phase of
  ``3 × --seconds`` (at least 70 s: two tries).
- ``downloads``: :data:`DOWNLOADERS` sessions ask for the 1024² downloads back
  to back; a legitimate visitor asks for one every 5 s.
- ``rerun flood``: :data:`FLOODERS` sessions send new 1024² seeds back to back.

Between two phases the server settles (a probe session's γ move is back near
the baseline, or :data:`SETTLE_S` passed), so an attack's leftover work is not
billed to the next. Reported per phase: the class's interaction p50 and p95
next to the baseline's, the server's peak RSS, and what the attack got; and how
often the legitimate Run was admitted within :data:`ADMIT_WITHIN_S`. The
targets are issue 20's.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.crowd import LECTURE, Student, attend, students, warm_up
from benchmarks.memory import Memory, sampling
from benchmarks.stats import percentile
from harness import upload
from harness.server import free_port, start_app, wait_app
from harness.wsclient import FINISHED, Session

SESSIONS = 30
PHASE_S = 15.0
SETTLE_S = 30.0
STAGE_EVENTS = 10_000  # 0.7 MB: what issue 20 found costs 12 s of CPU
UPLOADERS = 8  # files the page reads at once
FILLERS = 9  # sessions that upload two files each: 18 × 31 MiB, past the server-wide 512 MiB
TOP_UPS = 8  # then 4 MiB files, one a session, until one is refused: the ceiling is full to the brim
HOGS = 3
DOWNLOADERS = 3
FLOODERS = 4
ADMIT_WITHIN_S = 30.0
BIG = "batch=1024&features=1024"
RACE = "steps=3000"  # a race long enough to hold the gate
OPEN_TIMEOUT = 240.0
ANSWER_TIMEOUT = 120.0
# Issue 20's targets.
TARGET_P95_RATIO = 2.0
TARGET_PEAK_MIB = 1536.0
TARGET_ADMITTED = 0.9


@dataclass
class Phase:
    name: str
    start: float = 0.0  # monotonic
    end: float = 0.0
    notes: list[str] = field(default_factory=list)  # what the attack got, in words
    errors: list[str] = field(default_factory=list)  # the attacker's own failures (not the class's)
    settle_s: float = 0.0


@dataclass
class Legit:
    """A legitimate visitor's heavy actions during the attacks: (what, admitted, seconds to admission)."""

    tries: list[tuple[str, bool, float]] = field(default_factory=list)


# ---- speaking the protocol without waiting for a whole run ----


def backmsg_rerun(session: Session, widgets: list[WidgetState]) -> BackMsg:
    msg = BackMsg()
    msg.rerun_script.query_string = session.query
    msg.rerun_script.page_script_hash = session.page_hash
    msg.rerun_script.widget_states.widgets.extend(widgets)
    return msg


async def until_finished(session: Session, timeout: float, watch: Callable[[ForwardMsg], str | None] | None = None):
    """Read messages until the run finishes, or ``watch`` returns a verdict; that verdict or "finished"."""
    deadline = time.monotonic() + timeout
    while True:
        fwd = ForwardMsg.FromString(await asyncio.wait_for(session.ws.recv(), max(0.1, deadline - time.monotonic())))
        if fwd.hash:
            session.seen[fwd.hash] = fwd
        if fwd.WhichOneof("type") == "ref_hash" and fwd.ref_hash in session.seen:
            fwd = session._dereference(fwd)
        if watch is not None and (verdict_ := watch(fwd)):
            return verdict_
        if fwd.WhichOneof("type") == "script_finished" and fwd.script_finished in FINISHED:
            return "finished"


def element(fwd: ForwardMsg) -> tuple[str | None, object]:
    if fwd.WhichOneof("type") != "delta" or fwd.delta.WhichOneof("type") != "new_element":
        return None, None
    kind = fwd.delta.new_element.WhichOneof("type")
    return kind, getattr(fwd.delta.new_element, kind)


def run_verdict(fwd: ForwardMsg) -> str | None:
    """Pressing Run: "busy" when refused, "admitted" once the race draws its progress."""
    kind, el = element(fwd)
    if kind == "alert" and el.body.startswith("Busy"):
        return "busy"
    if kind == "progress":
        return "admitted"
    return None


async def on_page(base: str, path: str, query: str) -> Session:
    """A session opened on the page at ``path`` (e.g. "training") with ``query``."""
    session = Session(base, query=query)
    await asyncio.wait_for(session.open(), OPEN_TIMEOUT)
    if path:
        (nav,) = [m for m in session.run if m.WhichOneof("type") == "navigation"][:1]
        (page,) = [p for p in nav.navigation.app_pages if p.url_pathname == path]
        session.page_hash = page.page_script_hash
        await session.rerun([], OPEN_TIMEOUT)
    return session


async def press_run(session: Session) -> str:
    """Press Run on the training page: "admitted" (the race runs on), "busy" (its run read to the end),
    "finished" (neither showed) or "no answer" (nothing within :data:`ANSWER_TIMEOUT`)."""
    press = backmsg_rerun(session, [WidgetState(id=session.ids["run"], trigger_value=True)])
    await session.ws.send(press.SerializeToString())
    try:
        got = await until_finished(session, ANSWER_TIMEOUT, run_verdict)
        if got == "busy":  # the refused run's last messages must not answer the next press
            await until_finished(session, ANSWER_TIMEOUT)
    except TimeoutError:
        return "no answer"
    return got


async def stop_run(session: Session, timeout: float = 10.0) -> None:
    """Stop the session's script (its race), and read until it has finished (a script not running sends
    nothing: give up after ``timeout``)."""
    await session.ws.send(BackMsg(stop_script=True).SerializeToString())
    try:
        await until_finished(session, timeout)
    except TimeoutError:
        pass


async def close_all(sessions: list[Session]) -> None:
    for s in sessions:
        try:
            await s.close()
        except Exception:  # a session the server already dropped
            pass


# ---- the attacks; each runs until ``until`` (monotonic) and notes what it got ----


async def attack_clear_cache(base: str, until: float, phase: Phase) -> None:
    holder = await on_page(base, "training", RACE)
    second = await on_page(base, "training", RACE)
    clearer = await on_page(base, "", LECTURE.query())
    try:
        first = await press_run(holder)
        before = await press_run(second)
        if before == "admitted":
            await stop_run(second)
        await clearer.ws.send(BackMsg(clear_cache=True).SerializeToString())
        await asyncio.sleep(0.5)
        after = await press_run(second)
        phase.notes.append(
            f"a race ran ({first}); a second Run: {before} before a `clear_cache`, {after} after it"
            + (" — **the gate was reset**" if before == "busy" and after == "admitted" else "")
        )
        for s in (holder, second):
            await stop_run(s)
        sent = 0
        while time.monotonic() < until or sent < 5:
            await clearer.ws.send(BackMsg(clear_cache=True).SerializeToString())
            sent += 1
            await asyncio.sleep(1.0)
        phase.notes.append(f"{sent} more `clear_cache` messages, one a second")
    finally:
        await close_all([holder, second, clearer])


def stage_aggregator(session: Session) -> str:
    """The id under which the stage's trigger list travels (Streamlit's components v2 aggregator)."""
    (stage,) = session.tree.get("bidi_component")
    return f"$$STREAMLIT_INTERNAL_KEY_{stage.proto.id}__events"


async def attack_stage_list(base: str, until: float, phase: Phase) -> None:
    sessions = [await on_page(base, "", LECTURE.query()) for _ in range(2)]
    events = [{"event": "scrub", "value": {"gain": 1.5, "bias": 0.0, "eps": 1e-5}}] * STAGE_EVENTS
    payload = json.dumps(events)
    answered: list[float] = []
    unanswered = taken = 0

    def gain_of(s: Session) -> list[float]:
        (gain,) = [w for w in s.tree.get("slider") if w.key == "gain"]
        return list(gain.proto.value)

    async def one(s: Session) -> None:
        nonlocal unanswered, taken
        # Streamlit ignores a widget id it does not know: first a browser's own one-event list must reach the
        # stage's callback, so that a long list that changes nothing is the server refusing it, not a wrong id.
        probe = json.dumps([{"event": "scrub", "value": {"gain": 1.25, "bias": 0.0, "eps": 1e-5}}])
        await s.rerun([WidgetState(id=stage_aggregator(s), json_trigger_value=probe)], 60)
        if gain_of(s) != [1.25]:
            raise RuntimeError(f"a one-event stage list did not reach the page: gain is {gain_of(s)}")
        while time.monotonic() < until:
            state = WidgetState(id=stage_aggregator(s), json_trigger_value=payload)
            try:
                answered.append(await s.rerun([state], max(0.0, until - time.monotonic()) + 30))
            except TimeoutError:  # the server is still at it: the settle after the phase waits for it
                unanswered += 1
                return
            taken += gain_of(s) == [1.5]

    try:
        await asyncio.gather(*(one(s) for s in sessions))
    finally:
        await close_all(sessions)
    phase.notes.append(
        f"{len(answered)} lists of {STAGE_EVENTS:,} events ({len(payload) / 1e6:.2f} MB each) answered, "
        f"in {percentile(sorted(answered), 50):.0f} ms (p50), {max(answered, default=float('nan')):.0f} ms at most; "
        f"{taken} of them acted on (a browser's one-event list was); {unanswered} not answered by 30 s after the phase"
    )


async def attack_seeds(base: str, until: float, phase: Phase) -> None:
    session = await on_page(base, "", f"{BIG}&seed=1")
    seeds = 1
    try:
        while time.monotonic() < until:
            seeds += 1
            session.query = f"{BIG}&seed={seeds}"
            await session.rerun([session.widget("seed", int_value=seeds)], ANSWER_TIMEOUT)
    finally:
        await close_all([session])
    phase.notes.append(f"{seeds} distinct 1024 × 1024 seeds, one after another")


def uploaded(session: Session, file_id: str, name: str, size: int) -> WidgetState:
    """The uploader's widget state once the browser has put a file: the page then reads it."""
    (uploader,) = [el.id for fwd in session.run for kind, el in [element(fwd)] if kind == "file_uploader"]
    state = WidgetState(id=uploader)
    info = state.file_uploader_state_value.uploaded_file_info.add()
    info.file_id, info.name, info.size = file_id, name, size
    info.file_urls.file_id = file_id
    info.file_urls.upload_url = f"/_stcore/upload_file/{session.session_id}/{file_id}"
    info.file_urls.delete_url = info.file_urls.upload_url
    return state


def big_csv() -> bytes:
    """A 1024 × 1024 matrix as CSV, 31 MiB: the most the upload limits allow, in long digits."""
    row = ",".join(f"{(i % 97) / 97:.28f}" for i in range(1024)) + "\n"
    return row.encode() * 1024


async def put_one(base: str, session: Session, data: bytes, name: str) -> tuple[int, str]:
    """One file PUT for ``session``: the HTTP status and the file's id."""
    file_id = str(uuid.uuid4())
    xsrf = await asyncio.to_thread(upload.xsrf_cookie, base)
    return await asyncio.to_thread(upload.put_file, base, session.session_id, xsrf, data, name, file_id), file_id


async def attack_uploads(base: str, until: float, phase: Phase) -> None:
    data = big_csv()
    sessions = [await on_page(base, "", LECTURE.query()) for _ in range(FILLERS)]
    owners = [s for s in sessions for _ in range(2)]  # two files a session: what one may hold
    try:
        puts = await asyncio.gather(*(put_one(base, s, data, "x.csv") for s in owners))
        # Topped up with smaller files, one per new session, until the server refuses one.
        top_ups: list[int] = []
        while len(top_ups) < TOP_UPS and 429 not in top_ups:
            sessions.append(await on_page(base, "", LECTURE.query()))
            top_ups.append((await put_one(base, sessions[-1], data[: 4 * 2**20], "y.csv"))[0])
        newcomer = await on_page(base, "", LECTURE.query())
        small, _ = await put_one(base, newcomer, b"1,2\n3,4\n" * 2048, "small.csv")
        await close_all([newcomer])
        # Then the pages read them: one accepted file in each of up to UPLOADERS sessions, at once.
        chosen: dict[int, tuple[Session, str]] = {}
        for s, (status, file_id) in zip(owners, puts, strict=True):
            if status == 204 and len(chosen) < UPLOADERS:
                chosen.setdefault(id(s), (s, file_id))
        wait = max(0.0, until - time.monotonic()) + 60
        parsed = await asyncio.gather(
            *(s.rerun([uploaded(s, fid, "x.csv", len(data))], wait) for s, fid in chosen.values()),
            return_exceptions=True,
        )
    finally:
        await close_all(sessions)
    statuses = [status for status, _ in puts]
    ms = sorted(p for p in parsed if isinstance(p, float))
    phase.notes.append(
        f"{len(puts)} uploads of {len(data) / 2**20:.0f} MiB from {FILLERS} sessions: "
        + ", ".join(f"{statuses.count(c)} × HTTP {c}" for c in sorted(set(statuses)))
        + f"; {len(top_ups)} more of 4 MiB until refused: {top_ups}; then a newcomer's 16 KiB file: HTTP {small}; {len(ms)} of {len(chosen)} files read by the pages at "
        f"once (p50 {percentile(ms, 50):.0f} ms)"
    )
    await asyncio.sleep(max(0.0, until - time.monotonic()))


async def attack_hogging(base: str, until: float, phase: Phase, legit: Legit) -> None:
    hogs = [await on_page(base, "training", RACE) for _ in range(HOGS)]
    visitor = await on_page(base, "training", "steps=50")
    presses = 0

    async def hog(s: Session) -> None:
        nonlocal presses
        while time.monotonic() < until:
            presses += 1
            if await press_run(s) == "admitted":
                try:  # hold the gate while the race runs
                    await until_finished(s, max(0.1, until - time.monotonic()))
                except TimeoutError:
                    return
            else:
                await asyncio.sleep(0.2)

    async def try_run() -> None:
        await asyncio.sleep(3.0)  # the visitor comes to a server the hogs are already at
        while time.monotonic() + ADMIT_WITHIN_S <= until + 1:
            start = time.monotonic()
            admitted = False
            while time.monotonic() - start < ADMIT_WITHIN_S:
                if await press_run(visitor) == "admitted":
                    admitted = True
                    await stop_run(visitor)
                    break
                await asyncio.sleep(5.0)
            legit.tries.append(("Run", admitted, time.monotonic() - start))
            await asyncio.sleep(max(0.0, start + 10.0 - time.monotonic()))  # a new try at most every 10 s

    tasks = [asyncio.create_task(hog(s)) for s in hogs]
    try:
        await try_run()
        await asyncio.sleep(max(0.0, until - time.monotonic()))
    finally:
        for t in tasks:
            t.cancel()
        for result in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(result, Exception):
                phase.errors.append(f"a hog: {type(result).__name__}: {result}"[:300])
        for s in [*hogs, visitor]:
            try:
                await stop_run(s)
            except Exception:  # a session whose socket a cancelled task left mid-read
                pass
        await close_all([*hogs, visitor])
    admitted = [t for t in legit.tries if t[0] == "Run" and t[1]]
    phase.notes.append(
        f"{HOGS} sessions pressed Run {presses} times; a legitimate Run was admitted within {ADMIT_WITHIN_S:.0f} s "
        f"in {len(admitted)} of {len(legit.tries)} tries"
    )


async def download(session: Session, button: str) -> bool:
    """Ask for a deferred download as the browser does when its button is clicked; whether a file came back."""
    (dl,) = [b for b in session.tree.get("download_button") if b.proto.id.endswith(button)]
    msg = BackMsg()
    request_id = uuid.uuid4().hex
    msg.backend_operation_request.request_id = request_id
    msg.backend_operation_request.session_id = session.session_id
    msg.backend_operation_request.deferred_file.file_id = dl.proto.deferred_file_id
    await session.ws.send(msg.SerializeToString())
    deadline = time.monotonic() + ANSWER_TIMEOUT
    while True:
        fwd = ForwardMsg.FromString(await asyncio.wait_for(session.ws.recv(), max(0.1, deadline - time.monotonic())))
        if (
            fwd.WhichOneof("type") == "backend_operation_response"
            and fwd.backend_operation_response.request_id == request_id
        ):
            return not fwd.backend_operation_response.error_msg


async def attack_downloads(base: str, until: float, phase: Phase) -> None:
    flooders = [await on_page(base, "", f"{BIG}&seed=7&view=downloads") for _ in range(DOWNLOADERS)]
    visitor = await on_page(base, "", f"{LECTURE.query()}&view=downloads")
    got = {"flood": [0, 0], "visitor": [0, 0]}

    async def flood(s: Session) -> None:
        while time.monotonic() < until:
            got["flood"][await download(s, "dl_x_csv")] += 1

    async def visit() -> None:
        while time.monotonic() < until:
            got["visitor"][await download(visitor, "dl_x_csv")] += 1
            await asyncio.sleep(5.0)

    try:
        await asyncio.gather(*(flood(s) for s in flooders), visit())
    finally:
        await close_all([*flooders, visitor])
    (fr, fo), (vr, vo) = got["flood"], got["visitor"]
    phase.notes.append(
        f"{DOWNLOADERS} sessions asked for 1024² CSVs back to back: {fo} built, {fr} refused; a legitimate "
        f"visitor's download every 5 s: {vo} of {vo + vr} built"
    )


async def attack_flood(base: str, until: float, phase: Phase) -> None:
    sessions = [await on_page(base, "", f"{BIG}&seed={100 * k}") for k in range(FLOODERS)]
    done = 0

    async def flood(s: Session, k: int) -> None:
        nonlocal done
        seed = 100 * k
        while time.monotonic() < until:
            seed += 1
            s.query = f"{BIG}&seed={seed}"
            await s.rerun([s.widget("seed", int_value=seed)], ANSWER_TIMEOUT)
            done += 1

    try:
        await asyncio.gather(*(flood(s, k) for k, s in enumerate(sessions)))
    finally:
        await close_all(sessions)
    phase.notes.append(f"{FLOODERS} sessions sent {done} new 1024² seeds back to back")


# ---- the run ----


async def settle(base: str, baseline_ms: float, limit: float) -> float:
    """Wait until a probe session's γ move takes at most twice the baseline's p50 (three in a row); the seconds."""
    start = time.monotonic()
    probe = Session(base, query=LECTURE.query())
    try:
        await asyncio.wait_for(probe.open(), OPEN_TIMEOUT)
        good, gain = 0, 1.0
        while good < 3 and time.monotonic() - start < limit:
            gain = 1.05 if gain == 1.0 else 1.0
            ms = await probe.rerun([probe.widget("gain", double_array_value=[gain])], ANSWER_TIMEOUT)
            good = good + 1 if ms <= max(2 * baseline_ms, 50.0) else 0
            await asyncio.sleep(0.5)
    except Exception:  # a server that cannot answer a probe has not settled: the time says so
        pass
    finally:
        await close_all([probe])
    return time.monotonic() - start


def hog_seconds(seconds: float) -> float:
    """Run hogging lasts longer than the other attacks: long enough for two tries of the legitimate visitor."""
    return max(3 * seconds, 2 * ADMIT_WITHIN_S + 10)


def sum_phases(seconds: float) -> float:
    """How long the seven attacks take, settling aside."""
    return 6 * seconds + hog_seconds(seconds)


@dataclass
class AttackReport:
    sessions: int
    seconds: float
    phases: list[Phase]
    class_: list[Student]
    memory: Memory
    t0: float
    legit: Legit
    setup_errors: list[str] = field(default_factory=list)

    def moves(self, phase: Phase) -> list[float]:
        return sorted(
            ms
            for s in self.class_
            for ms, at in zip(s.moves, s.moves_at, strict=True)
            if phase.start <= at <= phase.end
        )

    def peak(self, phase: Phase) -> float:
        lo, hi = phase.start - self.t0, phase.end - self.t0
        return max((m for t, m in self.memory.samples if lo <= t <= hi), default=float("nan"))


async def run_attack(sessions: int, seconds: float, every: float, log: Path) -> AttackReport:
    app = start_app(free_port(), log)
    t0 = time.monotonic()
    memory = Memory()
    group = students(sessions, 5)
    legit = Legit()
    phases: list[Phase] = []
    report = AttackReport(sessions, seconds, phases, group, memory, t0, legit)
    attacks: list[tuple[str, Callable[[str, float, Phase], Awaitable[None]], float]] = [
        ("clear_cache", attack_clear_cache, seconds),
        ("stage list", attack_stage_list, seconds),
        ("1024² seeds", attack_seeds, seconds),
        ("uploads", attack_uploads, seconds),
        ("Run hogging", lambda b, u, p: attack_hogging(b, u, p, legit), hog_seconds(seconds)),
        ("downloads", attack_downloads, seconds),
        ("rerun flood", attack_flood, seconds),
    ]
    total = seconds + sum_phases(seconds) + len(attacks) * (SETTLE_S + 2 * ANSWER_TIMEOUT) + OPEN_TIMEOUT
    async with sampling(app, memory, t0, report.setup_errors):
        await asyncio.to_thread(wait_app, app)
        await warm_up(app.url)
        base, arrive = app.url, 10.0
        start = time.monotonic() + 1.0
        until = start + arrive + total  # at the latest: the class leaves when the last attack is over
        rng = random.Random(20)
        class_run = [
            asyncio.create_task(
                attend(base, s, start + arrive * i / max(1, sessions - 1), until, every, random.Random(rng.random()))
            )
            for i, s in enumerate(group)
        ]
        # Everyone in, and each has moved once, before the baseline starts.
        while time.monotonic() < start + arrive + OPEN_TIMEOUT and any(
            not s.moves and not s.errors and not task.done() for s, task in zip(group, class_run, strict=True)
        ):
            await asyncio.sleep(0.5)
        baseline = Phase("no attacker", start=time.monotonic())
        await asyncio.sleep(seconds)
        baseline.end = time.monotonic()
        phases.append(baseline)
        base_p50 = percentile(report.moves(baseline), 50)
        for name, attack, length in attacks:
            phase = Phase(name, start=time.monotonic())
            try:
                await asyncio.wait_for(attack(base, phase.start + length, phase), length + 2 * ANSWER_TIMEOUT)
            except Exception as e:  # an attack that fails is reported, and the run goes on to the next
                phase.errors.append(f"{type(e).__name__}: {e}"[:300])
            phase.end = time.monotonic()
            phases.append(phase)
            phase.settle_s = await settle(base, base_p50, SETTLE_S)
            moves = report.moves(phase)
            print(
                f"{phase.name}: class p50 {percentile(moves, 50):.0f} ms, p95 {percentile(moves, 95):.0f} ms, "
                f"peak {report.peak(phase):.0f} MiB; {'; '.join(phase.notes + phase.errors)}",
                file=sys.stderr,
                flush=True,
            )
        for task in class_run:  # the class leaves with the last attack
            task.cancel()
        await asyncio.gather(*class_run, return_exceptions=True)
    return report
