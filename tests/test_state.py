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
    for path in [
        *root.glob("lnviz/**/*.py"),
        *root.glob("ui/**/*.py"),
        *root.glob("server/*.py"),
        *root.glob("pages/*.py"),
    ]:
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


def test_each_option_the_table_offers_runs_in_its_lab():
    """The labs take their option lists and ranges from the table; each option, and each range's end, runs there."""
    import torch

    from lnviz.labs import bench, coupling, family, sequences, training, walkthrough
    from lnviz.labs.bench import numerics
    from lnviz.maths import data

    for dist in state.DIST.options:
        for draw in state.DRAW.options:
            assert data.make_activations(dist, 3, 4, seed=1, draw=draw).shape == (3, 4), (dist, draw)
        assert state.DIST.meaning(dist)
    x = data.make_activations("standard normal", 4, 5, seed=0)  # (B, H)
    rows = {}  # each perturbation's row i: all different, so none is another's in disguise
    for perturb in state.PERTURB.options:
        changed = coupling.perturb_row(x, 2, perturb, 3.0, seed=0)  # (B, H)
        assert torch.equal(changed[[0, 1, 3]], x[[0, 1, 3]]) and coupling.PERTURBATIONS[perturb], perturb
        rows[perturb] = tuple(changed[2].tolist())
    assert len(set(rows.values())) == len(rows) and tuple(x[2].tolist()) not in rows.values()
    for task in state.TASK.options:
        batch = training.make_batch(task, 8, data.generator(0))
        assert training.TASKS[task] and training.layers(task) <= state.LAYER.hi
        losses = set()  # each variant's loss from the same initial weights: all different, each its own norm
        for variant in state.VARIANT.options:
            model = training.build_model(task, variant, seed=0)
            loss, _ = training.loss_and_accuracy(task, model, batch)
            assert torch.isfinite(loss) and len(model.norms) == training.layers(task), (task, variant)
            losses.add(float(loss.detach()))
        assert len(losses) == len(state.VARIANT.options), task
    assert training.layers("spirals") == state.LAYER.hi
    longest = sequences.sequence_lab(4, state.LENGTH.hi, 3, 0, 0.5, 0.0, state.EXTRA.hi)
    assert longest.test_x.shape[0] == state.LENGTH.hi + state.EXTRA.hi
    cube = family.make_tensor(2, 4, 3, 0)  # (N, C, H·W)
    for norm in state.NORM.options:
        assert family.normalize(cube, norm, groups=2).y.shape == cube.shape, norm
    for dtype in state.DTYPE.options:
        inputs = bench.make_inputs(4, 8, bench.torch_dtype(dtype), torch.device("cpu"))
        assert inputs.x.dtype == bench.torch_dtype(dtype), dtype
    curve = numerics.variance_curve(state.OFFSET.options, batch=2, features=8)
    assert curve.offsets == state.OFFSET.options and all(
        len(e) == len(curve.offsets) for e in curve.median_error.values()
    )
    assert len(walkthrough.steps(x)) == state.STEP.hi
    assert bench.MAX_THREADS == state.THREADS.hi


def test_the_state_table_imports_no_lab_and_no_torch():
    """So that a lab, the registry, the stage and the links can import it, and the router reads it cheaply."""
    import subprocess
    import sys

    code = "import sys, lnviz.views.pages, lnviz.views.links, lnviz.views.lessons; print(sorted(m for m in sys.modules if m.startswith(('lnviz', 'torch'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "torch" not in out and "lnviz.maths.data" not in out and "lnviz.labs.walkthrough" not in out, out
