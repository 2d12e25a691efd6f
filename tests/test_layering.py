"""How the code is layered, and that nothing imports back up.

tests/ and benchmarks/ share harness/ and do not import each other; lnviz/ imports neither. Inside the app, each
layer imports only its own and those below it (:data:`LAYERS`), and no module of the project comes back to
itself through its imports."""

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported(path: Path) -> set[str]:
    """The top-level package of every module ``path`` imports."""
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    return {name.split(".")[0] for name in names}


@pytest.mark.parametrize(
    "folder, forbidden",
    [
        ("benchmarks", {"tests", "conftest", "browser"}),
        ("harness", {"tests", "benchmarks", "conftest", "browser"}),
        # Two stacks: the teaching library never imports the server, its Streamlit glue or Streamlit.
        ("lnviz", {"tests", "benchmarks", "harness", "conftest", "browser", "server", "ui", "streamlit"}),
        ("server", {"tests", "benchmarks", "harness", "conftest", "browser", "ui", "pages"}),
    ],
)
def test_a_folder_never_imports_the_ones_it_must_not(folder, forbidden):
    for path in (ROOT / folder).rglob("*.py"):
        assert not imported(path) & forbidden, (path, imported(path) & forbidden)


def test_tests_never_import_benchmarks_but_to_test_them():
    """Tests share nothing through benchmarks/; only a test of a benchmark's own logic, named
    test_benchmarks_*.py, imports the benchmark it tests."""
    for path in (ROOT / "tests").rglob("*.py"):
        if not path.name.startswith("test_benchmarks_"):
            assert "benchmarks" not in imported(path), path


# The folders whose modules may not import each other in a circle. A test module is named by its stem, as
# pytest's rootdir-relative imports and ``pytest_plugins`` name it; the others by their dotted path.
CYCLE_FOLDERS = ("lnviz", "server", "ui", "pages", "benchmarks", "harness", "tests")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[0] == "tests":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_graph(folders: tuple[str, ...] = CYCLE_FOLDERS) -> dict[str, set[str]]:
    """Module -> the modules of ``folders`` it imports, anywhere in its body (a deferred import counts too).

    ``from a import b`` is an import of ``a.b`` where that is a module, else of ``a``; a test module's
    ``pytest_plugins`` imports the plugins it names.
    """
    paths = {module_name(p): p for folder in folders for p in (ROOT / folder).rglob("*.py") if "vendor" not in p.parts}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                # `from . import x` in package a.b is `from a.b import x`; each further dot goes one level up.
                base = package.split(".")[: len(package.split(".")) + 1 - node.level] if node.level else []
                module = ".".join(part for part in [*base, node.module] if part)
                targets |= {f"{module}.{a.name}" if f"{module}.{a.name}" in paths else module for a in node.names}
            elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytest_plugins" for t in node.targets):
                targets |= set(ast.literal_eval(node.value))
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of more than one module (Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_cycles_finds_a_circle_and_only_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"b"}}) == []


def test_import_graph_sees_deferred_imports_and_plugins():
    graph = import_graph()
    assert "browser" in graph["conftest"]  # pytest_plugins = ("browser",)
    assert "harness.server" in graph["benchmarks.page"]  # a top-level import
    assert "benchmarks.kernels" in graph["benchmarks.run"]  # `from benchmarks import kernels` inside a function


def test_no_import_circle_anywhere():
    assert cycles(import_graph()) == []


# The app's layers, lowest first: a module may import modules of its own layer and of the layers below it,
# never of one above. Two stacks. The teaching library, lnviz/: the maths (norms, data, device) is the ground, it
# imports nothing of lnviz; then how values are written (lnviz/text.py); what a view is (the state table, the page
# registry, links and lessons); the figure kit; the labs (each page's computation and figures). The server,
# server/, stands on it (what a shared server limits sizes torch's threads from the CPUs the container may use, and
# caps a shared grid by the state table's B and H) and lnviz never imports it: what a lab needs of the server (a
# TTL) is passed in. Then Streamlit's glue, ui/, a folder per concept: the page kit, which imports no other folder
# of ui; the stage's glue on it; then each lab's Streamlit side (the explorer's details draw the stage) and the class
# poll's glue (its routes, ui/poll/routes.py, list the stage's route for γ and β), which never import each other
# (UI_SIBLINGS). Then the pages, the router and the app.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("lnviz.maths",),
    ("lnviz.text",),
    ("lnviz.views",),
    ("lnviz.figures",),
    ("lnviz.labs",),
    ("server",),
    ("ui.kit",),
    ("ui.stage",),
    ("ui.labs", "ui.poll"),
    ("pages", "router", "app"),
)
UI_SIBLINGS = ("ui.labs", "ui.poll")  # one layer, and neither imports the other


def layer(module: str) -> int | None:
    for level, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return level
    return None


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Each import of ``graph`` from a layer to one above it: (importer, imported)."""
    return sorted(
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if layer(module) is not None and layer(target) is not None and layer(target) > layer(module)
    )


@functools.cache  # read once: five tests ask
def app_graph() -> dict[str, set[str]]:
    """The import graph of lnviz/, server/, ui/, pages/, the router (router.py) and the app (app.py)."""
    graph = import_graph(("lnviz", "server", "ui", "pages"))
    for entry in ("app", "router"):
        graph[entry] = {m for m in imported_modules(ROOT / f"{entry}.py") if m in graph}
    return graph


def test_no_layer_imports_one_above_it():
    assert upward(app_graph()) == []


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, by its dotted name (``from a import b`` counts as a.b and a)."""
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            names |= {n.module} | {f"{n.module}.{a.name}" for a in n.names}
    return names


def test_every_module_of_the_app_has_a_layer():
    """A new room of lnviz/ or ui/ must be given its place in LAYERS, or the check above would not see it."""
    assert [m for m in app_graph() if m not in ("lnviz", "server", "ui") and layer(m) is None] == []
    assert "lnviz.views.state" in app_graph()["lnviz.views.pages"]  # the graph is read, not empty


def test_every_ui_module_lives_in_a_folder_named_in_the_layers():
    """ui/ is a folder per concept: no module of its own but its package's, and each folder one of LAYERS'."""
    assert sorted(p.name for p in (ROOT / "ui").glob("*.py")) == ["__init__.py"]
    folders = {p.parent.name for p in (ROOT / "ui").rglob("*.py") if p.parent != ROOT / "ui"}
    assert {f"ui.{f}" for f in folders} == {p for prefixes in LAYERS for p in prefixes if p.startswith("ui.")}


def across(graph: dict[str, set[str]], folders: tuple[str, ...]) -> list[tuple[str, str]]:
    """Each import of ``graph`` from one of ``folders`` into another: (importer, imported)."""

    def folder(module: str) -> str | None:
        return next((f for f in folders if module == f or module.startswith(f + ".")), None)

    return sorted((m, t) for m, ts in graph.items() for t in ts if folder(m) and folder(t) and folder(m) != folder(t))


def test_a_labs_glue_and_the_polls_glue_never_import_each_other():
    assert across(app_graph(), UI_SIBLINGS) == []
    assert across({"ui.poll.phone": {"ui.labs.race", "ui.kit.page"}}, UI_SIBLINGS) == [
        ("ui.poll.phone", "ui.labs.race")
    ]


def test_the_layer_check_sees_an_upward_import():
    # What state.py did before it was the ground floor: it imported seven labs for their option lists.
    graph = app_graph() | {"lnviz.views.state": {"lnviz.labs.walkthrough", "lnviz.text"}}
    assert upward(graph) == [("lnviz.views.state", "lnviz.labs.walkthrough")]
    assert layer("lnviz.maths.device") < layer("lnviz.labs.explorer") < layer("server.cpus") < layer("ui.kit.page")
    assert layer("lnviz.maths.data") < layer("lnviz.figures.plot") < layer("ui.kit.page") < layer("pages.explorer")
    assert layer("server.heavy") < layer("ui.kit.page") < layer("ui.stage.stage") < layer("ui.poll.phone")
    assert layer("ui.labs.details") == layer("ui.poll.phone") < layer("pages.explorer")
    # The page kit drawing the stage would be an import up.
    assert upward(app_graph() | {"ui.kit.page": {"ui.stage.stage"}}) == [("ui.kit.page", "ui.stage.stage")]
