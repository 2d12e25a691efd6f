"""``make load``: many viewers at once on one server, each checking that it sees its own numbers.

    python -m benchmarks.load                              # 20 WebSocket sessions, 60 s of driving
    python -m benchmarks.load --client browser             # 20 Chromium tabs instead (a quiet machine)
    python -m benchmarks.load --sessions 5 --seconds 20
    python -m benchmarks.load --mode class                 # a class of 200 on one link (benchmarks/crowd.py)
    python -m benchmarks.load --mode class --replicas 2    # ... through the balancer of docs/deploy.md
    python -m benchmarks.load --mode throughput            # one process's reruns/s, gain moves back to back
    python -m benchmarks.load --mode attack                # a class of 30 while one client attacks (benchmarks/attack.py)
    python -m benchmarks.load --mode poll                  # 400 phones on the class stream, 2 replicas, nginx, Redis (class_stream.py)

One ``streamlit run app.py``. Each session opens the explorer with its own
seed, preset, B and H (all ≤ 64, so its grid is drawn whole), then for
``--seconds`` keeps acting and waiting for the answer: three ``gain`` steps
up, three down, and every fifth action a new seed.

Two kinds of session:

- ``socket`` (the default): a client that speaks Streamlit's protocol over
  its WebSocket as the frontend does: a ``BackMsg`` asking for a rerun with the
  changed widget's state, then every ``ForwardMsg`` until ``script_finished``.
  It draws nothing, so twenty of them load the server, not the machine's two
  cores with twenty browsers. Latency: rerun request out to
  ``script_finished`` in.
- ``browser``: a tab of one headless Chromium, pressing the real slider and
  typing in the real seed box (:mod:`harness.settle` defines the
  settle). Latency: key press to settled page. Twenty tabs need more CPU than
  a shared 2-core machine has; use it where the machine is quiet.

After every answer the session reads its numbers (a socket session: the
stage's data the server sent; a tab, which opens the charts view: the page's
drawn plotly data) and checks them against torch in float64, recomputed
from the session's own settings (:mod:`benchmarks.oracle`), on the same window of the grid: x must be
``lnviz.maths.data.make_activations(dist, B, H, seed)``, and the outputs
``F.batch_norm``/``F.layer_norm`` of it times γ. A number from another
session, or a stale one, fails the check; and each session checks once that
the same numbers fail against the next seed, so the check can fail. Errors: a
failed check, an exception element, a page or console error, an answer that
never comes. The server's resident memory (VmRSS) is sampled every second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

from benchmarks import attack_report, class_stream, crowd_report, page
from benchmarks.memory import Memory, sampling
from benchmarks.oracle import SEED_EVERY, Plan, Shown, check, plan
from benchmarks.run import verdict
from benchmarks.stats import percentile
from benchmarks.tabs import GAIN, MAIN_APP, SEED
from harness.chromium import CHARTS_JS, LAPTOP, app_console_error, decode_array, launch
from harness.server import free_port, start_app, wait_app
from harness.settle import (
    COUNTED_JS,
    DIAGNOSE_JS,
    INPUT_GRACE_MS,
    INSTRUMENT_JS,
    QUIET_MS,
    SETTLED_JS,
    Settle,
    settle_from,
)
from harness.wire import Wire
from harness.wsclient import Session

SESSIONS = 20
SECONDS = 60.0
CLIENTS = ("socket", "browser")
MODES = ("load", "class", "throughput", "attack", "poll")
# Tabs of one context share its HTTP and compiled-code caches: twenty contexts that each compile
# Streamlit's and plotly's scripts from scratch do not open on two cores. Each tab is still its own session.
CONTEXTS = 2
STAGGER = {"socket": 0.2, "browser": 2.0}  # seconds between two sessions' first runs
OPEN_TIMEOUT = 240.0  # twenty first runs at once on two cores
ACTION_TIMEOUT = 120.0
MEMORY_GROWTH = 0.10  # bounded: the drive's second half adds under 10 % to the RSS
LATENCY = {
    "socket": "rerun request out to `script_finished` in, at the client (the server's queueing and the script)",
    "browser": "key press to settled page (what a viewer waits); *until script_finished*: the rerun request out "
    "to `script_finished` in, at Chromium's network layer",
}


@dataclass(frozen=True)
class Action:
    kind: str  # "open", "gain" or "seed"
    latency_ms: float  # see LATENCY
    server_ms: float | None = None  # browser only: rerun request out to script_finished in (network layer)


@dataclass
class Outcome:
    """What one session saw."""

    plan: Plan
    actions: list[Action] = field(default_factory=list)
    checks: int = 0
    mismatches: int = 0  # checks whose numbers were not this session's
    control_rejected: bool = False  # whether the check refused the next seed's numbers on the opened session
    errors: list[str] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors.append(f"session {self.plan.index}: {what}"[:1500])


class SocketSession:
    """A Streamlit session spoken to over its WebSocket (:class:`harness.wsclient.Session`), drawing nothing."""

    def __init__(self, base: str, out: Outcome) -> None:
        self.out = out
        self.session = Session(base, query=out.plan.query())

    async def open(self) -> Action:
        return Action("open", await self.session.open())

    async def act(self, n: int) -> Action:
        """Change one widget, as the frontend would after a slider step or a typed seed."""
        kind = self.out.plan.next_action(n)
        self.session.query = self.out.plan.query()  # the frontend sends the link as it is now
        # Only the changed widget: Streamlit keeps the others' values from the session's previous run.
        if kind == "gain":
            widget = self.session.widget("gain", double_array_value=[self.out.plan.gain])
        else:
            widget = self.session.widget("seed", int_value=self.out.plan.seed)
        return Action(kind, await self.session.rerun([widget], ACTION_TIMEOUT))

    async def shown(self) -> Shown:
        """The numbers on the stage, torch's, from the last run's data for it."""
        stages = self.session.tree.get("bidi_component")
        return Shown.from_stage(json.loads(stages[0].proto.json)) if stages else Shown({})

    async def exceptions(self) -> int:
        return len(self.session.tree.get("exception"))

    async def close(self) -> None:
        await self.session.close()


class TabSession:
    """A tab of headless Chromium showing the explorer; actions are real key presses."""

    def __init__(self, context: BrowserContext, base: str, out: Outcome) -> None:
        self.context, self.base, self.out = context, base, out
        self.page: Page | None = None
        self.wire = Wire()
        self.last: Settle | None = None

    async def open(self) -> Action:
        self.page = await self.context.new_page()
        self._watch()
        cdp = await self.context.new_cdp_session(self.page)
        self.wire.attach(cdp)
        await cdp.send("Network.enable")
        await self.page.goto(
            f"{self.base}/?{self.out.plan.query()}&view=charts", wait_until="commit", timeout=OPEN_TIMEOUT * 1e3
        )
        return await self._settled("open", need_key=False, since=0, timeout=OPEN_TIMEOUT)

    def _watch(self) -> None:
        def on_console(message: ConsoleMessage) -> None:
            if (error := app_console_error(message)) is not None:
                self.out.error(error)

        self.page.on("console", on_console)
        self.page.on("pageerror", lambda e: self.out.error(f"pageerror: {e}"))

    async def _settled(self, kind: str, need_key: bool, since: int, timeout: float = ACTION_TIMEOUT) -> Action:
        try:
            handle = await self.page.wait_for_function(
                SETTLED_JS, arg=[QUIET_MS, need_key, INPUT_GRACE_MS], polling=100, timeout=timeout * 1000
            )
        except PlaywrightTimeout:
            raise TimeoutError(f"not settled after {timeout:.0f} s: {await self.page.evaluate(DIAGNOSE_JS)}") from None
        self.last = replace(settle_from(await handle.json_value()), server_ms=self.wire.server_ms(since))
        return Action(kind, self.last.latency_ms, self.last.server_ms)

    async def act(self, n: int) -> Action:
        kind = self.out.plan.next_action(n)
        if kind == "seed":
            key = "Enter"
            await self.page.locator(SEED).fill(str(self.out.plan.seed))
        else:
            key = "ArrowRight" if (n // 3) % 2 == 0 else "ArrowLeft"
            await self.page.locator(GAIN).focus()
        since = self.wire.mark()
        await self.page.evaluate("window.__bench.arm()")
        await self.page.keyboard.press(key)
        return await self._settled(kind, need_key=True, since=since)

    async def shown(self) -> Shown:
        """The numbers in the charts view's heatmaps (a tab opens that view: the stage draws on a canvas)."""
        maps = {}
        for chart in await self.page.evaluate(CHARTS_JS):
            for trace in chart["traces"]:
                if trace["type"] == "heatmap":
                    maps[trace["name"]] = np.asarray(decode_array(trace["z"]), dtype=np.float64)
        shown = float(await self.page.locator(GAIN).input_value())
        if abs(shown - self.out.plan.gain) > 1e-9:
            self.out.error(f"the gain slider shows {shown}, this session set {self.out.plan.gain:.2f}")
        return Shown(maps)

    async def exceptions(self) -> int:
        return self.last.exceptions if self.last else 0

    async def close(self) -> None:
        await asyncio.sleep(0.5)  # the last frames' events reach Python
        counted, seen = await self.page.evaluate(COUNTED_JS), self.wire.received()
        if counted != seen:
            self.out.error(f"the page counted {counted}, the network saw {seen}")
        await self.page.close()


async def verify(session: SocketSession | TabSession) -> None:
    """The session's numbers against its own settings; a mismatch or an exception element is an error."""
    out = session.out
    out.checks += 1
    problems = check(await session.shown(), out.plan)
    out.mismatches += bool(problems)
    if bad := await session.exceptions():
        problems.append(f"{bad} exception element(s)")
    for problem in problems:
        out.error(problem)


async def open_session(session: SocketSession | TabSession, delay: float) -> None:
    await asyncio.sleep(delay)
    out = session.out
    out.actions.append(await session.open())
    await verify(session)
    # The check must be able to fail: the same numbers against the next seed.
    p = out.plan
    out.control_rejected = bool(check(await session.shown(), Plan(p.index, p.dist, p.batch, p.features, p.seed + 1)))


async def drive(session: SocketSession | TabSession, until: float) -> None:
    n = 0
    while time.monotonic() < until:
        try:
            session.out.actions.append(await session.act(n))
            await verify(session)
        except Exception as e:  # an answer that never comes is an error of this session; the others go on
            session.out.error(f"action {n} failed: {type(e).__name__}: {e}")
            return
        n += 1


@dataclass
class LoadReport:
    client: str
    sessions: int
    seconds: float
    outcomes: list[Outcome]
    memory: Memory
    setup_errors: list[str]
    chromium: str | None = None

    def latencies(self, kind: str | None = None, server: bool = False) -> list[float]:
        values = (
            a.server_ms if server else a.latency_ms
            for o in self.outcomes
            for a in o.actions
            if a.kind != "open" and (kind is None or a.kind == kind)
        )
        return sorted(v for v in values if v is not None)

    @property
    def errors(self) -> list[str]:
        return [*self.setup_errors, *(e for o in self.outcomes for e in o.errors)]

    @property
    def mismatches(self) -> int:
        return sum(o.mismatches for o in self.outcomes)


async def new_context(browser: Browser) -> BrowserContext:
    """A context of ``browser`` (which refuses requests leaving the machine) that instruments its pages."""
    context = await browser.new_context(viewport=LAPTOP)
    await context.add_init_script(INSTRUMENT_JS)
    return context


async def run_sessions(sessions: list, stagger: float, seconds: float, memory: Memory, t0: float) -> None:
    """Open every session (staggered), drive them all for ``seconds``, close them."""
    opened = await asyncio.gather(
        *(open_session(s, stagger * i) for i, s in enumerate(sessions)), return_exceptions=True
    )
    live = []
    for session, result in zip(sessions, opened, strict=True):
        if isinstance(result, BaseException):
            session.out.error(f"did not open: {type(result).__name__}: {result}")
        else:
            live.append(session)
    memory.marks["sessions open"] = time.monotonic() - t0
    memory.marks["mid-drive"] = memory.marks["sessions open"] + seconds / 2
    until = time.monotonic() + seconds
    await asyncio.gather(*(drive(s, until) for s in live))
    memory.marks["drive over"] = time.monotonic() - t0
    for session in live:
        try:
            await session.close()
        except Exception as e:  # a session that cannot close cleanly is worth knowing about
            session.out.error(f"did not close: {type(e).__name__}: {e}")


async def run_load(client: str, sessions: int, seconds: float, contexts: int, stagger: float, log: Path) -> LoadReport:
    app = start_app(free_port(), log, MAIN_APP)
    t0 = time.monotonic()
    memory = Memory()
    outcomes = [Outcome(plan(i)) for i in range(sessions)]
    report = LoadReport(client, sessions, seconds, outcomes, memory, [])
    async with sampling(app, memory, t0, report.setup_errors):
        await asyncio.to_thread(wait_app, app)
        memory.marks["server up"] = time.monotonic() - t0
        if client == "socket":
            await run_sessions([SocketSession(app.url, o) for o in outcomes], stagger, seconds, memory, t0)
        else:
            async with async_playwright() as p:
                browser = await launch(p)
                try:
                    shared = [await new_context(browser) for _ in range(max(1, contexts))]
                    tabs = [TabSession(shared[o.plan.index % len(shared)], app.url, o) for o in outcomes]
                    await run_sessions(tabs, stagger, seconds, memory, t0)
                    report.chromium = browser.version
                finally:
                    await browser.close()
        await asyncio.sleep(5)
        memory.marks["closed + 5 s"] = time.monotonic() - t0
    return report


def section(r: LoadReport, when: str, machine: str) -> str:
    """The page's many-users section: the run in one paragraph, then latency by action."""
    actions = [a for o in r.outcomes for a in o.actions if a.kind != "open"]
    checks = sum(o.checks for o in r.outcomes)
    controls = sum(o.control_rejected for o in r.outcomes)
    drive_rss = r.memory.between("sessions open", "drive over") or [float("nan")]
    browser = r.client == "browser"
    who = (
        f"a tab of one headless Chromium {r.chromium} ({LAPTOP['width']} × {LAPTOP['height']}) pressing the real "
        "controls"
        if browser
        else "a client speaking Streamlit's protocol over its own WebSocket"
    )
    about = page.wrap(
        f"{machine}. {r.sessions} sessions against one `streamlit run app.py`, each {who}, drive the explorer for "
        f"{r.seconds:.0f} s (gain steps, every {SEED_EVERY}th action a new seed), each answer checked against torch "
        f"(float64). {len(r.errors)} errors in {len(actions):,} actions, {r.mismatches} mismatches in {checks:,} "
        f"checks (and the check rejects the next seed's numbers on {controls} of {len(r.outcomes)} sessions); "
        f"server RSS {r.memory.at('sessions open'):.0f} MiB with the sessions open, peak {max(drive_rss):.0f} MiB. "
        f"{LATENCY[r.client][0].upper()}{LATENCY[r.client][1:]}:"
    )
    head = "| action | n | p50 ms | p95 ms | max ms |" + (
        " until script_finished p50 ms | … p95 ms |" if browser else ""
    )
    rows = [head, "|---|---:|---:|---:|---:|" + ("---:|---:|" if browser else "")]
    for kind, label in ((None, "every action"), ("gain", "gain step"), ("seed", "new seed")):
        lat = r.latencies(kind)
        row = f"| {label} | {len(lat)} | {percentile(lat, 50):.0f} | {percentile(lat, 95):.0f} | {max(lat, default=float('nan')):.0f} |"
        if browser:
            srv = r.latencies(kind, server=True)
            row += f" {percentile(srv, 50):.0f} | {percentile(srv, 95):.0f} |"
        rows.append(row)
    return "\n".join([f"## Many users (`make load`, {when})", "", about, "", *rows]) + "\n"


def markdown(r: LoadReport, when: str, machine: str) -> str:
    """The whole report: the page's section, then the verdicts, memory over time and what went wrong."""
    checks = sum(o.checks for o in r.outcomes)
    controls = sum(o.control_rejected for o in r.outcomes)
    per_session = [sum(a.kind != "open" for a in o.actions) for o in r.outcomes]
    mem = r.memory
    mid, end = mem.at("mid-drive"), mem.at("drive over")
    timeline = " · ".join(f"{t:.0f} s: {m:.0f}" for t, m in mem.samples[:: max(1, len(mem.samples) // 12)])
    lines = [
        section(r, when, machine),
        "| check | result | |",
        "|---|---|---|",
        f"| zero errors | {len(r.errors)} error(s) | {verdict(not r.errors)} |",
        f"| no leakage: each session shows its own numbers | {r.mismatches} mismatch(es) in {checks} checks "
        f"| {verdict(r.mismatches == 0 and checks > 0)} |",
        f"| … and the check can fail: each opened session's numbers against the next seed | rejected on "
        f"{controls} of {len(r.outcomes)} sessions | {verdict(controls == len(r.outcomes))} |",
        f"| server memory bounded (the drive's second half adds < {MEMORY_GROWTH:.0%}) "
        f"| RSS {mem.at('server up'):.0f} MiB idle, {mid:.0f} MiB mid-drive, {end:.0f} MiB at the end, "
        f"{mem.at('closed + 5 s'):.0f} MiB 5 s after the sessions closed | {verdict(end <= mid * (1 + MEMORY_GROWTH))} |",
        "",
        f"Actions per session: {min(per_session)} to {max(per_session)} (median {statistics.median(per_session):.0f}).",
        f"Server RSS over time (MiB): {timeline}.",
    ]
    if r.errors:
        lines += ["", "Errors (first 10):", "", *(f"- {e}" for e in r.errors[:10])]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=MODES, default="load", help="load: below; class, throughput: crowd.py")
    parser.add_argument("--client", choices=CLIENTS, default="socket", help="WebSocket clients or Chromium tabs")
    parser.add_argument(
        "--sessions", type=int, default=None, help=f"default {SESSIONS}; class: 200; throughput: 10; attack: 30"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=None,
        help=f"how long every session drives (default {SECONDS}); attack: a phase (15)",
    )
    parser.add_argument(
        "--replicas", type=int, default=None, help="class, poll: app processes, behind nginx when over 1 (1; poll: 2)"
    )
    parser.add_argument("--arrive", type=float, default=60.0, help="class, poll: they arrive over this many s")
    parser.add_argument("--phones", type=int, default=400, help="poll: phones following the room's stream")
    parser.add_argument("--window", type=float, default=20.0, help="poll: seconds of each CPU window")
    parser.add_argument("--faults", type=int, default=100, help="poll: phones voting through faults (0: none)")
    parser.add_argument("--question", default=None, help="poll: the room's first question, e.g. bn-mu-cells")
    parser.add_argument("--every", type=float, default=3.0, help="class: seconds between a session's slider moves")
    parser.add_argument("--own-every", type=int, default=5, help="class: every n-th session opens its own link")
    parser.add_argument("--idle", type=int, default=0, help="throughput: more sessions open and idle beside them")
    parser.add_argument("--contexts", type=int, default=CONTEXTS, help="browser: contexts the tabs are spread over")
    parser.add_argument("--stagger", type=float, default=None, help="seconds between two sessions' first runs")
    parser.add_argument(
        "--before", type=Path, default=None, help="attack: a checkout of main, for issue 47's before and after"
    )
    parser.add_argument("--out", type=Path, default=page.DOC, help="the markdown file to update")
    parser.add_argument("--log", type=Path, default=Path("/tmp/lnviz-load/app.log"), help="the server's log")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # the checks are small; the cores belong to the server
    if args.replicas is None:
        args.replicas = 2 if args.mode == "poll" else 1
    if args.mode == "poll":
        argv = ["--phones", str(args.phones), "--window", str(args.window), "--faults", str(args.faults)]
        argv += ["--question", args.question] if args.question else []
        return class_stream.main(argv)
    if args.mode == "attack":
        return attack_report.main(args)
    args.seconds = SECONDS if args.seconds is None else args.seconds
    if args.mode != "load":
        return crowd_report.main(args)
    args.sessions = SESSIONS if args.sessions is None else args.sessions
    stagger = STAGGER[args.client] if args.stagger is None else args.stagger
    load_start = page.load_average()
    limit = args.seconds + OPEN_TIMEOUT + 2 * ACTION_TIMEOUT + 60 + stagger * args.sessions
    run = run_load(args.client, args.sessions, args.seconds, args.contexts, stagger, args.log)
    report = asyncio.run(asyncio.wait_for(run, limit))
    when, machine = page.now(), page.machine_line(page.machine(), load_start, page.load_average())
    page.publish("load", section(report, when, machine), args.out, markdown(report, when, machine))
    return 0 if not report.errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
