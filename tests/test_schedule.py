"""harness.schedule: the suite's order over xdist workers keeps each module whole, puts the modules that share the
replicas in one unit, and queues the longest units first."""

from __future__ import annotations

import ast
from pathlib import Path

from harness import schedule

TESTS = Path(__file__).parent


def test_the_replicas_modules_are_one_unit_and_other_modules_their_own():
    assert schedule.unit_of("tests/test_replicas.py::test_a") == schedule.unit_of(
        "tests/test_own_data_replicas.py::test_b[1]"
    )
    assert schedule.unit_of("tests/test_norms.py::test_a[x]") == "tests/test_norms.py"
    assert schedule.unit_of("tests/test_norms.py::TestKind::test_a") == "tests/test_norms.py::TestKind"  # loadscope's


def test_every_module_that_asks_for_the_replicas_is_in_their_unit():
    """A test module outside the unit that asks for tests/conftest.py's ``replicas`` starts a second set (two
    servers, nginx and Redis) on whichever worker it lands on."""
    asking = set()
    for path in TESTS.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(a.arg == "replicas" for a in node.args.args):
                asking.add(f"tests/{path.name}")
    assert "tests/test_replicas.py" in asking
    unit = schedule.unit_of("tests/test_replicas.py::t")
    assert {m for m in asking if schedule.unit_of(f"{m}::t") != unit} == set()


def test_units_are_queued_longest_first_and_unknown_modules_by_their_number_of_tests():
    units = {
        "tests/test_a.py": {f"tests/test_a.py::t{i}": False for i in range(3)},
        "tests/test_b.py": {f"tests/test_b.py::t{i}": False for i in range(50)},
        "tests/test_replicas.py": {"tests/test_replicas.py::t": False, "tests/test_own_data_replicas.py::t": False},
        "tests/test_browser_stage.py": {"tests/test_browser_stage.py::t": False},
    }
    order = list(schedule.longest_first(units))
    # The known units by their modules' figures together (the replicas' unit: two of its modules), then the others
    # by their number of tests: test_b's 50 before test_a's 3.
    seconds = schedule.SECONDS
    known = {
        "tests/test_replicas.py": seconds["tests/test_replicas.py"] + seconds["tests/test_own_data_replicas.py"],
        "tests/test_browser_stage.py": seconds["tests/test_browser_stage.py"],
    }
    assert order == [*sorted(known, key=lambda unit: -known[unit]), "tests/test_b.py", "tests/test_a.py"]
    assert schedule.longest_first(units)["tests/test_b.py"] is units["tests/test_b.py"]  # the units themselves


def test_conftest_installs_it_for_loadscope_only(pytestconfig):
    from conftest import pytest_xdist_make_scheduler

    class Config:
        def __init__(self, dist: str) -> None:
            self.dist = dist

        def getvalue(self, name: str) -> str:
            assert name == "dist"
            return self.dist

    assert pytest_xdist_make_scheduler(Config("load"), None) is None
