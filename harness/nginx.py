"""nginx in front of app replicas: docs/deploy.md's own block, run from a private folder, and its access log.

Shared by tests/ (test_replicas.py) and benchmarks/ (crowd.py), which
import this and not each other: the block they run is the documented one,
read from docs/deploy.md with only its ports swapped for free ones.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.server import ROOT, stop

DEPLOY_DOC = ROOT / "docs" / "deploy.md"
# One line a request: the port it came in on, the replica that served it, the status, the routing key, the
# request line. nginx logs a websocket when it closes.
LOG_FORMAT = "$server_port|$upstream_addr|$status|$lnviz_route|$request"
_SERVERS = re.compile(r"(?:^[ \t]*server 127\.0\.0\.1:\d+;\n)+", re.M)


def deploy_block() -> str:
    """The one ```nginx block of docs/deploy.md, as written."""
    blocks = re.findall(r"```nginx\n(.*?)```", DEPLOY_DOC.read_text(), flags=re.S)
    if len(blocks) != 1:
        raise ValueError(f"{DEPLOY_DOC} should have exactly one nginx block, has {len(blocks)}")
    return blocks[0]


def balancer(ports: Sequence[int], listen: int) -> str:
    """docs/deploy.md's block with its upstream's servers swapped for ``ports`` and its ``listen 8080`` for
    ``listen`` on 127.0.0.1."""
    block = deploy_block()
    servers = "".join(f"    server 127.0.0.1:{port};\n" for port in ports)
    block, swapped = _SERVERS.subn(servers, block)
    if swapped != 1 or block.count("listen 8080;") != 1:
        raise ValueError("docs/deploy.md's nginx block should have one run of upstream servers and one listen 8080")
    return block.replace("listen 8080;", f"listen 127.0.0.1:{listen};")


def under_path(block: str, path: str) -> str:
    """``block`` for an app served under ``path`` (``server.baseUrlPath``, "/lnviz"), as docs/deploy.md says:
    the same prefix before each ``location``. Its proxy_pass lines pass the whole URI, the prefix included."""
    prefix = "/" + path.strip("/")
    moved, n = re.subn(r"(\blocation\s+(?:=\s+)?)/", rf"\1{prefix}/", block)
    if n != block.count("location "):
        raise ValueError(f"a location of the block is not a plain path: {n} of {block.count('location ')} moved")
    return moved


def config(prefix: Path, http: str) -> str:
    """A whole nginx.conf around ``http`` (its maps, upstreams and servers), writing only under ``prefix``.

    Everything nginx writes stays in ``prefix``, so it runs as root or not;
    its access log (:meth:`Nginx.log`) has one line per request in
    :data:`LOG_FORMAT`.
    """
    temp = "".join(f"    {k}_temp_path {prefix / k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (
        f"worker_processes 1;\nerror_log {prefix / 'error.log'} warn;\n"
        "events { worker_connections 4096; }\n"
        f"http {{\n    log_format requests '{LOG_FORMAT}';\n"
        f"    access_log {prefix / 'access.log'} requests;\n{temp}{http}}}\n"
    )


@dataclass(frozen=True)
class Request:
    """One line of the access log."""

    port: int  # where it came in
    upstream: str  # the replica that served it, "127.0.0.1:8501"
    status: str
    route: str  # the routing key ($lnviz_route)
    request: str  # "GET /_stcore/stream HTTP/1.1"

    @property
    def websocket(self) -> bool:
        """Whether this was Streamlit's websocket (logged when it closed)."""
        return self.status == "101" and "/_stcore/stream" in self.request


@dataclass
class Nginx:
    """A running nginx: its process and the folder that holds its config and logs."""

    proc: subprocess.Popen
    prefix: Path

    def log(self) -> list[Request]:
        """Every request nginx has logged so far."""
        path = self.prefix / "access.log"
        lines = path.read_text().splitlines() if path.exists() else []
        return [Request(int(port), *rest) for port, *rest in (line.split("|", 4) for line in lines)]

    def alive(self) -> str | None:
        """None while it runs; why not once it has exited (for :func:`harness.server.wait_healthy`)."""
        if self.proc.poll() is None:
            return None
        errors = (self.prefix / "error.log").read_text(errors="replace")
        return f"nginx exited with {self.proc.returncode}:\n{errors}"

    def stop(self) -> None:
        """Stop it and remove its folder."""
        stop(self.proc)
        shutil.rmtree(self.prefix, ignore_errors=True)


def executable() -> Path:
    return Path(shutil.which("nginx") or "/usr/sbin/nginx")


def start(http: str) -> Nginx:
    """nginx in the foreground with :func:`config` around ``http``, in a new folder; does not wait for it."""
    # Its workers may run as another user (nobody, under root): a world-readable prefix.
    prefix = Path(tempfile.mkdtemp(prefix="lnviz-nginx-"))
    prefix.chmod(0o755)
    conf = prefix / "nginx.conf"
    conf.write_text(config(prefix, http))
    cmd = [str(executable()), "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(conf)]
    cmd += ["-g", f"daemon off; pid {prefix / 'nginx.pid'};"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    return Nginx(proc, prefix)
