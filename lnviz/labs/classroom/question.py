"""One poll question and how its votes are read and counted; the bank of them is :mod:`.questions`.

A :class:`Question` is either a "choice" (pick one of a few options) or a
"number" (guess a value). A vote is stored as text, as :meth:`Question.parse`
writes it: an option's index ("0", "1", ...) or a guess rounded to the
question's ``decimals``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lnviz.text import MINUS

KINDS = ("choice", "number")
MAX_TEXT = 32  # the longest vote text read; a phone's number or an option's index is far shorter
# A number as a person types it: digits, one optional point, an optional exponent. ASCII only, so
# Python's float() never gets to read "1_000", "١٢" or " inf ".
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def written(value: float) -> str:
    """torch's value as the reveal writes it: 4 significant digits, with a real minus sign."""
    return f"{value:.4g}".replace("-", MINUS)


def plain(value: float) -> str:
    """A guess or a range's end as a person writes it (``:g``), with a real minus sign."""
    return f"{value:g}".replace("-", MINUS)


def number(raw: object) -> float | None:
    """``raw`` as a finite number if it is one as a person types it (text of ASCII digits, or an int or float)."""
    if isinstance(raw, bool):
        return None
    try:
        if isinstance(raw, int | float):
            value = float(raw)
        elif isinstance(raw, str) and len(raw) <= MAX_TEXT and _NUMBER.fullmatch(raw.strip()):
            value = float(raw.strip())
        else:
            return None
    except OverflowError:  # an int too large for a float
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Question:
    """One poll question and its right answer.

    For ``kind`` "choice", ``answer`` is the index of the right option in
    ``choices``. For "number", ``answer`` is torch's value; a guess must lie in
    [``lo``, ``hi``], is stored rounded to ``decimals``, and counts as right
    when it is within ``tolerance`` of the answer (absolute, default 0.05:
    about what working from the prompt's 2-decimal numbers costs).
    """

    id: str  # short stable slug, e.g. "one-sample-bn"
    kind: str  # "choice" or "number"
    prompt: str  # one or two short sentences, markdown
    choices: tuple[str, ...] = ()  # "choice": the options; "number": ()
    answer: int | float = 0  # "choice": the right option's index; "number": torch's value
    why: str = ""  # shown after the reveal, with torch's numbers
    link: str = ""  # relative URL of the view that shows why, ending in v=LINK_VERSION
    lo: float = 0.0  # "number": the smallest guess taken
    hi: float = 0.0  # "number": the largest guess taken
    decimals: int = 2  # "number": guesses are stored rounded to this many decimals
    tolerance: float = 0.05  # "number": |guess − answer| up to this is right

    def __post_init__(self) -> None:
        if not _SLUG.fullmatch(self.id):
            raise ValueError(f"question id must be a lowercase slug, got {self.id!r}")
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "choice":
            if len(self.choices) < 2:
                raise ValueError(f"{self.id}: a choice question needs at least 2 options")
            if not isinstance(self.answer, int) or not 0 <= self.answer < len(self.choices):
                raise ValueError(f"{self.id}: answer must be an option's index, got {self.answer!r}")
            return
        if self.choices:
            raise ValueError(f"{self.id}: a number question has no options")
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"{self.id}: need finite lo < hi, got [{self.lo}, {self.hi}]")
        if not (math.isfinite(self.answer) and self.lo <= self.answer <= self.hi):
            raise ValueError(f"{self.id}: answer {self.answer} is not a guess one could give in [{self.lo}, {self.hi}]")
        if self.decimals < 0 or not self.tolerance >= 0:
            raise ValueError(f"{self.id}: decimals and tolerance must be >= 0")

    @property
    def span(self) -> str:
        """A number question's range in words: "from −10 to 10"."""
        return f"from {plain(self.lo)} to {plain(self.hi)}"

    @property
    def answer_text(self) -> str:
        """The right answer as the reveal writes it: the option, or torch's value to 4 significant digits."""
        if self.kind == "choice":
            return self.choices[self.answer]
        return written(self.answer)

    def parse(self, raw: object) -> str | None:
        """A vote as stored, or None if ``raw`` is not one.

        "choice": the option's index as a string ("0" to "n-1"), from an int
        or a string of ASCII digits. "number": the guess rounded to
        ``decimals``, as a string ("-0.00" written "0.00"), from an int, a
        float or a string such as "1.5", "-.25" or "2e-1". None for a bool,
        NaN or ±inf, a value out of range, an index that is no option, text
        that is not a plain number, and text over :data:`MAX_TEXT` characters.
        """
        if isinstance(raw, bool):
            return None
        if isinstance(raw, str):
            text = raw.strip()
            if len(raw) > MAX_TEXT or not text.isascii():
                return None
        if self.kind == "choice":
            if isinstance(raw, int):
                index = raw
            elif isinstance(raw, str) and text.isdigit():
                index = int(text)
            else:
                return None
            return str(index) if 0 <= index < len(self.choices) else None
        try:
            if isinstance(raw, int | float):
                value = float(raw)
            elif isinstance(raw, str) and _NUMBER.fullmatch(text):
                value = float(text)
            else:
                return None
        except OverflowError:  # an int too large for a float
            return None
        if not (math.isfinite(value) and self.lo <= value <= self.hi):
            return None
        stored = f"{round(value, self.decimals):.{self.decimals}f}"
        if float(stored) == 0:
            stored = f"{0:.{self.decimals}f}"
        return stored if self.lo <= float(stored) <= self.hi else None

    def right(self, vote: object) -> bool:
        """Whether ``vote`` is right: the right option, or a guess within ``tolerance`` of torch's value."""
        stored = self.parse(vote)
        if stored is None:
            return False
        if self.kind == "choice":
            return stored == str(self.answer)
        return abs(float(stored) - self.answer) <= self.tolerance + 1e-9  # the guess itself is rounded


def tally(question: Question, votes: Iterable[object]) -> dict[str, int]:
    """How many votes each answer got; votes :meth:`Question.parse` refuses are left out.

    "choice": every option's index, "0" to "n-1", with its count, zeros
    included. "number": each stored guess that was given, in increasing order.
    """
    counts = {str(i): 0 for i in range(len(question.choices))}
    for vote in votes:
        stored = question.parse(vote)
        if stored is not None:
            counts[stored] = counts.get(stored, 0) + 1
    if question.kind == "number":
        return dict(sorted(counts.items(), key=lambda item: float(item[0])))
    return counts


class LiveQuestion(Question):
    """A :class:`Question` whose ``answer`` and ``why`` come from ``live()``, computed once, when first read.

    For an answer that costs more than building the bank should (a pretrained model's run): the bank is
    built when /class opens, the answer is read at the reveal. ``live`` checks its own answer.
    """

    def __init__(self, live: Callable[[], tuple[int, str]], **fields: Any) -> None:
        object.__setattr__(self, "_live", functools.cache(live))
        super().__init__(**fields)

    def __post_init__(self) -> None:  # everything but the answer, which is not computed yet
        Question(**{name: getattr(self, name) for name in ("id", "kind", "prompt", "choices")})

    # Data descriptors win over the dataclass's fields; the frozen __init__'s assignments to them are ignored.
    answer = property(lambda self: self._live()[0], lambda self, value: None)
    why = property(lambda self: self._live()[1], lambda self, value: None)
