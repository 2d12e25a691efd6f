"""server.budget: values measured in bytes, and a cache that never holds more than its budget of them."""

import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from server import limits
from server.budget import MIB, Budget, nbytes


def test_a_tensor_counts_its_storage_once_however_many_views_share_it():
    x = torch.zeros(256, 256, dtype=torch.float64)  # 512 KiB
    assert 512 * 2**10 <= nbytes(x) < 512 * 2**10 + 1024
    assert nbytes((x, x[0], x.T, x[:, 3])) < 512 * 2**10 + 1024
    assert nbytes((x, torch.zeros_like(x))) > 2 * 512 * 2**10


@dataclass(frozen=True)
class Result:
    x: torch.Tensor
    stats: dict
    arrays: list


def test_a_result_counts_its_tensors_and_arrays_wherever_they_are():
    r = Result(torch.ones(128, 128), {"mu": torch.ones(128, 1, dtype=torch.float64)}, [np.zeros((64, 64))])
    expected = 128 * 128 * 4 + 128 * 8 + 64 * 64 * 8
    assert expected <= nbytes(r) < expected + 4096
    view = np.zeros((100, 100))[:10]  # a view holds its whole base
    assert nbytes(view) >= 100 * 100 * 8
    assert nbytes(torch.zeros(100, 100, dtype=torch.float64).numpy()) >= 100 * 100 * 8


def mib(n: float) -> torch.Tensor:
    return torch.zeros(int(n * MIB) // 8, dtype=torch.float64)


def test_the_cache_holds_at_most_its_budget_least_recently_used_out():
    cache = Budget(10 * MIB)
    for seed in range(40):  # 40 distinct 1024 x 1024 links, in miniature
        cache.put(seed, mib(3))
        assert cache.bytes <= 10 * MIB
    assert len(cache) == 3 and set(range(37, 40)) == {k for k in range(40) if k in cache}
    cache.get(37)  # used again: now the newest
    cache.put("new", mib(3))
    assert 37 in cache and 38 not in cache


def test_a_value_larger_than_the_whole_budget_is_returned_but_not_kept():
    cache = Budget(1 * MIB)
    cache.put("small", mib(0.5))
    assert cache.get_or_compute("big", lambda: mib(2)).numel() == 2 * MIB // 8
    assert "big" not in cache and "small" in cache and cache.bytes <= MIB


def test_sessions_asking_for_the_same_key_together_compute_it_once():
    cache = Budget(10 * MIB)
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.2)
        return mib(1)

    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get_or_compute("k", slow))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and all(g is got[0] for g in got)


def test_a_failed_computation_keeps_nothing_and_propagates():
    cache = Budget(MIB)
    with pytest.raises(ValueError):
        cache.get_or_compute("k", lambda: (_ for _ in ()).throw(ValueError("no")))
    assert "k" not in cache and cache.get_or_compute("k", lambda: 3) == 3


def test_at_most_the_given_number_of_misses_are_computed_at_once_and_hits_never_wait():
    cache = Budget(64 * MIB, concurrent=2)
    cache.put("hit", 1)
    running, most, lock = [0], [0], threading.Lock()

    def slow(seed):
        def compute():
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.1)
            with lock:
                running[0] -= 1
            return seed

        return compute

    threads = [threading.Thread(target=cache.get_or_compute, args=(k, slow(k))) for k in range(8)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    assert cache.get_or_compute("hit", slow(-1)) == 1 and time.perf_counter() - start < 0.05
    for t in threads:
        t.join()
    assert most[0] == 2 and all(k in cache for k in range(8))


def test_put_refuses_a_value_over_the_budget_or_its_holders_cap_and_a_held_key_keeps_its_value():
    cache = Budget(2 * MIB, holder_bytes=MIB)
    with pytest.raises(limits.Full) as over:
        cache.put("big", mib(3))
    assert (over.value.why, over.value.retry_after_s) == ("budget", 0)
    with pytest.raises(limits.Full, match="holder"):
        cache.put("mine", mib(1.5), holder="a")
    first = mib(0.5)
    cache.put("k", first)
    cache.put("k", mib(0.5))
    assert cache.get("k") is first and cache.bytes == nbytes(first)


def transformer_run(sentences: int, tokens: int, seed: int):
    """A run of the transformer page's shape (lnviz.labs.transformer.Run), 13 LayerNorms of (S, T, 384), without
    the model: what the page kit's cache holds for one text."""
    from lnviz.labs.transformer import Run

    g = torch.Generator().manual_seed(seed)
    sites = [(0, "embeddings")] + [(layer, site) for layer in range(6) for site in ("attention", "ffn")]

    def grid() -> torch.Tensor:
        return torch.randn(sentences, tokens, 384, generator=g)  # (S, T, H)

    return Run(
        sentences=tuple("s" * sentences),
        tokens=(("t",) * tokens,) * sentences,
        mask=torch.ones(sentences, tokens, dtype=torch.bool),
        inputs={k: grid() for k in sites},
        outputs={k: grid() for k in sites},
        weight={k: torch.ones(384) for k in sites},
        bias={k: torch.zeros(384) for k in sites},
        eps=1e-12,
        layers=6,
        device="cpu",
        dtype="float32",
        seconds=0.1,
    )


def test_a_transformer_run_counts_its_13_layernorms_bytes_and_the_cache_keeps_at_most_its_budget_of_runs():
    """Issue 47, attack 2: what the page kit caches for one 8-sentence text is counted at its true size, and unique
    texts past the budget push the oldest out."""
    run = transformer_run(8, 64, 0)
    grids = 26 * 8 * 64 * 384 * 4  # an input and an output per LayerNorm, float32: 19.5 MiB
    assert grids + 26 * 384 * 4 <= nbytes(run) < grids + 26 * 384 * 4 + 64 * 2**10
    cache = Budget(4 * nbytes(run))
    for seed in range(10):
        cache.put(seed, transformer_run(8, 64, seed))
        assert cache.bytes <= cache.budget
    assert len(cache) == 4 and all(seed in cache for seed in range(6, 10))


def test_after_a_miss_is_kept_the_budget_calls_its_after_miss_once_and_never_on_a_hit():
    calls = []
    cache = Budget(MIB, after_miss=lambda nbytes: calls.append((nbytes, cache.bytes)))
    for key in ("a", "a", "b", "a"):
        cache.get_or_compute(key, lambda: mib(0.25))
    assert len(calls) == 2 and calls[0][0] == calls[0][1] >= MIB // 4  # its bytes, its value kept before the call
