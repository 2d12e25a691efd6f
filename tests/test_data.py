"""Seeded activation grids: reproducible, and shaped like the story each distribution tells."""

import itertools

import pytest
import torch

from lnviz.maths import data
from lnviz.views import state


@pytest.mark.parametrize("dist", list(state.DIST.options))
def test_same_seed_same_grid_different_seed_different_grid(dist):
    a = data.make_activations(dist, 9, 13, seed=5)
    b = data.make_activations(dist, 9, 13, seed=5)
    c = data.make_activations(dist, 9, 13, seed=6)
    assert a.shape == (9, 13) and a.dtype == torch.float64
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_generation_does_not_touch_the_global_rng():
    before = torch.get_rng_state()
    data.make_activations("heterogeneous features", 4, 4, seed=1)
    data.random_affine(4, seed=1)
    assert torch.equal(before, torch.get_rng_state())


def test_heterogeneous_features_vary_by_column_and_samples_by_row():
    f = data.make_activations("heterogeneous features", 512, 8, seed=0)
    s = data.make_activations("heterogeneous samples", 8, 512, seed=0)
    # The spread of the column means dwarfs the spread within a column's mean estimate.
    assert f.mean(0).std() > 5 * (f.std(0) / 512**0.5).max()
    assert s.mean(1).std() > 5 * (s.std(1) / 512**0.5).max()


def test_outlier_and_constant_rows():
    o = data.make_activations("outlier feature", 32, 12, seed=0)
    j = data.outlier_feature(12)
    assert o[:, j].abs().min() > o[:, [k for k in range(12) if k != j]].abs().max()
    assert data.make_activations("constant row", 4, 6, seed=0)[0].var(unbiased=False) == 0
    near = data.make_activations("near-constant row", 4, 64, seed=0)[0].var(unbiased=False)
    assert 0 < near < 1e-5


def test_the_outlier_features_description_holds():
    """The outlier feature's words: at least 25 and about 45 on average; others N(0, 1); dominates LN up to a few dozen."""
    words = state.DIST.meaning("outlier feature")
    assert "at least 25" in words and "about 45 on average" in words and "a few dozen" in words
    # 20,000 samples of the outlier (its mean's standard error 0.11, against the 0.5 allowed) and 1.26 million of
    # the others: a row costs the same up to 1,024 features (lnviz.maths.data.BLOCK), so the others come wide.
    x = data.make_activations("outlier feature", 20_000, 64, seed=1)
    j = data.outlier_feature(64)
    others = torch.cat([x[:, :j], x[:, j + 1 :]], dim=1)  # (B, H − 1)
    assert float(x[:, j].min()) >= 25
    assert abs(float(x[:, j].mean()) - 45) < 0.5  # 25·(1 + E|z|) = 25·(1 + √(2/π)) ≈ 44.95
    assert abs(float(others.mean())) < 0.01 and abs(float(others.std()) - 1) < 0.01
    for features, seed in itertools.product((3, 4, 8, 16, 24, 32), range(10)):
        x = data.make_activations("outlier feature", 64, features, seed)
        j = data.outlier_feature(features)
        others = torch.cat([x[:, :j], x[:, j + 1 :]], dim=1)  # (B, H − 1)
        mu = x.mean(dim=1)  # (B,): LN's μ per sample
        assert bool((x[:, j] / features > mu / 2).all())  # more than half of every μ is the outlier's
        var, rest = x.var(dim=1, unbiased=False), others.var(dim=1, unbiased=False)  # (B,), (B,)
        assert bool((var > 10 * rest).all())  # every σ² at least 10 times what the other features give


def test_random_affine_is_seeded():
    g1, b1 = data.random_affine(10, seed=3)
    g2, b2 = data.random_affine(10, seed=3)
    assert torch.equal(g1, g2) and torch.equal(b1, b2) and g1.shape == (10,)


def test_bad_arguments():
    with pytest.raises(ValueError):
        data.make_activations("uniform", 2, 2, seed=0)
    with pytest.raises(ValueError):
        data.make_activations("standard normal", 0, 2, seed=0)
