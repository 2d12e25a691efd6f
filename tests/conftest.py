"""Shared test helpers: run a page through the real router with AppTest."""

from __future__ import annotations

import pytest

from harness.apptest import (  # noqa: F401  (what the tests import from here)
    WIDGETS,
    assert_no_exception,
    figures,
    run_page,
    share_link,
    stage_data,
    stage_x,
)
from harness.server import ROOT  # noqa: F401

pytest_plugins = ("browser",)


@pytest.fixture(scope="session", autouse=True)
def error_details():
    """The hosting config shows viewers no tracebacks; tests want them in AppTest's exceptions."""
    from streamlit import config

    config.set_option("client.showErrorDetails", "full")
