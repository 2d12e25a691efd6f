"""Two app processes behind nginx: one link, the same numbers through either replica.

The nginx configuration is the one docs/deploy.md gives (read from it, so the
documented block is the tested one), plus a door to each replica
(tests/nginx_replicas.conf.template). Chromium opens the same link through
replica A and through replica B and compares every plotly chart's data; then
it opens the link through the sticky ``ip_hash`` upstream, and nginx's access
log shows that the whole session, websocket included, stayed on one replica.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT

# The fixtures browser and open_app; the helpers are imported where used, after
# pytest has loaded the module as a plugin.
pytest_plugins = ("browser",)

LINK = "/?batch=8&features=12&seed=7&dist=heterogeneous+samples&gain=1.5"
OTHER_LINK = LINK.replace("seed=7", "seed=8")
DEPLOY_DOC = ROOT / "docs" / "deploy.md"
TEMPLATE = Path(__file__).with_name("nginx_replicas.conf.template")

pytestmark = [pytest.mark.browser, pytest.mark.replicas]


def deploy_block() -> str:
    """The one ```nginx block of docs/deploy.md."""
    blocks = re.findall(r"```nginx\n(.*?)```", DEPLOY_DOC.read_text(), flags=re.S)
    assert len(blocks) == 1, f"docs/deploy.md should have exactly one nginx block, has {len(blocks)}"
    return blocks[0]


def swap_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"expected {old!r} once in docs/deploy.md's nginx block"
    return text.replace(old, new)


def nginx_conf(prefix: Path, port_a: int, port_b: int, lb: int, via_a: int, via_b: int) -> str:
    """The test's nginx.conf: the documented load balancer on ``lb``, doors to A and B."""
    block = deploy_block()
    block = swap_once(block, "server 127.0.0.1:8501;", f"server 127.0.0.1:{port_a};")
    block = swap_once(block, "server 127.0.0.1:8502;", f"server 127.0.0.1:{port_b};")
    block = swap_once(block, "listen 8080;", f"listen 127.0.0.1:{lb};")
    assert "ip_hash;" in block, "the documented upstream must be sticky"
    conf = TEMPLATE.read_text().replace("\n@LOAD_BALANCER@\n", "\n" + block)
    for name, value in {
        "PREFIX": prefix, "PORT_A": port_a, "PORT_B": port_b, "VIA_A": via_a, "VIA_B": via_b,
    }.items():  # fmt: skip
        conf = conf.replace(f"@{name}@", str(value))
    assert "@" not in re.sub(r"#.*", "", conf), "a placeholder was left unfilled"
    return conf


@dataclass
class Replicas:
    lb: str  # the sticky upstream (ip_hash)
    via_a: str  # replica A only
    via_b: str  # replica B only
    port_a: int
    port_b: int
    lb_port: int
    access_log: Path
    apps: list  # browser.AppProcess of A and B, for their logs

    def logs(self) -> str:
        return "".join(f"\n--- {app.log.name} ---\n{app.log_tail(2000)}" for app in self.apps)

    def upstreams(self, port: int, timeout: float = 10.0, want_websocket: bool = True) -> list[tuple[str, str, str]]:
        """(upstream address, status, request) of each request nginx took on ``port``.

        nginx logs a websocket when it closes: with ``want_websocket``, wait
        (up to ``timeout``) until one is logged.
        """
        deadline = time.monotonic() + timeout
        while True:
            rows = []
            for line in self.access_log.read_text().splitlines():
                served_port, upstream, status, request = line.split("|", 3)
                if int(served_port) == port:
                    rows.append((upstream, status, request))
            websocket = any(status == "101" and "/_stcore/stream" in request for _, status, request in rows)
            if websocket or not want_websocket or time.monotonic() > deadline:
                return rows
            time.sleep(0.2)


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    """Replicas A and B, and nginx in front of them; everything stopped afterwards."""
    from browser import free_port, start_app, stop, wait_app, wait_healthy

    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).is_file():
        pytest.fail("nginx is missing: `make system-deps` installs Debian's nginx")
    logs = tmp_path_factory.mktemp("replicas")
    # nginx's workers may run as another user (nobody, under root): a world-readable prefix.
    prefix = Path(tempfile.mkdtemp(prefix="lnviz-nginx-"))
    prefix.chmod(0o755)
    port_a, port_b, lb, via_a, via_b = (free_port() for _ in range(5))
    started: list[subprocess.Popen] = []
    try:
        apps = []
        for port, name in ((port_a, "replica_a.log"), (port_b, "replica_b.log")):
            apps.append(start_app(port, logs / name))
            started.append(apps[-1].proc)
        for app in apps:
            wait_app(app)
        conf = prefix / "nginx.conf"
        conf.write_text(nginx_conf(prefix, port_a, port_b, lb, via_a, via_b))
        cmd = [nginx, "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(conf)]
        cmd += ["-g", f"daemon off; pid {prefix / 'nginx.pid'};"]
        proxy = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        started.append(proxy)

        def nginx_alive() -> str | None:
            if proxy.poll() is None:
                return None
            return f"nginx exited with {proxy.returncode}:\n{(prefix / 'error.log').read_text(errors='replace')}"

        urls = [f"http://127.0.0.1:{port}" for port in (lb, via_a, via_b)]
        for url in urls:
            wait_healthy(url, timeout=20, alive=nginx_alive)
        yield Replicas(*urls, port_a=port_a, port_b=port_b, lb_port=lb, access_log=prefix / "access.log", apps=apps)
    finally:
        for proc in reversed(started):
            stop(proc)
        shutil.rmtree(prefix, ignore_errors=True)


def assert_clean(app, where: str, replicas: Replicas) -> None:
    assert not app.exceptions(), f"{where}: {app.exceptions()}{replicas.logs()}"
    assert not app.errors, f"{where}: {app.errors}"


def test_one_link_gives_the_same_numbers_through_either_replica(replicas, open_app):
    from browser import charts_json

    via_a = open_app(replicas.via_a + LINK)
    via_b = open_app(replicas.via_b + LINK)
    assert_clean(via_a, "replica A", replicas)
    assert_clean(via_b, "replica B", replicas)
    charts_a, charts_b = via_a.charts(), via_b.charts()
    assert charts_a, "the link shows no plotly chart"
    assert all(any(t.get(k) for t in chart["traces"] for k in "xyz") for chart in charts_a), "a chart has no data"
    assert charts_json(charts_a) == charts_json(charts_b)
    # The numbers come from the link: another seed, other numbers, on the same replica.
    other = open_app(replicas.via_a + OTHER_LINK)
    assert_clean(other, "replica A, seed 8", replicas)
    assert charts_json(other.charts()) != charts_json(charts_a)

    # Each door reached its own replica, websocket included.
    for page in (via_a, via_b, other):
        page.page.close()
    for door, port in ((replicas.via_a, replicas.port_a), (replicas.via_b, replicas.port_b)):
        rows = replicas.upstreams(int(door.rsplit(":", 1)[1]))
        assert {upstream for upstream, _, _ in rows} == {f"127.0.0.1:{port}"}, rows
        assert any(status == "101" for _, status, _ in rows), f"no websocket through {door}: {rows}"


def test_sticky_upstream_serves_a_working_session(replicas, open_app):
    app = open_app(replicas.lb + LINK)
    assert_clean(app, "load balancer", replicas)
    assert app.charts(), "the link shows no plotly chart through the load balancer"
    app.page.close()
    rows = replicas.upstreams(replicas.lb_port)
    assert any(status == "101" and "/_stcore/stream" in request for _, status, request in rows), rows
    # ip_hash: every request of the session, page, assets and websocket, went to one replica.
    served_by = {upstream for upstream, _, _ in rows}
    assert len(served_by) == 1 and served_by <= {f"127.0.0.1:{replicas.port_a}", f"127.0.0.1:{replicas.port_b}"}, rows
    assert len(rows) > 2, rows
