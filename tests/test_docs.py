"""The front door (issue 48): README.md reaches `make run` on its first screen, every link and path the docs name
exists, and docs/benchmarks.md is today's figures, not a diary."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))


def test_readme_reaches_make_run_and_make_test_on_its_first_screen():
    lines = (ROOT / "README.md").read_text().splitlines()[:30]
    assert any(line.startswith("make run") for line in lines)
    assert any(line.startswith("make test") for line in lines)
    assert any(line.startswith("![") for line in lines)  # the picture


def test_readme_names_every_page_of_the_registry_once_a_line():
    from lnviz.views.pages import PAGES

    lines = (ROOT / "README.md").read_text().splitlines()
    for entry in PAGES:
        url = "`/`" if entry.default else f"`/{entry.url_path}`"
        assert sum(line.startswith(f"- {url}") and f"**{entry.title}**" in line for line in lines) == 1, entry.name
    headings = re.findall(r"^## (.+) \(`", (ROOT / "docs" / "pages.md").read_text(), flags=re.M)
    assert headings == [entry.title for entry in PAGES]  # docs/pages.md: a section per page, in the registry's order


@pytest.mark.parametrize("doc", [ROOT / "README.md", *DOCS], ids=lambda p: p.name)
def test_every_relative_link_reaches_a_file(doc):
    targets = re.findall(r"\]\(([^)#\s]+)\)", doc.read_text())
    missing = [t for t in targets if "://" not in t and not (doc.parent / t).exists()]
    assert missing == []


def test_every_path_architecture_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = {p for p in re.findall(r"`([\w./-]+)`", text) if "/" in p or p.endswith((".py", ".js", ".css"))}
    assert len(named) > 40
    # a path is from the repository's root, or under the folder named last before it in its item ("`budget.py`"
    # after "`server/slots.py`", "`view/`" after "`lnviz/web/stage/`"); NAME stands for a new page's name
    missing = []
    for line in re.split(r"\n(?=- )|\n\n", text.replace("NAME", "coupling")):
        folder = ROOT
        for p in re.findall(r"`([\w./-]+)`", line):
            if (ROOT / p).exists() and "/" in p:
                folder = ROOT / p if p.endswith("/") else (ROOT / p).parent
            elif (
                ("/" in p or p.endswith((".py", ".js", ".css")))
                and not (ROOT / p).exists()
                and not (folder / p).exists()
            ):
                missing.append(p)
    assert missing == []


def test_benchmarks_is_at_most_300_lines_and_names_its_commands():
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    assert len(text.splitlines()) <= 300
    for command in ("make bench", "make load", "git log"):
        assert command in text
