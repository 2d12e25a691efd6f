"""Shared test helpers: run a page through the real router with AppTest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Long enough for torch's first import on a loaded 2-core machine.
APP_TIMEOUT = 120


def run_page(page: str, query: dict[str, str | list[str]] | None = None, timeout: float = APP_TIMEOUT) -> AppTest:
    """Run ``app.py`` switched to ``page`` (a path such as "pages/explorer.py").

    ``query`` is the link's query string, as the browser would send it.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page(page)
    at.run()
    return at


def figures(at: AppTest) -> list[go.Figure]:
    """Every plotly chart on the page, decoded from its element spec."""
    out = []
    for el in at.get("plotly_chart"):
        out.append(go.Figure(json.loads(el.proto.spec)))
    return out


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def page_runner():
    return run_page
