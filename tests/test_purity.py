"""lnviz is pure: it never imports streamlit, never seeds the global RNG, and nothing but the transformer page brings in
the model's libraries."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_lnviz_source_never_imports_streamlit():
    offenders = []
    for path in (ROOT / "lnviz").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "streamlit"]
    assert not offenders


def test_importing_every_lnviz_module_loads_no_streamlit_and_starts_no_thread(import_work):
    assert import_work["lnviz"] == {"streamlit": False, "threads": []}


def test_no_global_seeding_in_app_code():
    for path in [
        *ROOT.glob("lnviz/**/*.py"),
        *ROOT.glob("pages/*.py"),
        *ROOT.glob("ui/**/*.py"),
        *ROOT.glob("server/*.py"),
        *ROOT.glob("*.py"),
    ]:
        text = path.read_text()
        assert "torch.manual_seed" not in text and "np.random.seed(" not in text, path


# Run in a fresh interpreter, in two steps. First import every lnviz module, and say whether streamlit came with
# them and which threads they started. Then import every ui/ and server/ module, with st.components.v2.component
# watched, and say per module what its import did: the components it registered, the objects of the project's classes it
# built (a cache, a store, a watcher, a gate), and the threads it started. Last, build the question bank and say
# whether transformers or tokenizers came with any of it. One interpreter for all: each costs seconds of CPU to
# start (torch, streamlit).
_IMPORT_PROBE = """
import ast, importlib, json, sys, threading, traceback, types

ROOT = sys.argv[1]
threads = set(threading.enumerate())
for name in json.loads(sys.argv[2]):
    importlib.import_module(name)
lnviz = {
    "streamlit": any(k == "streamlit" or k.startswith("streamlit.") for k in sys.modules),
    "threads": [t.name for t in set(threading.enumerate()) - threads],
}

import streamlit as st

found = {m: [] for m in sys.argv[3:]}

def watched(name, *args, **kwargs):
    here = [f.filename[len(ROOT):] for f in traceback.extract_stack() if f.filename.startswith(ROOT)]
    here = [h.removesuffix(".py").replace("/", ".") for h in here if h.startswith(("ui/", "server/"))]
    module = here[-1] if here else "?"
    found.setdefault(module, []).append(f"registers the component {name!r}")
    return lambda **mount: None

st.components.v2.component = watched
for name in sys.argv[3:]:
    threads = set(threading.enumerate())
    try:
        module = importlib.import_module(name)
    except Exception as e:
        found[name].append(f"raises {e!r}")
        continue
    found[name] += [f"starts the thread {t.name!r}" for t in set(threading.enumerate()) - threads]
    tree = ast.parse(open(module.__file__).read())
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    for key, value in vars(module).items():
        kind = type(value)
        if isinstance(value, (type, types.ModuleType, types.FunctionType)) or key in imported:  # built elsewhere
            continue
        if isinstance(value, tuple):  # a record (a NamedTuple) or a tuple of them: a constant, no work
            continue
        if kind.__module__.split(".")[0] in ("lnviz", "server", "ui"):
            found[name].append(f"builds {key} = {kind.__module__}.{kind.__qualname__}(...)")
# Last, the question bank built: whether anything so far brought the model's libraries in (only the transformer
# page's own run may: lnviz.labs.transformer imports them when it first needs the model).
from lnviz.labs.classroom import questions

questions.bank()
model = sorted(m for m in ("transformers", "tokenizers") if m in sys.modules)
print(json.dumps({"lnviz": lnviz, "ui": found, "model": model}))
"""
_LNVIZ_PATHS = [p.relative_to(ROOT).with_suffix("").parts for p in (ROOT / "lnviz").rglob("*.py")]
LNVIZ_MODULES = [".".join(parts[:-1] if parts[-1] == "__init__" else parts) for parts in _LNVIZ_PATHS]  # packages too
# The Streamlit glue and the server, each module by its dotted name.
UI_MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts)
    for folder in ("ui", "server")
    for p in (ROOT / folder).rglob("*.py")
    if p.stem != "__init__"
)


@pytest.fixture(scope="module")
def import_work() -> dict:
    """What importing every lnviz module did (``"lnviz"``), then each ui/ and server/ module (``"ui"``), in a
    fresh interpreter."""
    code = [sys.executable, "-c", _IMPORT_PROBE, f"{ROOT}/", json.dumps(LNVIZ_MODULES), *UI_MODULES]
    out = subprocess.run(code, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_no_module_nor_the_question_bank_imports_transformers(import_work):
    """Every lnviz, ui/ and server/ module imported and the question bank built, in one fresh interpreter, without
    transformers or tokenizers: the model's libraries come with the transformer page's first need of the model."""
    assert import_work["model"] == []


@pytest.mark.parametrize(
    "module",
    UI_MODULES,
)
def test_importing_a_ui_or_server_module_does_no_work(import_work, module):
    # What exists once per process is a zero-argument functools.cache function, built on its first call.
    assert import_work["ui"][module] == []
    assert import_work["ui"].get("?", []) == []
