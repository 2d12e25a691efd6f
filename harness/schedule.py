"""How ``pytest -n N --dist loadscope`` hands the suite's modules to its workers (tests/conftest.py installs it).

xdist's own loadscope keeps a module on one worker, so its module-scoped server starts once, but it queues the
modules by their number of tests: the 8 tests of tests/test_replicas.py, the longest module, came after a
hundred small ones, and the run ended with one worker on it and the other idle. :class:`Scheduling` keeps
loadscope's units and changes two things:

- modules that share one session-scoped set of processes are one unit (:data:`TOGETHER`): both run on the
  worker that starts the set, so it starts once in a run, not once on each worker that meets one of them;
- the units are queued longest first (:data:`SECONDS`, a module's seconds in a run of ``make test``; a module
  not listed counts :data:`PER_TEST` a test), so the long ones start at once and the short ones fill the end.

Only the order and the grouping change: every test still runs, in its module's order.
"""

from __future__ import annotations

from collections import OrderedDict

from xdist.scheduler import LoadScopeScheduling

# Modules that share one session fixture that starts processes: each list is one work unit.
TOGETHER = (
    # tests/conftest.py's ``replicas``: two streamlit servers, nginx and a redis-server. Every module that asks for
    # it is here: one outside would start a second set on the worker it lands on.
    ("tests/test_replicas.py", "tests/test_own_data_replicas.py", "tests/test_class_stream_replicas.py"),
)
# Roughly what each slow module took in a run of the suite (its tests' times; -v and --durations=0, at a load
# average of about 13), for the order only: a wrong figure makes a run longer, never a test pass or fail.
SECONDS = {
    "tests/test_browser_a11y.py": 260,
    "tests/test_replicas.py": 155,
    "tests/test_browser_links.py": 145,
    "tests/test_browser_classroom.py": 120,
    "tests/test_browser_stage.py": 105,
    "tests/test_browser_keyboard.py": 85,
    "tests/test_browser_phone.py": 65,
    "tests/test_class_stream_replicas.py": 45,
    "tests/test_fuzz_links.py": 40,
    "tests/test_own_data_replicas.py": 35,
    "tests/test_browser_transformer.py": 35,
    "tests/test_server.py": 30,
    "tests/test_base_path.py": 30,
    "tests/test_server_limits.py": 25,
    "tests/test_browser_walkthrough.py": 25,
    "tests/test_browser_own_data.py": 25,
    "tests/test_browser_explorer.py": 20,
    "tests/test_upload_worker.py": 20,
    "tests/test_training.py": 20,
    "tests/test_bench.py": 17,
    "tests/test_browser_address.py": 15,
    "tests/test_transformer_lab.py": 12,
    "tests/test_purity.py": 10,
}
PER_TEST = 0.3  # seconds: a module not in SECONDS (mostly fast pure-Python tests)

_UNIT = {module: group[0] for group in TOGETHER for module in group}


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def unit_of(nodeid: str) -> str:
    """The work unit of a test: its module's (or class's, as loadscope has it), or its group's (:data:`TOGETHER`)."""
    module = module_of(nodeid)
    if module in _UNIT:
        return _UNIT[module]
    return nodeid.rsplit("::", 1)[0]


def cost(unit: str, nodeids: list[str]) -> float:
    """A unit's expected seconds: its modules' :data:`SECONDS`, or :data:`PER_TEST` for each test of the others."""
    modules = {module_of(n) for n in nodeids}
    known = sum(SECONDS.get(m, 0) for m in modules)
    return known + PER_TEST * sum(module_of(n) not in SECONDS for n in nodeids)


def longest_first(units: dict[str, dict[str, bool]]) -> OrderedDict[str, dict[str, bool]]:
    """The units, longest first (the order they had among equals)."""
    order = sorted(units.items(), key=lambda item: -cost(item[0], list(item[1])))
    return OrderedDict(order)


class Scheduling(LoadScopeScheduling):
    """xdist's loadscope with :data:`TOGETHER` as one unit each, and the units queued longest first."""

    _sorted = False

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)

    def _assign_work_unit(self, node) -> None:
        # The queue is complete once schedule() starts handing out units: order it then, once.
        if not self._sorted:
            self.workqueue = longest_first(self.workqueue)
            self._sorted = True
        super()._assign_work_unit(node)
