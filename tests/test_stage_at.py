"""The stage's numbers at another γ and β from a route (ui/stage/stage_at.py, issue 32): torch's, the ones the rerun
then sends, only for the session that was offered them, never past the cache."""

import dataclasses
import gc
import weakref

import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, run_page, stage_data
from starlette.testclient import TestClient

from lnviz.labs import explorer
from lnviz.maths import data
from server import base_path
from ui.poll import routes
from ui.stage import stage_at

PAGE = "pages/explorer.py"


def offered(base, g=None, b=None, values=(1.0, 0.0), rows=slice(0, 4), cols=slice(0, 6), locked=()):
    """``base`` offered under a token of its own, as a page's run offers it; the token."""
    token = f"test-{id(base)}-{len(locked)}"
    extra = {"cell": [0, 0], "present": False, "walk": None, "formula": "", "waiting": False}
    stage_at.offers().put(token, stage_at.Offer(weakref.ref(base), g, b, values, rows, cols, frozenset(locked), extra))
    return token


def grid(values: list, rows: slice, cols: slice) -> torch.Tensor:
    return torch.tensor([float(v) for v in values], dtype=torch.float64).reshape(
        rows.stop - rows.start, cols.stop - cols.start
    )


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("per_feature", [False, True])
def test_the_route_gives_torchs_outputs_at_the_asked_gain_and_bias(seed, per_feature):
    gen = torch.Generator().manual_seed(seed)
    batch, features = (int(n) for n in torch.randint(3, 12, (2,), generator=gen))
    eps = 1e-5
    x = data.make_activations("heterogeneous features", batch, features, seed)  # (B, H) float64
    base = explorer.normalize(x, eps)
    g, b = data.random_affine(features, seed) if per_feature else (None, None)  # (H,) each
    rows, cols = slice(1, batch), slice(0, features - 1)
    token = offered(base, g, b, rows=rows, cols=cols)
    status, got = stage_at.numbers(token, {"gain": "1.5", "bias": "-0.25"})
    assert status == 200
    gamma = 1.5 * (torch.ones(features, dtype=torch.float64) if g is None else g)  # γ = gain·g
    beta = -0.25 + (torch.zeros(features, dtype=torch.float64) if b is None else b)  # β = bias + b
    ln = F.layer_norm(x, (features,), gamma, beta, eps)
    bn = F.batch_norm(x, None, None, gamma, beta, training=True, eps=eps)
    torch.testing.assert_close(grid(got["ln"]["y"], rows, cols), ln[rows, cols], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grid(got["bn"]["y"], rows, cols), bn[rows, cols], rtol=1e-12, atol=1e-12)
    assert {c["name"]: c["value"] for c in got["controls"]} == {"gain": 1.5, "bias": -0.25, "eps": eps}
    assert got["waiting"] is False and got["cell"] == [0, 0]  # what ui.stage.stage.draw adds, but a report


def test_values_go_on_their_steps_a_locked_one_stays_and_junk_is_refused():
    base = explorer.normalize(data.make_activations("heterogeneous features", 4, 6, 0), 1e-5)
    token = offered(base, values=(2.0, 0.5))

    def controls(query):
        status, got = stage_at.numbers(token, query)
        assert status == 200, status
        return {c["name"]: c["value"] for c in got["controls"]}

    assert controls({"gain": "1.52", "bias": "9"}) == {"gain": 1.5, "bias": 5.0, "eps": 1e-5}  # a step; clamped
    assert controls({}) == {"gain": 2.0, "bias": 0.5, "eps": 1e-5}  # what the page drew
    for junk in ("x", "nan", "inf", "-Infinity", ""):
        assert stage_at.numbers(token, {"gain": junk})[0] == 400, junk
    locked = offered(base, values=(2.0, 0.5), locked=("gain",))
    _, got = stage_at.numbers(locked, {"gain": "3", "bias": "1"})
    assert {c["name"]: c["value"] for c in got["controls"]}["gain"] == 2.0  # the link hides it: as drawn


def test_an_unknown_token_a_result_the_cache_let_go_and_a_second_request_at_once_are_refused():
    assert stage_at.numbers("no-such-token", {"gain": "1"})[0] == 404
    base = explorer.normalize(data.make_activations("heterogeneous features", 4, 6, 0), 1e-5)
    token = offered(base)
    assert stage_at.offers().begin(token)  # one of its requests is computing
    assert stage_at.numbers(token, {"gain": "1.5"})[0] == 429
    assert stage_at.numbers(token, {"gain": "1.5", "ahead": "1"})[0] == 200  # asked ahead: beside it, in turn
    stage_at.offers().end(token)
    assert stage_at.offers().begin(f"{token}#ahead")  # one asked ahead is computing
    assert stage_at.numbers(token, {"gain": "1.5", "ahead": "1"})[0] == 429
    assert stage_at.numbers(token, {"gain": "1.5"})[0] == 200  # a move's question is answered beside it
    stage_at.offers().end(f"{token}#ahead")
    del base
    gc.collect()
    assert stage_at.numbers(token, {"gain": "1.5"})[0] == 404  # the offer kept no grid alive


def test_the_process_keeps_its_latest_offers():
    kept = stage_at.Offers(size=2)
    base = explorer.normalize(data.make_activations("heterogeneous features", 2, 3, 0), 1e-5)
    offer = stage_at.Offer(weakref.ref(base), None, None, (1.0, 0.0), slice(0, 2), slice(0, 3), frozenset(), {})
    for token in ("a", "b", "c"):
        kept.put(token, offer)
    kept.put("b", offer)  # offered again: the latest
    kept.put("d", offer)
    assert [t for t in "abcd" if kept.get(t)] == ["b", "d"]


def test_the_explorer_offers_its_stage_and_the_route_answers_what_the_rerun_then_sends():
    at = run_page(PAGE, {"batch": "6", "features": "10", "seed": "3"})
    assert_no_exception(at)
    first = stage_data(at)
    offer = first["stage_at"]
    assert offer["keys"] == ["gain", "bias"] and offer["url"].startswith("/api/stage/")
    token = offer["url"].rsplit("/", 1)[1]
    status, answer = stage_at.numbers(token, {"gain": "-0.75", "bias": "0.4"})
    assert status == 200
    at.slider(key="gain").set_value(-0.75)
    at.slider(key="bias").set_value(0.4).run()
    rerun = stage_data(at)
    assert answer["stage_at"] == offer  # the stage goes on following the sliders after an answer
    assert rerun["stage_at"]["url"] == offer["url"]  # one token per session
    assert rerun["stage_at"]["serial"] != offer["serial"]  # a new offer: what was asked ahead is dropped
    assert {k: v for k, v in rerun.items() if k != "stage_at"} == {k: v for k, v in answer.items() if k != "stage_at"}
    hidden = run_page(PAGE, {"hide": "bias"})
    assert stage_data(hidden)["stage_at"]["keys"] == ["gain"]


def test_the_route_is_served_under_the_base_path(monkeypatch):
    from starlette.applications import Starlette

    monkeypatch.setattr(base_path, "prefix", lambda: "/lnviz")
    base = explorer.normalize(data.make_activations("heterogeneous features", 3, 4, 0), 1e-5)
    token = offered(base, rows=slice(0, 3), cols=slice(0, 4))
    with TestClient(Starlette(routes=routes.routes())) as client:
        got = client.get(f"/lnviz/api/stage/{token}", params={"gain": "2"})
        assert got.status_code == 200 and got.headers["cache-control"] == "no-store"
        assert {c["name"]: c["value"] for c in got.json()["controls"]}["gain"] == 2.0
        assert client.get("/lnviz/api/stage/unknown").status_code == 404
        assert client.get(f"/lnviz/api/stage/{token}", params={"bias": "junk"}).status_code == 400


def test_the_route_computes_in_a_fair_turn_of_the_pages_computations_charged_to_the_sessions_client(monkeypatch):
    """The route's torch work takes a slot of the page kit's misses lane (server.slots), as a page's
    uncached computation does: it waits while the lane is full, and its time is charged to the offer's client."""
    import threading
    import types

    from server.slots import MISSES, Lane, Slots
    from ui.kit import page

    now = [0.0]
    misses = Slots({MISSES: Lane(1)}, clock=lambda: now[0])
    monkeypatch.setattr(page, "results", lambda: types.SimpleNamespace(misses=misses))
    base = explorer.normalize(data.make_activations("heterogeneous features", 4, 6, 0), 1e-5)
    token = "test-fair"
    extra = {"cell": [0, 0], "present": False, "walk": None, "formula": "", "waiting": False}
    offer = stage_at.Offer(weakref.ref(base), None, None, (1.0, 0.0), slice(0, 4), slice(0, 6), frozenset(), extra)
    stage_at.offers().put(token, dataclasses.replace(offer, client="mine"))
    computed = stage_at.Offer.at

    def five_seconds(self, gain, bias):  # on the scheduler's clock
        now[0] += 5.0
        return computed(self, gain, bias)

    monkeypatch.setattr(stage_at.Offer, "at", five_seconds)
    got = []
    with misses.slot("a classmate"):  # the lane's one slot is taken
        asked = threading.Thread(target=lambda: got.append(stage_at.numbers(token, {"gain": "1.5"})))
        asked.start()
        asked.join(0.3)
        assert asked.is_alive() and not got, "the route did not wait for its turn"
        now[0] = 1.0
    asked.join(10)
    assert got and got[0][0] == 200
    assert misses.spent("mine") == pytest.approx(5.0, rel=0.1)  # charged to the session whose stage asked
    assert misses.spent("a classmate") == pytest.approx(1.0, rel=0.1)
    # A lane full for longer than the route waits: refused, and the stage waits for the rerun.
    got.clear()
    with misses.slot("a classmate"):
        asked = threading.Thread(target=lambda: got.append(stage_at.numbers(token, {"gain": "2"})))
        asked.start()
        asked.join(0.3)
        now[0] += stage_at.TURN_WAIT_S + 1
        asked.join(10)
        assert got == [(429, {})]


def test_attack_8_one_clients_offers_push_out_only_its_own():
    """Issue 47, attack 8: one client making offers fast pushed every other session's out of the latest 4,096.
    Now past the process's offers the oldest of the client holding the most goes: a classmate's stays."""
    kept = stage_at.Offers(size=4)
    base = explorer.normalize(data.make_activations("heterogeneous features", 2, 3, 0), 1e-5)
    offer = stage_at.Offer(weakref.ref(base), None, None, (1.0, 0.0), slice(0, 2), slice(0, 3), frozenset(), {})
    kept.put("classmate", dataclasses.replace(offer, client="a classmate"))
    for n in range(100):
        kept.put(f"script {n}", dataclasses.replace(offer, client="a script"))
    assert kept.get("classmate") is not None
    assert [n for n in range(100) if kept.get(f"script {n}")] == [97, 98, 99]


def test_attack_8_a_clients_answers_spend_a_budget_of_compute_that_refills_and_not_its_classmates(monkeypatch):
    """Issue 47, attack 8: tokens asked back to back took 26 s of CPU in 40 s and tripled a bystander's γ p95. Now
    a client's answers are charged their compute time; past its budget the route says 429 and when to try
    again, while another client's stage is answered, and the budget comes back as its window passes."""
    import time
    import types

    import limits.storage.memory
    import limits.strategies
    from starlette.applications import Starlette

    from server import quota
    from server.quota import Quota

    # The windows' clock stands still until the test moves it: on a loaded machine three requests could otherwise
    # span a window's end, and the estimate's decay let the third one through. The compute time charged is real.
    now = [time.time()]
    clock = types.SimpleNamespace(time=lambda: now[0])
    for module in (limits.storage.memory, limits.strategies, quota):
        monkeypatch.setattr(module, "time", clock)
    budget = Quota("stage-ms-test", 100, 1, exact=False)  # 100 ms of compute per second
    monkeypatch.setattr(stage_at, "spent", lambda: budget)
    computed = stage_at.Offer.at
    monkeypatch.setattr(stage_at.Offer, "at", lambda self, g, b: time.sleep(0.06) or computed(self, g, b))
    base = explorer.normalize(data.make_activations("heterogeneous features", 4, 6, 0), 1e-5)
    token = offered(base)
    stage_at.offers().put(token, dataclasses.replace(stage_at.offers().get(token), client="a script"))
    other = offered(base, locked=("eps",))
    stage_at.offers().put(other, dataclasses.replace(stage_at.offers().get(other), client="a classmate"))
    with TestClient(Starlette(routes=routes.routes())) as client:
        answers = [client.get(f"/api/stage/{token}", params={"gain": "1.5"}) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]  # 60 ms, then 120: past its 100
        assert int(answers[2].headers["retry-after"]) == 1
        assert client.get(f"/api/stage/{other}", params={"gain": "1.5"}).status_code == 200
        now[0] += 2.1  # two windows later: refilled
        assert client.get(f"/api/stage/{token}", params={"gain": "1.5"}).status_code == 200
    unlimited = offered(base, locked=("gain", "bias"))  # the limits off: no client, never refused
    assert all(stage_at.numbers(unlimited, {"gain": "1.5"})[0] == 200 for _ in range(4))
