"""One poll question and how its votes are read and counted; the bank of them is :mod:`.questions`.

A :class:`Question` is a "choice" (pick one of a few options), a "number"
(guess a value, typed or, with ``drag``, dragged along its range) or "cells"
(tap the cells of a small grid that a norm's statistic for the marked cell
reads). A vote is stored as text, as :meth:`Question.parse` writes it: an
option's index ("0", "1", ...), a guess rounded to the question's
``decimals``, or the tapped cells as a hexadecimal bit mask (:func:`mask`).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lnviz.text import MINUS

KINDS = ("choice", "number", "cells")
MAX_TEXT = 32  # the longest vote text read; a phone's number, an option's index or a grid's 16 hex digits is shorter
# A grid's most rows and columns: 8 targets of 44 px (the least a finger hits reliably) and their row names are
# wider than a 360 to 414 px phone between its margins, where the grid scrolls sideways (lnviz/web/class/class.css);
# 8 rows stay under the prompt on an 844 px screen, and 64 cells are 16 hex digits.
MAX_SIDE = 8
# A dragged guess's most stops: 400 across a phone's 350 px track were a pixel each, fiddly to stop on.
MAX_STOPS = 100
# A number as a person types it: digits, one optional point, an optional exponent. ASCII only, so
# Python's float() never gets to read "1_000", "١٢" or " inf ".
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_HEX = re.compile(r"[0-9a-fA-F]+")


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


def mask(cells: Iterable[int], n: int) -> str:
    """Cells (row-major indices of a grid of ``n`` cells) as a vote stores them: bit k of a hexadecimal number is
    cell k, written with ⌈n/4⌉ lowercase digits, most significant first. ``mask([0, 5], 8) == "21"``."""
    return f"{sum(1 << k for k in set(cells)):0{-(-n // 4)}x}"


def unmask(stored: str) -> tuple[int, ...]:
    """The cells of a stored mask, in increasing order: the inverse of :func:`mask`."""
    bits = int(stored, 16)
    return tuple(k for k in range(bits.bit_length()) if bits >> k & 1)


@dataclass(frozen=True)
class Question:
    """One poll question and its right answer.

    For ``kind`` "choice", ``answer`` is the index of the right option in
    ``choices``. For "number", ``answer`` is torch's value; a guess must lie in
    [``lo``, ``hi``], is stored rounded to ``decimals``, and counts as right
    when it is within ``tolerance`` of the answer (absolute, default 0.05:
    about what working from the prompt's 2-decimal numbers costs). With
    ``drag`` the phone takes it on a slider over [``lo``, ``hi``] in steps of
    :attr:`step`, the range shown, rather than typed: the vote is the same.

    For "cells", the phone draws a grid of ``rows`` × ``cols`` cells (each
    :data:`MAX_SIDE` at most), row-major cell ``marked`` marked, ``axes`` naming
    what a row and a column are and ``row_names``, ``col_names`` each one
    (default their indices); ``answer`` is the right cells' indices, sorted.
    Only the exact set is right.
    """

    id: str  # short stable slug, e.g. "one-sample-bn"
    kind: str  # "choice", "number" or "cells"
    prompt: str  # one or two short sentences, markdown
    choices: tuple[str, ...] = ()  # "choice": the options; "number": ()
    answer: int | float | tuple[int, ...] = 0  # the right option's index; torch's value; torch's cells, sorted
    why: str = ""  # shown after the reveal, with torch's numbers
    link: str = ""  # relative URL of the view that shows why, ending in v=LINK_VERSION
    lo: float = 0.0  # "number": the smallest guess taken
    hi: float = 0.0  # "number": the largest guess taken
    decimals: int = 2  # "number": guesses are stored rounded to this many decimals
    tolerance: float = 0.05  # "number": |guess − answer| up to this is right
    drag: bool = False  # "number": answered on a slider over the range, not typed
    rows: int = 0  # "cells": the grid's rows
    cols: int = 0  # "cells": the grid's columns
    marked: int = 0  # "cells": the marked cell, row-major
    axes: tuple[str, str] = ("row", "column")  # "cells": what a row and a column are, singular
    row_names: tuple[str, ...] = ()  # "cells": each row's label; () for 0 to rows − 1
    col_names: tuple[str, ...] = ()  # "cells": each column's label; () for 0 to cols − 1

    def __post_init__(self) -> None:
        if not _SLUG.fullmatch(self.id):
            raise ValueError(f"question id must be a lowercase slug, got {self.id!r}")
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.drag and self.kind != "number":
            raise ValueError(f"{self.id}: only a number question is dragged")
        if self.kind == "cells":
            self._check_grid()
            return
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
        if self.drag and (self.hi - self.lo) / self.step > MAX_STOPS + 1e-9:
            stops = round((self.hi - self.lo) / self.step)
            raise ValueError(f"{self.id}: a slider of {stops} stops is fiddly; widen the tolerance or narrow the range")

    def _check_grid(self) -> None:
        if self.choices:
            raise ValueError(f"{self.id}: a cells question has no options")
        if not (1 <= self.rows <= MAX_SIDE and 1 <= self.cols <= MAX_SIDE):
            raise ValueError(f"{self.id}: a grid has 1 to {MAX_SIDE} rows and columns, got {self.rows} × {self.cols}")
        n = self.rows * self.cols
        if not 0 <= self.marked < n:
            raise ValueError(f"{self.id}: the marked cell {self.marked} is not one of the {n} cells")
        cells = self.answer
        if not (
            isinstance(cells, tuple)
            and all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k < n for k in cells)
            and list(cells) == sorted(set(cells))
        ):
            raise ValueError(f"{self.id}: answer must be the right cells' indices, sorted, got {cells!r}")
        for names, count in ((self.row_names, self.rows), (self.col_names, self.cols)):
            if names and len(names) != count:
                raise ValueError(f"{self.id}: {len(names)} names for {count} rows or columns")
        object.__setattr__(self, "row_names", self.row_names or tuple(map(str, range(self.rows))))
        object.__setattr__(self, "col_names", self.col_names or tuple(map(str, range(self.cols))))

    @property
    def cells(self) -> int:
        """A cells question's number of cells, rows × cols."""
        return self.rows * self.cols

    @property
    def step(self) -> float:
        """A number question's step between guesses: the stored rounding, 10^−decimals. A dragged one's slider
        snaps to the coarsest 1, 2 or 5 × 10^k of at least that whose stops still reach torch's answer (half a step
        within the tolerance) and end on ``hi``: 0.5 over [0, 40] with a tolerance of 0.25, 80 stops."""
        fine = 10.0**-self.decimals
        if not self.drag:
            return fine
        fits = []
        for step in (m * 10.0**e for e in range(-self.decimals, 7) for m in (1, 2, 5)):
            stops = (self.hi - self.lo) / step
            if fine - 1e-12 <= step <= 2 * self.tolerance + 1e-12 and abs(stops - round(stops)) < 1e-9:
                fits.append(step)
        return round(max(fits, default=fine), self.decimals)

    @property
    def span(self) -> str:
        """A number question's range in words: "from −10 to 10"."""
        return f"from {plain(self.lo)} to {plain(self.hi)}"

    @property
    def answer_text(self) -> str:
        """The right answer as the reveal writes it: the option, or torch's value to 4 significant digits."""
        if self.kind == "choice":
            return self.choices[self.answer]
        if self.kind == "cells":
            return self.where(self.answer)
        return written(self.answer)

    def where(self, cells: tuple[int, ...]) -> str:
        """Cells in words: "feature 3 of every sample" where they are whole rows by whole columns, else row by row."""
        if not cells:
            return "no cell"
        row, col = self.axes
        by_row: dict[int, list[int]] = {}
        for k in cells:
            by_row.setdefault(k // self.cols, []).append(k % self.cols)

        def some(axis: str, names: tuple[str, ...], picked: list[int]) -> str:
            if len(picked) == len(names) > 1:
                return f"every {axis}"
            return (
                f"{axis} {names[picked[0]]}" if len(picked) == 1 else f"{axis}s " + ", ".join(names[i] for i in picked)
            )

        columns = list(by_row.values())
        if all(c == columns[0] for c in columns):  # a rectangle: these columns of these rows
            return f"{some(col, self.col_names, columns[0])} of {some(row, self.row_names, list(by_row))}"
        return "; ".join(f"{some(col, self.col_names, c)} of {row} {self.row_names[r]}" for r, c in by_row.items())

    def parse(self, raw: object) -> str | None:
        """A vote as stored, or None if ``raw`` is not one.

        "choice": the option's index as a string ("0" to "n-1"), from an int
        or a string of ASCII digits. "number": the guess rounded to
        ``decimals``, as a string ("-0.00" written "0.00"), from an int, a
        float or a string such as "1.5", "-.25" or "2e-1". "cells": the
        tapped cells as :func:`mask` writes them, from hexadecimal text of
        any case and length (``"0021"``, ``"21"``) or from a list, tuple or set
        of cell indices (torch's answer). None for a bool, NaN or ±inf, a value
        out of range, an index that is no option or no cell, a mask with a bit
        past the last cell, text that is not a plain number or mask, and text
        over :data:`MAX_TEXT` characters. No cell tapped is a vote: "00".
        """
        if isinstance(raw, bool):
            return None
        if isinstance(raw, str):
            text = raw.strip()
            if len(raw) > MAX_TEXT or not text.isascii():
                return None
        if self.kind == "cells":
            return self._parse_cells(raw)
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

    def _parse_cells(self, raw: object) -> str | None:
        n = self.cells
        if isinstance(raw, str):
            text = raw.strip()
            if not _HEX.fullmatch(text) or int(text, 16) >> n:
                return None
            return mask(unmask(text), n)
        if isinstance(raw, list | tuple | set | frozenset) and len(raw) <= n:
            if all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k < n for k in raw):
                return mask(raw, n)
        return None

    def right(self, vote: object) -> bool:
        """Whether ``vote`` is right: the right option, a guess within ``tolerance`` of torch's value, or
        exactly torch's cells."""
        stored = self.parse(vote)
        if stored is None:
            return False
        if self.kind == "choice":
            return stored == str(self.answer)
        if self.kind == "cells":
            return stored == self.parse(self.answer)
        return abs(float(stored) - self.answer) <= self.tolerance + 1e-9  # the guess itself is rounded


def tally(question: Question, votes: Iterable[object]) -> dict[str, int]:
    """How many votes each answer got; votes :meth:`Question.parse` refuses are left out.

    "choice": every option's index, "0" to "n-1", with its count, zeros
    included. "number": each stored guess that was given, in increasing order.
    "cells": for every cell, "0" to "n-1", how many votes tapped it, zeros
    included, then "right", how many tapped exactly torch's cells, and
    "votes", how many votes were counted (a cell's share is its count over it).
    """
    if question.kind == "cells":
        return _tally_cells(question, votes)
    counts = {str(i): 0 for i in range(len(question.choices))}
    for vote in votes:
        stored = question.parse(vote)
        if stored is not None:
            counts[stored] = counts.get(stored, 0) + 1
    if question.kind == "number":
        return dict(sorted(counts.items(), key=lambda item: float(item[0])))
    return counts


def _tally_cells(question: Question, votes: Iterable[object]) -> dict[str, int]:
    counts = dict.fromkeys(map(str, range(question.cells)), 0) | {"right": 0, "votes": 0}
    right = question.parse(question.answer)
    for vote in votes:
        stored = question.parse(vote)
        if stored is None:
            continue
        for k in unmask(stored):
            counts[str(k)] += 1
        counts["right"] += stored == right
        counts["votes"] += 1
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
