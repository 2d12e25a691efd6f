"""The state table: every control that defines a view, its type, default and range.

A view is the page plus the values of its controls. Each control is a
:class:`Param`; its ``key`` is the widget key, the URL query parameter and the
lnviz argument name all at once. A value from a link goes through
:meth:`Param.parse`, which is as strict as the widget: text, NaN, ±inf and
out-of-range numbers never get through; each is clamped or dropped, and a short
note says what was changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from lnviz.data import PRESETS

# The largest integer a seed may be: what torch.Generator.manual_seed and a
# JavaScript number (a slider in the browser) both hold exactly.
MAX_SEED = 2**31 - 1


def eps_options() -> tuple[float, ...]:
    """ε choices: exactly 0, then 1, 2, 5 per decade from 1e-12 to 1 (log scale)."""
    values = [0.0]
    for exponent in range(-12, 0):
        for mantissa in (1, 2, 5):
            values.append(float(f"{mantissa}e{exponent}"))
    values.append(1.0)
    return tuple(values)


def format_number(value: float) -> str:
    """The short text a number has in a URL and on a slider: 1e-05, 0.5, 0 (exact: it parses back)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


@dataclass(frozen=True)
class Param:
    """One control of a view.

    ``kind`` is "int", "float", "bool" or "choice". Numbers have an inclusive
    range [lo, hi]; a choice has ``options`` (strings, or floats such as ε's
    log-scale steps, which a link may give as any number and which snap to the
    nearest option in log space).
    """

    key: str
    label: str
    kind: str
    default: Any
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    options: tuple = field(default=())
    help: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("int", "float", "bool", "choice"):
            raise ValueError(f"{self.key}: unknown kind {self.kind!r}")
        if self.kind == "choice" and self.default not in self.options:
            raise ValueError(f"{self.key}: default {self.default!r} is not an option")
        if self.kind in ("int", "float") and not (self.lo <= self.default <= self.hi):
            raise ValueError(f"{self.key}: default {self.default!r} outside [{self.lo}, {self.hi}]")

    def format(self, value: Any) -> str:
        """``value`` as it appears in a URL."""
        if self.kind == "bool":
            return "true" if value else "false"
        if isinstance(value, float):
            return format_number(value)
        return str(value)

    def clamp(self, value: Any) -> Any:
        """A valid value nearest to ``value`` (which must already have the right type)."""
        if self.kind in ("int", "float"):
            return type(self.default)(min(max(value, self.lo), self.hi))
        return value

    def parse(self, raw: str | list[str] | None) -> tuple[Any, str | None]:
        """The value a link asks for, made valid, and a note if anything changed.

        ``raw`` is the query string's value (a list when the key is repeated,
        in which case the last one wins, as in the browser). Returns
        ``(value, None)`` for a valid value, ``(fixed, note)`` otherwise.
        """
        if raw is None:
            return self.default, None
        note_repeat = ""
        if isinstance(raw, list | tuple):
            if not raw:
                return self.default, None
            if len(raw) > 1:
                note_repeat = f" ({self.key} was given {len(raw)} times; the last one counts)"
            raw = raw[-1]
        text = str(raw).strip()
        value, why = self._parse_text(text)
        if why is None and not note_repeat:
            return value, None
        shown = text if len(text) <= 24 else text[:21] + "..."
        if why is None:
            return value, f"{self.label}: using {self.format(value)}{note_repeat}."
        return value, f"{self.label}: {shown!r} {why}; using {self.format(value)}{note_repeat}."

    def _parse_text(self, text: str) -> tuple[Any, str | None]:
        default = self.default
        if self.kind == "bool":
            low = text.lower()
            if low in ("true", "1", "yes", "on"):
                return True, None
            if low in ("false", "0", "no", "off"):
                return False, None
            return default, "is not true or false"
        if self.kind == "choice" and isinstance(default, str):
            if text in self.options:
                return text, None
            for option in self.options:
                if option.lower() == text.lower():
                    return option, None
            return default, "is not one of the options"
        try:
            number = float(text)
        except ValueError:
            return default, "is not a number"
        if math.isnan(number):
            return default, "is not a number"
        if self.kind == "choice":
            return self._snap(number)
        if math.isinf(number):
            return self.clamp(number), "is infinite"
        if self.kind == "int":
            rounded = round(number)
            if rounded != number:
                return self.clamp(rounded), "is not a whole number"
            number = rounded
        value = self.clamp(type(default)(number))
        if value != number:
            return value, f"is outside {format_number(self.lo)} to {format_number(self.hi)}"
        return value, None

    def _snap(self, number: float) -> tuple[float, str | None]:
        """A numeric choice: the option nearest in log space (0 only for 0)."""
        if number in self.options:
            return number, None
        if math.isinf(number) or number < 0:
            options = [o for o in self.options if o > 0]
            best = max(options) if number > 0 else min(self.options)
            return best, "is outside the offered range"
        positive = [o for o in self.options if o > 0]
        if number == 0:
            return min(self.options), None
        best = min(positive, key=lambda o: abs(math.log10(o) - math.log10(number)))
        if number < min(positive) / 10 or number > max(positive) * 10:
            return best, "is outside the offered range"
        return best, "is not one of the offered steps"


def validate(params: tuple[Param, ...], query: dict[str, str | list[str]]) -> tuple[dict[str, Any], list[str]]:
    """Every param's value from ``query`` (defaults where absent) and the notes."""
    values, notes = {}, []
    for p in params:
        value, note = p.parse(query.get(p.key))
        values[p.key] = value
        if note:
            notes.append(note)
    return values, notes


# The main explorer's controls. Keys are the URL parameters: keep them stable.
BATCH = Param("batch", "Batch size B", "int", 16, lo=1, hi=1024, help="Rows: samples in the mini-batch.")
FEATURES = Param("features", "Features H", "int", 32, lo=2, hi=1024, help="Columns: features of each sample.")
SEED = Param("seed", "Seed", "int", 0, lo=0, hi=MAX_SEED, help="Same seed, same numbers, on any machine.")
DIST = Param(
    "dist",
    "Input",
    "choice",
    "heterogeneous features",
    options=tuple(PRESETS),
    help="What kind of activations x holds.",
)
GAIN = Param("gain", "Gain γ", "float", 1.0, lo=-5.0, hi=5.0, step=0.05, help="Scales every normalized value.")
BIAS = Param("bias", "Bias β", "float", 0.0, lo=-5.0, hi=5.0, step=0.05, help="Shifts every normalized value.")
AFFINE = Param(
    "affine", "Per-feature γ, β", "bool", False, help="Use a seeded random γ and β for each feature instead of scalars."
)
EPS = Param(
    "eps", "Epsilon ε", "choice", 1e-5, options=eps_options(), help="Added to σ² inside the square root: √(σ² + ε)."
)
ROW = Param("row", "Sample i", "int", 0, lo=0, hi=1023, help="The chosen cell's row: the sample LN normalizes.")
COL = Param("col", "Feature j", "int", 0, lo=0, hi=1023, help="The chosen cell's column: the feature BN normalizes.")
STAGE = Param(
    "stage",
    "Outputs shown",
    "choice",
    "y",
    options=("y", "x_hat"),
    help="y: after γ and β. x_hat: the normalized values before them (mean 0, variance 1).",
)
VIEW = Param(
    "view", "View", "choice", "charts", options=("charts", "numbers"), help="numbers: the same grid as tables."
)
DEVICE = Param(
    "device",
    "Device",
    "choice",
    "auto",
    options=("auto", "cuda", "mps", "cpu"),
    help="Where torch computes. auto: CUDA, then MPS, else CPU.",
)

EXPLORER = (BATCH, FEATURES, SEED, DIST, GAIN, BIAS, AFFINE, EPS, ROW, COL, STAGE, VIEW, DEVICE)
