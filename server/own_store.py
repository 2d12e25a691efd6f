"""Visitors' own matrices, held once by content in a :class:`~server.budget.Budget`: per session, per
process, for a while.

A matrix a visitor uploads or pastes is parsed into float64, up to 8 MiB at
1024 × 1024. Held in each session's state, it was counted nowhere: 225
sessions that each uploaded a 1 MiB ``.npy`` held 2.4 GiB. Here a matrix is
stored once by the hash of its content (:func:`content_id`), whoever sends it
and however often, in a budget of bytes (:func:`new`) that counts it:

- per session (``session_bytes``, the budget's cap per holder): a session's
  newest matrices, the older ones released first to make room;
- per process (``budget``), shared fairly between *clients* (browsers, or a
  session without cookies): a new matrix that does not fit drops first the
  matrices of a client over its equal share of the budget, then the least
  recently used ones put more than ``protect_s`` seconds ago (a rerun that
  shows a matrix does not renew that: 16 sessions that kept rerunning held
  the whole budget for as long as they liked, and refused a newcomer's
  2 × 3 paste); if none may go, it is refused with :class:`~server.limits.Full`,
  whose sentence says when trying again will work;
- in time (``ttl_s``): a matrix no one has used for that long is dropped.

A visitor whose matrix was dropped finds the budget's ``get`` answering None,
and the page says the data is gone; nothing ever shows someone else's data,
since an id is the hash of the content itself. Pure: no Streamlit.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

import numpy as np

from server.budget import MIB, Budget
from server.limits import Full, Limits

# The defaults are the limits' (LNVIZ_OWN_DATA_MIB sets the budget; ui.labs.own_data builds the store from limits.current()).
TTL_S = Limits.own_data_ttl_s  # a matrix unused this long is dropped


def content_id(x: np.ndarray) -> str:
    """The id of a matrix: a hash of its shape and its float64 values, the same on every server."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    digest = hashlib.sha256(f"{x.shape}".encode())
    digest.update(x.tobytes())
    return digest.hexdigest()[:32]


def _nbytes(x: np.ndarray) -> int:
    return x.nbytes  # the values alone: what a session's share and the budget are stated in


def new(
    budget: int = Limits.own_data_bytes,
    session_bytes: int = Limits.own_data_session_bytes,
    ttl_s: float = Limits.own_data_ttl_s,
    protect_s: float = Limits.own_data_protect_s,
    clock: Callable[[], float] = time.monotonic,
) -> Budget[str, np.ndarray]:
    """A budget for visitors' matrices: ``budget`` bytes in all, ``session_bytes`` a session, dropped after ``ttl_s``
    unused, never for another's while used within ``protect_s``."""
    return Budget(budget, _nbytes, clock=clock, holder_bytes=session_bytes, ttl_s=ttl_s, protect_s=protect_s)


def put(store: Budget[str, np.ndarray], session: str, x: np.ndarray, client: str | None = None) -> str:
    """Keep ``x`` (B, H) in ``store`` for ``session`` of ``client`` (:func:`server.who.client`; the session
    itself by default); its id. Raises :class:`~server.limits.Full` when there is no room now, in a sentence
    that says why and when to try again (``retry_after_s``, 0: never).

    A matrix already held (by anyone) is not stored again. The session's older
    matrices are released first if the new one would take it over its share.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    key = content_id(x)
    try:
        store.put(key, x, session, client)
    except Full as full:
        raise Full(_sentence(full, x.nbytes), full.retry_after_s) from None
    return key


def _sentence(full: Full, size: int) -> str:
    limit = f"{full.limit // MIB} MiB"
    if full.why == "holder":
        return f"The matrix is {size / MIB:.1f} MiB, over the {limit} a visitor may keep."
    if full.why == "budget":
        return f"The matrix is over the {limit} this server keeps for visitors' data."
    if full.why == "share":
        return (
            f"This server holds as much of visitors' own data as it keeps ({limit}), all of it in use, and the "
            f"matrix ({size / MIB:.1f} MiB) is over an equal share of it ({full.share / MIB:.1f} MiB for each of the "
            f"{full.clients} visitors with data, you included). Try a smaller matrix, or again in {full.retry_after_s} s "
            "if the others' data is no longer in use by then."
        )
    return (
        f"This server holds as much of visitors' own data as it keeps ({limit}), all of it in use. "
        f"Try again in {full.retry_after_s} s."
    )
