"""server.heap: what computations free goes back to the system, at a bounded cost."""

import gc
import weakref

import torch

from server import heap


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_collects_and_trims_once_enough_bytes_were_computed_and_at_most_once_per_interval_whoever_asks():
    clock, trims, collects = Clock(), [], []
    collect, trim = (lambda: collects.append(1) or 0), (lambda: trims.append(clock.now) or 1)
    trimmer = heap.Trimmer(2.0, every_bytes=100, trim=trim, collect=collect, clock=clock)
    asked = []
    for t, nbytes in ((0.0, 60), (0.1, 60), (0.5, 100), (1.9, 100), (2.0, 100), (2.1, 100), (5.0, 10), (5.1, 90)):
        clock.now = t
        asked.append(trimmer.maybe(nbytes))
    assert asked == [False, True, False, False, False, True, False, True]
    assert trims == [0.1, 2.1, 5.1] and len(collects) == 3 and trimmer.trims == 3


class Globals:
    """A finished page run's globals: a cycle (its functions hold them), with the run's tensors in it."""

    def __init__(self) -> None:
        self.me = self
        self.run = torch.zeros(1024, 1024)  # 4 MiB


def test_a_finished_runs_cycle_is_collected_and_glibc_can_give_its_memory_back():
    gc.disable()  # as on a server where the full collection rarely comes by itself
    try:
        gone = weakref.ref(Globals())
        assert gone() is not None  # a cycle: no reference count frees it
        assert heap.Trimmer(trim=lambda: 1).maybe(heap.TRIM_EVERY_BYTES)
        assert gone() is None
    finally:
        gc.enable()
    assert heap.malloc_trim() is not None  # this machine's glibc has it
    assert heap.malloc_trim()() in (0, 1)
