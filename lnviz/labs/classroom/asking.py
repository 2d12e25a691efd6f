"""How a poll question is put: its words with torch's numbers filled in (:func:`asked`), a number as prose writes
it, and the link to the view of lnviz that shows why (:func:`link`). The bank (:mod:`.questions`) and the
constructed answers' questions (:mod:`.construct`) build every question with them."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from lnviz.labs.classroom import text
from lnviz.labs.classroom.question import Question
from lnviz.text import MINUS
from lnviz.views.links import LINK_VERSION
from lnviz.views.pages import BY_NAME


def link(page: str, **values: Any) -> str:
    """The relative URL of ``page`` (a name in :data:`lnviz.views.pages.BY_NAME`) with these control values.

    Each value is written as the control writes it, so a key that is not one
    of the page's controls raises KeyError here rather than making a dead link.
    """
    entry = BY_NAME[page]
    path = "/" if entry.default else f"/{entry.url_path}"
    query = {key: entry.controls[key].format(value) for key, value in values.items()} | {"v": str(LINK_VERSION)}
    return f"{path}?{urlencode(query, quote_via=quote)}"


def asked(qid: str, values: dict[str, Any], **fields: Any) -> Question:
    """Question ``qid``: its words (:data:`text.QUESTIONS`) with torch's ``values`` filled in, and the ``fields``
    its builder computed (``answer``, ``link``, ...)."""
    words = dict(text.QUESTIONS[qid])
    for name in ("prompt", "why"):
        if name in words:
            words[name] = words[name].format(**values)
    if "choices" in words:
        words["choices"] = tuple(choice.format(**values) for choice in words["choices"])
    return Question(id=qid, **words, **fields)


def prose(number: str) -> str:
    """A number's text for prose: a real minus sign."""
    return number.replace("-", MINUS)


def fixed(value: float, decimals: int = 2) -> str:
    """A number in prose with ``decimals`` decimals and a real minus sign."""
    return prose(f"{value:.{decimals}f}")


def tiny(value: float) -> str:
    """A tiny |Δ| in prose: one digit, such as 2e−15."""
    return prose(f"{value:.0e}")
