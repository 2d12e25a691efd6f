"""The process's one shared store (:mod:`server.store`): Redis when ``LNVIZ_REDIS_URL`` is set, else this
process's memory. The class poll keeps its rooms in it, and a link to your own data its grid."""

from __future__ import annotations

import functools
import os

from server import limits
from server.store import RedisStore, Store, from_env

_store: Store | None = None  # a test's store, in place of the process's


@functools.cache
def _process_store() -> Store:
    """This process's store, made on first use from the environment, within this process's limits."""
    return from_env(os.environ, limits.current())


def store() -> Store:
    """The store: this process's (:func:`_process_store`), or the one a test put in ``_store``."""
    return _store if _store is not None else _process_store()


def shared() -> bool:
    """Whether every replica sees the same store (Redis), not this process alone."""
    return isinstance(store(), RedisStore)
