"""The concept check's rules in a room (issue 49): its steps, the presenter's two actions, and when an answer is taken.

The check is a set of items (:mod:`lnviz.labs.classroom.check`) that a class answers twice: before the lecture
(phase "pre") and after it ("post"), each phone at its own pace, all items at once. A room's ``check``
(:attr:`server.poll.Room.check`) is one of :data:`STEPS`: "" (not run yet), "pre" (open), "pre-closed",
"post" (open again), "post-closed". The presenter's :data:`OPEN` moves "" to "pre" and "pre-closed" to "post";
:data:`CLOSE` closes the phase that is open. Each is a presenter's action like the poll's: applied with the room's
secret, at the version the presenter's page drew, and it moves the version.

An answer is one voter's choice for one item in one phase; a changed answer replaces it. It is taken only while
its phase is open, and within the limits every answer in the room meets (:mod:`server.poll`: a proved
browser, the door, the voters of a browser and of an address, the rate); a phase takes at most ``max_voters``
voters. What a store keeps (:mod:`server.store`, keys under ``check:``) expires with the room. Nobody but
the presenter reads an answer: the room's public stream carries the step and, while a phase is open, how many
voters answered it and how many answers they gave (:mod:`server.events`).
"""

from __future__ import annotations

from typing import Protocol


class Room(Protocol):
    """What :func:`refusal` reads of a room (:class:`server.poll.Room`, which imports this module)."""

    @property
    def closed(self) -> bool: ...

    @property
    def check(self) -> str: ...


PHASES = ("pre", "post")
STEPS = ("", "pre", "pre-closed", "post", "post-closed")
OPEN, CLOSE = "check_open", "check_close"
ACTIONS = (OPEN, CLOSE)
_AFTER = {(OPEN, ""): "pre", (OPEN, "pre-closed"): "post", (CLOSE, "pre"): "pre-closed", (CLOSE, "post"): "post-closed"}

REFUSED = {
    "check-not-open": "The concept check is not open just now: nothing was saved.",
    "check-closed": "The presenter has closed this concept check: it takes no more answers.",
}


def after(step: str, action: str) -> str | None:
    """The check's step after the presenter's ``action`` (:data:`ACTIONS`); None where it does not apply."""
    return _AFTER.get((action, step))


def open_phase(step: str) -> str | None:
    """The phase that takes answers at ``step``: "pre", "post", or None."""
    return step if step in PHASES else None


def closed(step: str, phase: str) -> bool:
    """Whether ``phase`` has been closed by ``step``: "pre" from "pre-closed" on, "post" at "post-closed"."""
    return STEPS.index(step) > STEPS.index(phase)


def closing_steps(phase: str) -> tuple[str, ...]:
    """The steps at which ``phase`` is closed (the Redis script's list)."""
    return tuple(step for step in STEPS if closed(step, phase))


def refusal(room: Room | None, phase: str) -> str | None:
    """Why an answer for ``phase`` is not taken in ``room`` now (a key of :data:`REFUSED` or of
    :data:`server.poll.REFUSED`), or None. The Redis store's script makes the same checks."""
    if room is None:
        return "unknown"
    if room.closed:
        return "closed"
    if room.check == phase:
        return None
    return "check-closed" if closed(room.check, phase) else "check-not-open"
