"""The class stream through the documented nginx block and the ingress, and over two replicas sharing Redis.

The block's ``/api/`` location and the ``lnviz-streams`` Ingress pass a stream as the app writes it (no
buffering, a read timeout far above the app's 15 s heartbeat) and hold as many streams per address as the app
does. Then, through nginx's balancer in front of replicas A and B (:mod:`harness.replicas`): a phone's stream
pinned to replica A by its routing cookie sees the vote a phone makes on replica B's page, and the presenter's
reveal made there, while it stays open; nginx's log says replica A served it. When replica A is killed, its
stream ends, and the reconnect (with the same cookie) gets the room as it is now at once, from replica B.
"""

from __future__ import annotations

import re
import time
import urllib.request

import pytest

from harness import nginx
from harness.replicas import proved
from server import poll
from server.events import HEARTBEAT_S
from server.limits import Limits
from server.store import RedisStore


def _location(block: str, path: str) -> str:
    (body,) = re.findall(rf"location {re.escape(path)} \{{(.*?)\n    \}}", block, flags=re.S)
    return body


def _seconds(text: str) -> float:
    number, unit = re.fullmatch(r"(\d+)([smhd]?)", text).groups()
    return int(number) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[unit]


def test_the_blocks_stream_location_is_unbuffered_with_a_long_read_timeout_and_the_apps_address_limit():
    stream = _location(nginx.deploy_block(), "/api/")
    assert "proxy_buffering off;" in stream and "gzip off;" in stream
    assert "proxy_pass http://lnviz;" in stream and "proxy_http_version 1.1;" in stream
    (timeout,) = re.findall(r"proxy_read_timeout (\S+);", stream)
    assert _seconds(timeout) >= 60 * HEARTBEAT_S
    (zone, limit) = re.findall(r"limit_conn (\S+) (\d+);", stream)[0]
    assert zone != "lnviz_addr" and int(limit) == Limits().streams_per_address  # not the websockets' count
    assert re.search(rf"limit_conn_zone \$binary_remote_addr zone={zone}:", nginx.deploy_block())


def test_the_streams_ingress_is_the_blocks_stream_location():
    from test_k8s import ingresses

    streams = ingresses()["lnviz-streams"]
    notes = streams["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 60 * HEARTBEAT_S
    assert int(notes["nginx.ingress.kubernetes.io/limit-connections"]) == Limits().streams_per_address
    assert notes["nginx.ingress.kubernetes.io/force-ssl-redirect"] == "true"
    (path,) = [p for r in streams["spec"]["rules"] for p in r["http"]["paths"]]
    assert (path["path"], path["pathType"], path["backend"]["service"]["name"]) == ("/api/", "Prefix", "lnviz")


def _served(replicas, key: str, path: str, timeout: float = 10.0) -> str:
    """The replica ("127.0.0.1:PORT") that served the request for ``path`` with routing key ``key``, once nginx has
    logged it (when it ended)."""
    deadline = time.monotonic() + timeout
    while True:
        rows = [r for r in replicas.proxy.log() if r.port == replicas.lb_port and r.route == key and path in r.request]
        if rows or time.monotonic() > deadline:
            assert rows, f"nginx logged no request for {path} with route {key}"
            return rows[-1].upstream
        time.sleep(0.1)  # nginx writes its log as requests end: real time


def _route_to(replicas, port: int) -> str:
    """A routing cookie's value that the balancer sends to the replica on ``port`` (found by asking it)."""
    for i in range(64):
        key = f"stream-test-{i}"
        request = urllib.request.Request(replicas.lb + "/_stcore/health", headers={"Cookie": f"lnviz_route={key}"})
        urllib.request.urlopen(request, timeout=30).read()
        if _served(replicas, key, "/_stcore/health").endswith(f":{port}"):
            return key
    raise AssertionError(f"no routing key of 64 went to port {port}")


@pytest.mark.browser
@pytest.mark.replicas
def test_a_stream_on_replica_a_sees_a_vote_and_the_reveal_made_on_replica_b(replicas, contexts):
    from test_browser_classroom import PHONE, PROJECTOR, answer, open_in, press, start_room
    from test_class_stream import Follower

    presenter = open_in(contexts(PROJECTOR), f"{replicas.via_b}/class?present=1")
    code = start_room(presenter)
    press(presenter, "next")  # the bank's second question has choices
    key = _route_to(replicas, replicas.port_a)
    stream = Follower(replicas.lb, code, cookie=f"lnviz_route={key}; {proved()}")
    assert stream.stream.response.status == 200
    first = stream.until(lambda s: True)
    assert (first["index"], first["answers"], first["rounds"]) == (1, 0, None)
    phone = open_in(contexts(PHONE), f"{replicas.via_b}/class?room={code}")
    answer(phone, 1)
    assert stream.until(lambda s: s["answers"] == 1, timeout=15)["phase"] == "ask"
    press(presenter, "reveal")
    shown = stream.until(lambda s: s["phase"] == "reveal", timeout=15)
    assert shown["rounds"][0]["1"] == 1 and sum(shown["rounds"][0].values()) == 1
    stream.stream.close()
    assert _served(replicas, key, f"/api/class/{code}/events").endswith(f":{replicas.port_a}")


@pytest.mark.browser
@pytest.mark.replicas
def test_a_stream_whose_replica_is_killed_ends_and_its_reconnect_gets_the_state_at_once_from_the_other(replicas):
    from test_class_stream import Follower

    store = RedisStore(replicas.redis.url)
    room, secret = poll.open_room(store, ("bn-one-sample", "ln-invariance"))
    key = _route_to(replicas, replicas.port_a)
    stream = Follower(replicas.lb, room.code, cookie=f"lnviz_route={key}; {proved()}")
    assert stream.until(lambda s: True)["answers"] == 0
    replicas.apps[0].proc.kill()  # replica A dies mid-round, as a pod killed does
    replicas.apps[0].proc.wait()
    try:
        assert stream.seen.get(timeout=30) is None  # its stream ended: the browser's EventSource reconnects
        store.vote(room.code, "voter-1", 0, 1, "2")  # meanwhile, on B
        store.act(room.code, secret, "reveal", 0)
        again = Follower(
            replicas.lb, room.code, cookie=f"lnviz_route={key}; {proved()}"
        )  # the same cookie: nginx tries B
        shown = again.until(lambda s: True, timeout=30)  # the first event, at once: the room as it is now
        assert (shown["phase"], shown["answers"], shown["rounds"][0]["2"]) == ("reveal", 1, 1)
        again.stream.close()
    finally:
        replicas.restart(0)
