"""deploy/ready.py, the pods' readiness probe: it notices a replica whose runs are slow while its health is fast."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness.server import ROOT, serving

PROBE = ROOT / "deploy" / "ready.py"
sys.path.insert(0, str(PROBE.parent))
import ready  # noqa: E402  (deploy/ is no package: the image runs the file, and so does this test)

# A page that takes as long as the flag file says, in its script thread; the server's event loop stays free.
SLOW_PAGE = """
import os, time
from pathlib import Path
import streamlit as st
time.sleep(float(Path(os.environ["LNVIZ_TEST_RUN_SECONDS"]).read_text()))
st.write("done")
"""


def probe(url: str, within: float) -> subprocess.CompletedProcess:
    """The probe as the kubelet runs it: a process of its own, from the image's working directory."""
    cmd = [sys.executable, str(PROBE), "--url", url, "--within", str(within)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=within + 30)


def health_seconds(url: str) -> float:
    start = time.monotonic()
    with urllib.request.urlopen(url + "/_stcore/health", timeout=10) as r:
        assert r.read().strip() == b"ok"
    return time.monotonic() - start


def test_the_hand_written_rerun_request_is_streamlits():
    msg = BackMsg.FromString(ready.RERUN)
    assert msg.WhichOneof("type") == "rerun_script"
    assert msg.rerun_script.query_string == "" and not msg.rerun_script.widget_states.widgets


@pytest.mark.parametrize(
    "status",
    [ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR, ForwardMsg.FINISHED_EARLY_FOR_RERUN],
)
def test_script_finished_is_read_as_streamlit_writes_it(status):
    msg = ForwardMsg(hash="h" * 40, script_finished=status)
    msg.metadata.delta_path.extend([0, 1])
    assert ready.script_finished(msg.SerializeToString()) == status


def test_other_messages_are_not_script_finished_nor_exceptions():
    delta = ForwardMsg(hash="x")
    delta.delta.new_element.markdown.body = "é" * 300  # a long, multi-byte length prefix
    delta.metadata.delta_path.extend([0, 300])
    for msg in (delta, ForwardMsg(ref_hash="abc"), ForwardMsg(script_finished=ForwardMsg.FINISHED_SUCCESSFULLY)):
        assert not ready.is_exception(msg.SerializeToString())
    assert ready.script_finished(delta.SerializeToString()) is None
    assert ready.script_finished(ForwardMsg(ref_hash="abc").SerializeToString()) is None


def test_an_exception_element_is_read_as_streamlit_writes_it():
    msg = ForwardMsg(hash="e")
    msg.delta.new_element.exception.type = "ZeroDivisionError"
    msg.delta.new_element.exception.message = "division by zero"
    assert ready.is_exception(msg.SerializeToString())


def test_not_ready_while_runs_take_seconds_though_health_stays_fast(tmp_path: Path, monkeypatch):
    # A server of its own: it serves a page whose runs take as long as the test says, not the app.
    page, seconds = tmp_path / "slow_page.py", tmp_path / "run_seconds"
    page.write_text(SLOW_PAGE)
    seconds.write_text("0")
    monkeypatch.setenv("LNVIZ_TEST_RUN_SECONDS", str(seconds))
    with serving(tmp_path / "slow.log", str(page)) as app:
        fast = probe(app.url, within=20)
        assert fast.returncode == 0, fast.stderr
        assert fast.stdout.startswith("ready: first view in")

        seconds.write_text("4")
        slow = probe(app.url, within=2)
        assert slow.returncode == 1, slow.stdout
        assert "not ready: TimeoutError: no first view within 2 s" in slow.stderr
        assert health_seconds(app.url) < 1.0  # what /_stcore/health would have said: fine


@pytest.mark.parametrize("script", ["this is not python\n", "import streamlit as st\nst.write(1 / 0)\n"])
def test_a_page_that_fails_is_not_ready(tmp_path: Path, script: str):
    # A server of its own: it serves a broken page, not the app.
    page = tmp_path / "broken.py"
    page.write_text(script)
    with serving(tmp_path / "broken.log", str(page)) as app:
        result = probe(app.url, within=20)
    assert result.returncode == 1
    assert "not ready: RuntimeError: the first run drew an exception" in result.stderr


def test_nothing_listening_is_not_ready():
    result = probe("http://127.0.0.1:9", within=3)
    assert result.returncode == 1 and result.stderr.startswith("not ready:")


def test_the_real_app_is_ready(app_process):
    result = probe(app_process.url, within=60)  # on a fresh server, its first view imports torch
    assert result.returncode == 0, result.stderr
    again = probe(app_process.url, within=5)  # what the pod's readiness probe asks
    assert again.returncode == 0, again.stderr
