"""Freed memory given back to the system: cyclic garbage collected, then glibc's ``malloc_trim``, at most once per
interval.

A finished run of a page leaves its script's globals behind as a cycle (each
function the script defines holds them as its ``__globals__``): the run's
results and figures stay in memory until Python's full collection, which the
server no longer runs after each script (``runner.postScriptGC``, off for speed)
and which rarely comes by itself. And what is freed, glibc keeps inside its
arenas, in pieces between blocks still in use, and does not return on its own.
300 unique 8-sentence texts on the transformer page took a replica to 1.45 GiB
while the page kit's cache held 256 MiB of runs (issue 47, attack 2); one
collection and one ``malloc_trim(0)`` then gave back 500 MiB in about 100 ms.

:class:`Trimmer` does both after computations, once 64 MiB of results were
computed since the last time and at most every 2 s: a collection pauses every
thread for 20-130 ms, so a slider's small results don't pay for it, and a flood
of large ones pays a few percent of a core.
Where the C library has no ``malloc_trim`` (musl, macOS) it only collects.

Pure: no Streamlit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
import time
from collections.abc import Callable

TRIM_EVERY_S = 2.0
TRIM_EVERY_BYTES = 64 * 2**20  # computed since the last: a slider's small misses don't pay for a full collection


def malloc_trim() -> Callable[[], int] | None:
    """glibc's ``malloc_trim(0)``: every arena's free pages back to the system; None without glibc."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)  # ctypes lets go of the GIL while it runs


class Trimmer:
    """:meth:`maybe` after a computation of so many bytes: a full collection and a trim, once ``every_bytes`` were
    computed since the last and ``every_s`` passed (whichever thread computed them)."""

    def __init__(
        self,
        every_s: float = TRIM_EVERY_S,
        every_bytes: int = TRIM_EVERY_BYTES,
        trim: Callable[[], int] | None = None,
        collect: Callable[[], int] = gc.collect,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.every_s, self.every_bytes, self.clock, self._collect = every_s, every_bytes, clock, collect
        self._trim = malloc_trim() if trim is None else trim
        self._lock = threading.Lock()
        self._last = -float("inf")
        self._owed = 0  # bytes computed since the last trim
        self.trims = 0

    def maybe(self, nbytes: int) -> bool:
        """Count a computation of ``nbytes``; collect and trim now if that is due; whether this call did."""
        with self._lock:
            now = self.clock()
            self._owed += nbytes
            if self._owed < self.every_bytes or now - self._last < self.every_s:
                return False
            self._last, self._owed = now, 0
        self._collect()
        if self._trim is not None:
            self._trim()
        self.trims += 1
        return True
