"""Peer instruction's numbers: the share of a round that is right, what it advises, and how the class moved.

As Crouch and Mazur (2001) run it: each student votes alone (round 1), and the
instructor, who sees the answers, goes by the share right. Under about 35 %,
too few can teach their neighbours: the instructor explains first. From 35 to
70 %, students turn to a neighbour who answered differently and try to convince
them, then vote again (round 2). Over 70 %, the answer is shown and the class
moves on. The answer comes after the last vote; the *shift* pairs each voter's
two answers by the anonymous voter id (:mod:`server.poll`) and counts who
moved to torch's answer and who moved away from it.

Votes come as the store keeps them, voter → stored choice; who is right is
:meth:`lnviz.labs.classroom.question.Question.right`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from lnviz.labs.classroom import text
from lnviz.labs.classroom.question import Question

LOW, HIGH = 0.35, 0.70  # Crouch and Mazur's band: below it explain, within it discuss, above it move on


@dataclass(frozen=True)
class Share:
    """How many of a round's ``answered`` voters gave torch's answer (``right``)."""

    right: int
    answered: int

    @property
    def fraction(self) -> float | None:
        return self.right / self.answered if self.answered else None

    @property
    def said(self) -> str:
        """ "2 of 3 right (67 %)", or that nobody answered."""
        if not self.answered:
            return text.NO_ANSWERS
        return text.SHARE.format(right=self.right, answered=self.answered, percent=round(100 * self.fraction))


def share_right(question: Question, votes: Iterable[str]) -> Share:
    """The share of ``votes`` (stored choices, one per voter) that :meth:`Question.right` counts as right."""
    found = [question.right(vote) for vote in votes]
    return Share(sum(found), len(found))


def advice(share: Share, round: int) -> str | None:
    """What to do next, a key of :data:`text.ADVICE`: after round 1 by the share right ("explain" under
    :data:`LOW`, "discuss" from :data:`LOW` to :data:`HIGH`, "answer" over it); after round 2 "last" (show the
    answer). None while nobody has answered."""
    fraction = share.fraction
    if fraction is None:
        return None
    if round > 1:
        return "last"
    if fraction < LOW:
        return "explain"
    return "discuss" if fraction <= HIGH else "answer"


@dataclass(frozen=True)
class Shift:
    """How the class moved between round 1 and round 2: each round's share right, and, of the ``both`` voters who
    answered both rounds, how many were wrong in round 1 and right in round 2 (``to_right``), and the reverse
    (``away``)."""

    first: Share
    second: Share
    both: int
    to_right: int
    away: int

    @property
    def said(self) -> str:
        """The shift in one sentence, as the projector and the phones show it with torch's answer."""
        moved = text.SHIFT_MOVED.format(both=self.both, to_right=self.to_right, away=self.away) if self.both else ""
        return text.SHIFT.format(first=self.first.said, second=self.second.said, moved=moved)


def shift(question: Question, first: Mapping[str, str], second: Mapping[str, str]) -> Shift:
    """Round 1's votes against round 2's, voter → stored choice each, paired by voter."""
    both = first.keys() & second.keys()
    to_right = sum(not question.right(first[v]) and question.right(second[v]) for v in both)
    away = sum(question.right(first[v]) and not question.right(second[v]) for v in both)
    return Shift(
        share_right(question, first.values()), share_right(question, second.values()), len(both), to_right, away
    )


def outcome(question: Question, rounds: Sequence[Mapping[str, str]]) -> str:
    """What the class got, said beside torch's answer: the share right of one round, or of two and the shift. Each
    round's votes are voter → stored choice, round 1 first."""
    if len(rounds) > 1:
        return shift(question, rounds[0], rounds[1]).said
    return text.RIGHT_ONCE.format(first=share_right(question, rounds[0].values() if rounds else ()).said)
