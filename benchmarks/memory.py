"""A server's resident memory over a run, sampled every second, with named moments to read it at."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from harness.server import AppProcess, rss_mib, stop


@dataclass
class Memory:
    samples: list[tuple[float, float]] = field(default_factory=list)  # (seconds since start, MiB)
    marks: dict[str, float] = field(default_factory=dict)  # phase name -> seconds since start

    def at(self, mark: str) -> float:
        t = self.marks.get(mark)
        if t is None or not self.samples:
            return float("nan")
        return min(self.samples, key=lambda s: abs(s[0] - t))[1]

    def between(self, start: str, end: str) -> list[float]:
        lo, hi = self.marks.get(start, 0.0), self.marks.get(end, float("inf"))
        return [m for t, m in self.samples if lo <= t <= hi]


async def sample_memory(pid: int, memory: Memory, t0: float, stop_event: asyncio.Event) -> None:
    while not stop_event.is_set():
        mib = rss_mib(pid)
        if mib is not None:
            memory.samples.append((time.monotonic() - t0, mib))
        try:
            await asyncio.wait_for(stop_event.wait(), 1.0)
        except TimeoutError:
            pass


@contextlib.asynccontextmanager
async def sampling(app: AppProcess, memory: Memory, t0: float, errors: list[str]) -> AsyncIterator[None]:
    """The block's run against ``app``, its memory sampled into ``memory`` every second; after the block, a server
    that had exited by itself is noted in ``errors``, and the server is stopped however the block ended."""
    stop_sampling = asyncio.Event()
    sampler = asyncio.create_task(sample_memory(app.proc.pid, memory, t0, stop_sampling))
    try:
        yield
        if app.proc.poll() is not None:
            errors.append(f"the server exited with {app.proc.returncode}")
    finally:
        stop_sampling.set()
        stop(app.proc)
        await sampler
