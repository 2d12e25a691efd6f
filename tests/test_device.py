"""Device choice, timing, the server's thread count and the out-of-memory fallback."""

import pytest
import torch

from lnviz.maths import device


def test_auto_picks_the_best_available_and_unavailable_falls_back_to_cpu():
    have = device.available()
    best = "cuda" if have["cuda"] else "mps" if have["mps"] else "cpu"
    assert device.pick("auto").type == best
    assert device.pick("cpu").type == "cpu"
    for name in ("cuda", "mps"):
        assert device.pick(name).type == (name if have[name] else "cpu")
    assert device.pick("tpu").type == "cpu"


def test_label_and_dtype():
    cpu = torch.device("cpu")
    assert device.label(cpu).startswith("CPU") and "thread" in device.label(cpu)
    assert device.compute_dtype(cpu) == torch.float64
    assert device.compute_dtype(torch.device("mps")) == torch.float32


def test_timed_returns_the_value_and_a_positive_time():
    value, seconds = device.timed(lambda: sum(range(1000)), torch.device("cpu"))
    assert value == 499500 and seconds > 0


def test_gpu_out_of_memory_falls_back_to_cpu():
    calls = []

    def fn(dev):
        calls.append(dev.type)
        if dev.type != "cpu":
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8 GiB")
        return "ok"

    value, dev, message = device.with_fallback(fn, torch.device("mps"))
    assert (value, dev.type, calls) == ("ok", "cpu", ["mps", "cpu"])
    assert "ran out of memory" in message
    assert device.with_fallback(fn, torch.device("cpu"))[2] is None


def test_cpu_out_of_memory_is_not_hidden():
    def fn(dev):
        raise torch.OutOfMemoryError("no memory")

    with pytest.raises(torch.OutOfMemoryError):
        device.with_fallback(fn, torch.device("cpu"))
