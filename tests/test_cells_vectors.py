"""The tap-the-cells vectors the JavaScript tests read (tests/js/fixtures/class/cells.json) are what Python's
Question.parse, right and tally give now, so lnviz/web/class/cells.js and the server can't drift apart.

``python tests/test_cells_vectors.py`` rewrites the file after a deliberate change.
"""

from __future__ import annotations

import json
from pathlib import Path

from lnviz.labs.classroom.question import Question, tally

PATH = Path(__file__).parent / "js" / "fixtures" / "class" / "cells.json"
GRIDS = [(1, 1, (0,)), (3, 5, (2, 7, 12)), (4, 6, (3, 9, 15, 21)), (8, 8, tuple(range(56, 64))), (7, 3, (0, 20))]
TAPS = [[], [0], [1, 0], [3, 3], [2, 7, 12], [12, 7, 2], "last", "all", "first and last"]
TEXTS = ["0", "00", "21", " 1084 ", "1084\n", "7FFF", "7fff", "8000", "10000", "ffffffffffffffff", "1" + "0" * 16,
         "0" * 31 + "1", "0" * 33 + "1", "", " ", "g", "0x10", "-1", "1.5", "1 0"]  # fmt: skip


def _cells(taps: list[int] | str, n: int) -> list[int]:
    named = {"last": [n - 1], "all": list(range(n)), "first and last": sorted({0, n - 1})}
    return [k for k in (named[taps] if isinstance(taps, str) else taps) if k < n]


def build() -> dict:
    grids = []
    for rows, cols, answer in GRIDS:
        q = Question("vectors", "cells", "p", answer=answer, rows=rows, cols=cols)
        n = q.cells
        encoded = [[_cells(taps, n), q.parse(_cells(taps, n))] for taps in TAPS]
        votes = [text for _, text in encoded] + ["zz", q.parse(q.answer)]
        grids.append(
            dict(
                rows=rows,
                cols=cols,
                answer=list(answer),
                encoded=encoded,
                read=[[text, q.parse(text)] for text in TEXTS],
                right=[[text, q.right(text)] for text in [*(t for _, t in encoded), "zz"]],
                votes=votes,
                tally=tally(q, votes),
            )
        )
    return dict(grids=grids)


def test_the_js_vectors_are_what_python_reads_and_counts_now():
    assert json.loads(PATH.read_text(encoding="utf-8")) == build(), "stale: python tests/test_cells_vectors.py"


if __name__ == "__main__":
    PATH.write_text(json.dumps(build(), ensure_ascii=False, indent=None) + "\n", encoding="utf-8")
