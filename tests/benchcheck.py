"""A writer of docs/benchmarks.md, run twice against a copy of today's page: it replaces its own section, leaves the
rest byte for byte, keeps the page within 300 lines and today's shape, and a second run changes nothing."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def _section(text: str, name: str) -> tuple[int, int]:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    assert text.count(start) == 1 and text.count(end) == 1, f"{name}: one pair of markers"
    return text.index(start), text.index(end)


def _without(text: str, names: tuple[str, ...]) -> str:
    for name in names:
        start, end = _section(text, name)
        text = text[:start] + f"<!-- {name} -->" + text[end:]
    return text


def shape(section: str) -> tuple[str, int, list[str]]:
    """The heading without its date and numbers, the number of blocks, and each table's header and rule."""
    blocks = section.strip().split("\n\n")
    heading = re.sub(r"\d+", "N", re.sub(r", \d{4}-\d\d-\d\d[^)]*\)$", ")", blocks[0].splitlines()[0]))
    headers = [b.splitlines()[i] for b in blocks if b.startswith("|") for i in (0, 1)]
    return heading, len(blocks), headers


def written(tmp_path: Path, write: Callable[[Path], object], *names: str) -> list[str]:
    """The sections ``write(path)`` puts on a copy of today's page, one per name, after checking the page around
    them."""
    path = tmp_path / "benchmarks.md"
    shutil.copy(PAGE, path)
    today = PAGE.read_text()
    write(path)
    once = path.read_text()
    write(path)
    assert path.read_text() == once  # a second run gives the same page: nothing appended, nothing grows
    assert len(once.splitlines()) <= 300
    assert _without(once, names) == _without(today, names)  # the other sections, byte for byte
    sections = []
    for name in names:
        (t0, t1), (o0, o1) = _section(today, name), _section(once, name)
        new = once[o0:o1].split("\n", 1)[1]
        assert shape(new) == shape(today[t0:t1].split("\n", 1)[1])  # a run changes numbers, not shape
        sections.append(new)
    return sections
