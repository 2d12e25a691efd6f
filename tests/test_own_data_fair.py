"""A replica's own-data memory shared fairly between clients: a client's grids past an equal share go first, and
a rerun does not renew a grid's protection (issue 30, attack 6). Fake clocks throughout."""

import numpy as np
import pytest
from conftest import run_page, stage_x

from server import limits, own_store
from server.budget import MIB, Budget
from server.limits import Limits
from ui.labs import own_data


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def grid(seed: int, nbytes: int) -> np.ndarray:
    """A (rows, 128) float64 matrix of ``nbytes`` bytes, different for each seed."""
    x = np.zeros((nbytes // (128 * 8), 128))
    x[0, 0] = seed
    return x


def sized(n: int) -> bytes:
    return bytes(n)


def test_a_rerun_does_not_renew_protection_past_protect_s_from_the_first_put():
    clock = Clock()
    cache = Budget(2 * MIB, len, clock=clock, protect_s=60)
    cache.put("a", sized(MIB))
    cache.put("b", sized(MIB))
    for _ in range(6):  # both shown on every rerun, 10 s apart
        clock.now += 10
        assert cache.get("a") is not None and cache.get("b") is not None
    clock.now += 1
    cache.put("c", sized(MIB))  # 61 s after their first puts, though used 1 s ago: the least recently used goes
    assert "a" not in cache and "b" in cache and "c" in cache


def test_within_protection_a_newcomer_is_told_when_the_first_put_s_protection_ends():
    clock = Clock()
    cache = Budget(2 * MIB, len, clock=clock, protect_s=60)
    cache.put("a", sized(MIB))
    clock.now += 15
    cache.put("b", sized(MIB))
    clock.now += 15
    cache.get("a")  # a rerun: does not move the 30 s left
    with pytest.raises(limits.Full) as refused:
        cache.put("c", sized(MIB))
    assert (refused.value.why, refused.value.retry_after_s) == ("in use", 30)


def test_a_client_past_its_equal_share_loses_its_grids_first_even_in_use():
    clock = Clock()
    cache = Budget(8 * MIB, len, clock=clock, holder_bytes=8 * MIB, protect_s=120)
    hog = [f"hog {i}" for i in range(7)]
    for key in hog:
        cache.put(key, sized(MIB), holder="hog")
    cache.put("b", sized(MIB), holder="b")
    clock.now += 1
    cache.put("c", sized(MIB // 2), holder="c")  # 3 clients, 2.7 MiB each: the hog is 4.3 MiB over
    assert "hog 0" not in cache and all(k in cache for k in [*hog[1:], "b", "c"])


def test_a_browser_s_tabs_are_one_client_whose_own_older_grid_goes_first():
    clock = Clock()
    cache = Budget(8 * MIB, len, clock=clock, protect_s=120)
    cache.put("tab 1's", sized(7 * MIB // 2), holder="tab 1", client="browser")
    cache.put("d's", sized(9 * MIB // 2), holder="d")
    cache.put("tab 2's", sized(MIB), holder="tab 2", client="browser")  # the browser: 4.5 of 8 MiB, as d
    assert "d's" in cache and "tab 1's" not in cache and "tab 2's" in cache


def test_a_newcomer_over_its_share_takes_nothing_in_use_and_is_told_so():
    clock = Clock()
    cache = Budget(8 * MIB, len, clock=clock, protect_s=120)
    cache.put("a's", sized(4 * MIB), holder="a")
    cache.put("b's", sized(4 * MIB), holder="b")
    clock.now += 200  # past their protection, but in use
    cache.get("a's")
    cache.get("b's")
    with pytest.raises(limits.Full) as refused:
        cache.put("c's", sized(4 * MIB), holder="c")  # as far over the 2.7 MiB each of 3 may keep as a and b
    assert (refused.value.why, refused.value.share, refused.value.clients) == ("share", 8 * MIB // 3, 3)
    assert refused.value.retry_after_s == 120 and "a's" in cache and "b's" in cache


def test_a_grid_that_a_client_within_its_share_holds_too_stays():
    clock = Clock()
    cache = Budget(4 * MIB, len, clock=clock, holder_bytes=4 * MIB, protect_s=120)
    cache.put("shared", sized(MIB), holder="hog")
    cache.put("shared", sized(MIB), holder="small")  # opened by a link: held once, by both
    for i in range(3):
        cache.put(f"hog {i}", sized(MIB), holder="hog")
    cache.put("new", sized(MIB), holder="newcomer")  # the hog is over its 1.3 MiB; "small" is within
    assert "shared" in cache and "hog 0" not in cache


def attackers(store: Budget, clock: Clock, sessions: int, grids: int, nbytes: int) -> list[str]:
    """Attack 6: sessions without cookies (each its own client) each put ``grids`` grids, over 7 s."""
    keys = []
    for s in range(sessions):
        for g in range(grids):
            keys.append(own_store.put(store, f"session {s}", grid(s * 1000 + g, nbytes)))
        clock.now += 7 / sessions
    return keys


def rerun(store: Budget, keys: list[str]) -> None:
    for key in keys:
        store.get(key)


def test_attack_6_sixteen_sessions_filling_the_budget_and_rerunning_leave_room_for_an_honest_paste():
    """16 sessions × 8 grids fill the whole budget (at an eighth of the default sizes: 16 × 8 × 128 KiB =
    16 MiB) and rerun every 2 s; an honest 2 × 3 paste gets in at once, and stays while the attack goes on."""
    clock = Clock()
    lim = Limits()
    store = own_store.new(lim.own_data_bytes // 8, lim.own_data_session_bytes // 8, clock=clock)
    keys = attackers(store, clock, 16, 8, MIB // 8)
    assert store.bytes == store.budget
    rerun(store, keys)
    honest = own_store.put(store, "honest", np.array([[1.0, 2, 3], [4, 5, 7]]))
    for t in range(300):  # ten minutes: the attack reruns every 2 s, and a fresh session adds a grid every 10 s
        clock.now += 2
        rerun(store, keys)
        if t % 5 == 0:
            keys.append(own_store.put(store, f"fresh session {t}", grid(10**6 + t, MIB // 8)))
        np.testing.assert_array_equal(store.get(honest), [[1.0, 2, 3], [4, 5, 7]])
        assert store.bytes <= store.budget


def test_attack_6_on_the_page_the_honest_paste_is_shown(monkeypatch):
    clock = Clock()
    store = own_store.new(16 * MIB, 2 * MIB, clock=clock)
    monkeypatch.setattr(own_data, "store", lambda: store)
    rerun(store, attackers(store, clock, 16, 8, MIB // 8))
    at = run_page("pages/explorer.py")
    at.text_area(key="paste").input("1, 2, 3\n4, 5, 7").run()
    at = at.button(key="use_paste").click().run()
    assert not [w.value for w in at.warning if "again in" in w.value]
    np.testing.assert_array_equal(stage_x(at), [[1, 2, 3], [4, 5, 7]])
