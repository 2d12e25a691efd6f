"""Shared test helpers: run a page through the real router with AppTest, and the one default server."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from harness import nginx
from harness.apptest import (  # noqa: F401  (what the tests import from here)
    WIDGETS,
    assert_no_exception,
    figures,
    run_page,
    share_box,
    share_link,
    stage_data,
    stage_x,
)
from harness.replicas import Replicas, running_replicas
from harness.server import ROOT, AppProcess, serving  # noqa: F401  (ROOT: what the tests import)

pytest_plugins = ("browser",)

# A proof of work at a thousandth of its price, for this process and the servers it starts: every test's browser
# and script pays for its proof, in milliseconds. The price itself is tested at its default (tests/test_proof.py).
os.environ.setdefault("LNVIZ_PROOF_WORK", "200")


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadscope`` with the replicas' modules on one worker and the longest modules first
    (:mod:`harness.schedule`); any other ``--dist`` is xdist's own."""
    if config.getvalue("dist") != "loadscope":
        return None
    from harness.schedule import Scheduling

    return Scheduling(config, log)


@pytest.fixture(scope="session", autouse=True)
def error_details():
    """The hosting config shows viewers no tracebacks; tests want them in AppTest's exceptions."""
    from streamlit import config

    config.set_option("client.showErrorDetails", "full")


@pytest.fixture(autouse=True)
def proved(monkeypatch):
    """AppTest has no HTTP request: each test's runs come from one proved browser (harness/proofs.py)."""
    from harness.proofs import Browser

    return Browser(monkeypatch)


@pytest.fixture(scope="session")
def app_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    """The app served with its default config on a free port, healthy; stopped after the session.

    The one default server of a session (with ``-n 3`` each worker has its own): the browser tests and the
    server tests that speak to it as a client (test_server_protocol, test_ready_probe, test_upload_share_server,
    test_server_limits) share it. A module that needs another config, or a process it may kill, starts its own
    and says why.
    """
    with serving(tmp_path_factory.mktemp("app_server") / "streamlit.log") as app:
        yield app


@pytest.fixture(scope="session")
def app_server(app_process: AppProcess) -> str:
    """The served app's base URL, such as ``http://127.0.0.1:40123``."""
    return app_process.url


@pytest.fixture(scope="session")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    """Replicas A and B sharing one real Redis, nginx's documented balancer in front of them and a door to each
    (:mod:`harness.replicas`): the one such set of a run, shared by test_replicas, test_own_data_replicas and
    test_class_stream_replicas, which ``--dist loadscope`` keeps on one worker (:mod:`harness.schedule`); stopped after the session."""
    if not nginx.executable().is_file():
        pytest.fail("nginx is missing: `make system-deps` installs Debian's nginx")
    with running_replicas(tmp_path_factory.mktemp("replicas")) as running:
        yield running
