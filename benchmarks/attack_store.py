"""Issue 30's attacks 1 and 2 on the shared store, beside a class: part of ``make load LOAD_ARGS="--mode attack"``.

A Redis started with deploy/k8s/redis.yaml's memory options (harness/redis.py) holds a class's room with 30 votes,
as the replicas' shared store would. Then clients without cookies, each session a fresh client with a fresh quota,
share grids of 8 MiB through :func:`server.own_share.share`, as the explorer's share does:

1. four sessions, 30 grids (issue 30: they filled Redis in 7 s, and it evicted the class's room and votes);
2. six sessions, 46 grids, about 368 MiB (issue 30: the 64 MiB an hour each client may share didn't hold them).

Each verdict: the class keeps its room and every vote, and the presenter's next press works; the grids held stay
within the store's cap, Redis evicts nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import redis
import yaml

from benchmarks.run import verdict
from harness import redis as redis_harness
from server import limits, own_share, poll
from server.limits import Limits
from server.store import RedisStore

ROOT = Path(__file__).resolve().parents[1]
CLASS = 30
ATTACKS = (("1. own-data shares evict the class", 4, 30), ("2. the share quota doesn't hold", 6, 46))
MIB = 2**20


@dataclass
class Outcome:
    name: str
    sessions: int
    tried: int
    stored: int
    refused: int
    seconds: float
    grid_mib: float  # the grids' bytes the store counts at the end
    used_mib: float  # Redis's used_memory
    evicted: int
    room_kept: bool
    votes_kept: int
    pressed: bool

    @property
    def held(self) -> bool:
        return self.room_kept and self.votes_kept == CLASS and self.pressed and self.evicted == 0


def redis_args() -> list[str]:
    """redis.yaml's --maxmemory and --maxmemory-policy, as its container passes them."""
    docs = list(yaml.safe_load_all((ROOT / "deploy/k8s/redis.yaml").read_text()))
    args = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    return [part for i, opt in enumerate(args) if opt.startswith("--maxmemory") for part in (opt, args[i + 1])]


def one_attack(name: str, sessions: int, grids: int) -> Outcome:
    with redis_harness.running(redis_args()) as server:
        store = RedisStore(server.url)
        room, secret = poll.open_room(store, ("q-one", "q-two"))
        for i in range(CLASS):
            store.vote(room.code, f"student {i}", 0, 1, str(i % 3))
        quotas = [own_share.new_quota() for _ in range(sessions)]
        stored = refused = 0
        t0 = time.monotonic()
        for i in range(grids):
            grid = np.full((own_share.MAX_ROWS, own_share.MAX_COLS), float(i))
            try:
                stored += own_share.share(store, quotas[i % sessions], grid, f"session {i % sessions}") is not None
            except limits.Full:
                refused += 1
        seconds = time.monotonic() - t0
        info = redis.Redis.from_url(server.url).info()
        kept = store.room(room.code)
        return Outcome(
            name,
            sessions,
            grids,
            stored,
            refused,
            seconds,
            store.blob_bytes() / MIB,
            info["used_memory"] / MIB,
            info["evicted_keys"],
            kept == room,
            len(store.votes(room.code, 0, 1)),
            kept is not None and store.act(room.code, secret, "reveal", kept.version) is not None,
        )


def run() -> list[Outcome]:
    return [one_attack(*attack) for attack in ATTACKS]


def markdown(outcomes: list[Outcome]) -> str:
    cap = Limits.shared_grid_bytes / MIB
    rows = [
        f"### The shared store against issue 30's attacks 1 and 2, beside a class of {CLASS} votes",
        "",
        f"A redis-server with deploy/k8s/redis.yaml's options ({' '.join(redis_args())}) holds a room with {CLASS} "
        "votes; then sessions without cookies (a fresh client and quota each) share 8 MiB grids through the "
        f"explorer's share. The store's cap on all grids: {cap:.0f} MiB.",
        "",
        "| attack | sessions | grids tried | stored | over a quota | store full | s | grids MiB | Redis MiB "
        "| evicted keys | room | votes | presenter's Reveal | |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|",
    ]
    for o in outcomes:
        rows.append(
            f"| {o.name} | {o.sessions} | {o.tried} | {o.stored} | {o.tried - o.stored - o.refused} | {o.refused} "
            f"| {o.seconds:.1f} | {o.grid_mib:.0f} "
            f"| {o.used_mib:.0f} | {o.evicted} | {'kept' if o.room_kept else 'gone'} | {o.votes_kept} of {CLASS} "
            f"| {'works' if o.pressed else 'refused'} | {verdict(o.held and o.grid_mib <= cap)} |"
        )
    return "\n".join(rows) + "\n"
