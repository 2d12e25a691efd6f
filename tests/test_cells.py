"""torch's answer to a "cells" question (lnviz.labs.classroom.cells): the gradient's support is the set of cells
that the F.* function's output at the marked element reads, and μ and σ are what that function normalizes with.

The oracle is torch.nn.functional itself, in float64: perturbing one cell outside the set leaves the marked
element's output bit for bit unchanged; perturbing any cell inside it changes it. Every cell is tried.
"""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from lnviz.labs.classroom import cells
from lnviz.maths.data import generator

F64 = torch.float64
EPS = 1e-5

# (norm, x's shape, G): the cases the bank asks about, and more of each shape.
CASES = [
    ("BN", (4, 6), 1),
    ("BN", (8, 3), 1),
    ("LN", (4, 6), 1),
    ("LN", (2, 8), 1),
    ("GroupNorm", (4, 8), 4),
    ("GroupNorm", (3, 6), 2),
    ("GroupNorm", (2, 4, 3), 2),
    ("GroupNorm", (2, 6, 2), 3),
    ("InstanceNorm", (2, 3, 6), 1),
    ("InstanceNorm", (3, 2, 4), 1),
    ("LN per token", (8, 8), 1),
]


def functional(norm: str, x: torch.Tensor, groups: int) -> torch.Tensor:
    """y = (x − μ) / σ as torch.nn.functional computes it (no γ, no β), shaped as x."""
    if norm == "BN":
        return F.batch_norm(x, None, None, training=True, eps=EPS)
    if norm in ("LN", "LN per token"):
        return F.layer_norm(x, x.shape[-1:], eps=EPS)
    if norm == "GroupNorm":
        return F.group_norm(x, groups, eps=EPS)
    return F.instance_norm(x, eps=EPS)


def reads(norm: str, x: torch.Tensor, groups: int) -> torch.Tensor:
    """(n, n) bools: whether moving cell k changes F's output at cell m, by any bit, at [k, m]."""
    y = functional(norm, x, groups).flatten()  # (n,)
    changed = []
    for k in range(x.numel()):
        moved = x.clone()
        moved.view(-1)[k] += 0.75
        changed.append(functional(norm, moved, groups).flatten() != y)
    return torch.stack(changed)  # (n, n)


def data(shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    return torch.randn(shape, generator=generator(seed), dtype=F64)


@pytest.mark.parametrize(("norm", "shape", "groups"), CASES)
def test_the_gradients_support_is_the_set_the_functional_reads_at_every_element(norm, shape, groups):
    x = data(shape)
    changed = reads(norm, x, groups)  # (n, n)
    for at in itertools.product(*map(range, shape)):
        m = cells.flat(shape, at)
        read = tuple(changed[:, m].nonzero().flatten().tolist())
        assert m in read and len(read) > 1
        for stat in cells.STATISTICS:
            assert cells.support(norm, x, at, stat, groups, EPS) == read, (at, stat)


def _expected(norm: str, shape: tuple[int, ...], at: tuple[int, ...], groups: int) -> set[tuple[int, ...]]:
    """The pooled set by its definition (the module's table), as elements of x."""
    every = set(itertools.product(*map(range, shape)))
    if norm == "BN":
        return {e for e in every if e[1] == at[1]}
    if norm in ("LN", "LN per token"):
        return {e for e in every if e[0] == at[0]}
    if norm == "GroupNorm":
        size = shape[1] // groups
        return {e for e in every if e[0] == at[0] and e[1] // size == at[1] // size}
    return {e for e in every if e[:2] == at[:2]}


@pytest.mark.parametrize(("norm", "shape", "groups"), CASES)
def test_the_support_is_the_pooled_set_the_norms_definition_names(norm, shape, groups):
    x = data(shape, seed=1)
    for at in itertools.product(*map(range, shape)):
        want = sorted(cells.flat(shape, e) for e in _expected(norm, shape, at, groups))
        assert list(cells.support(norm, x, at, "mu", groups)) == want


@pytest.mark.parametrize(("norm", "shape", "groups"), CASES)
def test_mu_and_sigma_are_what_the_functional_normalizes_with(norm, shape, groups):
    """torch's own kernels return the μ and 1/σ they used (native_batch_norm, native_layer_norm,
    native_group_norm: what F.* call); F.instance_norm is batch norm on x of shape (1, N·C, L)."""
    x = data(shape, seed=2)
    mu, sigma = cells.statistics(norm, x, groups, EPS)
    if norm == "BN":
        _, mean, rstd = torch.native_batch_norm(x, None, None, None, None, True, 0.0, EPS)
    elif norm in ("LN", "LN per token"):
        _, mean, rstd = torch.native_layer_norm(x, x.shape[-1:], None, None, EPS)
    elif norm == "GroupNorm":
        n, c = shape[:2]
        _, mean, rstd = torch.native_group_norm(x, None, None, n, c, x[0, 0].numel(), groups, EPS)
    else:
        n, c = shape[:2]
        _, mean, rstd = torch.native_batch_norm(x.reshape(1, n * c, -1), None, None, None, None, True, 0.0, EPS)
    torch.testing.assert_close(mu, mean.reshape(mu.shape), rtol=0, atol=1e-14)
    torch.testing.assert_close(sigma, 1 / rstd.reshape(sigma.shape), rtol=1e-13, atol=0)
    # and y = (x − μ) / σ is F's output
    for at in itertools.product(*map(range, shape)):
        m, s = (cells.statistic(norm, x, at, stat, groups, EPS) for stat in cells.STATISTICS)
        assert float((x[at] - m) / s) == pytest.approx(float(functional(norm, x, groups)[at]), abs=1e-12)


def test_a_value_equal_to_mu_would_hide_it_from_sigmas_gradient_and_is_refused():
    x = data((4, 6))
    x[2] = torch.tensor([-1.5, 0.5, 2.0, 0.25, -1.25, 0.0], dtype=F64)  # μ = 0 exactly: x[2, 5]'s value
    assert float(x[2].mean()) == 0.0
    assert 2 * 6 + 5 not in cells.gradient("LN", x, (2, 0), "sigma").flatten().nonzero().flatten().tolist()
    with pytest.raises(RuntimeError, match="σ's gradient is 0"):
        cells.support("LN", x, (2, 0), "sigma")


def test_the_grid_is_x_with_leading_dimensions_as_rows():
    assert cells.grid((4, 6)) == (4, 6) and cells.grid((2, 3, 6)) == (6, 6)
    shape = (2, 3, 4)
    x = torch.arange(24).reshape(shape)
    for at in itertools.product(*map(range, shape)):
        assert x.flatten()[cells.flat(shape, at)] == x[at]


@pytest.mark.parametrize(
    ("norm", "shape", "groups"), [("BN", (2, 3, 4), 1), ("GroupNorm", (2, 5), 2), ("InstanceNorm", (2, 3), 1)]
)
def test_a_shape_the_norm_does_not_take_is_refused(norm, shape, groups):
    with pytest.raises(ValueError):
        cells.statistics(norm, data(shape), groups)
