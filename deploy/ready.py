"""Readiness of one replica: does a new visitor's first view come back in time?

    python deploy/ready.py --within 5     # exit 0: ready; exit 1: not (why on stderr)

``/_stcore/health`` is answered by the server's event loop, which stays fast
while every script run crawls (one costly message, a swamped CPU). This asks
what a visitor waits for instead: it opens a session over Streamlit's
websocket, as a browser tab does, asks for the first run of the default page,
and times it to ``script_finished``. Over ``--within`` seconds, a run that
draws an exception or does not finish cleanly, is not ready.

What it does not see: a visitor's later reruns of a page heavier than the
default view, and the heavy-work gate's queue (a replica whose gate is full is
still ready: it answers "try again in N s" at once). What it costs: one first
view of the default page per call, and a session that Streamlit keeps for
``server.disconnectedSessionTTL`` after the call ends.

It imports no Streamlit (that alone takes seconds): the two messages it needs
are written and read by hand, protobuf's wire format for the fields of
``BackMsg`` and ``ForwardMsg`` it uses. ``tests/test_ready_probe.py`` checks
them against Streamlit's own classes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator

from websockets.sync.client import connect

# BackMsg.rerun_script (field 11, a message) holding an empty ClientState: the default page, no widgets.
RERUN = bytes([11 << 3 | 2, 0])
SCRIPT_FINISHED = 6  # ForwardMsg.script_finished, an enum
FINISHED_OK = {0, 3}  # FINISHED_SUCCESSFULLY, FINISHED_FRAGMENT_RUN_SUCCESSFULLY
FINISHED_EARLY_FOR_RERUN = 2  # the page asked for a rerun (it settles its link): the next run follows
EXCEPTION_PATH = (5, 3, 8)  # ForwardMsg.delta, Delta.new_element, Element.exception


def varint(data: bytes, i: int) -> tuple[int, int]:
    """The varint at ``data[i:]`` and where the next field starts."""
    value = shift = 0
    while True:
        byte = data[i]
        value |= (byte & 0x7F) << shift
        i += 1
        if byte < 0x80:
            return value, i
        shift += 7


def fields(msg: bytes) -> Iterator[tuple[int, int | bytes]]:
    """A message's top-level fields: (number, value), a varint's int or a length-delimited field's bytes."""
    i = 0
    while i < len(msg):
        tag, i = varint(msg, i)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, i = varint(msg, i)
            yield number, value
        elif wire == 2:
            size, i = varint(msg, i)
            yield number, msg[i : i + size]
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unknown wire type {wire}")


def script_finished(msg: bytes) -> int | None:
    """A ForwardMsg's ``script_finished`` status, or None when it is another kind of message."""
    return next((v for n, v in fields(msg) if n == SCRIPT_FINISHED), None)


def is_exception(msg: bytes, path: tuple[int, ...] = EXCEPTION_PATH) -> bool:
    """Whether a ForwardMsg draws an exception element (Streamlit still calls such a run finished)."""
    if not path:
        return True
    return any(n == path[0] and isinstance(v, bytes) and is_exception(v, path[1:]) for n, v in fields(msg))


def first_view(base: str, within: float) -> float:
    """Seconds from the rerun request to ``script_finished``; raises when it fails or takes over ``within``."""
    url = base.replace("http://", "ws://", 1) + "/_stcore/stream"
    deadline = time.monotonic() + within
    with connect(url, subprotocols=["streamlit"], origin=base, open_timeout=within, max_size=None) as ws:
        start = time.monotonic()
        ws.send(RERUN)
        while True:
            left = deadline - time.monotonic()
            try:
                msg = ws.recv(timeout=max(0.0, left))
            except TimeoutError:
                raise TimeoutError(f"no first view within {within:g} s") from None
            status = script_finished(msg)
            if status is None or status == FINISHED_EARLY_FOR_RERUN:
                if is_exception(msg):
                    raise RuntimeError("the first run drew an exception")
                continue
            if status not in FINISHED_OK:
                raise RuntimeError(f"the first run ended with status {status}")
            return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python deploy/ready.py", description=__doc__.splitlines()[0])
    parser.add_argument("--within", type=float, default=5.0, help="seconds a first view may take")
    parser.add_argument("--url", default="http://127.0.0.1:8501", help="the replica, from inside its pod")
    args = parser.parse_args(argv)
    try:
        seconds = first_view(args.url, args.within)
    except Exception as e:  # any failure is "not ready", said in one line for `kubectl describe pod`
        print(f"not ready: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"ready: first view in {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
