"""Issue 47's eight attacks, each beside an honest user, on main's code ("before") and this tree's ("after"), side by
side in one run: part of ``make load LOAD_ARGS="--mode attack"`` when ``--before`` names a checkout of main.

    git worktree add /tmp/lnviz-before main
    python -m benchmarks.attack_cost --before /tmp/lnviz-before          # about 15 minutes on 2 cores

Each attack on a fresh server (``streamlit run app.py`` of that checkout, this interpreter, the limits on) or a
fresh in-process store, as the issue's red team ran it, at its scale unless the table says less:

1. identities: a script mints proofs for 10 s (before: ``GET /`` without a cookie; after: challenges solved in
   Python, :func:`harness.proofs.earn`); then a fresh visitor gets its proof and starts a room, within 10 s?
2. memory: one client opens ``/transformer`` with 300 unique 8-sentence texts, one session at a time; the
   replica's RSS at its peak and after, against 1.5 GiB.
3. voters: 500 fresh browsers of one address vote in a room; then a classmate behind it (a replay through the
   store's calls, as the page makes them).
4. streams: 600 Server-Sent Event streams to a live room without a cookie; then an honest phone's, with its proof.
5. rooms: 60 browsers of one address each open a room; then the lecturer's browser (a replay, as 3).
6. shared grids: six browsers share two 8 MiB grids each, then smaller ones until the store takes no more; then a
   classmate's 1 MiB grid (a replay, as 3).
7. a store that restarts: a room's stream while its Redis is stopped and started empty, so that it lacks the room
   in its first seconds (what a phone saw as "no room" when the room was missing, for whatever reason; a Redis
   restarted from its append-only file kept the room in both, here): does the stream say ``gone``?
8. the stage's route: four stages of one browser at 1024 x 1024 asked back to back for 20 s; a bystander moves
   gamma every 0.3 s, its p95 against its quiet p95 just before (within 2x?).

The replays (3, 5, 6, 7) run in a subprocess whose ``sys.path`` starts with the checkout, so each uses that
checkout's store and limits.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
TEXTS = 300
MINT_S = 10.0
HONEST_S = 10.0
STREAMS = 600
STAGE_S = 20.0
TARGET_RSS_MIB = 1536.0
SAID = {True: "succeeds", False: "**fails**"}  # the honest user, in the table
VOCAB = "apple river music garden winter forest window letter doctor table house light water stone cloud".split()


@dataclass
class Row:
    attack: str
    before: str  # what the attacker got, and whether the honest user succeeded
    after: str
    honest_before: bool
    honest_after: bool


# ---- the network side: a visitor, a room, a server of either checkout ----


def visitor(base: str) -> str:
    """A new browser's ``lnviz_proof=…`` cookie as that server gives one: earned by a proof of work where the server
    asks one (after), else set on the page's HTML (before); "" when it gives none (before: "wait.")."""
    from harness.proofs import earn

    try:
        token = earn(base)
    except (ValueError, OSError):  # no /api/proof: the page's HTML sets it
        with urllib.request.urlopen(base + "/", timeout=60) as r:
            found = [h.split(";")[0] for h in r.headers.get_all("Set-Cookie") or [] if h.startswith("lnviz_proof=")]
        token = found[0].split("=", 1)[1] if found else ""
    return f"lnviz_proof={token}" if token and not token.startswith("wait") else ""


async def start_room(base: str, cookie: str) -> str | None:
    """A presenter's Start on ``/class?present=1`` with ``cookie``: the room's code, or None (refused)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    from harness.wsclient import Session

    session = Session(base, query="present=1", page="class", headers={"Cookie": cookie} if cookie else {})
    try:
        await session.open()
        await session.rerun([WidgetState(id=session.ids["class_start"], trigger_value=True)])
        shown = " ".join(m.WhichOneof("type") and str(m) for m in session.run)
        found = re.search(r"room=([A-HJ-NP-Z2-9]{8})", shown)
        return found[1] if found else None
    finally:
        await session.ws.close()


def server(root: Path, name: str, env: dict[str, str] | None = None):
    from harness.server import free_port, start_app, wait_app

    app = start_app(free_port(), Path(tempfile.gettempdir()) / "lnviz-attack-cost" / f"{name}.log", env=env, root=root)
    wait_app(app)
    return app


# ---- the attacks over the network ----


def attack_identities(root: Path, name: str) -> tuple[str, bool]:
    from harness.server import stop

    app = server(root, f"{name}-identities")
    try:
        minted, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < MINT_S:
            minted += bool(visitor(app.url))
        spent = time.monotonic() - t0
        t1 = time.monotonic()
        cookie = visitor(app.url)
        code = asyncio.run(start_room(app.url, cookie)) if cookie else None
        took = time.monotonic() - t1
        ok = code is not None and took <= HONEST_S
        said = f"{minted} identities in {spent:.0f} s; a fresh visitor: " + (
            f"its proof and a room in {took:.1f} s" if code else "no proof" if not cookie else "its Start refused"
        )
        return said, ok
    finally:
        stop(app.proc)


def text(rng: random.Random) -> str:
    """8 sentences of 3-18 words, some made unique by a number."""
    words = lambda: rng.choice(VOCAB) + (str(rng.randrange(10**6)) if rng.random() < 0.3 else "")  # noqa: E731
    return "\n".join(" ".join(words() for _ in range(rng.randint(3, 18))) for _ in range(8))


def attack_memory(root: Path, name: str) -> tuple[str, bool]:
    from harness.server import rss_mib, stop
    from harness.wsclient import Session

    app = server(root, f"{name}-memory")
    try:
        cookie, rng, peak = visitor(app.url), random.Random(47), 0.0

        async def texts() -> bool:
            nonlocal peak
            for _ in range(TEXTS):
                s = Session(app.url, query=urlencode({"text": text(rng)}), page="transformer")
                s.headers = {"Cookie": cookie}
                await s.open()
                await s.ws.close()
                peak = max(peak, rss_mib(app.proc.pid) or 0.0)
            honest = Session(app.url, query=urlencode({"text": "The cat sat on the mat."}), page="transformer")
            honest.headers = {"Cookie": visitor(app.url)}
            await honest.open()
            await honest.ws.close()
            return not honest.texts("warning") and bool(honest.tree.get("plotly_chart"))

        drawn = asyncio.run(texts())
        time.sleep(5)
        after = rss_mib(app.proc.pid) or 0.0
        ok = drawn and max(peak, after) <= TARGET_RSS_MIB
        return f"RSS peak {peak:,.0f} MiB, {after:,.0f} MiB after {TEXTS} texts; a classmate's page drawn", ok
    finally:
        stop(app.proc)


def attack_streams(root: Path, name: str) -> tuple[str, bool]:
    from harness.server import stop

    app = server(root, f"{name}-streams")
    held: list[http.client.HTTPConnection] = []
    try:
        code = asyncio.run(start_room(app.url, visitor(app.url)))
        port = int(app.url.rsplit(":", 1)[1])

        def stream(cookie: str = "") -> int:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", f"/api/class/{code}/events", headers={"Cookie": cookie} if cookie else {})
            held.append(conn)
            return conn.getresponse().status

        t0 = time.monotonic()
        statuses = [stream() for _ in range(STREAMS)]
        spent = time.monotonic() - t0
        phone = stream(visitor(app.url))
        taken = statuses.count(200)
        said = f"{taken} of {STREAMS} cookieless streams taken in {spent:.1f} s; an honest phone's: HTTP {phone}"
        return said, phone == 200
    finally:
        for conn in held:
            conn.close()
        stop(app.proc)


def attack_stage(root: Path, name: str) -> tuple[str, bool]:
    from harness.server import stop
    from harness.wsclient import Session

    app = server(root, f"{name}-stage")
    port = int(app.url.rsplit(":", 1)[1])
    try:

        async def run() -> tuple[float, float, int, int]:
            cookie = visitor(app.url)
            stages = [Session(app.url, query="batch=1024&features=1024", headers={"Cookie": cookie}) for _ in range(4)]
            for s in stages:
                await s.open()
            urls = []
            for s in stages:
                (stage,) = [c for c in s.tree.get("bidi_component") if c.proto.component_name == "lnviz.stage"]
                urls.append(json.loads(stage.proto.json)["stage_at"]["url"])
            bystander = Session(app.url, headers={"Cookie": visitor(app.url)})
            await bystander.open()

            async def moves(seconds: float) -> list[float]:
                took, gain, until = [], 1.0, time.monotonic() + seconds
                while time.monotonic() < until:
                    gain = 1.05 if gain == 1.0 else 1.0
                    took.append(await bystander.rerun([bystander.widget("gain", double_array_value=[gain])]))
                    await asyncio.sleep(0.3)
                return sorted(took)

            quiet = await moves(STAGE_S)
            answered = refused = 0
            stop_at = time.monotonic() + STAGE_S

            def hammer(url: str) -> None:
                nonlocal answered, refused
                conn, k = http.client.HTTPConnection("127.0.0.1", port, timeout=60), 0
                while time.monotonic() < stop_at:
                    k += 1
                    conn.request("GET", f"{url}?gain={1 + (k % 20) / 10}", headers={"Cookie": cookie})
                    r = conn.getresponse()
                    r.read()
                    answered += r.status == 200
                    refused += r.status == 429
                    if r.status == 429:
                        time.sleep(float(r.getheader("retry-after") or 0) or 0.05)  # as a script that waits its turn

            hammering = [asyncio.to_thread(hammer, url) for url in urls]
            busy, *_ = await asyncio.gather(moves(STAGE_S), *hammering)
            for s in [*stages, bystander]:
                await s.ws.close()
            p95 = lambda xs: xs[min(len(xs) - 1, int(0.95 * len(xs)))]  # noqa: E731
            return p95(quiet), p95(busy), answered, refused

        quiet, busy, answered, refused = asyncio.run(run())
        ratio = busy / quiet if quiet else float("nan")
        said = (
            f"{answered} answers ({answered / STAGE_S:.0f}/s), {refused} refused; a bystander's γ p95 "
            f"{quiet:.0f} → {busy:.0f} ms ({ratio:.1f}×)"
        )
        return said, ratio <= 2.0
    finally:
        stop(app.proc)


# ---- the replays, in a subprocess of either checkout ----


def replay(tree: str) -> dict[str, tuple[str, bool]]:
    """Attacks 3, 5, 6 and 7 through ``tree``'s own store (its ``lnviz`` first on ``sys.path``)."""
    import numpy as np

    from harness import redis as redis_harness
    from server import events, own_share, poll

    # Each refusal through the module that raises it, as either checkout has it (before issue 48 each had its own).
    from server.store import MemoryStore, RedisStore, StoreDown

    assert Path(poll.__file__).is_relative_to(tree), poll.__file__
    qs, nat = ("bn-one-sample", "ln-invariance"), "address nat"
    out: dict[str, tuple[str, bool]] = {}

    store = MemoryStore()
    room, _ = poll.open_room(store, qs, client="proved lecturer", address=nat)
    counted = sum(store.vote(room.code, f"v{i}", 0, 1, "0", f"proved {i}", nat) == poll.COUNTED for i in range(500))
    classmate = store.vote(room.code, "classmate", 0, 1, "1", "proved classmate", nat)
    out["3"] = (f"{counted} of 500 votes counted; a classmate's: {classmate}", classmate == poll.COUNTED)

    def opens(store: MemoryStore, client: str) -> str:
        try:
            poll.open_room(store, qs, client, nat)
        except poll.OpenRefused as refused:
            return f"refused ({str(refused).split(',')[0]})"
        return "opened"

    store = MemoryStore()
    opened = sum(opens(store, f"proved {i}") == "opened" for i in range(60))
    lecturer = opens(store, "proved lecturer")
    out["5"] = (f"{opened} of 60 rooms opened; the lecturer's: {lecturer}", lecturer == "opened")

    store, quota, grids = MemoryStore(), own_share.new_quota(), 0
    for shape, most in (((1024, 1024), 12), ((512, 256), 100), ((64, 128), 100), ((8, 64), 100)):
        for i in range(most):  # two 8 MiB grids each, then smaller ones until the store takes no more of each
            try:
                stored = own_share.share(store, quota, np.full(shape, grids + i / 1000), f"proved {i % 6}")
            except own_share.Full:
                break
            grids += stored is not None
    try:
        honest = own_share.share(store, quota, np.eye(512, 256), "proved classmate") is not None  # 1 MiB
    except own_share.Full:
        honest = False
    full = store.blob_bytes() / 2**20
    said = f"{grids} shares taken, {full:.0f} MiB held; a classmate's share: {'stored' if honest else 'refused'}"
    out["6"] = (said, honest)

    with redis_harness.running(["--appendonly", "yes", "--appendfsync", "everysec"]) as server:
        store = RedisStore(server.url)
        room, _ = poll.open_room(store, qs)
        hub = events.Hub(lambda: store, lambda r: ([], None), poll_limits(), look_s=3600)

        async def follow() -> list[str]:
            sub = hub.subscribe(room.code, asyncio.get_running_loop())
            seen = []
            for step in ("look", "stop", "look", "start", "look"):
                if step == "stop":
                    server.stop()  # and started empty: the room is missing in Redis's first seconds
                elif step == "start":
                    server.start()
                else:
                    hub.look_all()
                await asyncio.sleep(0)
                seen += ["gone" if e is None else "down" if e.get("down") else "room" for e in sub.pending]
                sub.pending.clear()
            return seen

        seen = asyncio.run(follow())
        try:
            lobby = "no room" if store.room("ABCDEFGH") is None else "a room"
        except StoreDown:
            lobby = "the store coming back"
    out["7"] = (f"the stream said {', '.join(seen)}; a code in Redis's first seconds: {lobby}", "gone" not in seen)
    return out


def poll_limits():
    from server.limits import Limits

    return Limits()


def replays(root: Path) -> dict[str, tuple[str, bool]]:
    code = (  # this file by its path: the checkout has a benchmarks package of its own
        f"import sys, json, runpy; sys.path.insert(0, {str(root)!r}); "
        f"replay = runpy.run_path({__file__!r})['replay']; print(json.dumps(replay({str(root)!r})))"
    )
    env = {**os.environ, "LNVIZ_REDIS_URL": ""}
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the replays in {root} failed:\n{done.stderr[-3000:]}")
    return {k: tuple(v) for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


# ---- the run ----

ATTACKS: list[tuple[str, str, Callable[[Path, str], tuple[str, bool]] | None]] = [
    ("1", "1. identities minted for 10 s; then a fresh visitor starts a room", attack_identities),
    ("2", f"2. {TEXTS} unique 8-sentence texts on /transformer, one session at a time", attack_memory),
    ("3", "3. 500 fresh browsers of one address vote; then a classmate", None),
    ("4", f"4. {STREAMS} streams without a cookie; then an honest phone", attack_streams),
    ("5", "5. 60 browsers of one address open rooms; then the lecturer", None),
    ("6", "6. six browsers fill the 96 MiB of shared grids; then a classmate's", None),
    ("7", "7. Redis stopped and started, lacking the room at first", None),
    ("8", "8. four 1024² stages of one browser asked back to back", attack_stage),
]


def run(before: Path) -> list[Row]:
    played = {"before": replays(before), "after": replays(ROOT)}
    rows = []
    for key, name, attack in ATTACKS:
        got = {}
        for side, root in (("before", before), ("after", ROOT)):
            got[side] = attack(root, side) if attack is not None else played[side][key]
            print(f"{name} [{side}]: {got[side][0]}", file=sys.stderr, flush=True)
        rows.append(Row(name, got["before"][0], got["after"][0], got["before"][1], got["after"][1]))
    return rows


def markdown(rows: list[Row], when: str, machine: str) -> str:
    """The page's ``attack-cost`` section: a row per attack, before and after, judged by the honest user after."""
    from benchmarks.page import wrap
    from benchmarks.run import verdict

    about = "`python -m benchmarks.attack_cost --before CHECKOUT_OF_MAIN`: main's checkout and this one, each on a "
    about += f"fresh server or store. {machine}. The verdict is the honest user's, after."
    lines = [
        f'## Each attack beside an honest user (`make load LOAD_ARGS="--mode attack --before PATH"`, {when})\n',
        wrap(about) + "\n",
        "| attack | before (main) | honest | after | honest | |",
        "|---|---|---|---|---|---|",
        *(
            f"| {r.attack} | {r.before} | {SAID[r.honest_before]} | {r.after} | {SAID[r.honest_after]} "
            f"| {verdict(r.honest_after)} |"
            for r in rows
        ),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from benchmarks.page import load_average, machine, machine_line, now

    parser = argparse.ArgumentParser(prog="python -m benchmarks.attack_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of main (git worktree add)")
    args = parser.parse_args(argv)
    load_start = load_average()
    rows = run(args.before.resolve())
    print(markdown(rows, now(), machine_line(machine(), load_start, load_average())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
