"""lnviz is pure: it never imports streamlit, and it never seeds the global RNG."""

import ast
import subprocess
import sys
from pathlib import Path

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


def test_importing_every_lnviz_module_loads_no_streamlit():
    paths = [p.relative_to(ROOT).with_suffix("").parts for p in (ROOT / "lnviz").rglob("*.py")]
    modules = [".".join(parts[:-1] if parts[-1] == "__init__" else parts) for parts in paths]  # packages too
    code = (
        "import sys, importlib\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(any(k == 'streamlit' or k.startswith('streamlit.') for k in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_global_seeding_in_app_code():
    for path in [*ROOT.glob("lnviz/**/*.py"), *ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("*.py")]:
        text = path.read_text()
        assert "torch.manual_seed" not in text and "np.random.seed(" not in text, path
