"""tests/ and benchmarks/ share harness/ and do not import each other; lnviz/ imports neither."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported(path: Path) -> set[str]:
    """The top-level package of every module ``path`` imports."""
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    return {name.split(".")[0] for name in names}


@pytest.mark.parametrize(
    "folder, forbidden",
    [
        ("benchmarks", {"tests", "conftest", "browser"}),
        ("harness", {"tests", "benchmarks", "conftest", "browser"}),
        ("lnviz", {"tests", "benchmarks", "harness", "conftest", "browser", "ui", "streamlit"}),
    ],
)
def test_a_folder_never_imports_the_ones_it_must_not(folder, forbidden):
    for path in (ROOT / folder).rglob("*.py"):
        assert not imported(path) & forbidden, (path, imported(path) & forbidden)


def test_tests_never_import_benchmarks():
    for path in (ROOT / "tests").rglob("*.py"):
        assert "benchmarks" not in imported(path), path
