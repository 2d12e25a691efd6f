"""The fixtures of the stage's JavaScript tests (tests/js/fixtures/) are what torch and lnviz write today.

``make test`` runs the JavaScript tests themselves (``node --test tests/js/``) before pytest; this
keeps what they check against from going stale: a change to the payload, to torch's numbers or to
:func:`lnviz.text.format_number` fails here until ``python -m harness.stage_fixtures`` rewrites them.

Numbers compare within 1e-12 (relative), strings and structure exactly: torch's float64 reductions may
sum in another order with another thread count (seen: the last digit of a few values), which does not
make a fixture stale.
"""

import json
import math

from harness import stage_fixtures
from lnviz.labs.walkthrough import table_js


def same(a, b, path: str = "") -> str | None:
    """Where ``a`` and ``b`` differ beyond the rounding of a float64 reduction (None when they don't)."""
    if isinstance(a, float) or isinstance(b, float):
        ok = (
            isinstance(a, int | float)
            and isinstance(b, int | float)
            and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
        )
        return None if ok else f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict) and isinstance(b, dict):
        if sorted(a) != sorted(b):
            return f"{path}: keys {sorted(a)} != {sorted(b)}"
        return next((d for k in a if (d := same(a[k], b[k], f"{path}.{k}"))), None)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        return next((d for i, (x, y) in enumerate(zip(a, b, strict=True)) if (d := same(x, y, f"{path}[{i}]"))), None)
    return None if a == b else f"{path}: {a!r} != {b!r}"


def test_the_committed_fixtures_are_the_ones_torch_and_lnviz_write_now():
    built = stage_fixtures.build()
    assert sorted(built) == sorted(p.name for p in stage_fixtures.FOLDER.glob("*.json"))
    for name, value in built.items():
        committed = json.loads((stage_fixtures.FOLDER / name).read_text(encoding="utf-8"))
        fresh = json.loads(stage_fixtures.dumps(value))
        differs = same(committed, fresh)
        assert differs is None, f"tests/js/fixtures/{name} is stale ({differs}): python -m harness.stage_fixtures"


def test_a_stale_fixture_is_caught():
    assert same({"x": [1.0, 2.0]}, {"x": [1.0, 2.0 * (1 + 1e-13)]}) is None
    assert same({"x": [1.0, 2.0]}, {"x": [1.0, 2.001]}) == ".x[1]: 2.0 != 2.001"
    assert same({"x": "1e-05"}, {"x": "1e-5"}) is not None
    assert same({"x": [1.0]}, {"x": [1.0, 2.0]}) is not None


def test_the_stages_step_table_is_the_one_python_writes_now():
    """lnviz/web/stage/table.js is written from lnviz.labs.walkthrough.stage_table: an edit of the words or the
    lights in Python, not followed by ``python -m lnviz.labs.walkthrough.table_js``, fails here."""
    assert table_js.PATH == stage_fixtures.FOLDER.parents[2] / "lnviz" / "web" / "stage" / "table.js"
    assert table_js.PATH.read_text(encoding="utf-8") == table_js.module()
