"""The concept check in the store (server.check's rules), on both backends: this process's memory and a real
redis-server (tests/test_store.py's fixtures). Its steps move only with the room's secret; an answer is taken only
while its phase is open, once per voter and item (a change replaces it), within the limits a poll's vote meets."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
import test_store
from test_store import press

from server import check, poll
from server.limits import Limits
from server.poll import CHANGED, COUNTED
from server.store import MemoryStore, RedisStore

QUESTIONS = ("q-one", "q-two")
ITEMS = ("item-a", "item-b", "item-c")
redis_server, make_store, store = test_store.redis_server, test_store.make_store, test_store.store  # both backends


def opened(store, **fields):
    room, secret = poll.open_room(store, QUESTIONS, **fields)
    return room.code, secret


def test_the_checks_steps_move_only_with_the_secret_and_only_in_order(store):
    code, secret = opened(store)
    for action in check.ACTIONS:
        assert store.act(code, "not-the-secret", action, store.room(code).version) is None
    assert press(store, code, secret, check.CLOSE) is None  # nothing open to close
    steps = []
    for action in (check.OPEN, check.CLOSE, check.OPEN, check.CLOSE):
        before = store.room(code)
        after = press(store, code, secret, action)
        assert after.version == before.version + 1 and (after.index, after.phase) == (before.index, before.phase)
        steps.append(store.room(code).check)
    assert steps == ["pre", "pre-closed", "post", "post-closed"]
    assert press(store, code, secret, check.OPEN) is None and press(store, code, secret, check.CLOSE) is None
    other, other_secret = opened(store)
    press(store, other, other_secret, check.OPEN)
    press(store, other, other_secret, "close")
    assert press(store, other, other_secret, check.CLOSE) is None  # a closed room takes nothing


def test_an_answer_is_taken_only_while_its_phase_is_open_and_a_change_replaces_it(store):
    code, secret = opened(store)
    assert store.check_vote("NOSUCHRM", "ann", "pre", "item-a", "1") == "unknown"
    assert store.check_vote(code, "ann", "pre", "item-a", "1") == "check-not-open"
    press(store, code, secret, check.OPEN)
    assert store.check_vote(code, "ann", "post", "item-a", "1") == "check-not-open"
    assert store.check_vote(code, "ann", "pre", "item-a", "1") == COUNTED
    assert store.check_vote(code, "ann", "pre", "item-b", "0") == COUNTED
    assert store.check_vote(code, "ann", "pre", "item-a", "2") == CHANGED
    assert store.check_vote(code, "bob", "pre", "item-a", "0") == COUNTED
    assert store.check_counts(code, "pre") == (2, 3) and store.check_counts(code, "post") == (0, 0)
    assert store.check_mine(code, "ann", "pre", ITEMS) == {"item-a": "2", "item-b": "0"}
    assert store.check_mine(code, "ann", "pre", ("item-b",)) == {"item-b": "0"}
    assert store.check_mine(code, "cat", "pre", ITEMS) == {} and store.check_mine(code, "ann", "pre", ()) == {}
    press(store, code, secret, check.CLOSE)
    assert store.check_vote(code, "ann", "pre", "item-a", "0") == "check-closed"
    assert store.check_vote(code, "ann", "post", "item-a", "0") == "check-not-open"
    press(store, code, secret, check.OPEN)
    assert store.check_vote(code, "ann", "post", "item-a", "0") == COUNTED
    assert store.check_vote(code, "ann", "pre", "item-a", "1") == "check-closed"
    press(store, code, secret, check.CLOSE)
    assert store.check_vote(code, "ann", "post", "item-a", "1") == "check-closed"
    assert store.check_answers(code, "pre") == {"ann": {"item-a": "2", "item-b": "0"}, "bob": {"item-a": "0"}}
    assert store.check_answers(code, "post") == {"ann": {"item-a": "0"}}
    assert store.votes(code, 0, 1) == {}  # the poll's rounds are apart
    press(store, code, secret, "close")
    assert store.check_vote(code, "ann", "post", "item-a", "1") == "closed"
    assert set(check.REFUSED) | set(poll.REFUSED) >= {"check-closed", "check-not-open", "closed", "unknown"}


def test_the_checks_answers_and_the_polls_votes_go_on_side_by_side(store):
    code, secret = opened(store)
    assert store.vote(code, "ann", 0, 1, "1") == COUNTED
    press(store, code, secret, check.OPEN)
    assert store.vote(code, "bob", 0, 1, "0") == COUNTED  # the poll's round still takes votes
    assert store.check_vote(code, "ann", "pre", "item-a", "1") == COUNTED
    assert store.votes(code, 0, 1) == {"ann": "1", "bob": "0"}
    assert store.joined(code)[0] == 2  # a voter of both is one voter of the room


def test_an_answer_meets_the_door_and_a_voter_in_answers_on(store):
    code, secret = opened(store)
    press(store, code, secret, check.OPEN)
    assert store.check_vote(code, "ann", "pre", "item-a", "1", client="a") == COUNTED
    press(store, code, secret, "shut")
    assert store.check_vote(code, "bob", "pre", "item-a", "1", client="b") == "door"
    assert store.check_vote(code, "ann", "pre", "item-b", "1", client="a") == COUNTED
    press(store, code, secret, check.CLOSE)
    press(store, code, secret, check.OPEN)
    assert store.check_vote(code, "ann", "post", "item-a", "0", client="a") == COUNTED  # joined before: in
    assert store.check_vote(code, "bob", "post", "item-a", "0", client="b") == "door"
    press(store, code, secret, "reopen")
    assert store.check_vote(code, "bob", "post", "item-a", "0", client="b") == COUNTED


def test_an_answer_meets_a_browsers_and_an_addresss_voters_and_a_phase_its_max_voters(make_store):
    store = make_store(voters_per_client=3, voters_per_address=1, voters_per_s=0, max_voters=5)
    code, secret = opened(store)
    assert store.vote(code, "v0", 0, 1, "1", client="laptop") == COUNTED  # a poll's vote counts for the browser
    store.vote(code, "v1", 0, 1, "1", client="laptop")
    press(store, code, secret, check.OPEN)
    cast = [store.check_vote(code, v, "pre", "item-a", "1", client="laptop") for v in ("v0", "v1", "v2", "v3")]
    assert cast == [COUNTED, COUNTED, COUNTED, "crowded"]
    shared = [store.check_vote(code, f"w{i}", "pre", "item-a", "1", client="pc", address="10.0.0.9") for i in range(3)]
    assert shared == [COUNTED, COUNTED, "network"]  # its own, then the address's one place
    assert store.check_vote(code, "x0", "pre", "item-a", "1") == "full"  # v0, v1, v2, w0, w1: the phase's five
    assert store.check_vote(code, "v1", "pre", "item-b", "0", client="laptop") == COUNTED  # one already in
    assert store.check_counts(code, "pre") == (5, 6)


def test_a_flood_of_answers_is_refused_after_the_rate_a_poll_vote_shares(make_store):
    store = make_store(votes_per_rate_window=4)
    code, secret = opened(store)
    assert store.vote(code, "ann", 0, 1, "1") == COUNTED
    press(store, code, secret, check.OPEN)
    cast = [store.check_vote(code, "ann", "pre", item, "0") for item in (*ITEMS, "item-d")]
    assert cast == [COUNTED] * 3 + ["flood"]
    assert store.check_counts(code, "pre") == (1, 3)
    assert store.check_vote(code, "bob", "pre", "item-a", "0") == COUNTED


def test_answers_from_many_threads_at_once_are_each_counted_exactly_once(store):
    code, secret = opened(store)
    press(store, code, secret, check.OPEN)
    voters = [f"v{i}" for i in range(24)]
    outcomes: list[str] = []
    lock = threading.Lock()

    def answer(voter: str) -> None:
        for item in ITEMS:
            for choice in ("0", "1"):  # each answer changed once
                outcome = store.check_vote(code, voter, "pre", item, choice)
                with lock:
                    outcomes.append(outcome)

    threads = [threading.Thread(target=answer, args=(v,)) for v in voters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count(COUNTED) == outcomes.count(CHANGED) == len(voters) * len(ITEMS)
    assert store.check_answers(code, "pre") == {v: dict.fromkeys(ITEMS, "1") for v in voters}
    assert store.check_counts(code, "pre") == (len(voters), len(voters) * len(ITEMS))


def test_redis_check_keys_live_as_long_as_the_room(redis_server):
    store = RedisStore(redis_server.url, prefix="checkttl:", limits=replace(Limits(), idle_s=500))
    code, secret = opened(store)
    press(store, code, secret, check.OPEN)
    store.check_vote(code, "ann", "pre", "item-a", "1", client="ann")
    r = store._redis
    keys = {k.decode() for k in r.keys("checkttl:check:*")}
    assert keys == {f"checkttl:check:{code}:pre", f"checkttl:check:{code}:pre:voters"}
    assert all(400 < r.ttl(key) <= 500 for key in keys)


def test_a_memory_checks_answers_expire_with_the_room():
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    code, secret = opened(store)
    press(store, code, secret, check.OPEN)
    store.check_vote(code, "ann", "pre", "item-a", "1")
    now[0] = store.limits.idle_s - 1
    assert store.check_counts(code, "pre") == (1, 1)
    now[0] = store.limits.idle_s + 1
    assert store.check_counts(code, "pre") == (0, 0) and store.check_answers(code, "pre") == {}
    assert store.check_vote(code, "ann", "pre", "item-a", "1") == "unknown"


@pytest.mark.parametrize("phase", check.PHASES)
def test_the_refusals_of_memory_and_of_redis_follow_one_rule_at_every_step(redis_server, phase):
    """At each step, each backend refuses (or takes) an answer for ``phase`` as check.refusal says."""
    for backend in (MemoryStore(), RedisStore(redis_server.url, prefix=f"steps{phase}:")):
        code, secret = opened(backend)
        for action in (None, check.OPEN, check.CLOSE, check.OPEN, check.CLOSE):
            if action:
                press(backend, code, secret, action)
            room = backend.room(code)
            expected = check.refusal(room, phase)
            got = backend.check_vote(code, f"voter-{room.version}", phase, "item-a", "0")
            assert got == (expected or COUNTED), (type(backend).__name__, room.check, got)
