"""Someone's own matrix x (B, H) shared by a link: its bytes in the shared store, its id in the link.

The id is the hash of the matrix's content (:func:`server.own_store.content_id`),
so the same numbers have the same id on every replica, and an id can never
show other numbers: :func:`load` hashes what it read and refuses a mismatch.

The bytes are a fixed header and the values, nothing else: :data:`MAGIC`, B
and H as two little-endian uint32, then B·H float64 little-endian, row by row.
Reading checks the header, the exact length, the shape against the upload's
limits (the explorer's largest grid, as for an upload) and every value for
finiteness; nothing is ever unpickled. The largest grid (1024 × 1024) is
:data:`MAX_BYTES`, the size limit.

A client (a browser) may store ``Limits.shared_bytes_per_client`` an hour (:func:`new_quota`,
counted where the shared store is); a grid stored already, by anyone, costs
nothing and renews its time-to-live (the store's ``limits.blob_ttl_s``).
All clients' grids together are capped in the store itself, and shared fairly between addresses and clients
(:mod:`server.store_blobs`).
Pure: no Streamlit.
"""

from __future__ import annotations

import re
import struct

import numpy as np
from limits.storage import Storage

from lnviz.views.state import BATCH, FEATURES
from server.limits import MIB, Full, Limits
from server.own_store import content_id
from server.quota import Quota
from server.store import Store

MAGIC = b"lnvizx1\0"  # what the bytes are, and their format's version
_SHAPE = struct.Struct("<II")  # B, H
HEADER_BYTES = len(MAGIC) + _SHAPE.size
MAX_ROWS, MAX_COLS = BATCH.hi, FEATURES.hi  # the explorer's largest grid, which is also the upload's
MAX_BYTES = HEADER_BYTES + MAX_ROWS * MAX_COLS * 8  # 8 MiB
ID = re.compile(r"[0-9a-f]{32}")  # content_id's form: 128 bits of SHA-256, in hex


class BadGrid(ValueError):
    """Bytes that are not a grid this app stored, or a grid over the upload's limits."""


def valid_id(text: object) -> str | None:
    """``text`` if it has the form of a grid's id, else None (a link's value is anyone's to write)."""
    return text if isinstance(text, str) and ID.fullmatch(text) else None


def _check_shape(rows: int, cols: int) -> None:
    if not (1 <= rows <= MAX_ROWS and 2 <= cols <= MAX_COLS):
        raise BadGrid(f"a {rows} × {cols} grid, outside 1–{MAX_ROWS} × 2–{MAX_COLS}")


def to_bytes(x: np.ndarray) -> bytes:
    """x (B, H) as the shared store keeps it: header, then float64 little-endian, row by row.

    Raises :class:`BadGrid` for a grid the upload would refuse (not 2-D, over its limits, not finite).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise BadGrid(f"a grid has 2 dimensions, not {x.ndim}")
    _check_shape(*x.shape)
    if not np.isfinite(x).all():
        raise BadGrid("a grid has finite values only")
    return MAGIC + _SHAPE.pack(*x.shape) + x.astype("<f8", order="C").tobytes()


def from_bytes(data: bytes) -> np.ndarray:
    """The grid x (B, H), float64, from :func:`to_bytes`'s bytes; :class:`BadGrid` for anything else.

    The length is checked against the header's shape before any value is read.
    """
    if len(data) < HEADER_BYTES or len(data) > MAX_BYTES or not data.startswith(MAGIC):
        raise BadGrid("not a grid stored by this app")
    rows, cols = _SHAPE.unpack_from(data, len(MAGIC))
    _check_shape(rows, cols)
    if len(data) != HEADER_BYTES + rows * cols * 8:
        raise BadGrid(f"{len(data)} bytes, not those of a {rows} × {cols} grid")
    x = np.frombuffer(data, dtype="<f8", offset=HEADER_BYTES).reshape(rows, cols).astype(np.float64)  # (B, H): a copy
    if not np.isfinite(x).all():
        raise BadGrid("a grid has finite values only")
    return x


def _key(grid_id: str) -> str:
    return f"own:{grid_id}"


def new_quota(
    storage: Storage | None = None,
    amount: int = Limits.shared_bytes_per_client,
    window_s: int = int(Limits.quota_window_s),
) -> Quota:
    """The bytes each client may store per window, counted in ``storage`` (this process's memory by default)."""
    return Quota("own-share", amount, window_s, storage, exact=False)


def share(store: Store, quota: Quota, x: np.ndarray, client: str, address: str = "") -> str | None:
    """Keep x (B, H) in ``store`` for its ``limits.blob_ttl_s``, charged to ``client`` (of ``address``) in
    ``quota``: its id, or None when the client's quota for the window is used. Raises :class:`~server.limits.Full`
    when the store's grids (``shared_grid_bytes``, all clients together) are at their cap and this grid would make
    its client or address the largest holder (the client's quota is charged all the same: a script gains nothing by
    trying), and :class:`~server.limits.StoreDown` when the store can't be reached."""
    data = to_bytes(x)
    key = _key(grid_id := content_id(x))
    if store.renew_blob(key):  # held already, by anyone: free
        return grid_id
    if not quota.hit(client, len(data)):
        return None
    if not store.put_blob(key, data, client, address):
        raise Full(f"This server holds as many shared grids as it keeps ({store.limits.shared_grid_bytes // MIB} MiB).")
    return grid_id


def load(store: Store, grid_id: str) -> np.ndarray | None:
    """The grid ``grid_id`` from ``store``, or None: never stored, expired, or not what its id says.

    Raises :class:`~server.limits.StoreDown` when the store can't be reached.
    """
    data = store.get_blob(_key(grid_id))
    if data is None:
        return None
    try:
        x = from_bytes(data)
    except BadGrid:
        return None
    return x if content_id(x) == grid_id else None
