"""What app.py sets up for the server process as a whole."""

import subprocess
import sys
import textwrap

from tests.browser import ROOT

# AppTest in a fresh interpreter: the freeze is process-wide, so pytest's own
# process (which imported torch long before) would not tell us anything.
_PROBE = textwrap.dedent(
    """
    import gc
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("app.py", default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    at.slider(key="gain").set_value(1.5).run()
    assert not at.exception, at.exception
    print(gc.get_freeze_count(), len(gc.get_objects()))
    """
)


def test_long_lived_imports_are_frozen_out_of_the_post_run_collection():
    """Streamlit collects all generations after every run; torch, pandas and plotly must not be walked each time.

    Without the freeze in app.py a full collection walks ~250,000 objects
    (hundreds of ms per slider move on a 2-core CPU); with it, only what the
    pages created since.
    """
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    frozen, tracked = map(int, out.stdout.split()[-2:])
    assert frozen > 100_000
    assert tracked < frozen / 5
