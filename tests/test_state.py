"""The state table (lnviz.state): one declaration per URL parameter, one name per concept."""

import ast
import inspect
from collections import Counter

import pytest

from lnviz import param, state

SOURCE = inspect.getsource(state)


def declared_keys() -> list[str]:
    """The key of every ``Param(...)`` call written in lnviz/state.py."""
    keys = []
    for node in ast.walk(ast.parse(SOURCE)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Param":
            keys.append(node.args[0].value)
    return keys


def test_every_url_parameter_is_declared_exactly_once():
    counts = Counter(declared_keys())
    assert counts and max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]
    for controls in state.PAGES.values():
        assert set(controls.keys()) <= set(counts)


def test_no_other_module_declares_a_control():
    from pathlib import Path

    root = Path(state.__file__).resolve().parents[1]
    for path in [*root.glob("lnviz/**/*.py"), *root.glob("ui/*.py"), *root.glob("pages/*.py")]:
        if path.name not in ("state.py", "param.py"):
            assert "Param(" not in path.read_text(), path


@pytest.mark.parametrize("page", state.PAGES)
def test_a_page_version_keeps_the_key_and_kind_of_the_declared_control(page):
    declared = {p.key: p for p in vars(state).values() if isinstance(p, param.Param)}
    for p in state.PAGES[page]:
        assert p.kind == declared[p.key].kind
        assert p.holds(p.default) and p.parse(p.format(p.default)) == (p.default, None)
        assert all(old.isidentifier() for old in p.old_keys)


def test_keys_are_short_url_safe_and_unique_per_page():
    for controls in state.PAGES.values():
        keys = controls.keys()
        assert all(k.isidentifier() and k.islower() and len(k) <= 12 for k in keys)
        olds = [old for p in controls for old in p.old_keys]
        assert len(olds) == len(set(olds)) and not set(olds) & set(keys)


def test_the_walkthrough_carries_every_explorer_control():
    assert set(state.EXPLORER.keys()) < set(state.WALKTHROUGH.keys())
