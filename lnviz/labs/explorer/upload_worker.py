"""A large upload parsed in a process of its own (:func:`parse_bytes`), so the server's interpreter stays free.

:func:`lnviz.labs.explorer.upload.parse_bytes` is Python, cell by cell: a
31 MiB CSV holds the interpreter for seconds, and every other session's
rerun waits for it between two of its steps. Eight such uploads took a
bystander's γ move from a p50 of 25 ms to 428 ms (p95 855 ms; issue 30,
attack 8). Here a file over :data:`~lnviz.labs.explorer.upload.LIGHT_BYTES`
is sent to one worker process (a pool of one, started on first use with
``spawn``, never ``fork``: the server runs threads), which parses it and
sends back the float64 values or the :class:`~lnviz.labs.explorer.upload.UploadError`'s
words; the caller's thread waits without holding the interpreter. One
worker: large files are read one at a time, as the heavy-work gate admits them anyway. The worker runs
at a lower priority (:data:`NICE`), so that while it parses, the server's sessions get the CPU first.

A smaller file is parsed where it is, as before: the worker's round trip
would cost more than it saves. ``LNVIZ_UPLOAD_WORKER=inline`` parses every
file in the server's process (where a process can't be started, and to
measure the difference: ``benchmarks/upload_burst.py``). A worker that dies
(killed for its memory, say) is started again for the next file, and the file
it was reading is refused in a sentence. Pure: no Streamlit.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import torch
from torch import Tensor

from lnviz.labs.explorer import upload

ENV = "LNVIZ_UPLOAD_WORKER"  # "inline": parse in the server's own process
# The worker's niceness (Linux's 0 to 19; the server's is 0): when the cores are short, the server's sessions run
# first and the parse takes what is left, about a tenth of a core against a busy one; on idle cores it runs as fast.
NICE = 10

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def apart() -> bool:
    """Whether large files are parsed in the worker process (not with ``LNVIZ_UPLOAD_WORKER=inline``)."""
    return os.environ.get(ENV, "").strip().lower() != "inline"


def _parse(name: str, data: bytes) -> tuple[np.ndarray | None, str | None]:
    """In the worker: (the values, None), or (None, the UploadError's first sentence)."""
    try:
        return upload.parse_bytes(name, data).numpy(), None
    except upload.UploadError as e:
        return None, e.problem


def _yield_the_cores() -> None:
    """In the worker, once: give the server's process the cores first (:data:`NICE`)."""
    with contextlib.suppress(OSError, AttributeError):  # no os.nice (Windows), or not allowed: as fast as before
        os.nice(NICE)


def _worker() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            context = multiprocessing.get_context("spawn")
            _pool = ProcessPoolExecutor(1, mp_context=context, initializer=_yield_the_cores)
        return _pool


def _restart(broken: ProcessPoolExecutor) -> None:
    global _pool
    with _lock:
        if _pool is broken:
            _pool = None
    broken.shutdown(wait=False, cancel_futures=True)


def parse_bytes(name: str, data: bytes) -> Tensor:
    """:func:`lnviz.labs.explorer.upload.parse_bytes`, in the worker process for a file over ``LIGHT_BYTES``.

    The same tensor (B, H), float64 on the CPU, and the same :class:`~lnviz.labs.explorer.upload.UploadError`s.
    """
    if len(data) <= upload.LIGHT_BYTES or len(data) > upload.MAX_BYTES or not apart():
        return upload.parse_bytes(name, data)  # small, or refused by its size before any parsing
    pool = _worker()
    try:
        values, problem = pool.submit(_parse, str(name), bytes(data)).result()
    except BrokenProcessPool:
        _restart(pool)
        raise upload.UploadError("The file could not be read: the server's reader stopped while reading it.") from None
    if problem is not None:
        raise upload.UploadError(problem)
    return torch.from_numpy(values)
