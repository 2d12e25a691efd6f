"""lnviz.serving.heap: what computations free goes back to the system, at a bounded cost."""

import gc
import weakref

import torch

from lnviz.serving import heap


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_collects_and_trims_at_most_once_per_interval_whoever_asks():
    clock, trims, collects = Clock(), [], []
    trimmer = heap.Trimmer(
        2.0, trim=lambda: trims.append(clock.now) or 1, collect=lambda: collects.append(1) or 0, clock=clock
    )
    asked = []
    for t in (0.0, 0.5, 1.9, 2.0, 2.1, 5.0):
        clock.now = t
        asked.append(trimmer.maybe())
    assert asked == [True, False, False, True, False, True]
    assert trims == [0.0, 2.0, 5.0] and len(collects) == 3 and trimmer.trims == 3


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
        assert heap.Trimmer(trim=lambda: 1).maybe()
        assert gone() is None
    finally:
        gc.enable()
    assert heap.malloc_trim() is not None  # this machine's glibc has it
    assert heap.malloc_trim()() in (0, 1)
