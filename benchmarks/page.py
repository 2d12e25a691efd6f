"""docs/benchmarks.md, today's figures: each command replaces its own area's section, between
``<!-- NAME:start -->`` and ``<!-- NAME:end -->``, and leaves the rest of the page as it is.

A section is what a reader needs: one table per area, the command that made it and the machine it ran on. A
command's whole report goes to stdout and to ``artifacts/benchmarks/NAME.md`` (not committed); earlier runs are in
git history. The page holds at most :data:`MAX_LINES` lines (tests/test_docs.py), and a write that would pass it is
refused, so a run changes numbers, never the page's length.
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import textwrap
from pathlib import Path

from harness.server import ROOT

DOC = ROOT / "docs" / "benchmarks.md"
ARTIFACTS = ROOT / "artifacts" / "benchmarks"
MAX_LINES = 300
WIDTH = 115  # the page's prose is wrapped here, as it is written by hand


class PageTooLong(ValueError):
    """A section would push the page past :data:`MAX_LINES`."""


def _first(path: str, pattern: str) -> str | None:
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    match = re.search(pattern, text, re.MULTILINE)
    return match.group(1).strip() if match else None


def load_average() -> str:
    """The one-minute load average, as the page gives it."""
    return f"{os.getloadavg()[0]:.2f}"


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def machine() -> dict[str, str]:
    """What the numbers ran on: CPU, cores, memory, OS and the versions that matter."""
    import plotly
    import streamlit
    import torch

    cpu = _first("/proc/cpuinfo", r"^model name\s*:\s*(.*)$") or platform.processor() or "unknown CPU"
    cpu = " ".join(re.sub(r"\((R|TM)\)|\bCPU\b|\bProcessor\b|\b\d+-Core\b", " ", cpu).split())  # "Intel Xeon @ 2.80GHz"
    mem_kib = _first("/proc/meminfo", r"^MemTotal:\s+(\d+)")
    return {
        "cpu": cpu,
        "cores": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
        "memory": f"{int(mem_kib) / 2**20:.1f} GiB" if mem_kib else "unknown memory",
        "os": _first("/etc/os-release", r'^PRETTY_NAME="?([^"\n]*)') or platform.system(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": str(torch.get_num_threads()),
        "streamlit": streamlit.__version__,
        "plotly": plotly.__version__,
    }


def machine_line(info: dict[str, str], load_start: str, load_end: str, versions: bool = False) -> str:
    """``AMD EPYC, 2 cores, 23.5 GiB, torch at 1 thread; load average 1.07 at the start, 1.81 at the end``;
    ``versions`` adds the OS, Python, torch's, streamlit's and plotly's."""
    threads = f"{info['threads']} thread{'' if info['threads'] == '1' else 's'}"
    what = f"{info['cpu']}, {info['cores']} cores, {info['memory']}, "
    if versions:
        what += (
            f"{info['os']}, Python {info['python']}, torch {info['torch']} ({threads}), "
            f"streamlit {info['streamlit']}, plotly {info['plotly']}"
        )
    else:
        what += f"torch at {threads}"
    return f"{what}; load average {load_start} at the start, {load_end} at the end"


def wrap(paragraph: str) -> str:
    """A paragraph wrapped as the page's prose is."""
    return textwrap.fill(" ".join(paragraph.split()), WIDTH, break_long_words=False, break_on_hyphens=False)


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def section(text: str, name: str) -> str | None:
    """The body between ``name``'s markers in ``text``, or None without them."""
    start, end = markers(name)
    if start not in text or end not in text:
        return None
    return text[text.index(start) + len(start) : text.index(end)].strip("\n")


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with ``name``'s section holding ``body``; a page without the markers gets the section at its end."""
    start, end = markers(name)
    block = f"{start}\n{body.strip()}\n{end}"
    if section(text, name) is not None:
        return text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    return f"{text.rstrip()}\n\n{block}\n" if text.strip() else f"{block}\n"


def write_section(name: str, body: str, path: Path = DOC) -> None:
    """Replace ``name``'s section of ``path`` with ``body``; refuse a page that would pass :data:`MAX_LINES`."""
    text = replace_section(path.read_text() if path.exists() else "", name, body)
    lines = len(text.splitlines())
    if lines > MAX_LINES:
        raise PageTooLong(f"{path} would hold {lines} lines with this {name} section, over {MAX_LINES}; not written")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def keep(name: str, report: str, folder: Path = ARTIFACTS) -> Path:
    """The command's whole report, beside the page's summary: ``artifacts/benchmarks/NAME.md``, not committed."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{name}.md"
    out.write_text(report)
    return out


def publish(name: str, body: str, path: Path = DOC, report: str | None = None, folder: Path = ARTIFACTS) -> None:
    """Print a command's whole ``report`` (``body`` alone without one), keep it in ``folder``, and put ``body`` on the
    page as ``name``'s section."""
    report = body if report is None else report
    print(report)
    keep(name, report, folder)
    write_section(name, body, path)


def replace_row(body: str, key: str, row: str) -> str:
    """``body`` (a section) with the row of its first table whose first cell is ``key`` (or starts with it, then a
    comma or a bracket) replaced by ``row``; a new key's row goes at the end of that table."""

    def first_cell(line: str) -> str:
        return line.split("|")[1].strip() if line.startswith("|") else ""

    lines = body.split("\n")
    table = [i for i, line in enumerate(lines) if line.startswith("|")]
    if not table:
        return body.rstrip("\n") + "\n\n" + row
    start = table[0]
    end = start
    while end + 1 < len(lines) and lines[end + 1].startswith("|"):
        end += 1
    for i in range(start + 2, end + 1):
        cell = first_cell(lines[i])
        if cell == key or cell.startswith((key + ",", key + " (")):
            lines[i] = row
            return "\n".join(lines)
    lines.insert(end + 1, row)
    return "\n".join(lines)
