"""The state table (lnviz.views.state): one declaration per URL parameter, one name per concept."""

import ast
import inspect
from collections import Counter

import pytest
from conftest import ROOT

from lnviz.views import pages, param, state

SOURCE = inspect.getsource(state)


def declared_keys() -> list[str]:
    """The key of every ``Param(...)`` call written in lnviz/views/state.py."""
    keys = []
    for node in ast.walk(ast.parse(SOURCE)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Param":
            keys.append(node.args[0].value)
    return keys


def test_every_url_parameter_is_declared_exactly_once():
    counts = Counter(declared_keys())
    assert counts and max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]
    for controls in pages.CONTROLS.values():
        assert set(controls.keys()) <= set(counts)


def test_no_other_module_declares_a_control():
    from pathlib import Path

    root = Path(state.__file__).resolve().parents[1]
    for path in [*root.glob("lnviz/**/*.py"), *root.glob("ui/*.py"), *root.glob("pages/*.py")]:
        if path.name not in ("state.py", "param.py"):
            assert "Param(" not in path.read_text(), path


@pytest.mark.parametrize("page", pages.CONTROLS)
def test_a_page_version_keeps_the_key_and_kind_of_the_declared_control(page):
    declared = {p.key: p for p in vars(state).values() if isinstance(p, param.Param)}
    for p in pages.CONTROLS[page]:
        assert p.kind == declared[p.key].kind
        assert p.holds(p.default) and p.parse(p.format(p.default)) == (p.default, None)
        assert all(old.isidentifier() for old in p.old_keys)


def test_keys_are_short_url_safe_and_unique_per_page():
    for controls in pages.CONTROLS.values():
        keys = controls.keys()
        assert all(k.isidentifier() and k.islower() and len(k) <= 12 for k in keys)
        olds = [old for p in controls for old in p.old_keys]
        assert len(olds) == len(set(olds)) and not set(olds) & set(keys)


def test_the_walkthrough_carries_every_explorer_control_but_the_details():
    assert set(pages.EXPLORER.keys()) - {"view", "output"} < set(pages.WALKTHROUGH.keys())
    assert not {"view", "output"} & set(pages.WALKTHROUGH.keys())  # it draws neither: no dead entry


def test_the_tables_options_are_the_ones_the_labs_implement():
    """The state table writes its option lists and ranges itself (it imports no lab); the labs agree."""
    from lnviz.labs import bench, coupling, family, sequences, training, walkthrough
    from lnviz.labs.bench import numerics
    from lnviz.maths import data

    assert set(state.DIST.options) == set(data.DISTS)
    assert set(state.PERTURB.options) == set(coupling.PERTURBATIONS)
    assert set(state.TASK.options) == set(training.TASKS)
    assert state.VARIANT.options == training.VARIANTS
    assert state.LAYER.hi == training.SPIRAL_LAYERS
    assert (state.LENGTH.hi, state.EXTRA.hi) == (sequences.MAX_LENGTH, sequences.MAX_EXTRA)
    assert state.NORM.options == family.NORMS
    assert state.DTYPE.options == bench.SWEEP_DTYPES
    assert state.OFFSET.options == numerics.OFFSETS
    assert state.STEP.hi == walkthrough.N_STEPS
    assert state.THREADS.hi == bench.MAX_THREADS


def test_the_state_table_imports_no_lab_and_no_torch():
    """So that a lab, the registry, the stage and the links can import it, and the router reads it cheaply."""
    import subprocess
    import sys

    code = "import sys, lnviz.views.pages, lnviz.views.links, lnviz.views.lessons; print(sorted(m for m in sys.modules if m.startswith(('lnviz', 'torch'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "torch" not in out and "lnviz.maths.data" not in out and "lnviz.labs.walkthrough" not in out, out
