"""Two app processes behind nginx: one link, the same numbers through either replica.

The nginx configuration is the one docs/deploy.md gives (read from it, so the
documented block is the tested one), plus a door to each replica
(tests/nginx_replicas.conf.template). Chromium opens the same link through
replica A and through replica B and compares every plotly chart's data. Then
browsers, all from 127.0.0.1 like a class behind one NAT address, open the link
through the load balancer: nginx's access log (upstream and routing key of each
request) shows that they spread over both replicas and that each browser's
every request, its websocket reconnecting after a drop included, stayed on its
own. Last, ``/static/`` comes gzipped and ``/_stcore/metrics`` is not served.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
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
    assert "ip_hash" not in block, "sticky by address: a class behind one NAT would land on one replica"
    assert re.search(r"^\s*hash \$lnviz_route( consistent)?;", block, re.M), "the upstream must be sticky by browser"
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

    def log(self) -> list[tuple[int, str, str, str, str]]:
        """(port, upstream address, status, routing key, request) of each request nginx took."""
        rows = []
        for line in self.access_log.read_text().splitlines():
            port, upstream, status, route, request = line.split("|", 4)
            rows.append((int(port), upstream, status, route, request))
        return rows

    def upstreams(
        self, port: int, timeout: float = 10.0, websockets: int = 1, route: str | None = None
    ) -> list[tuple[str, str, str]]:
        """(upstream address, status, request) of each request nginx took on ``port`` (with ``route``, if given).

        nginx logs a websocket when it closes: wait (up to ``timeout``) until
        ``websockets`` of them are logged.
        """
        deadline = time.monotonic() + timeout
        while True:
            rows = [(u, st, rq) for p, u, st, r, rq in self.log() if p == port and route in (None, r)]
            logged = sum(status == "101" and "/_stcore/stream" in request for _, status, request in rows)
            if logged >= websockets or time.monotonic() > deadline:
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


BROWSERS = 6  # from one address, like a class behind one NAT
MORE_BROWSERS = 14  # opened only while all so far sit on one replica: six random keys do so 1 time in 32


def open_browser(browser, url: str) -> tuple[object, object, list]:
    """A new browser (its own cookie jar) loading ``url``, its websocket routed through Playwright so a test can drop it.

    Returns (context, AppPage, the list that receives each websocket's server side as it connects); the page is
    loading, not yet settled.
    """
    from browser import VIEWPORT, AppPage, is_local

    context = browser.new_context(viewport=VIEWPORT)
    context.route(lambda u: not is_local(u), lambda route: route.abort())
    sockets: list = []
    page = context.new_page()
    page.route_web_socket(re.compile(r".*/_stcore/stream$"), lambda ws: sockets.append(ws.connect_to_server()))
    app = AppPage(page)
    page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
    page.goto(url, wait_until="commit")
    return context, app, sockets


def route_of(context) -> str:
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    assert "lnviz_route" in cookies, f"nginx set no routing cookie: {cookies}"
    return cookies["lnviz_route"]


# The session is up and its run is over: connected, not running, the page's elements there. The charts'
# drawing is left out: plotly's 4.7 MB chunk compiled in six fresh browsers is most of the test's time.
_RAN = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stStatusWidget"]')
        && document.querySelectorAll('[data-testid="stPlotlyChart"]').length > 0;
}"""


def ran(app) -> None:
    app.page.wait_for_function(_RAN, timeout=180_000, polling=200)


def test_browsers_behind_one_address_spread_over_the_replicas_and_each_stays_on_its_own(replicas, browser):
    replica_addresses = {f"127.0.0.1:{replicas.port_a}", f"127.0.0.1:{replicas.port_b}"}
    opened = []  # (context, app, sockets)

    def spread() -> int:
        return len({u for c, *_ in opened for u, _, _ in replicas.upstreams(replicas.lb_port, 0, 0, route_of(c))})

    try:
        while len(opened) < BROWSERS or (spread() < 2 and len(opened) < BROWSERS + MORE_BROWSERS):
            opened.append(open_browser(browser, replicas.lb + LINK))
            ran(opened[-1][1])
            assert_clean(opened[-1][1], f"browser {len(opened)}", replicas)
        routes = [route_of(c) for c, *_ in opened]
        assert len(set(routes)) == len(routes), "two browsers got the same routing key"

        # A dropped websocket: each page reconnects, and must find its session's replica again.
        for _, _, sockets in opened[:BROWSERS]:
            assert len(sockets) == 1, "the page's websocket did not go through the route"
            sockets[0].close()
        for _, app, sockets in opened[:BROWSERS]:
            deadline = time.monotonic() + 120
            while len(sockets) < 2 and time.monotonic() < deadline:
                app.page.wait_for_timeout(200)  # Playwright's events reach the test while it waits
            assert len(sockets) == 2, "the page did not reconnect"
            ran(app)
            assert_clean(app, "after a reconnect", replicas)
        for _, app, _ in opened:
            app.page.close()

        served = {}
        for i, route in enumerate(routes):
            want = 2 if i < BROWSERS else 1  # websockets logged: the dropped one and its reconnection
            rows = replicas.upstreams(replicas.lb_port, websockets=want, route=route)
            sockets_logged = [u for u, status, request in rows if status == "101" and "/_stcore/stream" in request]
            assert len(sockets_logged) == want, (route, rows)
            assert len(rows) > 2, rows  # the page and its assets too
            upstreams = {u for u, _, _ in rows}
            assert len(upstreams) == 1 and upstreams <= replica_addresses, (route, rows)
            served[route] = upstreams.pop()
        assert set(served.values()) == replica_addresses, f"{len(served)} browsers, all on one replica: {served}"
    finally:
        for context, *_ in opened:
            context.close()


def test_static_files_come_gzipped_and_metrics_are_not_served(replicas):
    with urllib.request.urlopen(replicas.lb + "/", timeout=30) as r:
        html = r.read().decode()
    script = re.search(r'src="\.?/?(static/js/[^"]+\.js)"', html)
    assert script, html[:2000]
    plain = urllib.request.urlopen(f"http://127.0.0.1:{replicas.port_a}/{script[1]}", timeout=30).read()
    request = urllib.request.Request(f"{replicas.lb}/{script[1]}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=30) as r:
        assert r.headers.get("Content-Encoding") == "gzip", dict(r.headers)
        body = r.read()
    assert gzip.decompress(body) == plain
    assert len(body) < len(plain) / 2, (len(body), len(plain))

    direct = urllib.request.urlopen(f"http://127.0.0.1:{replicas.port_a}/_stcore/metrics", timeout=30)
    assert direct.status == 200  # Streamlit itself always serves them: only the balancer hides them
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(replicas.lb + "/_stcore/metrics", timeout=30)
    assert refused.value.code == 404
