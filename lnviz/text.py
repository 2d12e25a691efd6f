"""How lnviz writes values as text: numbers as a URL and a slider show them, as the stage shows them, and
anyone's text as a literal.

These are the ground floor of the library: the state table, the labs and the
page kit use them, and they import only the standard library.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal

# What a note shows of a link's value at most; the rest is cut.
QUOTE_LIMIT = 24


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` from a link, safe to put in Markdown: shortened, one line, as a code span.

    A code span's content is literal in Markdown: no emphasis, link, image,
    HTML or ``:color[...]`` directive inside it. Its fence is one backtick
    longer than the longest run of backticks in the text, so the text can't
    close it early.
    """
    flat = "".join(c if c.isprintable() else " " for c in str(text))
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    longest = max(map(len, re.findall("`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def format_number(value: float) -> str:
    """The short text a number has in a URL and on a slider: 1e-05, 0.5, 0 (exact: it parses back; −0.0 is
    written 0, which compares equal to it)."""
    value = value + 0.0  # −0.0 + 0.0 is 0.0: no "-0"
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def percent(fraction: float, digits: int = 2) -> str:
    """A fraction as a percentage written out plainly, ``digits`` significant digits and no exponent.

    3.4e-8 is "0.0000034 %", 0.054 is "5.4 %", 66 000 is "6,600,000 %": a
    reader who doesn't read 3.4e-06 still sees how small (or large) it is.
    """
    if not math.isfinite(fraction):
        return "NaN" if math.isnan(fraction) else _sign(f"{'-' if fraction < 0 else ''}∞ %")
    rounded = Decimal(f"{100 * fraction:.{digits}g}")  # digits significant, exactly as printed
    return _sign(f"{rounded.normalize() if rounded else Decimal(0):,f} %")


# The stage's numbers (lnviz/web/stage/model.js writes them in the browser; these are their twins, and
# tests/js/fixtures/numbers.json holds these texts for both languages' tests). JavaScript's toFixed and
# toExponential round a tie away from zero, where Python's format rounds it to even: 1.25 is "1.3" there.
MINUS = "\u2212"


def _sign(text: str) -> str:
    """A leading hyphen as a true minus sign; none before a number that was rounded to zero ("-0.0" is "0.0")."""
    if not text.startswith("-"):
        return text
    return text[1:] if _ZERO.fullmatch(text[1:]) else MINUS + text[1:]


_ZERO = re.compile(r"[0.]+(e[-+]\d+)?")  # every digit a zero: "0.00", "0e+0"


def to_fixed(value: float, places: int) -> str:
    """JavaScript's ``value.toFixed(places)`` for a finite value: ``places`` decimals, ties away from 0 (from
    1e21 on, the shortest digits with an exponent, as ``String(value)`` and ``repr`` both write them)."""
    if abs(value) >= 1e21:
        return repr(value)
    digits = Decimal(abs(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return ("-" if value < 0 else "") + f"{digits:f}"


def to_exponential(value: float, places: int) -> str:
    """JavaScript's ``value.toExponential(places)`` for a finite value: "1.2346e-5", "1e+2", ties away from 0."""
    exact = Decimal(abs(value))
    exponent = exact.adjusted() if value else 0
    mantissa = exact.scaleb(-exponent).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if mantissa >= 10:  # 9.99995 rounds up to 10.0000: one more power of ten
        exponent += 1
        mantissa = (mantissa / 10).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{'-' if value < 0 else ''}{mantissa:f}e{'-' if exponent < 0 else '+'}{abs(exponent)}"


def short(value: float, places: int = 2) -> str:
    """A cell's number on the stage: ``places`` decimals below 10, one fewer up to 100, then "1e+2"."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else MINUS + "∞"
    a, half = abs(value), 0.5 * 10**-places  # half: where ``places`` decimals would round up to 10.0…
    if a >= 100 - 10 * half:
        return _sign(to_exponential(value, 0))
    return _sign(to_fixed(value, places - 1 if a >= 10 - half else places))


def exact(value: float) -> str:
    """A tooltip's number on the stage, within 1e-6 of ``value``: six decimals, or five digits below 1e-3."""
    if not math.isfinite(value):
        return short(value)
    a = abs(value)
    return _sign(to_exponential(value, 4) if 0 < a < 1e-3 else to_fixed(value, 6))


def places(step: float) -> int:
    """How many decimals a control's ``step`` has: 0.05 has 2, 1e-05 has 5, 0.5 has 1, 1 has 0."""
    return max(0, -Decimal(format_number(step)).as_tuple().exponent)


def control_text(value: float, step: float) -> str:
    """A scrubbed control's value on the stage, with its step's decimals: "1.35", "−0.50" for a step of 0.05."""
    return _sign(to_fixed(value, places(step)))
