"""How lnviz writes values as text: numbers as a URL and a slider show them, and anyone's text as a literal.

Both are the ground floor of the library: the state table, the labs and the
page kit use them, and they import nothing.
"""

from __future__ import annotations

import re

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
    """The short text a number has in a URL and on a slider: 1e-05, 0.5, 0 (exact: it parses back)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)
