"""lnviz.serving.proof and ui.proof's middleware: a browser is proved once by a signed cookie, new proofs are a
budget per address (and per replica for the addresses it can't see), and a page's HTML is where a proof is given.
Time is a clock the test moves by hand."""

from __future__ import annotations

import types
from dataclasses import replace

import limits.storage.memory
import pytest

from harness import aio
from lnviz.serving import proof, quota, who
from lnviz.serving.limits import Limits
from lnviz.serving.store import StoreDown

SECRET = proof.secret_from_env({proof.SECRET_ENV: "the deployment's secret"})
NOW = 1_800_000_000.0
PUBLIC = who.address("8.8.4.4")


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    fake = types.SimpleNamespace(time=clock.time)
    for module in (limits.storage.memory, quota):
        monkeypatch.setattr(module, "time", fake)
    return clock


def test_a_proof_names_one_browser_and_replicas_with_the_same_secret_agree():
    token = proof.mint(SECRET, NOW)
    same = proof.secret_from_env({proof.SECRET_ENV: "the deployment's secret"})  # another replica
    assert proof.client(SECRET, token, NOW) == proof.client(same, token, NOW + 3600)
    assert proof.client(SECRET, token, NOW).startswith("proved ")
    assert token.split(".")[1] not in proof.client(SECRET, token, NOW)  # the nonce itself is not kept
    assert proof.client(SECRET, proof.mint(SECRET, NOW), NOW) != proof.client(SECRET, token, NOW)


def test_without_the_variable_each_process_draws_its_own_secret():
    assert proof.secret_from_env({}) != proof.secret_from_env({})
    assert proof.client(proof.secret_from_env({}), proof.mint(SECRET, NOW), NOW) is None


@pytest.mark.parametrize(
    "alter",
    [
        lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),  # the signature
        lambda t: t.replace(t.split(".")[1], "x" * 22),  # the nonce
        lambda t: ".".join([*t.split(".")[:2], str(int(NOW) - 10), t.split(".")[3]]),  # the time issued
        lambda t: "2" + t[1:],  # the version
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


def test_a_waiting_cookie_says_when_and_proves_nothing():
    token = proof.waiting(90, NOW)
    assert proof.client(SECRET, token, NOW) is None
    assert proof.wait_s(token, NOW) == 90 and proof.wait_s(token, NOW + 89.5) == 1
    assert proof.wait_s(token, NOW + 90) is None
    assert proof.wait_s(proof.mint(SECRET, NOW), NOW) is None


def test_a_class_of_500_behind_one_address_is_let_in_and_a_script_minting_cookies_gets_the_rate(clock):
    minter = proof.Minter(Limits())
    assert [minter.admit(PUBLIC) for _ in range(500)] == [0] * 500  # the whole class, in one second
    assert [minter.admit(PUBLIC) for _ in range(100)] == [0] * 100  # and its second devices and reloads
    wait = minter.admit(PUBLIC)
    assert 0 < wait <= Limits.proof_window_s  # the 601st new browser of the hour waits
    assert minter.admit(who.address("8.8.8.8")) == 0  # another address is not affected
    clock.now += Limits.proof_window_s + 1
    assert minter.admit(PUBLIC) == 0


def test_addresses_a_replica_cant_see_share_one_budget_on_that_replica(clock):
    small = replace(Limits(), proofs_per_address=3, proofs_per_replica=2)
    replica_a, replica_b = proof.Minter(small), proof.Minter(small)
    assert [replica_a.admit("") for _ in range(2)] == [0, 0]
    assert replica_a.admit("") > 0
    assert replica_b.admit("") == 0  # the other replica counts its own
    assert replica_a.admit(PUBLIC) == 0  # a visible address has its own budget


def test_a_public_address_is_counted_across_replicas_and_a_store_down_falls_back_to_this_process(clock):
    small = replace(Limits(), proofs_per_address=2)
    shared = limits.storage.memory.MemoryStorage()
    replica_a, replica_b = proof.Minter(small, shared), proof.Minter(small, shared)
    assert replica_a.admit(PUBLIC) == 0 and replica_b.admit(PUBLIC) == 0
    assert replica_a.admit(PUBLIC) > 0 and replica_b.admit(PUBLIC) > 0  # the two together had the address's 2

    down = proof.Minter(small, shared)

    def unreachable(*args, **kwargs):
        raise StoreDown("refused")

    down._address.hit = unreachable
    assert [down.admit(PUBLIC) for _ in range(2)] == [0, 0]
    assert down.admit(PUBLIC) > 0  # still counted, in this process


def test_with_the_limits_off_every_visitor_gets_a_proof():
    minter = proof.Minter(Limits.off())
    assert all(minter.admit(PUBLIC) == 0 for _ in range(2000))


# The middleware, on a stand-in for Streamlit's app: an HTML page and a JSON answer.


async def _page(scope, receive, send):
    kind = b"text/html; charset=utf-8" if scope["path"] == "/class" else b"application/json"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    await send({"type": "http.response.body", "body": b"{}"})


def _get(path: str, cookie: str = "", ip: str = "8.8.4.4", method: str = "GET") -> dict[bytes, list[bytes]]:
    from ui import proof as ui_proof

    headers = [(b"cookie", cookie.encode())] if cookie else []
    scope = {"type": "http", "method": method, "path": path, "headers": headers, "client": (ip, 5000)}
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    aio.run(ui_proof.Middleware(_page)(scope, None, send))
    found: dict[bytes, list[bytes]] = {}
    for name, value in sent[0]["headers"]:
        found.setdefault(name, []).append(value)
    return found


def _proof_of(headers: dict[bytes, list[bytes]]) -> str:
    (cookie,) = headers[b"set-cookie"]
    text = cookie.decode()
    assert "HttpOnly" in text and "SameSite=Lax" in text and "Path=/" in text
    return text.split(";")[0].split("=", 1)[1]


@pytest.fixture
def server(monkeypatch, clock):
    """ui.proof's middleware with a fresh budget of 3 new proofs per address."""
    from ui import proof as ui_proof

    minter = proof.Minter(replace(Limits(), proofs_per_address=3, proofs_per_replica=3))
    monkeypatch.setattr(ui_proof, "minter", lambda: minter)
    monkeypatch.setattr(ui_proof, "time", types.SimpleNamespace(time=clock.time))
    return ui_proof


def test_the_pages_html_gives_a_browser_its_proof_once_and_nothing_else_does(server):
    token = _proof_of(_get("/class"))
    assert proof.client(server.secret(), token, NOW) is not None
    assert b"set-cookie" not in _get("/class", f"other=1; {proof.COOKIE}={token}")  # kept: nothing new
    assert b"set-cookie" not in _get("/_stcore/health")  # not a page
    assert b"set-cookie" not in _get("/class", method="POST")
    assert proof.client(server.secret(), _proof_of(_get("/class", f"{proof.COOKIE}=1.forged.1.x")), NOW)


def test_a_script_that_discards_its_cookies_gets_the_budget_then_a_cookie_that_only_says_when(server, clock):
    tokens = [_proof_of(_get("/class")) for _ in range(3)]
    assert all(proof.client(server.secret(), t, NOW) for t in tokens)
    refused = _proof_of(_get("/class"))
    assert proof.client(server.secret(), refused, NOW) is None
    wait = proof.wait_s(refused, NOW)
    assert wait and wait <= Limits.proof_window_s
    assert _proof_of(_get("/class", f"{proof.COOKIE}={refused}")) == refused  # waiting: the budget is not asked
    assert proof.client(server.secret(), _proof_of(_get("/class", ip="8.8.8.8")), NOW)  # another address
    clock.now += Limits.proof_window_s + 1
    assert proof.client(server.secret(), _proof_of(_get("/class", f"{proof.COOKIE}={refused}")), clock.now)
