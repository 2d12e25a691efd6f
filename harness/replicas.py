"""Two app replicas sharing one real Redis, behind docs/deploy.md's nginx block: the set a deployment runs.

:func:`running_replicas` starts it for a block: replicas A and B (``streamlit run app.py`` with ``LNVIZ_REDIS_URL``
set to one :class:`harness.redis.RedisServer`), nginx with the documented balancer in front of both
(:func:`harness.nginx.balancer`), and a door to each replica (:func:`door`), so a test can choose the replica.
tests/conftest.py serves it to every test that needs the set (``replicas``, one per session and worker).
"""

from __future__ import annotations

import secrets
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from harness import nginx
from harness import redis as redis_harness
from harness.server import AppProcess, free_port, start_app, stop, wait_app, wait_healthy


def door(listen: int, port: int) -> str:
    """A server on ``listen`` proxying to the replica on ``port`` as the balancer does: a test chooses the replica."""
    return f"""
    server {{
        listen 127.0.0.1:{listen};
        location / {{
            proxy_pass http://127.0.0.1:{port};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $http_host;
            proxy_read_timeout 1d;
            proxy_buffering off;
        }}
    }}
"""


@dataclass
class Replicas:
    lb: str  # the sticky upstream of docs/deploy.md
    via_a: str  # replica A only
    via_b: str  # replica B only
    port_a: int
    port_b: int
    lb_port: int
    proxy: nginx.Nginx
    apps: list[AppProcess]  # A and B, for their logs
    redis: redis_harness.RedisServer  # the class poll's store, shared by A and B (LNVIZ_REDIS_URL)
    runs: (
        Path  # a line per run of a class page on either replica, its mode ("phone": a phone's; ui.poll.live.count_run)
    )

    def logs(self) -> str:
        return "".join(f"\n--- {app.log.name} ---\n{app.log_tail(2000)}" for app in self.apps)

    def restart(self, i: int) -> AppProcess:
        """Stop replica ``i`` (0: A, 1: B) and start a new process on its port, healthy and served through the
        balancer again (:meth:`balanced`): nothing of what it held in memory is left."""
        old = self.apps[i]
        stop(old.proc)
        port = (self.port_a, self.port_b)[i]
        log = old.log.with_name(f"{old.log.stem}+{old.log.suffix}")  # the old log stays, for a failure message
        self.apps[i] = start_app(port, log, env=replica_env(self.redis, self.runs))
        wait_app(self.apps[i])
        self.balanced(port)
        return self.apps[i]

    def balanced(self, port: int, timeout: float = 30.0) -> None:
        """Wait until the balancer has served a request from the replica on ``port`` again.

        A request nginx could not pass to the replica while it was down (a tab's websocket reconnecting, say) counts
        as a failure (error.log: "upstream server temporarily disabled"). Past the upstream's ``fail_timeout``
        nginx lets one request through to try the replica and, until that one has been answered, sends the
        replica's other requests to the other: the first page loaded after a restart had its HTML from one replica
        and some of its scripts from the other (two runs in two, the replica modules in file order, under load).
        Ask for the health check under new routing keys until the replica has answered one of them.
        """
        deadline = time.monotonic() + timeout
        upstream = f"127.0.0.1:{port}"
        while True:
            keys = [f"balanced-{secrets.token_hex(8)}" for _ in range(8)]  # each lands on it by even odds, when up
            for key in keys:
                request = urllib.request.Request(f"{self.lb}/_stcore/health", headers={"Cookie": f"lnviz_route={key}"})
                with suppress(OSError):
                    urllib.request.urlopen(request, timeout=5).close()
            if any(r.upstream == upstream for r in self.proxy.log() if r.route in keys):
                return
            assert time.monotonic() < deadline, f"nginx sends nobody to the replica on {port} in {timeout:.0f} s"
            time.sleep(0.5)  # real time: nginx's own fail_timeout

    def upstreams(
        self, port: int, timeout: float = 10.0, websockets: int = 1, route: str | None = None
    ) -> list[tuple[str, str, str]]:
        """(upstream address, status, request) of each request nginx took on ``port`` (with ``route``, if given).

        nginx logs a websocket when it closes: wait (up to ``timeout``) until
        ``websockets`` of them are logged.
        """
        deadline = time.monotonic() + timeout
        while True:
            rows = [r for r in self.proxy.log() if r.port == port and route in (None, r.route)]
            if sum(r.websocket for r in rows) >= websockets or time.monotonic() > deadline:
                return [(r.upstream, r.status, r.request) for r in rows]
            time.sleep(0.2)  # nginx writes its log as requests end: real time


SECRET = {"LNVIZ_SECRET": "replicas-test-secret"}  # one deployment: a proof from A holds on B (server.proved)
RUNS_FILE = "LNVIZ_TEST_CLASS_RUNS"  # ui.poll.live.RUNS_FILE, named here so the harness needs no Streamlit


def proved() -> str:
    """``lnviz_proof=…``: a new browser's proof as this deployment signs one, for a client that follows a stream
    without a page (a benchmark's phones; the proof of work itself is tested in tests/test_proof*.py)."""
    from server import proof

    return f"{proof.COOKIE}={proof.mint(proof.secret_from_env(SECRET), time.time())}"


def replica_env(redis: redis_harness.RedisServer, runs: Path) -> dict[str, str]:
    """A replica's environment: the shared Redis, the deployment's one secret, and where it counts class page runs
    (both append whole lines to one file)."""
    return {"LNVIZ_REDIS_URL": redis.url, **SECRET, RUNS_FILE: str(runs)}


@contextmanager
def running_replicas(logs: Path) -> Iterator[Replicas]:
    """Replicas A and B sharing one Redis, and nginx in front of them, for the block; their logs in ``logs``."""
    port_a, port_b, lb, via_a, via_b = (free_port() for _ in range(5))
    apps: list[AppProcess] = []
    proxy = None
    redis = redis_harness.RedisServer()
    runs = logs / "class_runs"
    try:
        redis.start()
        for port, name in ((port_a, "replica_a.log"), (port_b, "replica_b.log")):
            apps.append(start_app(port, logs / name, env=replica_env(redis, runs)))
        for app in apps:
            wait_app(app)
        proxy = nginx.start(nginx.balancer([port_a, port_b], lb) + door(via_a, port_a) + door(via_b, port_b))
        urls = [f"http://127.0.0.1:{port}" for port in (lb, via_a, via_b)]
        for url in urls:
            wait_healthy(url, timeout=20, alive=proxy.alive)
        yield Replicas(*urls, port_a, port_b, lb, proxy, apps, redis, runs)
    finally:
        if proxy is not None:
            proxy.stop()
        for app in reversed(apps):
            stop(app.proc)
        redis.stop()
