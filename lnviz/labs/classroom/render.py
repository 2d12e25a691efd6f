"""The class poll's questions as the phone's element draws them (``lnviz/web/class/``), with no HTML.

A question's words are short Markdown: code in backticks, bold in double
asterisks, nothing else (:data:`.text.QUESTIONS`). :func:`spans` cuts such text
into ``[tag, text]`` parts that the browser puts in as text (``textContent``),
so no question, option or reason is ever read as HTML there.
:func:`entry` is one question for the element.
"""

from __future__ import annotations

import re
from typing import Any

from lnviz.labs.classroom.question import Question

_MARKS = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*")


def spans(markdown: str) -> list[list[str]]:
    """``markdown`` as parts ``[tag, text]``: tag "" for plain text, "code" for `code`, "strong" for **bold**.

    >>> spans("a `b` **c**")
    [['', 'a '], ['code', 'b'], ['', ' '], ['strong', 'c']]
    """
    parts: list[list[str]] = []
    at = 0
    for found in _MARKS.finditer(markdown):
        if found.start() > at:
            parts.append(["", markdown[at : found.start()]])
        parts.append(["code", found.group(1)] if found.group(1) is not None else ["strong", found.group(2)])
        at = found.end()
    if at < len(markdown):
        parts.append(["", markdown[at:]])
    return parts


def entry(question: Question, reveal: bool = False) -> dict[str, Any]:
    """``question`` for the phone's element: its words as :func:`spans` and its range; with ``reveal``, torch's
    answer and reasons too (computing a live question's). Without, they are None: no phone holds torch's answer
    before the reveal (the element asks for them then: ``server/class_reveal.py``)."""
    ready = reveal
    number = question.kind == "number"
    grid = question.kind == "cells"
    return {
        "kind": question.kind,
        "prompt": spans(question.prompt),
        "choices": [spans(choice) for choice in question.choices],
        "span": question.span if number else "",
        "decimals": question.decimals,
        "tolerance": question.tolerance,
        "drag": question.drag,  # a number taken on a slider over [lo, hi] in steps of `step`
        "lo": question.lo,
        "hi": question.hi,
        "step": question.step,
        # A cells question's grid (lnviz/web/class/cells.js): cell k is row k // cols, column k % cols.
        "grid": {
            "rows": question.rows,
            "cols": question.cols,
            "marked": question.marked,
            "axes": list(question.axes),
            "row_names": list(question.row_names),
            "col_names": list(question.col_names),
        }
        if grid
        else None,
        "link": question.link,
        "answer": (list(question.answer) if grid else question.answer) if ready else None,
        "answer_text": question.answer_text if ready and question.kind != "choice" else None,
        "why": spans(question.why) if ready else None,
    }
