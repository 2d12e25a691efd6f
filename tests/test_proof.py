"""server.proof and server.proved: a browser pays a proof of work for its identity, a signed cookie it keeps;
the price rises for an address that mints many and falls back within a minute; nothing is refused for being
counted. The price here is the default one (tests/conftest.py lowers the servers'), and time is a clock the
test moves by hand."""

from __future__ import annotations

import base64
import json
import types
from dataclasses import replace

import limits.storage.memory
import limits.strategies
import pytest

from harness import aio
from harness.proofs import solution
from server import proof, quota, who
from server.limits import Limits, StoreDown

SECRET = proof.secret_from_env({proof.SECRET_ENV: "the deployment's secret"})
NOW = 1_800_000_000.0
PUBLIC = who.address("8.8.4.4")
CHEAP = 50  # a challenge's price where a test solves many: the mechanism, not the cost


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    fake = types.SimpleNamespace(time=clock.time)
    for module in (limits.storage.memory, limits.strategies, quota):
        monkeypatch.setattr(module, "time", fake)
    return clock


def test_a_proof_names_one_browser_and_replicas_with_the_same_secret_agree():
    token = proof.mint(SECRET, NOW)
    same = proof.secret_from_env({proof.SECRET_ENV: "the deployment's secret"})  # another replica
    assert proof.client(SECRET, token, NOW) == proof.client(same, token, NOW + 3600)
    assert proof.client(SECRET, token, NOW).startswith("proved ")
    assert token.split(".")[0] not in proof.client(SECRET, token, NOW)  # the nonce itself is not kept
    assert proof.client(SECRET, proof.mint(SECRET, NOW), NOW) != proof.client(SECRET, token, NOW)


def test_without_the_variable_each_process_draws_its_own_secret():
    assert proof.secret_from_env({}) != proof.secret_from_env({})
    assert proof.client(proof.secret_from_env({}), proof.mint(SECRET, NOW), NOW) is None


@pytest.mark.parametrize(
    "alter",
    [
        lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),  # the signature
        lambda t: "x" * 22 + t[22:],  # the nonce
        lambda t: ".".join([t.split(".")[0], proof.mint(SECRET, NOW - 10).split(".")[1], t.split(".")[2]]),  # time
        lambda t: "",
        lambda t: t + "." + t,
        lambda t: None,
    ],
)
def test_an_altered_or_made_up_proof_proves_nothing(alter):
    assert proof.client(SECRET, alter(proof.mint(SECRET, NOW)), NOW) is None


def test_a_proof_is_good_for_its_age_and_not_after():
    token = proof.mint(SECRET, NOW)
    assert proof.client(SECRET, token, NOW + proof.MAX_AGE_S) is not None
    assert proof.client(SECRET, token, NOW + proof.MAX_AGE_S + 1) is None
    assert proof.client(SECRET, token, NOW - proof.SKEW_S) is not None  # another replica's clock a little behind
    assert proof.client(SECRET, token, NOW - proof.SKEW_S - 1) is None


def _payload(challenge: dict, **changed) -> str:
    sent = json.loads(base64.b64decode(solution(challenge)))
    return base64.b64encode(json.dumps({**sent, **changed}).encode()).decode()


def test_a_challenge_is_solved_by_its_number_alone_and_says_its_price(monkeypatch):
    import time

    made = proof.challenge(SECRET, CHEAP, time.time())
    assert made["maxnumber"] == CHEAP and made["algorithm"] == "SHA-256"
    done = proof.solved(SECRET, solution(made))
    assert done is not None and done.work == CHEAP
    number = json.loads(base64.b64decode(solution(made)))["number"]
    assert proof.solved(SECRET, _payload(made, number=number + 1)) is None  # a wrong number
    assert proof.solved(SECRET, _payload(made, salt=made["salt"].replace(f"work={CHEAP}", "work=9"))) is None
    assert proof.solved(proof.secret_from_env({}), solution(made)) is None  # not signed with this secret
    assert proof.solved(SECRET, "not base64 at all") is None and proof.solved(SECRET, None) is None
    stale = proof.challenge(SECRET, CHEAP, time.time() - proof.CHALLENGE_S - 1)
    assert proof.solved(SECRET, solution(stale)) is None  # expired


def test_the_price_lets_a_class_of_500_in_at_its_base_and_doubles_for_a_script_then_falls_back(clock):
    lim = Limits()
    price = proof.Price(lim)
    seen = []
    for i in range(500):  # a class of 500 arriving over two minutes, one browser each
        clock.now += 120 / 500
        seen.append(price.work(PUBLIC))
        assert price.spend(proof.Solved(seen[-1], f"student {i}"), PUBLIC) == "ok"
    assert set(seen) == {lim.proof_work}
    for i in range(3000):  # then a script, as fast as it pays
        clock.now += 0.005
        assert price.spend(proof.Solved(price.work(PUBLIC), f"script {i}"), PUBLIC) == "ok"
    highest = lim.proof_work * 2**lim.proof_doublings
    assert price.work(PUBLIC) == highest  # 4 times as much for each, never refused
    assert price.work(who.address("8.8.8.8")) == lim.proof_work  # another address is not affected
    clock.now += 2 * lim.proof_window_s
    assert price.work(PUBLIC) == lim.proof_work  # within two minutes, back to its base


def test_a_challenge_is_spent_once_and_one_given_before_the_price_rose_is_asked_again(clock):
    price = proof.Price(replace(Limits(), proofs_at_price=2))
    done = proof.Solved(Limits.proof_work, "one")
    assert price.spend(done, PUBLIC) == "ok"
    assert price.spend(done, PUBLIC) == "spent"
    assert price.spend(proof.Solved(Limits.proof_work, "two"), PUBLIC) == "ok"
    assert price.work(PUBLIC) == 2 * Limits.proof_work
    for key in ("three", "four"):
        assert price.spend(proof.Solved(Limits.proof_work, key), PUBLIC) == "ok"  # still within double the price
    assert price.work(PUBLIC) == 4 * Limits.proof_work
    assert price.spend(proof.Solved(Limits.proof_work, "five"), PUBLIC) == "cheap"
    assert price.spend(proof.Solved(2 * Limits.proof_work, "six"), PUBLIC) == "ok"


def test_a_public_address_is_counted_across_replicas_and_a_store_down_falls_back_to_this_process(clock):
    small = replace(Limits(), proofs_at_price=2)
    shared = limits.storage.memory.MemoryStorage()
    replica_a, replica_b = proof.Price(small, shared), proof.Price(small, shared)
    for i, replica in enumerate((replica_a, replica_b)):
        assert replica.spend(proof.Solved(small.proof_work, f"k{i}"), PUBLIC) == "ok"
    assert replica_a.work(PUBLIC) == replica_b.work(PUBLIC) == 2 * small.proof_work  # the two counted together
    assert replica_a.work("") == small.proof_work  # the addresses a replica can't see: a count of its own

    down = proof.Price(small, shared)

    def unreachable(*args, **kwargs):
        raise StoreDown("refused")

    down._shared.hit = down._shared.count = down._spent.hit = unreachable
    for i in range(2):
        assert down.spend(proof.Solved(small.proof_work, f"d{i}"), PUBLIC) == "ok"
    assert down.work(PUBLIC) == 2 * small.proof_work  # still counted, in this process


# The server's side (server.proved): the routes' functions and the middleware, on a stand-in for Streamlit's app.


@pytest.fixture
def server(monkeypatch, clock):
    """server.proved with a fresh price at the default numbers, on the test's clock."""
    from server import proved

    price = proof.Price(Limits())
    monkeypatch.setattr(proved, "price", lambda: price)
    monkeypatch.setattr(proved, "time", types.SimpleNamespace(time=clock.time))
    return proved


def test_a_solved_challenge_earns_a_proof_once_and_a_script_that_does_not_solve_one_gets_none(server, monkeypatch):
    import time

    made = proof.challenge(server.secret(), Limits.proof_work, time.time())
    status, token = server.redeem(solution(made), PUBLIC, NOW)
    assert status == 204 and proof.client(server.secret(), token, NOW) is not None
    assert server.redeem(solution(made), PUBLIC, NOW) == (403, None)  # the same solution again
    number = json.loads(base64.b64decode(solution(made)))["number"]
    fresh = proof.challenge(server.secret(), Limits.proof_work, time.time())
    assert server.redeem(_payload(fresh, number=number), PUBLIC, NOW) == (403, None)  # unsolved
    assert server.redeem("", PUBLIC, NOW) == (403, None)


async def _page(scope, receive, send):
    kind = b"text/html; charset=utf-8" if scope["path"] == "/class" else b"application/json"
    head = [(b"content-type", kind), (b"content-length", b"0"), (b"etag", b'"x"')]
    await send({"type": "http.response.start", "status": 200, "headers": head})
    body = b'<head><script type="module" crossorigin src="./static/js/index.Ab-1.js"></script></head>'
    await send({"type": "http.response.body", "body": body})


def _get(path: str, cookie: str = "", method: str = "GET") -> tuple[dict[bytes, bytes], bytes]:
    from server import proved

    headers = [(b"cookie", cookie.encode())] if cookie else []
    headers.append((b"accept-encoding", b"gzip"))
    scope = {"type": "http", "method": method, "path": path, "headers": headers, "client": ("8.8.4.4", 5000)}
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    aio.run(proved.Middleware(_page)(scope, None, send))
    return dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_a_page_for_a_browser_without_a_proof_starts_streamlit_after_proving_and_nothing_else_is_touched(server):
    headers, body = _get("/class")
    assert b'import("/api/proof/boot.js")' in body and b'import("./static/js/index.Ab-1.js")' in body
    assert b'crossorigin src="./static' not in body  # Streamlit starts after the proof, never beside it
    assert headers[b"content-length"] == str(len(body)).encode() and headers[b"cache-control"] == b"no-store"
    assert b"etag" not in headers and b"set-cookie" not in headers  # the proof is earned, not given
    token = proof.mint(server.secret(), NOW)
    _, kept = _get("/class", f"other=1; {proof.COOKIE}={token}")
    assert b"crossorigin src=" in kept  # a proved browser's page, untouched
    assert b"boot.js" in _get("/class", f"{proof.COOKIE}=made.up.x")[1]  # a forged proof is none
    assert b"crossorigin src=" in _get("/class", method="HEAD")[1]
    assert b"crossorigin src=" in _get("/api/x")[1]  # not a page


def test_with_the_limits_off_no_page_asks_for_a_proof(server, monkeypatch):
    from server import limits as limits_module

    monkeypatch.setattr(limits_module, "current", lambda: Limits.off())
    assert b"crossorigin src=" in _get("/class")[1]
