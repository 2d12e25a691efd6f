"""One rule for "unchanged" (lnviz.maths.rounding), and the resize note that uses it, against torch in float64.

The note after a change of B or H says which of LN's and BN's outputs stayed. It is checked over every
neighbouring pair of the state table's B stops (at the default H) and H stops (at the default B), both ways,
for every input kind, wherever the session keeps the grid before (ui/stage/stage.py's RESIZE_CELLS): the oracle
is F.layer_norm and F.batch_norm of the two grids, compared under the rule.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re

import pytest
import torch
import torch.nn.functional as F

from lnviz.labs import explorer
from lnviz.labs.explorer import stage
from lnviz.maths import data, norms, rounding
from lnviz.views import state
from tests.conftest import ROOT

EPS = state.EPS.default


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: on a busy machine each of F.batch_norm's thread-pool starts costs ~0.1 s here, and these
    grids are small. Restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _resize_cells() -> int:
    """ui/stage/stage.py's RESIZE_CELLS, read without importing Streamlit."""
    tree = ast.parse((ROOT / "ui" / "stage" / "stage.py").read_text())
    (value,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "RESIZE_CELLS" for t in node.targets)
    ]
    return eval(compile(ast.Expression(value), "RESIZE_CELLS", "eval"))  # a product of two numbers


def _pairs() -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every neighbouring pair of B stops at the default H and of H stops at the default B, both ways, where both
    grids are small enough for the session to keep."""
    cells, b, h = _resize_cells(), state.BATCH.default, state.FEATURES.default
    grids_b = [(n, h) for n in state.BATCH.options if n * h <= cells]
    grids_h = [(b, n) for n in state.FEATURES.options if b * n <= cells]
    one_way = [*itertools.pairwise(grids_b), *itertools.pairwise(grids_h)]
    return [*one_way, *((after, before) for before, after in one_way)]


@functools.cache
def _largest(dist: str, by: str) -> torch.Tensor:
    """The largest grid of the pairs' B stops (by "B") or H stops (by "H"): each smaller grid is its corner, bit for
    bit (the stable draw; tests/test_draws.py), so it is drawn once."""
    pairs = _pairs()
    if by == "B":
        return data.make_activations(dist, max(b for pair in pairs for b, _ in pair), state.FEATURES.default, 0)
    return data.make_activations(dist, state.BATCH.default, max(h for pair in pairs for _, h in pair), 0)


def _x(dist: str, batch: int, features: int) -> torch.Tensor:
    """make_activations(dist, batch, features, 0), contiguous as it draws it (a layout changes the rounding)."""
    by = "H" if batch == state.BATCH.default and features != state.FEATURES.default else "B"
    return _largest(dist, by)[:batch, :features].contiguous()  # (B, H)


@functools.cache
def _result(dist: str, batch: int, features: int, eps: float) -> explorer.Exploration:
    """The explorer's result at its default γ = 1, β = 0, as the page makes it (explorer.generated)."""
    return explorer.with_affine(explorer.normalize(_x(dist, batch, features), eps), 1.0, 0.0)


def _torch(x: torch.Tensor, eps: float) -> dict[str, torch.Tensor]:
    """F.layer_norm over each row's H features, and F.batch_norm over each column's B samples (B ≥ 2); at ε = 0,
    which F.batch_norm refuses in training, BN's formula in torch."""
    out = {"LN": F.layer_norm(x, x.shape[1:], eps=eps)}
    if x.shape[0] > 1 and eps > 0:
        out["BN"] = F.batch_norm(x, None, None, training=True, eps=eps)
    elif x.shape[0] > 1:
        out["BN"] = (x - x.mean(dim=0)) / x.var(dim=0, unbiased=False).sqrt()  # (B, H)
    return out


CASES = [(dist, EPS) for dist in state.DIST.options] + [("constant row", 0.0), ("near-constant row", 0.0)]


def test_the_pairs_are_the_stops_the_session_keeps():
    pairs = _pairs()
    for dist in state.DIST.options:
        for b, h in {grid for pair in pairs for grid in pair}:
            assert torch.equal(_x(dist, b, h), data.make_activations(dist, b, h, 0))
    assert ((8, 12), (8, 13)) in pairs and ((8, 13), (8, 12)) in pairs and ((1, 12), (2, 12)) in pairs
    assert all(b * h <= 64 * 64 for pair in pairs for b, h in pair)
    assert max(b for pair in pairs for b, _ in pair) == 320 and max(h for pair in pairs for _, h in pair) == 512


@pytest.mark.parametrize(("dist", "eps"), CASES)
def test_the_resize_note_says_unchanged_exactly_where_torch_does(dist, eps):
    near = 0
    for (b0, h0), (b1, h1) in _pairs():
        before, after = _result(dist, b0, h0, eps), _result(dist, b1, h1, eps)
        note = stage.resized(before, after)
        b, h = min(b0, b1), min(h0, h1)
        want0, want1 = _torch(_x(dist, b0, h0), eps), _torch(_x(dist, b1, h1), eps)
        for name in ("LN", "BN"):
            said = f"{name}'s output unchanged" in note
            said_changed = re.search(rf"\b{name}'s (and \w+'s )?changed", note) is not None
            if name not in want0 or name not in want1:
                assert not said and not said_changed, note
                continue
            u, v = (before.ln, after.ln) if name == "LN" else (before.bn, after.bn)
            tolerance = rounding.slack(u)[:b, :h] + rounding.slack(v)[:b, :h]
            kept = rounding.compare(want0[name][:b, :h], want1[name][:b, :h], tolerance).unchanged
            assert said == kept and said_changed == (not kept), (dist, (b0, h0), (b1, h1), note)
            # and apart from the rule: BN pools the B samples, LN the H features, and torch moves by far more
            pooled = b0 != b1 if name == "BN" else h0 != h1
            moved = (want0[name][:b, :h] - want1[name][:b, :h]).abs().nan_to_num(0.0).max()
            assert kept == (not pooled) and (float(moved) > 1e-4 if pooled else float(moved) < 1e-12), (dist, note)
            if kept:
                delta = (u.y[:b, :h] - v.y[:b, :h]).abs().nan_to_num(0.0).max()
                qualified = f"{name}'s output unchanged (to rounding: max |Δ| = {float(delta):.0e})".replace("-", "−")
                assert (qualified in note) == (float(delta) > 0), (dist, (b0, h0), (b1, h1), note)
                near += float(delta) > 0
    if dist != "constant row" or eps:
        assert near > 0  # lnviz's own reductions round differently with the layout: the note says so


def test_the_default_grids_h_12_to_16_says_bn_unchanged_to_rounding():
    note = stage.resized(_result("heterogeneous features", 8, 12, EPS), _result("heterogeneous features", 8, 16, EPS))
    assert note.startswith("H 12 → 16: columns 0–11 of x unchanged, and of BN's output unchanged (to rounding: ")
    assert note.endswith("; LN's changed.")


def test_an_outlier_feature_b_1_to_2_keeps_lns_output():
    note = stage.resized(_result("outlier feature", 1, 12, EPS), _result("outlier feature", 2, 12, EPS))
    assert "LN's output unchanged" in note and "changed" not in note.replace("unchanged", "")


@pytest.mark.parametrize(("dtype", "margin"), [(torch.float64, 1e12), (torch.float32, 1e3)])
def test_a_genuine_change_is_far_above_the_slack(dtype, margin):
    """BN's outputs after B 8 → 7 (every input kind) and LN's after H 12 → 11 move by far more than rounding can."""
    ln = lambda x: F.layer_norm(x, x.shape[1:], eps=EPS)  # noqa: E731
    bn = lambda x: F.batch_norm(x, None, None, training=True, eps=EPS)  # noqa: E731
    for dist in state.DIST.options:
        x = data.make_activations(dist, 8, 12, 0).to(dtype)  # (8, 12)
        for norm, ours, smaller in ((bn, norms.batch_norm, x[:7]), (ln, norms.layer_norm, x[:, :11])):
            cells = tuple(slice(0, n) for n in smaller.shape)
            delta = (norm(x)[cells] - norm(smaller)).abs()  # (7, 12) or (8, 11)
            a, b = ours(x, eps=EPS), ours(smaller, eps=EPS)
            slack = rounding.slack(a)[cells] + rounding.slack(b)
            worst = float((delta / slack).max())
            assert worst > margin, (dist, dtype, worst)
            assert not rounding.outputs(a, b, cells).unchanged


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_rounding_alone_stays_within_the_slack_in_either_dtype(dtype):
    """BN of the same columns at every H stop up to 64 (LN of the same rows at every B stop): lnviz's reductions
    round differently with the layout, by less than the slack."""
    for dist in state.DIST.options:
        big = data.make_activations(dist, 64, 64, 0).to(dtype)  # (64, 64)
        for n in (n for n in state.FEATURES.options if n < 64):
            a, b = norms.batch_norm(big[:8], eps=EPS), norms.batch_norm(big[:8, :n], eps=EPS)
            assert rounding.outputs(a, b, (slice(None), slice(0, n))).unchanged, (dist, dtype, n)
            a, b = norms.layer_norm(big[:, :12], eps=EPS), norms.layer_norm(big[:n, :12], eps=EPS)
            assert rounding.outputs(a, b, (slice(0, n),)).unchanged, (dist, dtype, n)


def test_compare_matches_nan_with_nan_only_and_says_which_words():
    nan, f64 = float("nan"), dict(dtype=torch.float64)
    same = rounding.compare(torch.tensor([1.0, nan], **f64), torch.tensor([1.0, nan], **f64))
    assert same.exact and same.unchanged and same.words() == "unchanged"
    near = rounding.compare(torch.tensor([1.0, nan], **f64), torch.tensor([1.0 + 4e-15, nan], **f64), 1e-14)
    assert not near.exact and near.unchanged and near.words() == "unchanged (to rounding: max |Δ| = 4e−15)"
    assert rounding.compare(torch.tensor([1.0, nan], **f64), torch.tensor([1.0, 2.0], **f64), 1e9).words() == "changed"
    assert (
        rounding.compare(torch.tensor([1.0], **f64), torch.tensor([1.0 + 4e-15], **f64)).words() == "changed"
    )  # no slack
    inf = float("inf")
    assert rounding.compare(torch.tensor([inf]), torch.tensor([inf])).exact
    assert not rounding.compare(torch.tensor([inf]), torch.tensor([-inf]), 1e9).unchanged
    with pytest.raises(ValueError, match="shapes"):
        rounding.compare(torch.zeros(2), torch.zeros(3))


def test_moved_marks_the_cells_past_the_slack():
    x = data.make_activations("standard normal", 8, 12, 0)  # (8, 12)
    shifted = x.clone()
    shifted[2] += 3.0  # one row shifted: LN's row 2 moves by rounding only, BN's every row
    ln = rounding.moved(norms.layer_norm(x), norms.layer_norm(shifted))
    bn = rounding.moved(norms.batch_norm(x), norms.batch_norm(shifted))
    assert not ln.any() and bool(bn.all())
    assert float((F.layer_norm(shifted, (12,)) - F.layer_norm(x, (12,))).abs()[2].max()) > 0  # not bit for bit
