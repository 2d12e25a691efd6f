"""Exports: CSV and .npy read back bit for bit; the PyTorch script, run on its own, gives the app's numbers."""

import ast
import csv
import io
import math
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as hs
from hypothesis.extra import numpy as hnp

from lnviz.labs.explorer import export
from lnviz.maths import data, norms
from lnviz.views.state import DIST, DRAW

# Any float64 at all: NaN, ±inf, -0.0, subnormals, the extremes.
MATRICES = hnp.arrays(
    np.float64,
    hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
    elements=hs.floats(allow_nan=True, allow_infinity=True, width=64),
)


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical, except that any NaN equals any NaN."""
    if a.shape != b.shape:
        return False
    for u, v in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True):
        if not (math.isnan(u) and math.isnan(v)) and bits(u) != bits(v):
            return False
    return True


@settings(max_examples=150, deadline=None)
@given(MATRICES)
def test_csv_reads_back_bit_for_bit_with_a_header_and_one_row_per_sample(m):
    text = export.to_csv(torch.from_numpy(m)).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == [f"f{k}" for k in range(m.shape[1])]
    assert len(rows) == m.shape[0] + 1
    back = np.array([[float(c) for c in row] for row in rows[1:]], dtype=np.float64)
    assert same_bits(back, m)
    for cell, value in zip((c for row in rows[1:] for c in row), m.ravel().tolist(), strict=True):
        if math.isnan(value):
            assert cell == "nan"


def test_csv_of_float32_and_of_a_non_contiguous_view_is_the_exact_float64_value():
    x32 = torch.randn(5, 3, generator=data.generator(1), dtype=torch.float32)
    rows = list(csv.reader(io.StringIO(export.to_csv(x32.T).decode())))[1:]
    back = torch.tensor([[float(c) for c in row] for row in rows], dtype=torch.float64)
    assert torch.equal(back, x32.T.double())


@settings(max_examples=100, deadline=None)
@given(MATRICES)
def test_npy_is_float64_loads_without_pickles_and_reads_back_bit_for_bit(m):
    blob = export.to_npy(torch.from_numpy(m))
    back = np.load(io.BytesIO(blob), allow_pickle=False)
    assert back.dtype == np.float64 and back.shape == m.shape
    assert same_bits(back, m)


def test_npy_of_float32_is_upcast_exactly():
    x32 = torch.randn(4, 6, generator=data.generator(2), dtype=torch.float32)
    back = np.load(io.BytesIO(export.to_npy(x32)), allow_pickle=False)
    assert back.dtype == np.float64 and torch.equal(torch.from_numpy(back), x32.double())


@pytest.mark.parametrize("fn", [export.to_csv, export.to_npy])
@pytest.mark.parametrize("shape", [(5,), (2, 3, 4), ()])
def test_only_matrices_are_exported(fn, shape):
    with pytest.raises(ValueError, match="shape"):
        fn(torch.zeros(shape, dtype=torch.float64))


# The script: every preset, γ/β scalar and per feature, ε 0 and 1e-5, and a batch of one.
CASES = [
    (dist, 7 + k % 3, 5 + 4 * k, 1000 + 37 * k, 1.35, -0.4, affine, eps, draw)
    for k, dist in enumerate(DIST.options)
    for affine in (False, True)
    for eps in (0.0, 1e-5)
    for draw in DRAW.options
] + [
    ("heterogeneous samples", 1, 6, 11, 0.7, 0.2, True, 1e-5, "stable"),
    ("constant row", 1, 9, 12, 1.0, 0.0, False, 0.0, "stable"),
    ("outlier feature", 1, 4, 13, -2.0, 0.5, False, 1e-5, "whole"),
    ("outlier feature", 3, 1, 14, 1.0, 0.0, False, 1e-5, "stable"),  # one feature: no feature 1 to be the outlier
    ("heterogeneous features", 2, 1030, 15, 1.0, 0.0, True, 1e-5, "stable"),  # a line past one stream's block
]


def app_numbers(dist, batch, features, seed, gain, bias, affine, eps, draw):
    """What the explorer page computes: lnviz.maths.data for x, γ and β, lnviz.maths.norms for LN and BN."""
    x = data.make_activations(dist, batch, features, seed, draw=draw)  # (B, H)
    if affine:
        g, b = data.random_affine(features, seed, draw)  # (H,), (H,)
        gamma, beta = gain * g, bias + b
    else:
        gamma, beta = gain, bias
    ln = norms.layer_norm(x, gamma, beta, eps)
    bn = norms.batch_norm(x, gamma, beta, eps) if batch > 1 else None
    return x, ln, bn


@pytest.fixture(scope="module")
def script_outputs(tmp_path_factory):
    """Each case's script, saved to a file with one line appended that saves its results, run by the venv's python.

    All scripts run in one subprocess (each as ``__main__`` in a fresh namespace,
    by runpy), so torch is imported once.
    """
    folder = tmp_path_factory.mktemp("scripts")
    paths = []
    for n, case in enumerate(CASES):
        path = folder / f"view_{n}.py"
        out = folder / f"view_{n}.pt"
        save = f'torch.save({{"x": x, "ln": ln, "bn": bn, "weight": weight, "bias": bias}}, {str(out)!r})\n'
        path.write_text(export.script(*case) + save)
        paths.append((path, out))
    runner = "import runpy, sys\nfor p in sys.argv[1:]:\n    runpy.run_path(p, run_name='__main__')\n"
    done = subprocess.run(
        [sys.executable, "-c", runner, *(str(p) for p, _ in paths)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return [torch.load(out) for _, out in paths]


@pytest.mark.parametrize(
    "n", range(len(CASES)), ids=[f"{c[0]}-B{c[1]}-H{c[2]}-affine{c[6]}-eps{c[7]}-{c[8]}" for c in CASES]
)
def test_script_reproduces_the_apps_numbers(script_outputs, n):
    batch, features = CASES[n][1:3]
    got = script_outputs[n]
    x, ln, bn = app_numbers(*CASES[n])
    assert torch.equal(got["x"], x)
    assert got["x"].dtype == torch.float64 and got["x"].shape == (batch, features)
    assert torch.equal(got["weight"], ln.weight.reshape(features))
    assert torch.equal(got["bias"], ln.bias.reshape(features))
    torch.testing.assert_close(got["ln"], ln.y, rtol=1e-12, atol=1e-12, equal_nan=True)
    if batch == 1:
        assert got["bn"] is None
    else:
        torch.testing.assert_close(got["bn"], bn.y, rtol=1e-12, atol=1e-12)


def test_constant_row_with_zero_eps_gives_nan_in_the_script_as_in_the_app(script_outputs):
    n = CASES.index(("constant row", 1, 9, 12, 1.0, 0.0, False, 0.0, "stable"))
    assert torch.isnan(script_outputs[n]["ln"][0]).all()


@pytest.mark.parametrize("eps", [1e-5, 0.0])
def test_a_one_sample_script_says_what_bn_would_give_at_its_eps(eps):
    """With B = 1, x − μ = 0 and σ² = 0: y = 0/√ε + β = β for ε > 0, and 0/0 at ε = 0. The comment says which."""
    x = torch.randn(1, 5, generator=data.generator(0), dtype=torch.float64)  # (1, H)
    beta = torch.full((5,), 0.3, dtype=torch.float64)
    own = x.mean(dim=0), x.var(dim=0, unbiased=False)  # (H,): μ = x and σ² = 0
    y = F.batch_norm(x, *own, None, beta, training=False, eps=eps)  # eval mode takes them, even at ε = 0
    (line,) = [
        line for line in export.script("standard normal", 1, 5, 0, 1.0, 0.3, False, eps).splitlines() if "bn =" in line
    ]
    if eps > 0:
        assert line.endswith("so y would be bias)")
        torch.testing.assert_close(y, beta.view(1, 5), rtol=0, atol=1e-12)  # eval mode rounds x·s − μ·s
    else:
        assert line.endswith("so at eps = 0 y would be 0/0)") and y.isnan().all()


def test_script_runs_on_its_own_and_prints_the_apps_numbers(tmp_path):
    case = ("heterogeneous features", 6, 10, 424242, 0.8, 0.1, True, 1e-5, "stable")
    path = tmp_path / "view.py"
    path.write_text(export.script(*case))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    printed = [ast.literal_eval(line[line.index(" [") + 1 :]) for line in done.stdout.splitlines()]  # label, list
    x, ln, bn = app_numbers(*case)
    assert printed[0] == x[0, :4].tolist()
    torch.testing.assert_close(
        torch.tensor(printed[1:], dtype=torch.float64), torch.stack([ln.y[0, :4], bn.y[0, :4]]), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("case", CASES)
def test_script_is_short_plain_pytorch_with_only_its_own_preset(case):
    dist, batch, features, seed, _, _, affine, eps, draw = case
    text = export.script(*case)
    compile(text, "view.py", "exec")
    assert "lnviz" not in text.lower()
    assert f"seed, eps = {batch}, {features}, {seed}, {eps!r}" in text
    assert len(text.splitlines()) < 50
    imported = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    # The stable draw seeds each line's generator from a BLAKE2b hash (hashlib, Python's standard library).
    assert imported == {"torch", "torch.nn.functional"} | ({"hashlib"} if draw == "stable" else set())
    # One draw for z, two more for the heterogeneous presets' loc and scale, two for per-feature γ, β: in the
    # whole draw each a torch.randn, in the stable draw each a line of its own (one torch.randn, in line()).
    draws = 1 + 2 * dist.startswith("heterogeneous") + 2 * affine
    if draw == "whole":
        assert text.count("torch.randn(") == draws and "line(" not in text
    else:
        assert text.count("torch.randn(") == 1 and text.count("line(") == draws + 1  # + its def
    assert ("F.batch_norm(" in text) == (batch > 1 and eps > 0)
    assert ("x.var(0, unbiased=False)" in text) == (batch > 1 and eps == 0)


def test_zero_eps_comment_is_true_torch_refuses_it_in_training():
    x = torch.randn(4, 3, generator=data.generator(0), dtype=torch.float64)
    with pytest.raises((RuntimeError, ValueError), match="eps must be positive"):
        F.batch_norm(x, None, None, training=True, eps=0.0)


@pytest.mark.parametrize(
    "args",
    [
        ("uniform", 4, 4, 0, 1.0, 0.0, False, 1e-5),
        ("standard normal", 0, 4, 0, 1.0, 0.0, False, 1e-5),
        ("standard normal", 4, 0, 0, 1.0, 0.0, False, 1e-5),
        ("standard normal", 4, 4, 0, 1.0, 0.0, False, -1e-5),
        ("standard normal", 4, 4, 0, float("nan"), 0.0, False, 1e-5),
        ("standard normal", 4, 4, 0, 1.0, float("inf"), False, 1e-5),
        ("standard normal", 4, 4, 0, 1.0, 0.0, False, 1e-5, "v3"),
    ],
)
def test_script_refuses_what_the_app_cannot_show(args):
    with pytest.raises(ValueError):
        export.script(*args)
