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

:class:`Trimmer` does both after computations, at most every ``every_s``
seconds, so that its cost stays a few percent of a core whatever visitors send.
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


def malloc_trim() -> Callable[[], int] | None:
    """glibc's ``malloc_trim(0)``: every arena's free pages back to the system; None without glibc."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)  # ctypes lets go of the GIL while it runs


class Trimmer:
    """:meth:`maybe` after freeing work: a full collection and a trim, unless any thread had one within ``every_s``."""

    def __init__(
        self,
        every_s: float = TRIM_EVERY_S,
        trim: Callable[[], int] | None = None,
        collect: Callable[[], int] = gc.collect,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.every_s, self.clock, self._collect = every_s, clock, collect
        self._trim = malloc_trim() if trim is None else trim
        self._lock = threading.Lock()
        self._last = -float("inf")
        self.trims = 0

    def maybe(self) -> bool:
        """Collect and trim now unless another thread did within ``every_s``; whether this call did."""
        with self._lock:
            now = self.clock()
            if now - self._last < self.every_s:
                return False
            self._last = now
        self._collect()
        if self._trim is not None:
            self._trim()
        self.trims += 1
        return True
