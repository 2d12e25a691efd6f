"""``make load``: many viewers at once on one server, each checking that it sees its own numbers.

    python -m benchmarks.load                       # 20 sessions, 60 s of driving
    python -m benchmarks.load --sessions 5 --seconds 20

One ``streamlit run app.py``; one headless Chromium, a tab per viewer (each
tab has its own WebSocket, so its own Streamlit session), the tabs spread over
a few browser contexts. Each session opens the explorer with its own
seed, preset, B and H (all ≤ 64, so its grid is drawn whole), waits until it
has settled, then for ``--seconds`` keeps acting and waiting for the settle
(:mod:`benchmarks.browser_latency` defines both): it presses the ``gain``
slider (three steps up, three down), and every fifth action types a new seed.

After every settle it reads the charts from the page and checks them against
torch, in float64, recomputed here from the session's own settings: the grid
heatmap must be ``lnviz.data.make_activations(dist, B, H, seed)``, and the
outputs ``F.batch_norm``/``F.layer_norm`` of it times γ (the slider's value,
which must be the one this session set). A number from another session, or a
stale one, fails the check. Errors: a failed check, an exception box, a page
error or console error, a settle that never comes. The server's resident
memory (VmRSS of its process) is sampled every second. Latency is key press to
settled page, over every action of every session.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import torch
import torch.nn.functional as F
from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

from benchmarks.browser_latency import (
    COUNTED_JS,
    DIAGNOSE_JS,
    GAIN,
    INSTRUMENT_JS,
    MAIN_APP,
    QUIET_MS,
    SEED,
    SETTLED_JS,
    VIEWPORT,
    Settle,
    Wire,
    _settle,
    serve,
)
from benchmarks.run import DOC, load_average, machine, machine_table, verdict, write_section
from lnviz import data, state
from tests.browser import (
    _BASE_URL_PROBES,
    _CHARTS_JS,
    CHROMIUM,
    CHROMIUM_ARGS,
    decode_array,
    free_port,
    is_local,
    stop,
    wait_app,
)

SESSIONS = 20
SECONDS = 60.0
# Tabs of one context share its HTTP and compiled-code caches: twenty contexts that each compile
# Streamlit's and plotly's scripts from scratch do not open on two cores. Each tab is still its own session.
CONTEXTS = 2
STAGGER = 2.0  # seconds between first loads, so that they do not all compile at once
OPEN_TIMEOUT = 240.0  # twenty first runs at once on two cores
ACTION_TIMEOUT = 120.0
SEED_EVERY = 5
BATCHES = (8, 16, 24, 32, 48, 64)
FEATURES = (8, 12, 16, 32, 48, 64)
GAIN_STEP = 0.05
EPS = state.EPS.default
# The charts carry float32: a relative error of a few units of its roundoff (6e-8).
RTOL = 1e-6
MEMORY_GROWTH = 0.10  # bounded: the drive's second half adds under 10 % to the RSS


@dataclass
class Plan:
    """One session's settings: everything its numbers must follow from."""

    index: int
    dist: str
    batch: int
    features: int
    seed: int
    steps: int = 0  # gain = 1 + steps × 0.05

    @property
    def gain(self) -> float:
        return 1.0 + self.steps * GAIN_STEP

    def url(self, base: str) -> str:
        query = {"dist": self.dist, "batch": self.batch, "features": self.features, "seed": self.seed}
        return f"{base}/?{urlencode(query)}"


def plan(index: int) -> Plan:
    presets = list(data.PRESETS)
    return Plan(
        index=index,
        dist=presets[index % len(presets)],
        batch=BATCHES[index % len(BATCHES)],
        features=FEATURES[(index + index // len(BATCHES)) % len(FEATURES)],
        seed=1000 + 37 * index,
    )


@dataclass
class Outcome:
    """What one session saw."""

    plan: Plan
    actions: list[tuple[str, Settle]] = field(default_factory=list)  # ("gain" | "seed", settle)
    checks: int = 0
    mismatches: int = 0  # checks whose numbers were not this session's
    control_rejected: bool = False  # whether the check, on the opened page, refused another seed
    errors: list[str] = field(default_factory=list)
    wire: Wire = field(default_factory=Wire)  # the tab's WebSocket frames, for the server's share of each action


def expected(p: Plan) -> dict[str, np.ndarray]:
    """The session's grid and outputs, from its own settings, by torch in float64."""
    x = data.make_activations(p.dist, p.batch, p.features, p.seed)  # (B, H) float64
    ln = F.layer_norm(x, (p.features,), eps=EPS) * p.gain
    bn = F.batch_norm(x, None, None, training=True, eps=EPS) * p.gain
    return {"x": x.numpy(), "LN y": ln.numpy(), "BN y": bn.numpy()}


def _close(got, want: np.ndarray) -> bool:
    got = np.asarray(got, dtype=np.float64)
    scale = max(float(np.abs(want).max()), 1.0)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=RTOL, atol=RTOL * scale))


async def check(page: Page, p: Plan) -> list[str]:
    """The page's charts and gain slider against :func:`expected`: what differs, in words."""
    charts = {c["key"]: c["traces"] for c in await page.evaluate(_CHARTS_JS)}
    want = expected(p)
    problems = []
    grid = [t for t in charts.get("grid_chart", []) if t["type"] == "heatmap"]
    if not grid or not _close(decode_array(grid[0]["z"]), want["x"]):
        problems.append("grid heatmap is not this session's x")
    outputs = {t["name"]: t for t in charts.get("outputs_chart", []) if t["type"] == "heatmap"}
    for name in ("BN y", "LN y"):
        if name not in outputs or not _close(decode_array(outputs[name]["z"]), want[name]):
            problems.append(f"{name} does not match this session's x and γ = {p.gain:.2f}")
    shown = float(await page.locator(GAIN).input_value())
    if abs(shown - p.gain) > 1e-9:
        problems.append(f"gain slider shows {shown}, this session set {p.gain:.2f}")
    return problems


async def settled(page: Page, need_key: bool, timeout: float) -> Settle:
    try:
        handle = await page.wait_for_function(SETTLED_JS, arg=[QUIET_MS, need_key], polling=100, timeout=timeout * 1000)
    except PlaywrightTimeout:
        raise TimeoutError(f"not settled after {timeout:.0f} s: {await page.evaluate(DIAGNOSE_JS)}") from None
    return _settle(await handle.json_value())


async def act(page: Page, out: Outcome, n: int) -> tuple[str, Settle]:
    """The session's ``n``-th action: a gain step (three up, three down), or every fifth a new seed."""
    p = out.plan
    if n % SEED_EVERY == SEED_EVERY - 1:
        kind, key = "seed", "Enter"
        p.seed += 1
        await page.locator(SEED).fill(str(p.seed))
    else:
        kind, up = "gain", (n // 3) % 2 == 0
        key = "ArrowRight" if up else "ArrowLeft"
        p.steps += 1 if up else -1
        await page.locator(GAIN).focus()
    since = out.wire.mark()
    await page.evaluate("window.__bench.arm()")
    await page.keyboard.press(key)
    s = await settled(page, True, ACTION_TIMEOUT)
    return kind, replace(s, server_ms=out.wire.server_ms(since))


def _watch(page: Page, out: Outcome) -> None:
    def on_console(message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        where = message.location.get("url", "")
        if message.text.startswith("Failed to load resource") and where:
            if not is_local(where) or ("404" in message.text and where.endswith(_BASE_URL_PROBES)):
                return
        out.errors.append(f"console.error: {message.text} ({where})")

    page.on("console", on_console)
    page.on("pageerror", lambda e: out.errors.append(f"pageerror: {e}"))


async def new_context(browser: Browser) -> BrowserContext:
    """A context that refuses requests leaving the machine and instruments its pages."""
    context = await browser.new_context(viewport=VIEWPORT)
    await context.route(lambda url: not is_local(url), lambda route: route.abort())
    await context.add_init_script(INSTRUMENT_JS)
    return context


async def open_session(context: BrowserContext, base: str, out: Outcome, delay: float) -> Page:
    """A tab (its own WebSocket, so its own Streamlit session) at the session's link, settled and checked."""
    await asyncio.sleep(delay)
    page = await context.new_page()
    _watch(page, out)
    cdp = await context.new_cdp_session(page)
    out.wire.attach(cdp)
    await cdp.send("Network.enable")
    await page.goto(out.plan.url(base), wait_until="commit", timeout=OPEN_TIMEOUT * 1000)
    first = await settled(page, False, OPEN_TIMEOUT)
    out.actions.append(("open", first))
    try:
        await verify(page, out, first)
    except PlaywrightTimeout:
        raise TimeoutError(f"settled, but: {await page.evaluate(DIAGNOSE_JS)}") from None
    # The check must be able to fail: the same page against a neighbouring seed.
    other = Plan(out.plan.index, out.plan.dist, out.plan.batch, out.plan.features, out.plan.seed + 1)
    out.control_rejected = bool(await check(page, other))
    return page


async def verify(page: Page, out: Outcome, s: Settle) -> None:
    out.checks += 1
    problems = await check(page, out.plan)
    out.mismatches += bool(problems)
    if s.exceptions:
        problems.append(f"{s.exceptions} exception box(es) on the page")
    out.errors.extend(f"session {out.plan.index}: {p}" for p in problems)


async def drive(page: Page, out: Outcome, until: float) -> None:
    n = 0
    while time.monotonic() < until:
        try:
            kind, s = await act(page, out, n)
        except Exception as e:  # a settle that never comes is an error of this session; the others go on
            out.errors.append(f"session {out.plan.index}: action {n} failed: {type(e).__name__}: {e}"[:1500])
            return
        out.actions.append((kind, s))
        await verify(page, out, s)
        n += 1
    await asyncio.sleep(0.5)  # the last frames' events reach Python
    counted, seen = await page.evaluate(COUNTED_JS), out.wire.received()
    if counted != seen:
        out.errors.append(f"session {out.plan.index}: the page counted {counted}, the network saw {seen}")


def rss_mib(pid: int) -> float | None:
    """The resident memory of process ``pid`` in MiB, from /proc (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


@dataclass
class Memory:
    samples: list[tuple[float, float]] = field(default_factory=list)  # (seconds since start, MiB)
    marks: dict[str, float] = field(default_factory=dict)  # phase name -> seconds since start

    def at(self, mark: str) -> float:
        t = self.marks[mark]
        return min(self.samples, key=lambda s: abs(s[0] - t))[1]

    def between(self, start: str, end: str) -> list[float]:
        lo, hi = self.marks[start], self.marks[end]
        return [m for t, m in self.samples if lo <= t <= hi]


async def sample_memory(pid: int, memory: Memory, t0: float, stop_event: asyncio.Event) -> None:
    while not stop_event.is_set():
        mib = rss_mib(pid)
        if mib is not None:
            memory.samples.append((time.monotonic() - t0, mib))
        try:
            await asyncio.wait_for(stop_event.wait(), 1.0)
        except TimeoutError:
            pass


@dataclass
class LoadReport:
    sessions: int
    seconds: float
    outcomes: list[Outcome]
    memory: Memory
    chromium: str
    setup_errors: list[str]
    contexts: int

    def latencies(self, kind: str | None = None, server: bool = False) -> list[float]:
        """Key press to settled page, or with ``server`` rerun request sent to script_finished received."""
        return sorted(
            s.server_ms if server else s.latency_ms
            for o in self.outcomes
            for k, s in o.actions
            if k != "open" and (kind is None or k == kind) and not (server and s.server_ms is None)
        )

    @property
    def errors(self) -> list[str]:
        return [*self.setup_errors, *(e for o in self.outcomes for e in o.errors)]

    @property
    def mismatches(self) -> int:
        return sum(o.mismatches for o in self.outcomes)


async def run_load(sessions: int, seconds: float, contexts: int, stagger: float, log: Path) -> LoadReport:
    app = serve(MAIN_APP, free_port(), log)
    t0 = time.monotonic()
    memory, stop_sampling = Memory(), asyncio.Event()
    outcomes = [Outcome(plan(i)) for i in range(sessions)]
    setup_errors: list[str] = []
    chromium = "?"
    sampler = asyncio.create_task(sample_memory(app.proc.pid, memory, t0, stop_sampling))
    try:
        await asyncio.to_thread(wait_app, app)
        memory.marks["server up"] = time.monotonic() - t0
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                shared = [await new_context(browser) for _ in range(max(1, contexts))]
                opened = await asyncio.gather(
                    *(
                        open_session(shared[o.plan.index % len(shared)], app.url, o, stagger * o.plan.index)
                        for o in outcomes
                    ),
                    return_exceptions=True,
                )
                pages = []
                for o, page in zip(outcomes, opened, strict=True):
                    if isinstance(page, BaseException):
                        o.errors.append(f"session {o.plan.index}: did not open: {type(page).__name__}: {page}"[:1500])
                    else:
                        pages.append((page, o))
                memory.marks["sessions open"] = time.monotonic() - t0
                until = time.monotonic() + seconds
                memory.marks["mid-drive"] = memory.marks["sessions open"] + seconds / 2
                await asyncio.gather(*(drive(page, o, until) for page, o in pages))
                memory.marks["drive over"] = time.monotonic() - t0
                chromium = browser.version
            finally:
                await browser.close()
            await asyncio.sleep(5)
            memory.marks["browser closed + 5 s"] = time.monotonic() - t0
        if app.proc.poll() is not None:
            setup_errors.append(f"the server exited with {app.proc.returncode}")
    finally:
        stop_sampling.set()
        stop(app.proc)
    await sampler
    return LoadReport(sessions, seconds, outcomes, memory, chromium, setup_errors, contexts)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) by linear interpolation; NaN for no values."""
    return float(np.percentile(values, q)) if values else float("nan")


def markdown(r: LoadReport, load_start: str, load_end: str) -> str:
    """The load section: verdicts, latency, memory, and what went wrong."""
    info = machine()
    actions = [k for o in r.outcomes for k, _ in o.actions if k != "open"]
    per_session = [sum(1 for k, _ in o.actions if k != "open") for o in r.outcomes]
    checks = sum(o.checks for o in r.outcomes)
    controls = sum(o.control_rejected for o in r.outcomes)
    errors = r.errors
    mem = r.memory
    drive = mem.between("sessions open", "drive over") or [float("nan")]
    mid, end = mem.at("mid-drive"), mem.at("drive over")
    bounded = end <= mid * (1 + MEMORY_GROWTH)
    lat_rows = []
    for kind, label in ((None, "every action"), ("gain", "gain step (slider)"), ("seed", "new seed (typed)")):
        lat, srv = r.latencies(kind), r.latencies(kind, server=True)
        lat_rows.append(
            f"| {label} | {len(lat)} | {percentile(lat, 50):.0f} | {percentile(lat, 95):.0f} "
            f"| {max(lat, default=float('nan')):.0f} | {percentile(srv, 50):.0f} | {percentile(srv, 95):.0f} |"
        )
    timeline = " · ".join(f"{t:.0f} s: {m:.0f}" for t, m in mem.samples[:: max(1, len(mem.samples) // 12)])
    lines = [
        f"## Many users (`make load`, {time.strftime('%Y-%m-%d %H:%M %Z')})",
        "",
        machine_table(info, load_start, load_end),
        f"{r.sessions} sessions against one `streamlit run app.py`, each a tab of one headless Chromium "
        f"{r.chromium} ({VIEWPORT['width']} × {VIEWPORT['height']}, {r.contexts} contexts), driving the explorer for {r.seconds:.0f} s: "
        f"three gain steps up, three down, and every {SEED_EVERY}th action a new seed typed in; after each settle "
        "the page's charts are checked against torch (float64) for the session's own seed, preset, B, H and γ. "
        "The machine is shared: the browser, the server and other work share its cores, so the latencies are "
        "those of an overloaded server, not a target.",
        "",
        "| check | result | |",
        "|---|---|---|",
        f"| zero errors | {len(errors)} error(s) in {len(actions)} actions and {checks} checks | {verdict(not errors)} |",
        f"| no leakage: each session shows its own numbers | {r.mismatches} mismatch(es) in {checks} checks "
        f"| {verdict(r.mismatches == 0 and checks > 0)} |",
        f"| … and the check can fail: each opened page against the next seed | rejected on {controls} of "
        f"{len(r.outcomes)} sessions | {verdict(controls == len(r.outcomes))} |",
        f"| server memory bounded (the drive's second half adds < {MEMORY_GROWTH:.0%}) "
        f"| RSS {mem.at('server up'):.0f} MiB idle, {mem.at('sessions open'):.0f} MiB with the sessions open, "
        f"{mid:.0f} MiB mid-drive, peak {max(drive):.0f} MiB, {end:.0f} MiB at the end, "
        f"{mem.at('browser closed + 5 s'):.0f} MiB 5 s after the browser closed | {verdict(bounded)} |",
        "",
        f"Actions per session: {min(per_session)} to {max(per_session)} (median {statistics.median(per_session):.0f}).",
        "",
        "Latency: key press to settled page (what a viewer waits), and the server's share: the rerun request out "
        "to `script_finished` in, on the browser's network clock (queueing and the script, under every "
        "session's load).",
        "",
        "| action | n | p50 ms | p95 ms | max ms | server p50 ms | server p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *lat_rows,
        "",
        f"Server RSS over time (MiB): {timeline}.",
    ]
    if errors:
        lines += ["", "Errors (first 10):", "", *(f"- {e}" for e in errors[:10])]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--seconds", type=float, default=SECONDS, help="how long every session drives")
    parser.add_argument("--contexts", type=int, default=CONTEXTS, help="browser contexts the tabs are spread over")
    parser.add_argument("--stagger", type=float, default=STAGGER, help="seconds between two sessions' first loads")
    parser.add_argument("--out", type=Path, default=DOC, help="the markdown file to update")
    parser.add_argument("--log", type=Path, default=Path("/tmp/lnviz-load/app.log"), help="the server's log")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # the checks are small; the cores belong to the server and the browser
    load_start = load_average()
    limit = args.seconds + OPEN_TIMEOUT + 2 * ACTION_TIMEOUT + 60
    limit += args.stagger * args.sessions
    run = run_load(args.sessions, args.seconds, args.contexts, args.stagger, args.log)
    report = asyncio.run(asyncio.wait_for(run, limit))
    text = markdown(report, load_start, load_average())
    print(text)
    write_section("load", text, args.out)
    return 0 if not report.errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
