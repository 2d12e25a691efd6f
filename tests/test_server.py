"""What the router, router.py, sets up for the server process as a whole."""

import ast
import json
import subprocess
import sys
import textwrap

import pytest

from harness.server import ROOT

# AppTest in a fresh interpreter: the freeze is process-wide, so pytest's own process (which imported torch long
# before) would not tell us anything. One interpreter for the module's three probes, in order, each reporting what
# it found or how it failed: starting one costs seconds of CPU (streamlit, torch, AppTest's first run).
#   imports: the modules a fresh server's first page draws its title with, before torch;
#   explorer: AppTest runs the explorer and moves γ (what the router froze after it);
#   sweep: the bench page, then its sweep with torch.compile on one small case, x of shape (8, 1023) in float64;
#   compiled: the compiled variant on that case's graph, against torch.nn's LayerNorm.
_PROBE = textwrap.dedent(
    """
    import gc, json, sys, traceback


    def imports():
        import streamlit, ui.kit.page, ui.kit.boot, lnviz.views.pages
        return {"torch": "torch" in sys.modules}


    def explorer():
        from streamlit.testing.v1 import AppTest

        at = AppTest.from_file("router.py", default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        at.slider(key="gain").set_value(1.5).run()
        assert not at.exception, at.exception
        return {"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}


    def sweep():
        import pytest
        from streamlit.testing.v1 import AppTest
        from harness.proofs import Browser
        from lnviz.labs import bench

        Browser(pytest.MonkeyPatch())  # a proved browser: a sweep takes a place in the heavy-work queue
        bench.SWEEP_FEATURES, bench.SWEEP_DTYPES = (1023,), ("float64",)
        bench.timing.CPU_WORKING_SET = 8 * bench.ideal_bytes(1023, 8)  # B = 8
        at = AppTest.from_file("router.py", default_timeout=600)
        at.switch_page("pages/bench.py")
        at.query_params["compile"] = "true"
        at.query_params["v"] = "2"
        at.run()
        assert not at.exception, at.exception
        gc.collect()
        before = len(gc.get_objects())
        at.button(key="bench_run_sweep").click().run()
        assert not at.exception, at.exception
        assert any(m.variant == "ln_compiled" and m.available for m in at.session_state["bench_sweep"])
        gc.collect()
        return {"before": before, "after": len(gc.get_objects()), "frozen": gc.get_freeze_count()}


    def compiled():
        import torch
        from lnviz.labs import bench

        inputs = bench.make_inputs(8, 1023, torch.float64, torch.device("cpu"), seed=6)
        run = bench.VARIANTS["ln_compiled"].build(inputs)  # the sweep's graph again: inductor's cache has its kernel
        with torch.no_grad():
            module = torch.nn.LayerNorm(1023, eps=inputs.eps, dtype=torch.float64)
            module.weight.copy_(inputs.weight)
            module.bias.copy_(inputs.bias)
            torch.testing.assert_close(run(), module(inputs.x), rtol=0, atol=1e-10)
        return {"matches": True}


    found = {}
    for probe in (imports, explorer, sweep, compiled):  # in this order: imports before anything loads torch
        try:
            found[probe.__name__] = probe()
        except BaseException:
            found[probe.__name__] = {"error": traceback.format_exc()[-3000:]}
    print(json.dumps(found))
    """
)


@pytest.fixture(scope="module")
def probed() -> dict:
    """What each of :data:`_PROBE`'s probes found, by name; ``{"error": traceback}`` for one that failed."""
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_long_lived_imports_are_frozen_out_of_the_post_run_collection(probed):
    """Streamlit collects all generations after every run; torch, pandas and plotly must not be walked each time.

    Without the freeze in router.py a full collection walks ~250,000 objects
    (hundreds of ms per slider move on a 2-core CPU); with it, only what the
    pages created since.
    """
    explorer = probed["explorer"]
    assert "error" not in explorer, explorer["error"]
    assert explorer["frozen"] > 100_000
    assert explorer["tracked"] < explorer["frozen"] / 5


def test_the_explorers_title_and_introduction_come_before_torch(probed):
    """On a fresh server the first viewer sees the title while torch's first import runs (seconds).

    So the router and the page kit must not import torch, and the explorer
    imports it only after Page.start has drawn its title and introduction.
    """
    assert probed["imports"] == {"torch": False}
    router = ast.parse((ROOT / "router.py").read_text())
    imported = {a.name for n in ast.walk(router) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(router) if isinstance(n, ast.ImportFrom)}
    assert imported <= {"gc", "sys", "streamlit", "server", "ui.kit", "lnviz.views"}, imported  # the registry: no torch
    page = ast.parse((ROOT / "pages" / "explorer.py").read_text())
    calls = [n for n in ast.walk(page) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    start = min(n.end_lineno for n in calls if n.func.attr == "start")  # Page.start draws title and introduction

    def needs_torch(node: ast.stmt) -> bool:
        if isinstance(node, ast.Import):
            return any(a.name == "torch" for a in node.names)
        return isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            ("torch", "lnviz", "ui.kit.controls")
        )

    torch_at = min(n.lineno for n in page.body if needs_torch(n))
    assert start < torch_at


def test_a_sweep_with_torch_compile_leaves_later_collections_as_cheap_as_before(probed):
    """torch.compile loads a few hundred thousand objects for good; every later full collection would walk them.

    A collection's cost is the objects it walks: after the sweep, no more than before, give or take what one
    run leaves behind (the frozen ones are not walked).

    The compiled variant is checked against torch.nn.LayerNorm in float64 here too, on the sweep's own graph, not
    in tests/test_bench.py with the other variants: a cold torch.compile costs seconds of CPU (inductor writes
    and builds C++), and this way the suite compiles that graph once.
    """
    sweep, compiled = probed["sweep"], probed["compiled"]
    assert "error" not in sweep, sweep["error"]
    assert sweep["frozen"] > 100_000
    assert sweep["after"] < sweep["before"] + 20_000, sweep
    assert compiled == {"matches": True}, compiled.get("error")
