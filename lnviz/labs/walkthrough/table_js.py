"""The stage's copy of the step table, lnviz/web/stage/table.js, written from :func:`lnviz.labs.walkthrough.stage_table`.

The stage loads the table as a file, cached with its other files, not sent with every run's data.
``python -m lnviz.labs.walkthrough.table_js`` writes it (``python -m harness.stage_fixtures`` too, with
the JavaScript tests' fixtures); tests/test_stage_fixtures.py fails when the committed file is stale.
"""

from __future__ import annotations

import json
from pathlib import Path

from lnviz.labs import walkthrough

PATH = Path(__file__).resolve().parents[2] / "web" / "stage" / "table.js"  # lnviz/web/stage/table.js


def module() -> str:
    """table.js's text: the step table as an ES module."""
    table = json.dumps(walkthrough.stage_table(), allow_nan=False, ensure_ascii=False, indent=1)
    return (
        "// The app's one step table, from lnviz.labs.walkthrough.stage_table: edit the Python, then run\n"
        "// `python -m lnviz.labs.walkthrough.table_js`, which writes this file (tests/test_stage_fixtures.py\n"
        "// fails when it is stale). A file, so the browser caches it with the stage's others, not sent with every run.\n"
        f"export default {table};\n"
    )


def write() -> Path:
    """Write table.js from the step table; its path."""
    PATH.write_text(module(), encoding="utf-8")
    return PATH


if __name__ == "__main__":
    print(f"wrote {write()}")
