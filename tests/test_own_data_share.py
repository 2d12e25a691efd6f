"""A grid's bytes in the shared store: exact both ways, and nothing else read back; a browser's quota for them,
in memory and on a real redis-server (started for this module, harness/redis.py)."""

import itertools
import struct
from collections.abc import Iterator

import numpy as np
import pytest

from harness import redis as redis_harness
from lnviz.labs.explorer import upload
from server import own_share, quota
from server.own_store import content_id
from server.store import MemoryStore, RedisStore, Store

_prefixes = itertools.count()


@pytest.fixture(scope="module")
def redis_server() -> Iterator[redis_harness.RedisServer]:
    with redis_harness.running() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
def backend(request) -> tuple[Store, object]:
    """A shared store and the storage its quotas are kept in: both this process's, or both one Redis."""
    if request.param == "memory":
        return MemoryStore(), quota.storage_from_env({})
    url = request.getfixturevalue("redis_server").url
    return RedisStore(url, prefix=f"share{next(_prefixes)}:"), quota.storage_from_env({quota.REDIS_ENV: url})


def grid(rows: int = 5, cols: int = 7, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, cols)) * 10.0 ** np.linspace(-150, 150, cols)


def test_a_grid_comes_back_exactly_float64_bit_for_bit():
    x = grid()
    x[0, 0], x[0, 1] = -0.0, np.finfo(np.float64).tiny  # signed zero, the smallest normal
    back = own_share.from_bytes(own_share.to_bytes(x))
    assert back.dtype == np.float64 and back.shape == x.shape and back.flags.writeable
    assert back.tobytes() == x.tobytes()


def test_the_largest_grid_the_upload_takes_fits_the_limit_exactly():
    x = np.zeros((upload.MAX_ROWS, upload.MAX_COLS))
    data = own_share.to_bytes(x)
    assert len(data) == own_share.MAX_BYTES
    assert own_share.from_bytes(data).shape == x.shape


@pytest.mark.parametrize(
    "x",
    [np.zeros((upload.MAX_ROWS + 1, 2)), np.zeros((1, upload.MAX_COLS + 1)), np.zeros((3, 1)), np.zeros((2, 2, 2))],
    ids=["rows", "cols", "one column", "3-D"],
)
def test_a_grid_the_upload_would_refuse_is_not_stored(x):
    with pytest.raises(own_share.BadGrid):
        own_share.to_bytes(x)


def header(rows: int, cols: int) -> bytes:
    return own_share.MAGIC + struct.pack("<II", rows, cols)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x93NUMPY\x01\x00" + b"\0" * 100,  # a .npy file: never read as one
        b"\x80\x04\x95" + b"\0" * 100,  # a pickle
        header(2, 3) + b"\0" * 47,  # one byte short
        header(2, 3) + b"\0" * 49,  # one byte over
        header(0, 3),
        header(2, 1) + b"\0" * 16,
        header(upload.MAX_ROWS + 1, 2) + b"\0" * 16 * (upload.MAX_ROWS + 1),  # oversize, lengths agreeing
        header(2**31, 2**31),  # a claimed shape far past the data: refused before any value is read
        header(1, 2) + struct.pack("<2d", 1.0, float("nan")),
        header(1, 2) + struct.pack("<2d", float("inf"), 1.0),
    ],
    ids=[
        "empty",
        "npy",
        "pickle",
        "short",
        "long",
        "no rows",
        "one column",
        "oversize",
        "huge shape",
        "nan",
        "inf",
    ],
)
def test_bytes_that_are_not_a_grid_are_refused(data):
    with pytest.raises(own_share.BadGrid):
        own_share.from_bytes(data)


def test_bytes_over_the_limit_are_refused_before_their_header_is_read():
    with pytest.raises(own_share.BadGrid):
        own_share.from_bytes(header(1, 2) + b"\0" * own_share.MAX_BYTES)


@pytest.mark.parametrize("text", ["0123456789abcdef0123456789abcdef", content_id(np.ones((2, 2)))])
def test_an_id_has_the_form_of_a_content_id(text):
    assert own_share.valid_id(text) == text


@pytest.mark.parametrize(
    "text",
    [None, 3, "", "3x4", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef0123456789abcde", "../" * 11 + "abc"],
)
def test_anything_else_is_not_an_id(text):
    assert own_share.valid_id(text) is None


def test_shared_then_loaded_by_id_and_expired_after_a_day():
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    x = grid(3, 4)
    key = own_share.share(store, own_share.new_quota(), x, "browser")
    assert key == content_id(x)
    assert own_share.load(store, key).tobytes() == x.tobytes()
    now[0] = store.limits.blob_ttl_s + 1
    assert own_share.load(store, key) is None


def test_a_client_over_the_quota_is_refused_and_a_grid_stored_already_costs_nothing(backend):
    store, storage = backend
    x, y = grid(2, 512), grid(2, 512, seed=1)
    n = next(_prefixes)  # each run its own clients: the Redis outlives a test
    a, b = f"a{n}", f"b{n}"
    hourly = own_share.new_quota(storage, amount=len(own_share.to_bytes(x)) + 100)
    assert own_share.share(store, hourly, x, a) == content_id(x)
    assert own_share.share(store, hourly, y, a) is None  # over a's hour
    assert own_share.load(store, content_id(y)) is None  # and not stored
    assert own_share.share(store, hourly, x, a) == content_id(x)  # there already: free
    assert own_share.share(store, hourly, x, b) == content_id(x)  # for anyone
    assert own_share.share(store, hourly, y, b) == content_id(y)  # b's own hour
    assert own_share.share(store, hourly, grid(2, 512, seed=2), b) is None  # which x, stored already, did not use


def test_bytes_under_an_id_that_are_not_its_grid_are_not_loaded():
    store = MemoryStore()
    x = grid(2, 3)
    other = content_id(grid(2, 3, seed=1))
    store.put_blob(f"own:{other}", own_share.to_bytes(x))
    assert own_share.load(store, other) is None
