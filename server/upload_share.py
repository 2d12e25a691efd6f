"""A fair share of the server's ceiling on uploaded files: who makes room when a new file doesn't fit.

All sessions together hold at most ``Limits.upload_total_bytes`` of uploaded
files (:class:`server.quota.UploadQuota`). First come, first served, one
address filled that 512 MiB in about 4 s (17 files of 31 MiB from several
sessions), and a new visitor's 16 KiB file was then refused for as long as the
address kept it full.

Here the ceiling is shared max-min fairly, in two levels: between addresses,
and within one address between its sessions, since a classroom
behind one NAT address is many honest students. When a new file does not fit,
the oldest file of the largest holder makes room, but only while that holder
holds more than the newcomer will once its file is in: so a newcomer is
refused only if it would be the largest holder itself. A file evicted here is
one its session had uploaded already and the page has usually read by then; at
worst, that visitor uploads it again. Policy only, no Streamlit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Held:
    """One uploaded file in the server's memory: whose, its id and its size."""

    session: str
    file_id: str
    nbytes: int


def make_room(files: Sequence[Held], addresses: Mapping[str, str], session: str, size: int, ceiling: int) -> list[Held]:
    """The files to evict (oldest first, of the largest fair holders) so that a new file of ``size`` bytes from
    ``session`` fits under ``ceiling``; empty when it fits already or when no fair eviction makes it fit.

    ``files``: every file held, oldest first; ``addresses``: session -> address
    (a session missing from it counts as the address ``""``). The new file's
    own session is never evicted from here: its own older files are the
    per-session quota's to drop.
    """
    total = sum(f.nbytes for f in files)
    if total + size <= ceiling:
        return []
    address = addresses.get(session, "")
    left = list(files)
    evicted: list[Held] = []
    while total + size > ceiling:
        by_address = Counter[str]()
        by_session = Counter[str]()
        for f in left:
            by_address[addresses.get(f.session, "")] += f.nbytes
            by_session[f.session] += f.nbytes
        mine_address, mine_session = by_address[address] + size, by_session[session] + size
        fair = [
            s
            for s in by_session
            if s != session
            and (
                by_session[s] > mine_session
                if addresses.get(s, "") == address
                else by_address[addresses.get(s, "")] > mine_address
            )
        ]
        if not fair:
            return []  # the newcomer would be the largest holder: it waits for others to let go
        victim = max(fair, key=lambda s: (by_address[addresses.get(s, "")], by_session[s]))
        oldest = next(f for f in left if f.session == victim)
        left.remove(oldest)
        evicted.append(oldest)
        total -= oldest.nbytes
    return evicted
