"""Behind docs/deploy.md's nginx block, `make run` sees each visitor's address (issue 30, attack 5).

The app runs as the Makefile's ``run`` target starts it, its command read from the Makefile (only its
interpreter and port swapped), with Redis as its store; nginx runs the documented block, read from
docs/deploy.md. A test-only ``set_real_ip_from`` makes nginx take the visitor's address from a header the
test's Chromium sends, as if the visitor connected from that public address; the block's own
``X-Forwarded-For`` then forwards it. The presenter's second room (its browser's first is its own, issue 47)
is counted, in Redis, against the hash of exactly that address, and the projector says nothing about
addresses. A visitor nginx sees on the loopback is counted as no public address, and the projector says that
it counts such visitors as one.

Before the fix, Streamlit listened on IPv6 and IPv4, nginx's connection arrived as ``::ffff:127.0.0.1``,
which uvicorn does not trust, and every visitor had the proxy's address.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis
from playwright.sync_api import Browser, BrowserContext

from harness import nginx
from harness import redis as redis_harness
from harness.chromium import local_context
from harness.server import ROOT, AppProcess, free_port, stop, wait_app, wait_healthy
from harness.settle import SETTLE_TIMEOUT
from harness.tab import AppPage
from server import address_seen, limits

pytest_plugins = ("browser",)
pytestmark = [pytest.mark.browser, pytest.mark.replicas]

VISITOR = "1.2.3.4"  # a public address (is_global), as nginx would see it from a visitor on the internet
HEADER = "X-Test-Visitor"
PROJECTOR = {"width": 1280, "height": 720}


def make_run_command(port: int) -> list[str]:
    """The Makefile's ``run`` recipe, its server command (``$(SERVE)``), with this interpreter for ``$(PY)`` and
    ``port`` for ``$(PORT)``."""
    makefile = (ROOT / "Makefile").read_text()
    run = re.search(r"^run:.*\n((?:\t.*\n)+)", makefile, flags=re.M).group(1)
    assert run.splitlines()[-1] == "\t@$(SERVE)", run  # after the line that says what it does
    recipe = re.search(r"^SERVE\s*:=\s*(.+)$", makefile, flags=re.M).group(1)
    assert recipe.startswith("$(PY) -m streamlit run app.py"), recipe
    return shlex.split(recipe.replace("$(PY)", sys.executable).replace("$(PORT)", str(port)))


def with_test_visitor(block: str) -> str:
    """``block`` whose server takes ``$remote_addr`` from :data:`HEADER` when the connection is the loopback's:
    a test's stand-in for a visitor connecting from that address. The block's own lines are unchanged."""
    listen = re.search(r"^\s*listen [^;]+;\n", block, flags=re.M)
    realip = f"    set_real_ip_from 127.0.0.1;\n    real_ip_header {HEADER};\n"
    return block[: listen.end()] + realip + block[listen.end() :]


@dataclass
class Proxied:
    url: str
    store: redis.Redis
    app: AppProcess


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    if not nginx.executable().is_file():
        pytest.fail("nginx is missing: `make system-deps` installs Debian's nginx")
    port, listen = free_port(), free_port()
    log = tmp_path_factory.mktemp("address") / "app.log"
    with redis_harness.running() as store:
        env = {"MALLOC_ARENA_MAX": "2", **os.environ, "LNVIZ_REDIS_URL": store.url}
        with log.open("wb") as out:
            proc = subprocess.Popen(make_run_command(port), cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        app = AppProcess(proc, f"http://127.0.0.1:{port}", log)
        proxy = None
        try:
            wait_app(app)
            proxy = nginx.start(with_test_visitor(nginx.balancer([port], listen)))
            url = f"http://127.0.0.1:{listen}"
            wait_healthy(url, timeout=20, alive=proxy.alive)
            yield Proxied(url, redis.Redis.from_url(store.url), app)
        finally:
            if proxy is not None:
                proxy.stop()
            stop(proc)


def start_room(browser: Browser | BrowserContext, url: str, **headers: str) -> AppPage:
    """A room started on a projector: in a new browser, or in another tab of ``browser`` when it is a context."""
    context = (
        browser
        if isinstance(browser, BrowserContext)
        else local_context(browser, viewport=PROJECTOR, extra_http_headers=headers)
    )
    presenter = AppPage(context.new_page()).goto(f"{url}/class?present=1")
    presenter.page.locator(".st-key-class_start button").click()
    presenter.page.locator(".st-key-class_code").wait_for(timeout=SETTLE_TIMEOUT * 1000)
    presenter.settle()
    return presenter


def opened_by(store: redis.Redis) -> dict[str, int]:
    """The rooms each address opened, as the store counts them (its ``opened:a:`` keys)."""
    return {k.decode().removeprefix("lnviz:opened:a:"): int(store.get(k)) for k in store.keys("lnviz:opened:a:*")}


def test_make_run_behind_the_documented_nginx_counts_the_forwarded_public_address(browser, proxied):
    store = proxied.store
    before = opened_by(store)
    presenter = start_room(browser, proxied.url, **{HEADER: VISITOR})
    try:
        # A browser's first room is its own (issue 47): its second, in another tab, counts against its address.
        assert opened_by(store) == before, opened_by(store)
        second = start_room(presenter.page.context, proxied.url)
        hashed = "address " + hashlib.sha256(VISITOR.encode()).hexdigest()[:16]
        opened = opened_by(store)
        assert opened.get(hashed, 0) == before.get(hashed, 0) + 1, (opened, proxied.app.log_tail())
        assert not presenter.exceptions() and not second.exceptions()
        assert presenter.page.get_by_text("sees no public address").count() == 0
    finally:
        presenter.page.context.close()


def test_a_visitor_seen_only_on_the_loopback_is_told_the_limits_count_such_visitors_as_one(browser, proxied):
    presenter = start_room(browser, proxied.url)  # nginx sees 127.0.0.1 and forwards it
    try:
        said = address_seen.sentence(limits.current())
        assert presenter.page.get_by_text(said).count() == 1, presenter.page.inner_text("body")
    finally:
        presenter.page.context.close()


def test_make_run_prints_the_url_to_open_and_nothing_that_reads_as_an_error(proxied):
    """Streamlit, started as `make run` starts it, prints the URL to open, and does not ask the internet for this
    machine's public address: offline (as here) that logged "Did not auto detect external IP", which a first-time
    user reads as an error."""
    log = proxied.app.log_tail()
    port = proxied.app.url.rsplit(":", 1)[1]
    assert f"URL: http://localhost:{port}" in log, log
    assert "Did not auto detect external IP" not in log and "External URL" not in log, log


def test_make_says_what_each_step_does_before_it_does_it():
    """`make run` on a fresh machine: a line of its own before each install and before the server (a first
    install was three minutes of silence), and setuptools' editable-install notice filtered out."""
    dry = subprocess.run(
        ["make", "-n", "-B", "run", "VENV=/nonexistent/venv"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    steps = [i for i, line in enumerate(dry) if " -m pip install" in line or " -m streamlit run" in line]
    assert len(steps) >= 5, dry  # pip itself, the requirements, the model, lnviz, the server
    for i in steps:
        said = dry[i - 1] if dry[i - 1].startswith("printf 'lnviz: %s\\n'") else dry[i - 2]  # after `venv`: pip
        assert said.startswith("printf 'lnviz: %s\\n'"), (dry[i], dry[i - 2 : i])
    (editable,) = [line for line in dry if "install --quiet --no-deps -e ." in line]
    assert editable.startswith('PYTHONWARNINGS="ignore:Editable installation"'), editable
