"""A real lnviz server for tests and benchmarks: start it on a free port, wait until healthy, stop it.

Shared by tests/ and benchmarks/, which import this and not each other.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# torch's first import alone can take most of a minute on a loaded 2-core machine.
STARTUP_TIMEOUT = 90.0
# An access-log line (`127.0.0.1:51666 - "GET /static/js/x.js HTTP/1.1" 200`): noise in a failure message.
_ACCESS_LINE = re.compile(r'\d+\.\d+\.\d+\.\d+:\d+ - "[A-Z]+ ')


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class AppProcess:
    """One ``streamlit run``: its process, base URL and log file."""

    proc: subprocess.Popen
    url: str
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's log, without its per-request access lines."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        lines = [line for line in text.splitlines() if not _ACCESS_LINE.search(line)]
        return "\n".join(lines)[-chars:]


def start_app(
    port: int,
    log: Path,
    script: str = "app.py",
    env: Mapping[str, str] | None = None,
    base_path: str = "",
    prefix: Sequence[str] = (),
    root: Path = ROOT,
) -> AppProcess:
    """``streamlit run script`` from the repo root on ``port``, as ``make run`` does; does not wait for it.

    ``env``: variables set for it on top of this process's (``LNVIZ_REDIS_URL``, say). ``base_path``:
    served under that path (``server.baseUrlPath``, "lnviz"), which the url then ends with. ``prefix``: a
    command that runs it (``taskset -c 0``: on one core, where a benchmark places it). ``root``: another checkout's
    (a benchmark's "before": its app.py, pages and lnviz, with this interpreter)."""
    cmd = [
        *prefix,
        sys.executable, "-m", "streamlit", "run", script,
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
        *(["--server.baseUrlPath", base_path] if base_path else []),
    ]  # fmt: skip
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {"MALLOC_ARENA_MAX": "2", **os.environ, **(env or {})}  # as the Dockerfile runs it
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}" + (f"/{base_path.strip('/')}" if base_path else "")
    return AppProcess(proc=proc, url=url, log=log)


def wait_healthy(url: str, timeout: float = STARTUP_TIMEOUT, alive: Callable[[], str | None] | None = None) -> None:
    """Wait until ``url``/_stcore/health answers "ok".

    ``alive`` returns why the server cannot come up (it exited, with its log),
    or None while it may still: checked between tries to fail fast.
    """
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if alive is not None and (why := alive()):
            raise RuntimeError(why)
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200 and r.read().strip() == b"ok":
                    return
        except OSError as e:
            last = str(e)
        time.sleep(0.25)
    raise TimeoutError(f"{url} not healthy after {timeout:.0f} s ({last})")


def wait_app(app: AppProcess, timeout: float = STARTUP_TIMEOUT) -> None:
    """:func:`wait_healthy` for a started app; fails with its log if it exits."""

    def alive() -> str | None:
        if app.proc.poll() is None:
            return None
        return f"streamlit exited with {app.proc.returncode}:\n{app.log_tail()}"

    wait_healthy(app.url, timeout, alive)


def stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """End ``proc`` (SIGTERM, then SIGKILL after ``grace`` seconds) and reap it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def serving(log: Path, script: str = "app.py", env: Mapping[str, str] | None = None) -> Iterator[AppProcess]:
    """A server of ``script`` on a free port, healthy for the block, stopped after it."""
    app = start_app(free_port(), log, script, env)
    try:
        wait_app(app)
        yield app
    finally:
        stop(app.proc)


def rss_mib(pid: int) -> float | None:
    """The resident memory of process ``pid`` in MiB, from /proc (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None
