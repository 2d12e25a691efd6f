"""A real redis-server for tests: on a free port of 127.0.0.1, from a private folder, nothing kept on disk.

What the /class page's shared store (``LNVIZ_REDIS_URL``) talks to in tests, as
harness/nginx.py runs the documented nginx. It can be stopped mid-use and started
again on the same port: a client that held the URL finds the server back, empty,
as after a restart of an unpersisted Redis (deploy/k8s/redis.yaml runs one so),
or, stopped with ``keep=True``, holding what it held, as a persisted Redis that
went away for a while.

It needs only Debian's ``redis-server`` (``make system-deps``); the readiness check
speaks Redis's inline protocol itself, so the harness does not import redis-py. It is ready when the process it started,
by its pid, answers: not merely something on that port.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from harness.server import free_port, stop

STARTUP_TIMEOUT = 10.0
_PID = re.compile(rb"\r\nprocess_id:(\d+)\r\n")


def executable() -> Path:
    return Path(shutil.which("redis-server") or "/usr/bin/redis-server")


def ping(port: int, timeout: float = 1.0) -> bool:
    """Whether a Redis on 127.0.0.1:``port`` answers PING with PONG."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def answering_pid(port: int, timeout: float = 1.0) -> int | None:
    """The process id of the Redis that answers on 127.0.0.1:``port`` (its INFO), or None if none answers.

    A PONG alone does not say whose: a server that could not bind its port exits,
    and meanwhile another one on that port answers for it.
    """
    if not ping(port, timeout):
        return None
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"INFO server\r\n")
            reply = b""
            while not (found := _PID.search(reply)):
                chunk = s.recv(65536)
                if not chunk:
                    return None
                reply += chunk
    except OSError:
        return None
    return int(found.group(1))


class RedisServer:
    """One redis-server process; :meth:`start` and :meth:`stop` as often as a test likes, always on one port."""

    def __init__(self, port: int | None = None, args: Sequence[str] = ()) -> None:
        """``args``: more of redis-server's options, after the harness's own (``("--maxmemory", "256mb")``)."""
        self._port = port or free_port()
        self.args = tuple(args)
        self.proc: subprocess.Popen | None = None
        self.folder: Path | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """What ``LNVIZ_REDIS_URL`` is set to: database 0 of this server."""
        return f"redis://127.0.0.1:{self._port}/0"

    @property
    def log(self) -> Path | None:
        return self.folder / "redis.log" if self.folder else None

    def log_tail(self, chars: int = 4000) -> str:
        path = self.log
        return path.read_text(errors="replace")[-chars:] if path and path.exists() else ""

    def start(self) -> RedisServer:
        """Start it, empty (or with what :meth:`stop` kept), and wait until it answers PING (at most 10 s, else
        raise with its log)."""
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError(f"redis-server already runs on port {self._port}")
        binary = executable()
        if not binary.is_file():
            raise RuntimeError("redis-server is missing: `make system-deps` installs Debian's redis-server")
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="lnviz-redis-"))
        # No snapshots while it runs, no append-only file, loopback only, in the foreground; at start it loads
        # the folder's dump.rdb, which only stop(keep=True) writes.
        cmd = [str(binary), "--port", str(self._port), "--bind", "127.0.0.1", "--daemonize", "no"]
        cmd += ["--save", "", "--appendonly", "no", "--dir", str(self.folder), *self.args]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                why = f"redis-server exited with {self.proc.returncode} on port {self._port}:\n{self.log_tail()}"
                self._clean()
                raise RuntimeError(why)
            if answering_pid(self._port) == self.proc.pid:
                return self
            time.sleep(0.05)
        stop(self.proc)
        why = (
            f"redis-server did not answer PING on port {self._port} within {STARTUP_TIMEOUT:.0f} s:\n{self.log_tail()}"
        )
        self._clean()
        raise RuntimeError(why)

    def stop(self, keep: bool = False) -> None:
        """End it (SIGTERM, then SIGKILL) and remove its folder; the port stays this server's for :meth:`start`.

        ``keep``: first save what it holds (``SHUTDOWN SAVE``), so the next :meth:`start` holds it again.
        """
        if keep and self.proc is not None and self.proc.poll() is None:
            with socket.create_connection(("127.0.0.1", self._port), timeout=STARTUP_TIMEOUT) as s:
                s.sendall(b"SHUTDOWN SAVE\r\n")
                s.recv(64)  # the server closes the connection once it has saved
            self.proc.wait(STARTUP_TIMEOUT)
            self.proc = None
            return
        if self.proc is not None:
            stop(self.proc)
        self._clean()

    def _clean(self) -> None:
        self.proc = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


@contextmanager
def running(args: Sequence[str] = ()) -> Iterator[RedisServer]:
    """A started :class:`RedisServer` (with ``args``, more of redis-server's options) for the block, stopped after it."""
    server = RedisServer(args=args)
    try:
        yield server.start()
    finally:
        server.stop()
