"""The class poll's rules: a room, its rounds, who presents it, and the sentences a refusal is said in.

A *room* is one live run of the class poll: a lecture's run of questions. The
presenter holds its secret; the students hold its code. Each question is asked
as peer instruction is taught (Crouch and Mazur 2001): round 1 is *asking*
until the presenter reveals it, which shows the class's answers (or, if the
presenter hides them, only that the round is over) but not torch's; after
**Ask again** (neighbours have argued) the same question is asked in round 2;
torch's answer comes only with **Show answer**, which the presenter may press
after either round. Its votes are a map voter → choice, so a changed answer
replaces the earlier one and never adds to it. A voter is an opaque random id (a
cookie of the browser's, :mod:`ui.poll.classroom`); nothing else about a person is
kept. The presenter's secret is kept only as its SHA-256.

Where rooms and votes are kept, atomically and with an expiry, is
:mod:`server.store`; it applies these rules, with the numbers of the
:class:`~server.limits.Limits` it holds (``store.limits``), which a refusal's
sentence names too (:func:`said`).

One visitor can neither fill the store nor a class's round. A *client* is a
proved browser (:mod:`server.proof`: one that kept the signed cookie
the server gave it; a session without one opens and votes nothing) and an
*address* the one its connection comes from, hashed, every address the app
can't see counted as one (:func:`server.who.counted`); the caller passes
both, "" for a limit it does not apply.

- Opening rooms: a client may open ``rooms_per_client`` rooms per
  ``open_window_s`` (a minute); its first of the window is its own, and
  only its further rooms count against its address's ``rooms_per_address``
  (many lecturers may share a campus's address), so a proved browser can
  always open a room, whatever others at its address did. The in-process
  store holds at most ``max_rooms`` rooms at once.
- Voting: a client may vote as ``voters_per_client`` voter ids in one room
  (a shared classroom computer serves a few students). Its first voter is its
  own; its further voters count against its address's places in the room,
  ``voters_per_address`` at first and one more every
  ``1 / voters_per_s`` seconds after the room opened: they grow as students
  arrive. A script that wants many voters needs many proved clients, each paid
  for with a proof of work (:mod:`server.proof`).
- The door (:attr:`Room.shut`): once the class is in, the presenter may close
  it; a voter who has not voted in the room yet is refused until it is opened
  again. The store counts the voters who joined, and when (``joined``).

The presenter's further devices: a presenter may take the room to another
browser (a phone, the podium's PC) with a one-time *take code*: :data:`TAKE_LENGTH`
characters of :data:`CODE_ALPHABET`, drawn from the CSPRNG, kept only as its
SHA-256, used once, gone after ``take_s``, one live per room. The browser
that uses it gets a secret of its own, whose SHA-256 joins the room's
(:attr:`Room.hosts`, at most ``max_hosts``); the browser that started the
room may sign them all out. A take code is never the room's code.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from server import check
from server.limits import Limits, Refused

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read off a projector and typed on a phone
CODE_LENGTH = 8  # 31**8 ≈ 8.5e11 codes: 39 bits
ACTIONS = ("reveal", "again", "answer", "next", "close", "shut", "reopen", "hide", "show", *check.ACTIONS)
PHASES = ("ask", "reveal", "answer", "done")

# What a vote came to: counted (a first vote), changed (replaced this voter's vote), or why it was refused.
COUNTED, CHANGED = "counted", "changed"
REFUSED = {
    "unknown": "There is no room with this code, or it has expired.",
    "closed": "The presenter has closed this room.",
    "moved": "The presenter has moved on to another question: this one no longer takes answers.",
    "revealed": "The answers to this question have been revealed: it no longer takes answers.",
    "flood": "Too many answers in a short time: wait a minute, then answer again.",
    "full": "This round has as many voters as a room takes.",
    "crowded": "This browser has already answered as {voters_per_client} different voters in this room, the most "
    "one device may: answer from your own phone.",
    "network": "Many voters from your network have answered on devices that answered as someone else already: "
    "answer from your own phone, or wait a minute.",
    "door": "The presenter has closed this room's door: it takes no new voters.",
}
# What opening a room came to: CREATED, "taken" (the code is another room's: draw again), or why it was refused.
CREATED = "created"
OPEN_REFUSED = {
    "many": "You have opened {rooms_per_client} rooms in the last minute, the most one browser may. A room stays "
    "open for 6 idle hours: go back to one you opened, or start another in a minute.",
    "network": "{rooms_per_address} rooms have been opened from your network in the last minute. Try again in a "
    "minute.",
    "full": "This server holds as many class rooms as it can just now. Try again later.",
}

# Taking a room to another browser: a take code, and what using one came to: TAKEN, or why it was refused.
TAKE_LENGTH = 12  # 31**12 ≈ 7.9e17 codes: 59 bits, typed on a podium's PC if it has no camera
TAKEN = "taken"
TAKE_REFUSED = {
    "used": "This presenter's code has been used, has expired or was never made. Make a new one on the "
    "presenter's screen: each works once, for 5 minutes.",
    "unknown": "The room this presenter's code was made for is closed or has expired.",
    "many": "This room is already presented from {max_hosts} further devices, the most it takes: sign them out "
    "on the screen that started the room, then use this code again.",
}


def said(sentences: Mapping[str, str], why: str, limits: Limits) -> str:
    """The sentence ``sentences[why]`` (:data:`REFUSED`, :data:`OPEN_REFUSED`, :data:`TAKE_REFUSED`) with the numbers
    of ``limits`` (the store's) in it: a sentence names its number as the field of :class:`Limits` it is."""
    return sentences[why].format_map(vars(limits))


class OpenRefused(Refused):
    """A room was not opened: too many lately from this client or address, or the store is full.

    ``why`` is a key of :data:`OPEN_REFUSED`; the message is its sentence, with the numbers of ``limits``.
    """

    def __init__(self, why: str, limits: Limits) -> None:
        super().__init__(said(OPEN_REFUSED, why, limits))
        self.why = why


@dataclass(frozen=True)
class Room:
    """A room's state: which question (``index`` into ``questions``), which round (1 or 2), and its phase.

    ``phase`` is "ask" (votes are taken), "reveal" (the round is over: the
    class's answers are shown, unless ``hidden``, and torch's are not),
    "answer" (torch's answer is shown, beside every round's) or "done" (past
    the last question). ``version`` grows with every presenter action, so a
    poll that sees it unchanged has nothing to redraw.
    """

    code: str
    questions: tuple[str, ...]
    index: int = 0
    round: int = 1
    phase: str = "ask"
    closed: bool = False
    version: int = 0
    secret_sha: str = ""
    shut: bool = False  # the door: no new voters, the presenter's to close and open again
    check: str = ""  # the concept check's step (server.check.STEPS): "" until the presenter opens it
    hidden: bool = False  # a reveal shows only that the round is over, not the class's answers, until torch's
    hosts: tuple[str, ...] = ()  # the SHA-256 of each further presenter browser's secret (a take code's)

    @property
    def question(self) -> str | None:
        """The id of the question asked now; None past the last one."""
        return self.questions[self.index] if self.index < len(self.questions) else None

    def after(self, action: str) -> Room | None:
        """This room after the presenter's ``action``; None where the action does not apply now.

        reveal: an asking round is over, torch's answer still unsaid. again: a
        revealed first round is asked a second time (never once torch's answer
        is out: the second round would measure nothing). answer: torch's
        answer, after an asking or a revealed round. next: the next question's
        first round (or "done" past the last). close: the room takes nothing
        more. shut, reopen: the door, closed to new voters and opened again.
        hide, show: whether a reveal shows the class's answers. check_open,
        check_close: the concept check's next step (:func:`server.check.after`).
        """
        if self.closed:
            return None
        if action in check.ACTIONS:
            step = check.after(self.check, action)
            return None if step is None else replace(self, check=step, version=self.version + 1)
        if action == "reveal" and self.phase == "ask":
            return replace(self, phase="reveal", version=self.version + 1)
        if action == "again" and self.phase == "reveal" and self.round == 1:
            return replace(self, round=2, phase="ask", version=self.version + 1)
        if action == "answer" and self.phase in ("ask", "reveal"):
            return replace(self, phase="answer", version=self.version + 1)
        if action == "next" and self.phase != "done":
            index = self.index + 1
            phase = "ask" if index < len(self.questions) else "done"
            return replace(self, index=index, round=1, phase=phase, version=self.version + 1)
        if action == "close":
            return replace(self, closed=True, version=self.version + 1)
        if action in ("shut", "reopen") and self.shut != (action == "shut"):
            return replace(self, shut=action == "shut", version=self.version + 1)
        if action in ("hide", "show") and self.hidden != (action == "hide"):
            return replace(self, hidden=action == "hide", version=self.version + 1)
        return None

    def to_fields(self) -> dict[str, str]:
        return {
            "questions": ",".join(self.questions),
            "index": str(self.index),
            "round": str(self.round),
            "phase": self.phase,
            "closed": "1" if self.closed else "0",
            "version": str(self.version),
            "secret_sha": self.secret_sha,
            "shut": "1" if self.shut else "0",
            "check": self.check,
            "hidden": "1" if self.hidden else "0",
            "hosts": ",".join(self.hosts),
        }

    @classmethod
    def from_fields(cls, code: str, fields: Mapping[str, str]) -> Room:
        return cls(
            code=code,
            questions=tuple(q for q in fields["questions"].split(",") if q),
            index=int(fields["index"]),
            round=int(fields["round"]),
            phase=fields["phase"],
            closed=fields["closed"] == "1",
            version=int(fields["version"]),
            secret_sha=fields["secret_sha"],
            shut=fields.get("shut") == "1",
            check=fields.get("check", ""),
            hidden=fields.get("hidden") == "1",
            hosts=tuple(h for h in fields.get("hosts", "").split(",") if h),
        )


def sha(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_code(randbelow: Callable[[int], int] = secrets.randbelow, length: int = CODE_LENGTH) -> str:
    """A room code (or, with ``length`` :data:`TAKE_LENGTH`, a take code): ``length`` characters of
    :data:`CODE_ALPHABET`, from the system's CSPRNG."""
    return "".join(CODE_ALPHABET[randbelow(len(CODE_ALPHABET))] for _ in range(length))


def valid_code(text: object, length: int = CODE_LENGTH) -> str | None:
    """``text`` as a room code (upper case, spaces and dashes dropped), or None if it can't be one; with
    ``length`` :data:`TAKE_LENGTH`, as a take code."""
    if not isinstance(text, str) or len(text) > 4 * length:
        return None
    code = text.upper().replace(" ", "").replace("-", "")
    return code if len(code) == length and all(c in CODE_ALPHABET for c in code) else None


class Opens(Protocol):
    """What :func:`open_room` needs of a store: :class:`server.store.Store` is one."""

    limits: Limits

    def create(self, room: Room, client: str = "", address: str = "") -> str: ...


def open_room(store: Opens, questions: tuple[str, ...], client: str = "", address: str = "") -> tuple[Room, str]:
    """A new room with a fresh code, and its secret (which is stored only as its SHA-256), opened by ``client``
    from ``address``. Raises :class:`OpenRefused` past their limits or with the store full."""
    secret = secrets.token_urlsafe(24)
    for _ in range(16):
        room = Room(new_code(), questions, secret_sha=sha(secret))
        outcome = store.create(room, client, address)
        if outcome == CREATED:
            return room, secret
        if outcome in OPEN_REFUSED:
            raise OpenRefused(outcome, store.limits)
    raise RuntimeError("16 random room codes in a row were taken")  # 39 bits: never, unless the CSPRNG is broken


class Hands(Protocol):
    """What taking a room to another browser needs of a store: :class:`server.store.Store` is one."""

    def hand_over(self, code: str, secret: str, take_sha: str) -> bool: ...

    def take_over(self, take_sha: str, secret_sha: str) -> tuple[str, str | None]: ...


def hand_over(store: Hands, code: str, secret: str) -> str | None:
    """A new take code for room ``code``, made by its presenter ``secret`` (None if ``secret`` presents no open
    room of that code): the room's one live code, kept by the store only as its SHA-256."""
    take = new_code(length=TAKE_LENGTH)
    return take if store.hand_over(code, secret, sha(take)) else None


def take_over(store: Hands, take: str) -> tuple[str, str | None, str | None]:
    """Use take code ``take`` for this browser: (:data:`TAKEN`, the room's code, this browser's new presenter
    secret), or (a key of :data:`TAKE_REFUSED`, None, None)."""
    secret = secrets.token_urlsafe(24)
    outcome, code = store.take_over(sha(take), sha(secret))
    return (outcome, code, secret) if outcome == TAKEN else (outcome, None, None)


def presenter_of(room: Room, secret: str | None) -> bool:
    """Whether ``secret`` is this room's, or one of its further presenter browsers' (each compared in constant
    time)."""
    if not secret:
        return False
    mine = sha(secret)
    return any([hmac.compare_digest(known, mine) for known in (room.secret_sha, *room.hosts)])


def first_presenter(room: Room, secret: str | None) -> bool:
    """Whether ``secret`` is that of the browser that started the room, the one that may sign the others out."""
    return bool(secret) and hmac.compare_digest(room.secret_sha, sha(secret or ""))


def refusal(room: Room | None, index: int, round: int) -> str | None:
    """Why a vote for question ``index``, round ``round``, is not taken in ``room`` now (a key of :data:`REFUSED`),
    or None. The Redis store's vote script makes the same checks."""
    if room is None:
        return "unknown"
    if room.closed:
        return "closed"
    if room.index != index or room.round != round:
        return "moved"
    if room.phase != "ask":
        return "revealed"
    return None
