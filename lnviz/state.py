"""The state table: every control that defines a view, its type, default and range.

A view is the page plus the values of its controls. Each control is a
:class:`Param`; its ``key`` is the widget key, the URL query parameter and the
lnviz argument name all at once. A value from a link goes through
:meth:`Param.parse`, which follows the widget's own rules exactly: text, NaN,
±inf and out-of-range numbers never get through; each is dropped for the
default (or cut to a whole number), and a short note says what was changed.
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

    def coerce(self, value: Any) -> Any:
        """The valid value nearest to ``value``: clamped into range, or the default if unusable.

        For a value already held in session state that this control cannot
        take, such as a batch size left by a page whose range is wider.
        """
        if self.kind in ("int", "float"):
            try:
                number = float(value)
            except (TypeError, ValueError):
                return self.default
            if not math.isfinite(number):
                return self.default
            return type(self.default)(min(max(number, self.lo), self.hi))
        if self.kind == "bool":
            return value if isinstance(value, bool) else self.default
        return value if value in self.options else self.default

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
        shown = text if len(text) <= 24 else text[:21] + "..."
        return f"{self.label}: {shown!r} {why}; using {self.format(used)}{repeated}."

    def _parse_text(self, text: str) -> tuple[Any, str | None]:
        default = self.default
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
                return whole, "is not a whole number"
            return whole, None
        return number, None


def validate(params: tuple[Param, ...], query: dict[str, str | list[str]]) -> tuple[dict[str, Any], list[str]]:
    """Every param's value from ``query`` (defaults where absent) and the notes."""
    values, notes = {}, []
    for p in params:
        value, note = p.parse(query.get(p.key))
        values[p.key] = value
        if note:
            notes.append(note)
    return values, notes


def _last(raw: str | list[str]) -> str:
    """The value that counts when a key is repeated in a query string: the last."""
    return str(raw[-1]) if isinstance(raw, list | tuple) else str(raw)


def _count(raw: str | list[str]) -> int:
    return len(raw) if isinstance(raw, list | tuple) else 1


def to_query(params: tuple[Param, ...], values: dict[str, Any]) -> dict[str, str]:
    """The query parameters that reproduce ``values``: every value that is not its default."""
    return {p.key: p.format(values[p.key]) for p in params if p.key in values and values[p.key] != p.default}


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
