"""lnviz.labs.explorer.upload_worker: a large upload is parsed in a worker process, with the same result and the
same refusals as in the server's own (issue 30, attack 8: parsed there, it held the interpreter for seconds)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from lnviz.labs.explorer import upload, upload_worker

ROOT = Path(__file__).resolve().parents[1]


def big_csv(rows: int = 1024, cols: int = 256) -> tuple[np.ndarray, bytes]:
    x = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) / 7
    data = "\n".join(",".join(map(repr, row)) for row in x.tolist()).encode()
    assert len(data) > upload.LIGHT_BYTES
    return x, data


# The check runs in a fresh interpreter started with -c: a spawned worker re-imports its parent's main script, and
# under pytest-xdist that is execnet's bootstrap, which runs only inside execnet. A server's main is streamlit's.
_IN_A_FRESH_INTERPRETER = """
import os
import numpy as np, pytest
from lnviz.labs.explorer import upload, upload_worker
from lnviz.labs.explorer.upload import UploadError
from tests.test_upload_worker import big_csv

x, data = big_csv()
bad = data.replace(b",", b",x", 1)
with pytest.raises(UploadError) as here:
    upload.parse_bytes("x.csv", bad)


def not_here(name, data):
    raise AssertionError("parsed in the server's process")


upload.parse_bytes = not_here  # the worker imports its own, unpatched
np.testing.assert_array_equal(upload_worker.parse_bytes("x.csv", data).numpy(), x)
with pytest.raises(UploadError) as there:
    upload_worker.parse_bytes("x.csv", bad)
assert str(there.value) == str(here.value) and "not a number" in there.value.problem
# The worker gives the server's process the cores first: its niceness is the server's plus NICE.
assert upload_worker._worker().submit(os.nice, 0).result() == min(19, os.nice(0) + upload_worker.NICE)
print("parsed apart")
"""


def test_a_large_file_is_parsed_in_another_process_exactly_and_its_refusal_comes_back_in_the_same_words():
    # ...by a worker that runs at a lower priority than the server (upload_worker.NICE).
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(upload_worker.ENV, None)
    done = subprocess.run(
        [sys.executable, "-c", _IN_A_FRESH_INTERPRETER], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "parsed apart" in done.stdout, done.stderr[-3000:]


def test_a_small_file_and_every_file_with_the_worker_inline_are_parsed_here(monkeypatch):
    here = []
    parse = upload.parse_bytes
    monkeypatch.setattr(upload, "parse_bytes", lambda name, data: here.append(name) or parse(name, data))
    assert upload_worker.parse_bytes("small.csv", b"1,2\n3,4\n").shape == (2, 2)
    monkeypatch.setenv(upload_worker.ENV, "inline")
    x, data = big_csv()
    np.testing.assert_array_equal(upload_worker.parse_bytes("big.csv", data).numpy(), x)
    assert here == ["small.csv", "big.csv"]
