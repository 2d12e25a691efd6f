"""What the page says of someone's own data: where it is kept and until when, why a link doesn't carry it, and
why it is gone. Plain sentences from plain values (the glue, ``ui.labs.own_data``, says which); Markdown, the app's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

MARKER = re.compile(r"(\d{1,4})x(\d{1,4})")  # a link's "own=BxH": the shape of data it could not carry


@dataclass(frozen=True)
class Keeping:
    """Where the server keeps a grid shared by a link, and for how long: the server's numbers, passed in."""

    shared: bool  # in the store every replica shares (Redis), else in this process's memory
    shared_ttl_s: float  # the shared store keeps a grid this long after it was last shown or opened
    memory_ttl_s: float  # this process drops a grid unused this long


def where(keep: Keeping) -> str:
    """Where a grid whose id is in a link is kept, and for how long, as a clause."""
    if keep.shared:
        return (
            f"in the store every replica of this server shares, for {keep.shared_ttl_s / 3600:.0f} hours after it "
            "was last shown or opened"
        )
    return (
        f"in this server process's memory, while it is used at least once every {keep.memory_ttl_s / 60:.0f} "
        "minutes, until the server restarts or needs the room"
    )


def until(at: float, keep: Keeping) -> str:
    """When a grid stored at ``at`` (time.time()) in the shared store expires, roughly, in UTC."""
    when = datetime.fromtimestamp(at + keep.shared_ttl_s, UTC)
    return f"{when:%H:%M} UTC on {when.day} {when:%b}"


def kept(outcome: str, at: float, keep: Keeping, quota_bytes: int) -> str:
    """Where the data shown is kept and until when, or why the link doesn't carry it: one plain sentence.

    ``outcome``: "shared", "quota" (the browser's ``quota_bytes`` an hour are used), "full" (the store's grids,
    everyone's, are at their cap) or "down"; ``at``: when it was.
    """
    if outcome == "shared" and keep.shared:
        return f"Shared data, kept on the server until about {until(at, keep)}: {where(keep)}."
    if outcome == "shared":
        return f"Shared data, kept {where(keep)}."
    if outcome == "quota":
        why = f"this browser has stored the {quota_bytes // 2**20} MiB of data an hour that links may hold"
    elif outcome == "full":
        why = "the server already holds as much data for links as it keeps at once"
    else:
        why = "the store that keeps data for links can't be reached now"
    return f"Not in the link: {why}. It is shown in this session only, and the link notes only its shape."


def caveat(in_link: bool, kept_sentence: str, keep: Keeping) -> str:
    """What the share box says of a link while own data is shown: ``in_link``, its id is in it."""
    if in_link:
        return (
            f"This link opens this view with the same data, which the server keeps {where(keep)}: anyone who has "
            "the link sees these numbers."
        )
    return f"{kept_sentence} This link opens the same controls on generated data, and says the data isn't in it."


def link_gone(why: str, keep: Keeping) -> str:
    """Why the data a link's id names is not shown: "gone", "down" (the store can't be reached), or the
    server's refusal, a sentence of its own."""
    if why == "gone":
        return (
            f"This link shares someone's own data, which the server keeps {where(keep)}. It is not there: it "
            "expired, the server restarted, or the link comes from another server. So the data is gone and "
            "this is **generated data**. Ask whoever sent the link for the data, or upload or paste your own."
        )
    if why == "down":
        return (
            "This link shares someone's own data, but the store that keeps it can't be reached now, so this is "
            "**generated data**. Reload the page in a minute to try again."
        )
    return f"This link shares someone's own data, which this server can't hold now: {why} This is **generated data**."


def marker_gone(marker: str, session_ttl_s: float, memory_ttl_s: float) -> str:
    """Why the data a link's ``own=BxH`` marker speaks of is gone (the marker is read as two whole numbers, never
    echoed); ``session_ttl_s``: how long the server keeps a disconnected session, ``memory_ttl_s`` an unused grid."""
    found = MARKER.fullmatch(marker)
    shape = f" ({found[1]} × {found[2]})" if found else ""
    return (
        f"This view was showing someone's own data{shape}, which the link does not carry: it was kept only in "
        "the server's memory, for the browser session that uploaded or pasted it. The server restarted, the "
        f"page was away for more than {session_ttl_s} s or unused for {memory_ttl_s / 3600:.0f} hour, the server "
        "needed the room, or the link was opened elsewhere, so the data is gone and this is **generated data**. "
        "Upload or paste it again to see it."
    )
