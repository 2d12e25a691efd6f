"""One coroutine run to its end from synchronous code, whatever loop the calling thread already has.

Playwright's sync API, once a browser test has used it, leaves an event loop running in pytest's thread, so a
later ``asyncio.run`` there raises "cannot be called from a running event loop". :func:`run` gives the
coroutine a thread and a loop of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)`` in a thread of its own; its result, or its exception raised here."""
    with ThreadPoolExecutor(1, thread_name_prefix="lnviz-aio") as pool:
        return pool.submit(asyncio.run, coro).result()
