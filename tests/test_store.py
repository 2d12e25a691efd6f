"""server.store: the store's contract, the class poll's rules applied in it and its blobs, run against both
backends: this process's memory and a real redis-server (started on a free port for this module, harness/redis.py).
A store holds a :class:`~server.limits.Limits` whole: each limit is tested on a store given a small one."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from harness import redis as redis_harness
from server import poll
from server.limits import Limits, StoreDown, StoreFull
from server.poll import CHANGED, COUNTED, Room
from server.store import MemoryStore, RedisStore, Store, from_env

QUESTIONS = ("q-one", "q-two")
TODAY = Limits()  # the numbers a store holds unless given others
_prefixes = itertools.count()


def press(store: Store, code: str, secret: str, action: str) -> Room | None:
    """The presenter's ``action`` as a page that drew the room as it is now presses it."""
    return store.act(code, secret, action, store.room(code).version)


@pytest.fixture(scope="module")
def redis_server() -> Iterator[redis_harness.RedisServer]:
    with redis_harness.running() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
def make_store(request) -> Callable[..., Store]:
    """A store of the backend under test, given today's limits but for the numbers given (keyword arguments)."""
    if request.param == "memory":
        return lambda **numbers: MemoryStore(replace(TODAY, **numbers))
    server = request.getfixturevalue("redis_server")

    def redis_store(**numbers: float) -> Store:  # each its own keys
        return RedisStore(server.url, prefix=f"test{next(_prefixes)}:", limits=replace(TODAY, **numbers))

    return redis_store


@pytest.fixture
def store(make_store) -> Store:
    return make_store()


def test_a_room_is_opened_with_a_fresh_code_and_read_back_as_it_was_stored(store):
    room, secret = poll.open_room(store, QUESTIONS)
    assert poll.valid_code(room.code) == room.code
    assert store.room(room.code) == room
    assert room.question == "q-one" and room.phase == "ask" and room.round == 1
    assert poll.presenter_of(room, secret) and not poll.presenter_of(room, secret + "x")
    assert secret not in repr(store.room(room.code))  # only its hash is kept


def test_a_taken_code_is_not_overwritten(store):
    room, _ = poll.open_room(store, QUESTIONS)
    assert store.create(Room(room.code, ("other",), secret_sha=poll.sha("thief"))) == "taken"
    assert store.room(room.code) == room


def test_one_vote_per_voter_per_round_a_changed_answer_replaces_the_first(store):
    room, _ = poll.open_room(store, QUESTIONS)
    assert store.vote(room.code, "ann", 0, 1, "2") == COUNTED
    assert store.vote(room.code, "bob", 0, 1, "1") == COUNTED
    assert store.vote(room.code, "ann", 0, 1, "0") == CHANGED
    assert store.votes(room.code, 0, 1) == {"ann": "0", "bob": "1"}
    assert store.count(room.code, 0, 1) == 2
    assert store.mine(room.code, "ann", 0, 1) == "0" and store.mine(room.code, "cat", 0, 1) is None


def test_only_the_secret_moves_the_room_and_each_action_only_when_it_applies(store):
    room, secret = poll.open_room(store, QUESTIONS)

    def act(action: str) -> Room | None:
        return press(store, room.code, secret, action)

    for action in poll.ACTIONS:
        assert store.act(room.code, "not-the-secret", action, room.version) is None
        assert store.act(room.code, "", action, room.version) is None
    assert store.room(room.code) == room
    assert act("again") is None  # round 1 not revealed yet
    revealed = act("reveal")
    assert revealed is not None and revealed.phase == "reveal" and revealed.version == room.version + 1
    assert act("reveal") is None  # twice: the second click does nothing
    again = act("again")
    assert again is not None and (again.round, again.phase, again.index) == (2, "ask", 0)
    assert act("reveal").phase == "reveal"
    assert act("again") is None  # no third round
    second = act("next")
    assert (second.index, second.round, second.phase, second.question) == (1, 1, "ask", "q-two")
    done = act("next")
    assert done.phase == "done" and done.question is None
    assert act("next") is None
    closed = act("close")
    assert closed.closed and store.room(room.code).closed
    assert act("close") is None


def test_an_action_at_a_version_the_room_has_left_is_not_applied(store):
    """Two presses of Next from one drawn page (a double click, two tabs, two replicas) move one question."""
    room, secret = poll.open_room(store, QUESTIONS)
    seen = room.version  # what both presses were drawn at
    moved = store.act(room.code, secret, "next", seen)
    assert moved is not None and moved.index == 1 and moved.version == seen + 1
    for action in ("next", "close", "reveal"):
        assert store.act(room.code, secret, action, seen) is None
    assert store.room(room.code) == moved
    assert store.act(room.code, secret, "next", seen + 7) is None  # nor at a version it has not reached
    assert store.act(room.code, secret, "next", moved.version).phase == "done"


def test_presses_from_many_threads_at_one_version_move_the_room_once(store):
    room, secret = poll.open_room(store, QUESTIONS)
    with ThreadPoolExecutor(8) as pool:
        applied = list(pool.map(lambda _: store.act(room.code, secret, "next", room.version), range(16)))
    assert sum(a is not None for a in applied) == 1
    assert store.room(room.code).index == 1


def test_votes_count_only_in_the_asking_round_and_each_refusal_says_why(store):
    room, secret = poll.open_room(store, QUESTIONS)
    assert store.vote("NOSUCHRM", "ann", 0, 1, "1") == "unknown"
    assert store.vote(room.code, "ann", 1, 1, "1") == "moved"  # a question not asked yet
    store.vote(room.code, "ann", 0, 1, "1")
    press(store, room.code, secret, "reveal")
    assert store.vote(room.code, "bob", 0, 1, "1") == "revealed"
    assert store.vote(room.code, "ann", 0, 1, "2") == "revealed"
    assert store.votes(room.code, 0, 1) == {"ann": "1"}  # the reveal froze the round
    press(store, room.code, secret, "again")
    assert store.vote(room.code, "ann", 0, 2, "2") == COUNTED  # round 2 counts apart from round 1
    assert store.vote(room.code, "bob", 0, 1, "2") == "moved"
    assert store.votes(room.code, 0, 1) == {"ann": "1"} and store.votes(room.code, 0, 2) == {"ann": "2"}
    press(store, room.code, secret, "close")
    assert store.vote(room.code, "cat", 0, 2, "0") == "closed"
    assert set(poll.REFUSED) >= {"unknown", "moved", "revealed", "closed", "flood", "full"}


def test_a_flood_of_votes_is_refused_after_the_rate_and_counts_once(store):
    room, _ = poll.open_room(store, QUESTIONS)
    rate = store.limits.votes_per_rate_window
    outcomes = [store.vote(room.code, "ann", 0, 1, str(i % 3)) for i in range(rate + 5)]
    assert outcomes[0] == COUNTED and outcomes[1:rate] == [CHANGED] * (rate - 1)
    assert outcomes[rate:] == ["flood"] * 5
    assert store.count(room.code, 0, 1) == 1
    assert store.vote(room.code, "bob", 0, 1, "1") == COUNTED  # one voter's flood is not anyone else's


def test_votes_from_many_threads_at_once_are_each_counted_exactly_once(store):
    room, _ = poll.open_room(store, QUESTIONS)
    voters = [f"v{i}" for i in range(40)]
    outcomes: list[str] = []
    lock = threading.Lock()

    def cast(voter: str) -> None:
        for choice in ("0", "1", "2"):  # each voter changes its mind twice
            outcome = store.vote(room.code, voter, 0, 1, choice)
            with lock:
                outcomes.append(outcome)

    threads = [threading.Thread(target=cast, args=(v,)) for v in voters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count(COUNTED) == len(voters) and outcomes.count(CHANGED) == 2 * len(voters)
    assert store.votes(room.code, 0, 1) == dict.fromkeys(voters, "2")


def test_a_round_takes_at_most_max_voters_but_a_known_voter_may_still_change(make_store):
    store = make_store(max_voters=3)
    room, _ = poll.open_room(store, QUESTIONS)
    assert [store.vote(room.code, f"v{i}", 0, 1, "1") for i in range(4)] == [COUNTED] * 3 + ["full"]
    assert store.vote(room.code, "v0", 0, 1, "2") == CHANGED


def test_a_client_opens_at_most_its_rooms_per_window_and_another_client_is_not_affected(make_store):
    store = make_store(rooms_per_client=3)
    opened = [poll.open_room(store, QUESTIONS, client="ann")[0] for _ in range(3)]
    with pytest.raises(poll.OpenRefused) as refused:
        poll.open_room(store, QUESTIONS, client="ann")
    assert refused.value.why == "many" and "You have opened" in str(refused.value)
    assert all(store.room(room.code) == room for room in opened)  # the refusal took nothing away
    assert poll.open_room(store, QUESTIONS, client="bob")[0].code
    assert poll.open_room(store, QUESTIONS)[0].code  # an opener the caller can't name is not counted


def test_a_browsers_first_room_of_the_window_is_its_own_and_only_its_further_rooms_count_on_its_address(make_store):
    """Issue 47's attack 5: 60 rooms in 14 s locked a lecturer behind the same address out for the hour."""
    store = make_store(rooms_per_client=3, rooms_per_address=4)
    for client in ("script-0", "script-1"):  # each: its own first, then two more on the address
        for _ in range(3):
            poll.open_room(store, QUESTIONS, client=client, address="10.0.0.1")
    with pytest.raises(poll.OpenRefused) as refused:
        poll.open_room(store, QUESTIONS, client="script-0", address="10.0.0.1")
    assert refused.value.why == "many"
    lecturer, _ = poll.open_room(store, QUESTIONS, client="lecturer", address="10.0.0.1")  # its first: its own
    assert store.room(lecturer.code) is not None
    with pytest.raises(poll.OpenRefused) as refused:
        poll.open_room(store, QUESTIONS, client="lecturer", address="10.0.0.1")
    assert refused.value.why == "network"  # its second would be the address's fifth
    assert poll.open_room(store, QUESTIONS, client="lecturer", address="10.0.0.2")[0].code  # another network


def test_a_taken_code_drawn_again_is_not_counted_against_the_opener(make_store, monkeypatch):
    store = make_store(rooms_per_client=2)
    taken, _ = poll.open_room(store, QUESTIONS, client="bob")
    draws = iter([taken.code, taken.code, "ZZZZZZZZ", "YYYYYYYY"])
    monkeypatch.setattr(poll, "new_code", lambda: next(draws))
    assert poll.open_room(store, QUESTIONS, client="ann")[0].code == "ZZZZZZZZ"
    assert poll.open_room(store, QUESTIONS, client="ann")[0].code == "YYYYYYYY"


def test_a_memory_client_may_open_rooms_again_once_its_window_has_passed():
    now = [0.0]
    store = MemoryStore(replace(TODAY, rooms_per_client=2), clock=lambda: now[0])
    for _ in range(2):
        poll.open_room(store, QUESTIONS, client="ann")
    now[0] = TODAY.open_window_s - 1
    with pytest.raises(poll.OpenRefused):
        poll.open_room(store, QUESTIONS, client="ann")
    now[0] = TODAY.open_window_s + 1
    assert poll.open_room(store, QUESTIONS, client="ann")[0].code


def test_memory_holds_at_most_max_rooms_and_an_expired_room_frees_its_place():
    now = [0.0]
    store = MemoryStore(replace(TODAY, max_rooms=5), clock=lambda: now[0])
    first, _ = poll.open_room(store, QUESTIONS)
    now[0] = 10.0
    for i in range(4):
        poll.open_room(store, QUESTIONS, client=f"c{i}")
    with pytest.raises(poll.OpenRefused) as refused:
        poll.open_room(store, QUESTIONS, client="late")
    assert refused.value.why == "full"
    now[0] = TODAY.idle_s + 1  # the first room has expired, the other four not yet
    assert poll.open_room(store, QUESTIONS, client="late")[0].code
    assert store.room(first.code) is None


def test_a_client_votes_as_at_most_its_voters_per_room_but_each_of_them_may_vote_on(store):
    room, secret = poll.open_room(store, QUESTIONS)
    n = TODAY.voters_per_client  # today's, the default
    cast = [store.vote(room.code, f"v{i}", 0, 1, "1", client="laptop") for i in range(n + 2)]
    assert cast == [COUNTED] * n + ["crowded"] * 2
    assert store.count(room.code, 0, 1) == n  # the refused voters were not counted
    assert store.vote(room.code, "v0", 0, 1, "2", client="laptop") == CHANGED
    assert store.vote(room.code, f"v{n}", 0, 1, "1", client="phone") == COUNTED  # another client is not affected
    press(store, room.code, secret, "reveal")
    press(store, room.code, secret, "again")
    assert store.vote(room.code, "v1", 0, 2, "1", client="laptop") == COUNTED  # the same voters, a new round
    assert store.vote(room.code, "v99", 0, 2, "1", client="laptop") == "crowded"
    other, _ = poll.open_room(store, QUESTIONS)
    assert store.vote(other.code, "v99", 0, 1, "1", client="laptop") == COUNTED  # another room counts apart


def test_a_browsers_first_voter_is_its_own_and_its_further_voters_take_places_of_its_address(make_store):
    """Issue 47's attack 3: 500 freshly proved browsers took an address's 500 places, and a classmate behind it
    was refused. Now each browser's first voter is its own; only a shared device's further voters take the
    address's places."""
    store = make_store(voters_per_address=2, voters_per_s=0)
    room, _ = poll.open_room(store, QUESTIONS)
    firsts = [store.vote(room.code, f"s{i}", 0, 1, "1", client=f"fresh{i}", address="10.0.0.1") for i in range(30)]
    assert firsts == [COUNTED] * 30
    shared = [store.vote(room.code, f"v{i}", 0, 1, "1", client="laptop", address="10.0.0.1") for i in range(4)]
    assert shared == [COUNTED] * 3 + ["network"]  # its own, then the address's two
    assert store.vote(room.code, "v1", 0, 1, "0", client="laptop", address="10.0.0.1") == CHANGED
    assert store.vote(room.code, "classmate", 0, 1, "1", client="phone", address="10.0.0.1") == COUNTED
    assert store.vote(room.code, "w0", 0, 1, "1", client="laptop2", address="10.0.0.2") == COUNTED
    assert store.vote(room.code, "v5", 0, 1, "1") == COUNTED  # a sender the caller can't name is not limited


def test_an_addresss_places_grow_with_the_rooms_age(make_store, monkeypatch):
    store = make_store(voters_per_address=1, voters_per_s=0.5, voters_per_client=20)
    room, _ = poll.open_room(store, QUESTIONS)
    if isinstance(store, RedisStore):  # as if the room had opened 10 s ago, in Redis's own clock
        store._redis.decrby(f"{store._p}born:{room.code}", 10)
    else:
        store._data[f"born:{room.code}"] = (store._data[f"born:{room.code}"][0], store._clock() - 10)
    cast = [store.vote(room.code, f"v{i}", 0, 1, "1", client="laptop", address="10.0.0.1") for i in range(9)]
    assert cast.count(COUNTED) == 1 + 1 + 5 and cast[-1] == "network"  # its own, the first place, 10 s × 0.5


def test_the_presenters_door_keeps_new_voters_out_and_those_in_may_answer_on_and_joins_are_counted(store):
    room, secret = poll.open_room(store, QUESTIONS)
    assert store.joined(room.code) == (0, None)
    assert store.vote(room.code, "ann", 0, 1, "1", client="a") == COUNTED
    shut = press(store, room.code, secret, "shut")
    assert shut.shut and shut.after("shut") is None and store.room(room.code).shut
    assert store.vote(room.code, "bob", 0, 1, "1", client="b") == "door"
    assert store.vote(room.code, "ann", 0, 1, "2", client="a") == CHANGED
    count, ago = store.joined(room.code)
    assert count == 1 and 0 <= ago < 60
    press(store, room.code, secret, "reopen")
    assert store.vote(room.code, "bob", 0, 1, "1", client="b") == COUNTED and store.joined(room.code)[0] == 2


def test_blobs_are_kept_by_key_and_only_a_key_that_is_held_can_be_renewed(store):
    assert store.get_blob("abc") is None
    assert not store.renew_blob("abc")  # nothing to renew: not stored by the renewal either
    assert store.get_blob("abc") is None
    store.put_blob("abc", b"x" * 60)
    assert store.get_blob("abc") == b"x" * 60
    assert store.renew_blob("abc") and store.get_blob("abc") == b"x" * 60


def test_a_renewed_memory_blob_lives_another_blob_ttl():
    now = [0.0]
    store = MemoryStore(replace(TODAY, blob_ttl_s=100), clock=lambda: now[0])
    store.put_blob("k", b"data")
    now[0] = 90
    assert store.renew_blob("k")
    now[0] = 180  # 180 s after it was stored, 90 after the renewal
    assert store.get_blob("k") == b"data"
    now[0] = 191
    assert store.get_blob("k") is None and not store.renew_blob("k")


def test_a_memory_room_expires_after_idle_hours_and_each_write_renews_it():
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    room, secret = poll.open_room(store, QUESTIONS)
    now[0] = TODAY.idle_s - 1
    assert press(store, room.code, secret, "reveal") is not None  # a write: another idle_s from here
    now[0] += TODAY.idle_s - 1
    assert store.room(room.code) is not None
    now[0] += 2
    assert store.room(room.code) is None
    assert store.vote(room.code, "ann", 0, 1, "1") == "unknown"


def test_redis_keys_carry_a_time_to_live(redis_server):
    store = RedisStore(redis_server.url, prefix="ttl:")
    room, _ = poll.open_room(store, QUESTIONS, client="ann", address="10.0.0.1")
    store.vote(room.code, "ann", 0, 1, "1", client="ann", address="10.0.0.1")
    store.put_blob("k", b"data")
    client = store._redis
    ttl = {key.decode().split(":")[1]: client.ttl(key) for key in client.keys("ttl:*")}
    # room, its birth, votes, rate, the room's voters, a client's, rooms opened by the client, blob, its count (7)
    assert len(client.keys("ttl:*")) == 15
    assert 0 < ttl["opened"] <= TODAY.open_window_s and 0 < ttl["seen"] <= TODAY.idle_s
    assert all(0 < t <= max(TODAY.idle_s, TODAY.blob_ttl_s) for t in ttl.values()), ttl
    assert client.ttl("ttl:opened:c:ann") > 0 and client.ttl(f"ttl:born:{room.code}") > 0
    assert client.ttl(f"ttl:seen:{room.code}:c:ann") > 0 and client.ttl(f"ttl:joined:{room.code}") > 0


def test_redis_opening_counters_keep_their_window_from_the_first_room(redis_server):
    store = RedisStore(redis_server.url, prefix="window:")
    poll.open_room(store, QUESTIONS, client="ann")
    store._redis.expire("window:opened:c:ann", 5)  # as if the first room was opened an hour ago, less 5 s
    poll.open_room(store, QUESTIONS, client="ann")
    assert 0 < store._redis.ttl("window:opened:c:ann") <= 5  # a later room does not extend the window
    assert store._redis.get("window:opened:c:ann") == b"2"


def test_an_unreachable_redis_raises_store_down_quickly_and_voting_resumes_when_it_is_back():
    with redis_harness.running() as server:
        store = RedisStore(server.url, prefix="down:")
        room, _secret = poll.open_room(store, QUESTIONS)
        assert store.vote(room.code, "ann", 0, 1, "1") == COUNTED
        server.stop()
        with pytest.raises(StoreDown):
            store.vote(room.code, "bob", 0, 1, "1")
        with pytest.raises(StoreDown):
            store.room(room.code)
        server.start()  # the same port, an empty Redis (no persistence in tests)
        fresh, _ = poll.open_room(store, QUESTIONS)
        assert store.vote(fresh.code, "bob", 0, 1, "1") == COUNTED


def test_a_stores_limits_are_todays_numbers_unless_given_and_a_misspelt_one_is_refused():
    assert Limits() == MemoryStore().limits
    today = {"idle_s": 6 * 3600, "max_voters": 2000, "voters_per_client": 5, "voters_per_address": 60}
    today |= {"voters_per_s": 1.0, "rooms_per_client": 5, "rooms_per_address": 30, "max_rooms": 10_000}
    today |= {"open_window_s": 60, "take_s": 5 * 60, "max_hosts": 3}
    today |= {"votes_per_rate_window": 30, "rate_window_s": 60, "blob_ttl_s": 24 * 3600}
    assert {name: getattr(MemoryStore().limits, name) for name in today} == today
    assert MemoryStore(replace(TODAY, max_voters=3)).limits == replace(Limits(), max_voters=3)
    with pytest.raises(TypeError):
        replace(TODAY, max_voter=3)  # a typo in a caller's limits must not leave today's number in force


def test_from_env_builds_either_backend_with_the_limits_it_is_given(redis_server):
    memory = from_env({}, replace(TODAY, max_voters=1))
    redis = from_env({"LNVIZ_REDIS_URL": redis_server.url}, replace(TODAY, max_voters=1))
    assert isinstance(memory, MemoryStore) and isinstance(redis, RedisStore)
    for store in (memory, redis):
        room, _ = poll.open_room(store, QUESTIONS)
        assert [store.vote(room.code, v, 0, 1, "1") for v in ("ann", "bob")] == [COUNTED, "full"]


def test_a_store_with_a_small_rate_floods_past_it_and_a_small_voters_per_client_crowds_past_it(make_store):
    store = make_store(votes_per_rate_window=2, voters_per_client=2)
    room, _ = poll.open_room(store, QUESTIONS)
    assert [store.vote(room.code, "ann", 0, 1, "1") for _ in range(3)] == [COUNTED, CHANGED, "flood"]
    cast = [store.vote(room.code, v, 0, 1, "1", client="laptop") for v in ("bob", "cat", "dan")]
    assert cast == [COUNTED, COUNTED, "crowded"]


def test_redis_keys_live_as_long_as_the_stores_limits_say(redis_server):
    spans = {"idle_s": 500, "rate_window_s": 40, "open_window_s": 300, "blob_ttl_s": 700}
    store = RedisStore(redis_server.url, prefix="caps:", limits=replace(TODAY, **spans))
    room, secret = poll.open_room(store, QUESTIONS, client="ann")
    store.vote(room.code, "ann", 0, 1, "1", client="ann")
    store.put_blob("k", b"data")
    r = store._redis
    expected = {f"caps:room:{room.code}": 500, f"caps:votes:{room.code}:0:1": 500, f"caps:rate:{room.code}:ann": 40}
    expected |= {f"caps:seen:{room.code}:c:ann": 500, "caps:opened:c:ann": 300, "caps:blob:k": 700}
    assert {key: r.ttl(key) for key in expected} == pytest.approx(expected, abs=2)
    r.expire(f"caps:room:{room.code}", 5)
    press(store, room.code, secret, "reveal")  # a presenter's action renews the room for idle_s
    assert 400 < r.ttl(f"caps:room:{room.code}") <= 500


def test_a_full_redis_refuses_writes_as_store_full_and_keeps_everything_it_held():
    """Redis at its maxmemory with noeviction, as deploy/k8s/redis.yaml runs it: each write (a room, a vote, a
    presenter's press, a grid, a quota's count) is refused as StoreFull, a StoreDown that knows why; reads answer,
    and the room and the vote already counted are whole."""
    import redis

    from server.quota import Quota, storage_from_env

    with redis_harness.running(args=("--maxmemory-policy", "noeviction")) as server:
        store = RedisStore(server.url, prefix="full:")
        room, secret = poll.open_room(store, QUESTIONS)
        assert store.vote(room.code, "ann", 0, 1, "2") == COUNTED
        quota = Quota("full", 10, 60, storage_from_env({"LNVIZ_REDIS_URL": server.url}))
        assert quota.hit("someone")
        raw = redis.Redis.from_url(server.url)
        raw.config_set("maxmemory", raw.info("memory")["used_memory"] - 2**16)  # what it holds is past its cap
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            raw.set("one more", b"x")
        with pytest.raises(StoreFull):
            store.vote(room.code, "bob", 0, 1, "1")
        with pytest.raises(StoreFull):
            poll.open_room(store, QUESTIONS)
        with pytest.raises(StoreFull):
            press(store, room.code, secret, "reveal")
        with pytest.raises(StoreFull):
            store.put_blob("grid", b"g" * 1024)
        with pytest.raises(StoreFull):
            quota.hit("someone")
        assert issubclass(StoreFull, StoreDown)  # every caller that copes with a store down copes with this
        assert store.room(room.code) == room and store.votes(room.code, 0, 1) == {"ann": "2"}


def test_a_full_redis_is_logged_once_a_minute_with_the_writes_it_refused(caplog):
    """A flood of refused writes (a class voting into a full Redis) is one warning a minute, not one a write."""
    import redis

    now = [0.0]
    with redis_harness.running(args=("--maxmemory-policy", "noeviction")) as server:
        store = RedisStore(server.url, prefix="flood:", clock=lambda: now[0])
        room, _ = poll.open_room(store, QUESTIONS)
        raw = redis.Redis.from_url(server.url)
        raw.config_set("maxmemory", raw.info("memory")["used_memory"] - 2**16)
        with caplog.at_level("WARNING", logger="server.store"):
            for seconds in (0, 1, 2, 30, 59, 61, 62):
                now[0] = seconds
                with pytest.raises(StoreFull):
                    store.vote(room.code, f"v{seconds}", 0, 1, "1")
    said = [r.getMessage() for r in caplog.records if r.name == "server.store"]
    assert len(said) == 2, said  # at 0 s, and at 61 s for the five refused since
    assert said[0].startswith("Redis refused 1 write(s)") and said[1].startswith("Redis refused 5 write(s)")


# ---- peer instruction (issue 49): torch's answer a presenter's action of its own, and the presenter's devices ----


def test_a_reveal_leaves_torchs_answer_to_show_the_answer_after_either_round_and_no_round_after_it(store):
    """Round 1's reveal ends the round, the class's answers hidden or not; Show answer follows either round (or
    an asking one, at once), and once torch's answer is out no round is asked again."""
    room, secret = poll.open_room(store, QUESTIONS)

    def act(action: str) -> Room | None:
        return press(store, room.code, secret, action)

    store.vote(room.code, "ann", 0, 1, "1")
    revealed = act("reveal")
    assert (revealed.phase, revealed.round, revealed.hidden) == ("reveal", 1, False)
    assert act("show") is None and act("hide").hidden and store.room(room.code).hidden
    assert act("hide") is None and not act("show").hidden  # each a change, or nothing
    assert act("again").phase == "ask"
    assert store.vote(room.code, "ann", 0, 2, "0") == COUNTED
    answered = act("answer")  # from an asking second round: its votes end with it
    assert (answered.phase, answered.round, answered.index) == ("answer", 2, 0)
    assert store.vote(room.code, "bob", 0, 2, "0") == "revealed"
    for action in ("answer", "again", "reveal"):
        assert act(action) is None, action
    assert act("next").phase == "ask"
    act("reveal")
    assert act("answer").phase == "answer" and act("again") is None  # right after round 1: no second round then
    assert act("next").phase == "done" and act("answer") is None


def test_a_double_press_of_show_the_answer_or_hide_applies_once(store):
    room, secret = poll.open_room(store, QUESTIONS)
    for action in ("hide", "reveal", "answer"):
        seen = store.room(room.code).version
        with ThreadPoolExecutor(8) as pool:
            applied = list(pool.map(lambda a: store.act(room.code, secret, a, seen), [action] * 16))  # noqa: B023
        assert sum(a is not None for a in applied) == 1, action
        assert store.room(room.code).version == seen + 1
    assert store.room(room.code).phase == "answer" and store.room(room.code).hidden


def test_a_take_code_takes_the_room_to_one_more_browser_once_and_only_its_presenter_makes_one(store):
    room, secret = poll.open_room(store, QUESTIONS)
    assert poll.hand_over(store, room.code, "not-the-secret") is None
    assert poll.hand_over(store, "NOSUCHRM", secret) is None
    take = poll.hand_over(store, room.code, secret)
    assert poll.valid_code(take, poll.TAKE_LENGTH) == take and poll.valid_code(take) is None  # never a room code
    outcome, code, phone = poll.take_over(store, take)
    assert (outcome, code) == (poll.TAKEN, room.code) and phone != secret
    assert poll.take_over(store, take) == ("used", None, None)  # once
    assert poll.take_over(store, poll.new_code(length=poll.TAKE_LENGTH))[0] == "used"
    taken = store.room(room.code)
    assert poll.presenter_of(taken, phone) and poll.presenter_of(taken, secret)
    assert not poll.first_presenter(taken, phone) and taken.version == room.version  # the phones see no change
    assert press(store, room.code, phone, "reveal").phase == "reveal"  # the new browser presents
    assert press(store, room.code, secret, "answer").phase == "answer"  # and so does the first, in step
    assert store.room(room.code).hosts == taken.hosts  # a press keeps the hosts
    again = poll.hand_over(store, room.code, phone)  # a further presenter may hand over too
    assert again and poll.take_over(store, again)[0] == poll.TAKEN
    assert len(store.room(room.code).hosts) == 2


def test_a_new_take_code_ends_the_last_and_a_room_takes_at_most_its_hosts_until_its_first_presenter_signs_them_out(
    make_store,
):
    store = make_store(max_hosts=2)
    room, secret = poll.open_room(store, QUESTIONS)
    stale = poll.hand_over(store, room.code, secret)
    fresh = poll.hand_over(store, room.code, secret)
    assert poll.take_over(store, stale)[0] == "used"  # one live take code per room
    _, _, first = poll.take_over(store, fresh)
    _, _, second = poll.take_over(store, poll.hand_over(store, room.code, secret))
    third = poll.hand_over(store, room.code, secret)
    assert poll.take_over(store, third) == ("many", None, None)
    assert not store.sign_out(room.code, second) and not store.sign_out(room.code, "not-the-secret")
    assert store.sign_out(room.code, secret)
    signed_out = store.room(room.code)
    assert signed_out.hosts == () and not poll.presenter_of(signed_out, first)
    assert store.act(room.code, first, "reveal", signed_out.version) is None
    assert poll.take_over(store, third)[0] == "used"  # the sign-out forgot the live code too
    press(store, room.code, secret, "close")
    assert poll.hand_over(store, room.code, secret) is None  # a closed room is taken nowhere


def test_browsers_using_one_take_code_at_once_give_the_room_to_exactly_one(store):
    room, secret = poll.open_room(store, QUESTIONS)
    take = poll.hand_over(store, room.code, secret)
    with ThreadPoolExecutor(8) as pool:
        outcomes = [found[0] for found in pool.map(lambda _: poll.take_over(store, take), range(16))]
    assert outcomes.count(poll.TAKEN) == 1 and set(outcomes) == {poll.TAKEN, "used"}
    assert len(store.room(room.code).hosts) == 1


def test_a_take_between_a_presses_read_and_its_write_is_kept(redis_server):
    """Redis's act reads the room, then writes its change in a script: a browser that takes the room between the two
    stays a presenter (the script leaves the hosts as they are). In memory, one lock holds both."""
    store = RedisStore(redis_server.url, prefix="race:")
    room, secret = poll.open_room(store, QUESTIONS)
    take = poll.hand_over(store, room.code, secret)
    taken = []
    read = store.room

    def read_then_take(code: str) -> Room | None:
        found = read(code)
        if not taken:
            taken.append(poll.take_over(store, take)[2])
        return found

    store.room = read_then_take
    assert store.act(room.code, secret, "reveal", room.version).phase == "reveal"
    store.room = read
    assert poll.presenter_of(store.room(room.code), taken[0])


def test_a_take_code_is_kept_only_as_its_hash_and_is_gone_after_its_time(redis_server):
    now = [0.0]
    memory = MemoryStore(clock=lambda: now[0])
    room, secret = poll.open_room(memory, QUESTIONS)
    take = poll.hand_over(memory, room.code, secret)
    assert take not in repr(memory._data) and poll.sha(take) in repr(memory._data)
    now[0] += TODAY.take_s + 1
    assert poll.take_over(memory, take)[0] == "used"
    store = RedisStore(redis_server.url, prefix="hand:")
    room, secret = poll.open_room(store, QUESTIONS)
    take = poll.hand_over(store, room.code, secret)
    r = store._redis
    held = {key.decode(): r.ttl(key) for key in r.keys("hand:tak*")}
    assert held.keys() == {f"hand:take:{poll.sha(take)}", f"hand:taking:{room.code}"}
    assert all(0 < t <= TODAY.take_s for t in held.values())
    assert not any(take.encode() in (r.dump(key) or b"") for key in r.keys("hand:*"))
