"""Small rooms (issue 29): no Python module of the app over 400 lines, and no page over 150, so that a
newcomer reads a concept in one sitting. 2026-12-05's throttled log of a full Redis took
server/store.py to 405 lines unnoticed; this says so at once."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULE_LINES = 400
PAGE_LINES = 150


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_no_module_of_the_app_is_over_400_lines():
    modules = [p for folder in ("lnviz", "ui", "pages") for p in (ROOT / folder).rglob("*.py")]
    assert len(modules) > 50  # the folders were read
    assert {str(p.relative_to(ROOT)): _lines(p) for p in modules if _lines(p) > MODULE_LINES} == {}


def test_no_page_is_over_150_lines():
    pages = sorted((ROOT / "pages").glob("*.py"))
    assert pages
    assert {p.name: _lines(p) for p in pages if _lines(p) > PAGE_LINES} == {}
