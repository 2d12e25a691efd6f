"""The process's one shared store (:mod:`lnviz.serving.store`): Redis when ``LNVIZ_REDIS_URL`` is set, else this
process's memory. The class poll keeps its rooms in it, and a link to your own data its grid."""

from __future__ import annotations

import dataclasses
import os

from lnviz.serving import limits
from lnviz.serving.store import Caps, RedisStore, Store, from_env

_store: Store | None = None


def store() -> Store:
    """This process's store, made on first use from the environment, within this process's limits."""
    global _store
    if _store is None:
        _store = from_env(os.environ, **dataclasses.asdict(Caps.of(limits.current())))
    return _store


def shared() -> bool:
    """Whether every replica sees the same store (Redis), not this process alone."""
    return isinstance(store(), RedisStore)
