"""One control of a view: its key, type, default and range, and how a link's value is read.

A :class:`Param`'s ``key`` is the widget key, the URL query parameter and the
lnviz argument name all at once. A value from a link goes through
:meth:`Param.parse`, which follows the widget's own rules exactly: text, NaN,
±inf and out-of-range numbers never get through; each is dropped for the
default (or cut to a whole number), and a short note says what was changed.
The table of every control is :mod:`lnviz.views.state`; a page's set of them is a
:class:`Controls` (:mod:`lnviz.views.pages`).

Notes echo what a link said. A link is anyone's text, so every echoed value
goes through :func:`lnviz.text.quote`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from lnviz.text import format_number, places, quote

# How a control can be drawn: Streamlit's slider, number input, select box, radio buttons, segmented
# control (a row of buttons, always one chosen), toggle, select slider (a slider over options), and a text box.
WIDGETS = ("slider", "number", "select", "radio", "segmented", "toggle", "select_slider", "text_area")


@dataclass(frozen=True)
class Param:
    """One control of a view.

    ``kind`` is "int", "float", "bool", "choice" or "text". Numbers have an inclusive
    range [lo, hi]; text has at most ``hi`` characters (a longer one is cut
    to its first ``hi``, as the text box cuts it); a choice has ``options`` (strings, or floats such as ε's
    log-scale steps, which a link may give as any number and which snap to the
    nearest option in log space); given as a dict, each option with what it is, which :meth:`meaning`
    says (the inputs, the perturbations, the tasks). A whole number drawn as a select slider has
    ``options`` too, its stops: those inside [lo, hi], with lo and hi; a link's
    value between them goes to the nearest stop, with a note. ``widget`` is how it is drawn, one of
    :data:`WIDGETS`; left out, a number is a slider, a switch a toggle and a
    choice a select box.
    """

    key: str
    label: str
    kind: str
    default: Any
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    options: tuple = field(default=())  # a dict {option: what it is} is kept as its keys and its meanings
    help: str = ""
    old_keys: tuple[str, ...] = ()  # what older links called this control; still read, with a note
    old_until: int = 1  # the last link version whose links used old_keys (:mod:`lnviz.views.links`)
    widget: str = ""
    meanings: tuple[tuple[Any, str], ...] = ()  # (option, what it is), from options given as a dict

    def but(self, **changes: Any) -> Param:
        """This control as one page needs it: another range, default, label or help; the same key."""
        return replace(self, **changes)

    def __post_init__(self) -> None:
        if isinstance(self.options, dict):
            object.__setattr__(self, "meanings", tuple(self.options.items()))
            object.__setattr__(self, "options", tuple(self.options))
        if self.kind not in ("int", "float", "bool", "choice", "text"):
            raise ValueError(f"{self.key}: unknown kind {self.kind!r}")
        if self.old_until < 1:
            raise ValueError(f"{self.key}: old_until must be a link version, 1 or later, got {self.old_until!r}")
        if not self.widget:
            widget = {"bool": "toggle", "choice": "select", "text": "text_area"}.get(self.kind, "slider")
            object.__setattr__(self, "widget", widget)
        if self.widget not in WIDGETS:
            raise ValueError(f"{self.key}: unknown widget {self.widget!r}")
        if self.kind == "int":  # stops only on a select slider, and only those in this page's range
            stops = {o for o in self.options if self.lo <= o <= self.hi} | {self.lo, self.hi}
            object.__setattr__(self, "options", tuple(sorted(stops)) if self.widget == "select_slider" else ())
            if self.options and self.default not in self.options:
                raise ValueError(f"{self.key}: default {self.default!r} is not one of the stops")
        if self.kind == "choice" and self.default not in self.options:
            raise ValueError(f"{self.key}: default {self.default!r} is not an option")
        if self.kind == "text" and not (isinstance(self.default, str) and len(self.default) <= self.hi):
            raise ValueError(f"{self.key}: default is not text of at most {self.hi} characters")
        if self.kind in ("int", "float") and not (self.lo <= self.default <= self.hi):
            raise ValueError(f"{self.key}: default {self.default!r} outside [{self.lo}, {self.hi}]")

    def meaning(self, option: Any) -> str:
        """What ``option`` is, in words, as the table says: a caption under the control."""
        return dict(self.meanings)[option]

    def format(self, value: Any) -> str:
        """``value`` as it appears in a URL."""
        if self.kind == "bool":
            return "true" if value else "false"
        if isinstance(value, float):
            return format_number(value)
        return str(value)

    def holds(self, value: Any) -> bool:
        """Whether ``value`` is one this control can take: the right type, and in range or an option."""
        if self.kind == "int":
            whole = isinstance(value, int) and not isinstance(value, bool) and self.lo <= value <= self.hi
            return whole and (not self.options or value in self.options)
        if self.kind == "float":
            return isinstance(value, float | int) and math.isfinite(value) and self.lo <= value <= self.hi
        if self.kind == "bool":
            return isinstance(value, bool)
        if self.kind == "text":
            return isinstance(value, str) and len(value) <= self.hi
        return value in self.options

    def coerce(self, value: Any) -> Any:
        """The valid value nearest to ``value``: clamped into range, or the default if unusable.

        For a value already held in session state that this control cannot
        take, such as a batch size left by a page whose range is wider.
        """
        if self.kind in ("int", "float"):
            try:
                number = float(value)
            except (TypeError, ValueError, OverflowError):  # OverflowError: an int too large for a float
                return self.default
            if not math.isfinite(number):
                return self.default
            return self._stop(type(self.default)(min(max(number, self.lo), self.hi)))
        if self.kind == "bool":
            return value if isinstance(value, bool) else self.default
        if self.kind == "text":
            return value[: int(self.hi)] if isinstance(value, str) else self.default
        return value if value in self.options else self.default

    def snap(self, value: Any) -> Any:
        """:meth:`coerce`, then on the control's steps: a number with a ``step`` to the nearest lo + k·step,
        written with the step's decimals (0.05: two), as a slider over that range would give it.

        For a value from a control drawn outside Streamlit (the stage's ranges), so that the step is
        said in one place, this table.
        """
        value = self.coerce(value)
        if self.kind != "float" or not self.step:
            return value
        snapped = self.lo + round((value - self.lo) / self.step) * self.step
        return round(min(max(snapped, self.lo), self.hi), places(self.step))

    def parse(self, raw: str | list[str] | None) -> tuple[Any, str | None]:
        """The value a link asks for, made valid, and a note if anything changed.

        The rules are the widget's own (Streamlit's, for a control bound to
        the URL): a number outside the range, NaN, ±inf or text is dropped for
        the default; a fraction given to a whole-number control is cut to its
        integer part; a choice must be spelled as the option is. ``raw`` is
        the query string's value, a list when the key is repeated: the last
        one counts. Returns ``(value, None)`` when the link's value was taken
        as it is. Used for a control that has no widget (hidden by the link).
        """
        if raw is None or (isinstance(raw, list | tuple) and not raw):
            return self.default, None
        value, _ = self._parse_text(_last(raw))
        return value, self.note(raw, value)

    def note(self, raw: str | list[str], used: Any) -> str | None:
        """What to tell the user when a link said ``raw`` and the control got ``used``.

        None when the link's value was taken as it is; otherwise one line
        naming the control, what the link said, why it was not taken (by this
        control's rules, or the widget's own), and the value used instead.
        """
        text = _last(raw)
        value, why = self._parse_text(text)
        repeated = f" ({self.key} was given {len(raw)} times; the last one counts)" if _count(raw) > 1 else ""
        if used != value and why is None:
            why = "was not accepted"
        if why is None and not repeated:
            return None
        if why is None:
            return f"{self.label}: using {self.format(used)}{repeated}."
        if self.kind == "text":  # the kept text is in its box: written here again, it was a wall of 2,000 characters
            return f"{self.label}: {quote(text)} {why}{repeated}."
        return f"{self.label}: {quote(text)} {why}; using {self.format(used)}{repeated}."

    def _parse_text(self, text: str) -> tuple[Any, str | None]:
        default = self.default
        if self.kind == "text":
            if len(text) > self.hi:
                return text[: int(self.hi)], f"is {len(text):,} characters long; the first {int(self.hi):,} are kept"
            return text, None
        if self.kind == "bool":
            if text.lower() in ("true", "false"):
                return text.lower() == "true", None
            return default, "is not true or false"
        if self.kind == "choice":
            for option in self.options:
                if text == self.format(option):
                    return option, None
            listed = ", ".join(self.format(o) for o in self.options[:6])
            more = ", ..." if len(self.options) > 6 else ""
            return default, f"is not one of the options ({listed}{more})"
        try:
            number = float(text)
        except ValueError:
            return default, "is not a number"
        if not math.isfinite(number):
            return default, "is not a finite number"
        if not self.lo <= number <= self.hi:
            return default, f"is outside {format_number(self.lo)} to {format_number(self.hi)}"
        if self.kind == "int":
            whole = int(number)
            if whole != number:
                return self._stop(whole), "is not a whole number"
            if self._stop(whole) != whole:
                return self._stop(whole), "is not one of the slider's stops"
            return whole, None
        return number, None

    def _stop(self, value: Any) -> Any:
        """The stop nearest to ``value`` (the lower of two as near), for a whole number with stops; else ``value``."""
        if self.kind != "int" or not self.options:
            return value
        return min(self.options, key=lambda stop: (abs(stop - value), stop))


def _last(raw: str | list[str]) -> str:
    """The value that counts when a key is repeated in a query string: the last."""
    return str(raw[-1]) if isinstance(raw, list | tuple) else str(raw)


def _count(raw: str | list[str]) -> int:
    return len(raw) if isinstance(raw, list | tuple) else 1


def to_query(params: Iterable[Param], values: dict[str, Any]) -> dict[str, str]:
    """The query parameters that reproduce ``values``: every value that is not its default."""
    return {p.key: p.format(values[p.key]) for p in params if p.key in values and values[p.key] != p.default}


class Controls:
    """The controls of one page, by key: ``COUPLING.batch`` is the batch control as that page draws it."""

    def __init__(self, *params: Param) -> None:
        self._params = {p.key: p for p in params}
        if len(self._params) != len(params):
            raise ValueError("a page lists the same control twice")

    def __getattr__(self, key: str) -> Param:
        try:
            return self.__dict__["_params"][key]
        except KeyError:
            raise AttributeError(key) from None

    def __iter__(self):
        return iter(self._params.values())

    def __len__(self) -> int:
        return len(self._params)

    def __getitem__(self, key: str) -> Param:
        return self._params[key]

    def keys(self) -> list[str]:
        return list(self._params)
