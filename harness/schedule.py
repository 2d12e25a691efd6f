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
# Roughly what each slow module took in a run of the suite (its tests' times from --durations=0, a fresh clone on an
# otherwise idle 2-core machine, 2026-12-07), for the order only: a wrong figure makes a run longer, never a test
# pass or fail. A long module left out counts PER_TEST a test and is queued among the short ones: test_browser_legible.py
# (60 s) was, as 18 x 0.3 s. Refresh with a --durations=0 run when a module grows.
SECONDS = {
    "tests/test_browser_a11y.py": 151,
    "tests/test_browser_classroom.py": 124,
    "tests/test_browser_stage.py": 120,
    "tests/test_replicas.py": 98,
    "tests/test_browser_links.py": 83,
    "tests/test_browser_legible.py": 60,
    "tests/test_browser_phone.py": 57,
    "tests/test_browser_keyboard.py": 56,
    "tests/test_class_stream_replicas.py": 43,
    "tests/test_browser_transformer.py": 28,
    "tests/test_base_path.py": 26,
    "tests/test_browser_own_data.py": 22,
    "tests/test_browser_walkthrough.py": 21,
    "tests/test_server_limits.py": 19,
    "tests/test_fuzz_links.py": 17,
    "tests/test_transformer_lab.py": 16,
    "tests/test_server.py": 16,
    "tests/test_browser_address.py": 14,
    "tests/test_export.py": 10,
    "tests/test_upload_worker.py": 10,
    "tests/test_pages.py": 9,
    "tests/test_browser_explorer.py": 9,
    "tests/test_own_data.py": 8,
    "tests/test_ready_probe.py": 8,
    "tests/test_own_data_replicas.py": 8,
    "tests/test_explorer_page.py": 7,
    "tests/test_training.py": 6,
    "tests/test_purity.py": 6,
    "tests/test_classroom_page.py": 5,
    "tests/test_coupling.py": 5,
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
