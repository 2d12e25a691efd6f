"""Where the torch computation runs, and how long it took.

The app prefers a GPU: CUDA, then Apple's MPS, else the CPU. A user can
override the choice. Timing on a GPU synchronises before reading the clock,
since kernel launches return before the work is done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import torch

T = TypeVar("T")


def available() -> dict[str, bool]:
    """Which backends this process can use right now."""
    mps = getattr(torch.backends, "mps", None)
    return {
        "cuda": torch.cuda.is_available(),
        "mps": bool(mps is not None and mps.is_available()),
        "cpu": True,
    }


def pick(preference: str = "auto") -> torch.device:
    """The device for ``preference`` ("auto", "cuda", "mps" or "cpu").

    "auto" takes CUDA, then MPS, then the CPU. A preference that is not
    available here falls back to the CPU, so a shared link made on a GPU
    machine still opens on a laptop.
    """
    have = available()
    if preference == "auto":
        for name in ("cuda", "mps"):
            if have[name]:
                return torch.device(name)
        return torch.device("cpu")
    if have.get(preference):
        return torch.device(preference)
    return torch.device("cpu")


def unavailable(preference: str, picked: torch.device) -> str | None:
    """What to tell the user when the device a link asked for is not here (None when it is, or for "auto")."""
    if preference in ("auto", picked.type):
        return None
    return f"{preference.upper()} is not available here, so torch runs on the {picked.type.upper()}."


def compute_dtype(device: torch.device) -> torch.dtype:
    """float64 where the device has it (MPS has no float64), else float32."""
    return torch.float32 if device.type == "mps" else torch.float64


def label(device: torch.device) -> str:
    """A human name: the CUDA card's name, "Apple MPS", or the CPU with its threads."""
    if device.type == "cuda":
        return f"CUDA · {torch.cuda.get_device_name(device)}"
    if device.type == "mps":
        return "Apple MPS"
    threads = torch.get_num_threads()
    return f"CPU · {threads} thread{'s' if threads != 1 else ''}"


def synchronize(device: torch.device) -> None:
    """Wait for queued kernels on ``device`` to finish (no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def timed(fn: Callable[[], T], device: torch.device) -> tuple[T, float]:
    """Run ``fn`` and return (its result, seconds), synchronising on a GPU."""
    synchronize(device)
    start = time.perf_counter()
    out = fn()
    synchronize(device)
    return out, time.perf_counter() - start


_threads_set = False


def set_threads_once(threads: int) -> int:
    """Set torch's intra-op thread count (process-wide) to ``threads``, the first time only; returns the count."""
    global _threads_set
    if not _threads_set:
        torch.set_num_threads(threads)
        _threads_set = True
    return torch.get_num_threads()


def with_fallback(fn: Callable[[torch.device], T], device: torch.device) -> tuple[T, torch.device, str | None]:
    """Run ``fn(device)``; if the GPU runs out of memory, run ``fn`` on the CPU instead.

    Returns (result, the device it ran on, a message for the user or None).
    """
    try:
        return fn(device), device, None
    except torch.OutOfMemoryError:
        if device.type == "cpu":
            raise
        if device.type == "cuda":
            torch.cuda.empty_cache()
        cpu = torch.device("cpu")
        message = (
            f"The {device.type.upper()} device ran out of memory for this size, so this view was computed on the CPU."
        )
        return fn(cpu), cpu, message
