"""harness/redis.py: a real redis-server that redis-py reaches, that refuses once stopped, and that comes back
on the same port (the /class page's store must live through Redis going away mid-class)."""

from __future__ import annotations

import pytest
import redis

from harness import redis as redis_harness


def client(url: str) -> redis.Redis:
    # No retries: a refused connection must show here, not be papered over.
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2, retry_on_timeout=False, retry=None)


def test_set_get_stop_refused_start_again_on_the_same_port():
    with redis_harness.running() as server:
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
        r = client(server.url)
        assert r.set("lnviz:test", "1", ex=60)
        assert r.get("lnviz:test") == b"1"
        assert 0 < r.ttl("lnviz:test") <= 60

        port = server.port
        server.stop()
        with pytest.raises(redis.ConnectionError):
            client(server.url).ping()
        assert not redis_harness.ping(port)

        server.start()
        assert server.port == port  # the same URL reaches it again
        r = client(server.url)
        assert r.get("lnviz:test") is None  # nothing is kept on disk: it comes back empty
        assert r.set("lnviz:test", "2")
        assert r.get("lnviz:test") == b"2"
        r.close()
    assert not redis_harness.ping(port)


def test_it_keeps_nothing_on_disk_and_listens_on_loopback_only():
    with redis_harness.running() as server:
        r = client(server.url)
        config = {**r.config_get("save"), **r.config_get("appendonly"), **r.config_get("bind")}
        assert config["save"] == "" and config["appendonly"] == "no"
        assert config["bind"] == "127.0.0.1"
        r.close()


def test_a_server_that_cannot_start_says_why():
    with redis_harness.running() as first:
        second = redis_harness.RedisServer(port=first.port)  # the port is taken
        with pytest.raises(RuntimeError, match="redis-server exited"):
            second.start()
        assert second.folder is None  # its folder is gone with it
