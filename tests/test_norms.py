"""lnviz.maths.norms against torch.nn.functional, in float64, on random seeded shapes."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from lnviz.maths.data import generator
from lnviz.maths.norms import batch_norm, group_norm, instance_norm, layer_norm, rms_norm

SHAPES = [(2, 2), (3, 7), (16, 32), (5, 1024), (64, 3), (1, 9)]


def rand(*shape, seed=0, scale=3.0, loc=1.5):
    g = generator(seed)
    return loc + scale * torch.randn(*shape, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("eps", [0.0, 1e-12, 1e-5, 0.3])
def test_layer_norm_matches_torch(shape, eps):
    x = rand(*shape, seed=sum(shape))
    w, b = rand(shape[1], seed=1), rand(shape[1], seed=2)
    got = layer_norm(x, w, b, eps)
    want = F.layer_norm(x, (shape[1],), w, b, eps)
    torch.testing.assert_close(got.y, want, rtol=0, atol=1e-10)
    assert got.mean.shape == (shape[0], 1) and got.var.shape == (shape[0], 1)


@pytest.mark.parametrize("shape", [s for s in SHAPES if s[0] > 1])
@pytest.mark.parametrize("eps", [1e-12, 1e-5, 0.3])
def test_batch_norm_matches_torch(shape, eps):
    x = rand(*shape, seed=3 + sum(shape))
    w, b = rand(shape[1], seed=4), rand(shape[1], seed=5)
    got = batch_norm(x, w, b, eps, training=True)
    want = F.batch_norm(x, None, None, w, b, training=True, eps=eps)
    torch.testing.assert_close(got.y, want, rtol=0, atol=1e-10)
    assert got.mean.shape == (1, shape[1]) and got.var.shape == (1, shape[1])


def test_batch_norm_with_zero_eps_is_the_formula_torch_refuses_to_run():
    # F.batch_norm raises for eps <= 0 in training; lnviz computes the formula itself,
    # which is F.batch_norm's limit as eps -> 0.
    x = rand(6, 5, seed=21)
    with pytest.raises(ValueError, match="eps must be positive"):
        F.batch_norm(x, None, None, training=True, eps=0.0)
    got = batch_norm(x, eps=0.0).y
    limit = F.batch_norm(x, None, None, training=True, eps=1e-300)
    torch.testing.assert_close(got, limit, rtol=0, atol=1e-10)
    torch.testing.assert_close(got, (x - x.mean(0)) / x.std(0, unbiased=False), rtol=0, atol=1e-10)


def test_statistics_are_biased_moments_over_the_right_axis():
    x = rand(6, 10, seed=11)
    ln, bn = layer_norm(x), batch_norm(x)
    torch.testing.assert_close(ln.mean, x.mean(dim=1, keepdim=True), rtol=0, atol=1e-12)
    torch.testing.assert_close(ln.var, torch.var(x, dim=1, unbiased=False, keepdim=True), rtol=0, atol=1e-12)
    torch.testing.assert_close(bn.mean, x.mean(dim=0, keepdim=True), rtol=0, atol=1e-12)
    torch.testing.assert_close(bn.var, torch.var(x, dim=0, unbiased=False, keepdim=True), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_normalized_axis_has_mean_zero_variance_one(seed):
    g = generator(seed)
    b, h = int(torch.randint(2, 50, (1,), generator=g)), int(torch.randint(2, 50, (1,), generator=g))
    x = rand(b, h, seed=seed)
    ln, bn = layer_norm(x, eps=0.0), batch_norm(x, eps=0.0)
    torch.testing.assert_close(ln.y.mean(dim=1), torch.zeros(b, dtype=x.dtype), rtol=0, atol=1e-10)
    torch.testing.assert_close(ln.y.var(dim=1, unbiased=False), torch.ones(b, dtype=x.dtype), rtol=0, atol=1e-10)
    torch.testing.assert_close(bn.y.mean(dim=0), torch.zeros(h, dtype=x.dtype), rtol=0, atol=1e-10)
    torch.testing.assert_close(bn.y.var(dim=0, unbiased=False), torch.ones(h, dtype=x.dtype), rtol=0, atol=1e-10)


def test_scalar_gain_and_bias_give_mean_beta_and_variance_gamma_squared():
    x = rand(8, 12, seed=7)
    ln = layer_norm(x, 2.5, -0.75, eps=0.0)
    torch.testing.assert_close(ln.y.mean(dim=1), torch.full((8,), -0.75, dtype=x.dtype), rtol=0, atol=1e-10)
    torch.testing.assert_close(
        ln.y.var(dim=1, unbiased=False), torch.full((8,), 6.25, dtype=x.dtype), rtol=0, atol=1e-9
    )
    want = F.layer_norm(x, (12,), torch.full((12,), 2.5, dtype=x.dtype), torch.full((12,), -0.75, dtype=x.dtype), 0.0)
    torch.testing.assert_close(ln.y, want, rtol=0, atol=1e-10)


def test_intermediates_compose_to_y():
    x = rand(5, 9, seed=8)
    w, b = rand(9, seed=9), rand(9, seed=10)
    for r in (layer_norm(x, w, b, 1e-3), batch_norm(x, w, b, 1e-3)):
        torch.testing.assert_close(r.x_hat, (x - r.mean) / torch.sqrt(r.var + 1e-3), rtol=0, atol=1e-12)
        torch.testing.assert_close(r.y, r.weight * r.x_hat + r.bias, rtol=0, atol=1e-12)


def test_batch_norm_single_sample_raises_like_torch():
    x = rand(1, 5)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        batch_norm(x)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(x, None, None, training=True)


def test_batch_norm_eval_uses_running_statistics():
    x = rand(4, 6, seed=12)
    rm, rv = rand(6, seed=13), rand(6, seed=14, loc=5.0, scale=1.0).abs()
    got = batch_norm(x, eps=1e-5, training=False, running_mean=rm, running_var=rv)
    want = F.batch_norm(x, rm, rv, training=False, eps=1e-5)
    torch.testing.assert_close(got.y, want, rtol=0, atol=1e-10)


def test_ln_with_zero_variance_row_and_zero_eps_is_nan_like_torch():
    x = rand(3, 4, seed=15)
    x[1] = 2.0
    got = layer_norm(x, eps=0.0)
    want = F.layer_norm(x, (4,), eps=0.0)
    assert torch.isnan(got.y[1]).all() and torch.isnan(want[1]).all()
    torch.testing.assert_close(got.y[[0, 2]], want[[0, 2]], rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "call",
    [
        lambda: layer_norm(torch.zeros(5, dtype=torch.float64)),
        lambda: batch_norm(torch.zeros(5, dtype=torch.float64)),
        lambda: layer_norm(torch.zeros(3, 4, dtype=torch.float64), weight=torch.ones(5, dtype=torch.float64)),
        lambda: batch_norm(torch.zeros(3, 4, dtype=torch.float64), bias=torch.ones(3, dtype=torch.float64)),
        lambda: layer_norm(torch.zeros(0, 4, dtype=torch.float64)),
        lambda: layer_norm(torch.zeros(3, 4, dtype=torch.int64)),
        lambda: layer_norm(torch.zeros(3, 4, dtype=torch.float64), eps=-1.0),
        lambda: layer_norm(torch.zeros(3, 4, dtype=torch.float64), eps=float("nan")),
        lambda: batch_norm(torch.zeros(3, 4, dtype=torch.float64), training=False),
    ],
)
def test_invalid_inputs_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_apply_affine_matches_torch_and_checks_sizes():
    from lnviz.maths.norms import apply_affine

    x = rand(5, 6, seed=30)
    w, b = rand(6, seed=31), rand(6, seed=32)
    got = apply_affine(layer_norm(x, eps=1e-5), w, b)
    torch.testing.assert_close(got.y, F.layer_norm(x, (6,), w, b, 1e-5), rtol=0, atol=1e-10)
    got = apply_affine(batch_norm(x, eps=1e-5), 2.0, -1.0)
    want = F.batch_norm(
        x, None, None, torch.full((6,), 2.0, dtype=x.dtype), torch.full((6,), -1.0, dtype=x.dtype), True, 0.0, 1e-5
    )
    torch.testing.assert_close(got.y, want, rtol=0, atol=1e-10)
    with pytest.raises(ValueError):
        apply_affine(layer_norm(x), torch.ones(5, dtype=x.dtype))


def test_learnable_unit_gain_and_zero_bias_get_gradients():
    # γ = 1 and β = 0 are the usual initial values of learnable parameters: they must stay in the graph.
    x = torch.randn(4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    weight = torch.ones(6, dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(6, dtype=torch.float64, requires_grad=True)
    ours = layer_norm(x, weight, bias).y
    g_w, g_b = torch.autograd.grad(ours.square().sum(), (weight, bias))
    ref_w, ref_b = torch.autograd.grad(F.layer_norm(x, (6,), weight, bias).square().sum(), (weight, bias))
    torch.testing.assert_close(g_w, ref_w, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(g_b, ref_b, rtol=1e-10, atol=1e-12)


# On (N, C, *) tensors, with per-channel γ and β: every norm of the family against torch.
FAMILY_EPS = 1e-5
FAMILY_TOL = dict(atol=1e-10, rtol=1e-10)
FAMILY = settings(max_examples=20, deadline=None, derandomize=True)


def draw(g: torch.Generator, lo: int, hi: int) -> int:
    return int(torch.randint(lo, hi + 1, (1,), generator=g))


def random_input(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x of a random seeded shape (N, C, *) with one or two spatial dims, and random per-channel γ, β."""
    g = generator(seed)
    spatial = [draw(g, 2, 5) for _ in range(draw(g, 1, 2))]
    shape = (draw(g, 1, 4), draw(g, 1, 8), *spatial)
    x = 2.0 * torch.randn(*shape, generator=g, dtype=torch.float64) + torch.randn(1, generator=g, dtype=torch.float64)
    gamma = 1.0 + 0.5 * torch.randn(shape[1], generator=g, dtype=torch.float64)
    beta = 0.5 * torch.randn(shape[1], generator=g, dtype=torch.float64)
    return x, gamma, beta


@FAMILY
@given(seed=st.integers(0, 2**31 - 1))
def test_batch_norm_on_feature_maps_matches_torch(seed):
    x, gamma, beta = random_input(seed)
    out = batch_norm(x, gamma, beta, eps=FAMILY_EPS)
    running_mean = torch.zeros(x.shape[1], dtype=x.dtype)
    running_var = torch.zeros(x.shape[1], dtype=x.dtype)
    y = F.batch_norm(x, running_mean, running_var, gamma, beta, training=True, momentum=1.0, eps=FAMILY_EPS)
    torch.testing.assert_close(out.y, y, **FAMILY_TOL)
    m = out.count
    assert m == x.numel() // x.shape[1]
    torch.testing.assert_close(out.mean.flatten(), running_mean, **FAMILY_TOL)
    torch.testing.assert_close(out.var.flatten(), running_var * (m - 1) / m, **FAMILY_TOL)


@FAMILY
@given(seed=st.integers(0, 2**31 - 1))
def test_layer_norm_over_channels_and_positions_matches_torch(seed):
    x, _, _ = random_input(seed)
    ndim = x.dim() - 1  # everything but the sample: (C, *)
    g = generator(seed + 1)
    gamma = torch.randn(*x.shape[1:], generator=g, dtype=torch.float64)
    beta = torch.randn(*x.shape[1:], generator=g, dtype=torch.float64)
    out = layer_norm(x, gamma, beta, eps=FAMILY_EPS, normalized_ndim=ndim)
    torch.testing.assert_close(out.y, F.layer_norm(x, x.shape[1:], gamma, beta, eps=FAMILY_EPS), **FAMILY_TOL)
    assert out.count == x[0].numel()
    var, mean = torch.var_mean(x.flatten(1), dim=1, unbiased=False)
    torch.testing.assert_close(out.mean.flatten(), mean, **FAMILY_TOL)
    torch.testing.assert_close(out.var.flatten(), var, **FAMILY_TOL)


@FAMILY
@given(seed=st.integers(0, 2**31 - 1))
def test_instance_norm_matches_torch(seed):
    x, gamma, beta = random_input(seed)
    out = instance_norm(x, gamma, beta, eps=FAMILY_EPS)
    torch.testing.assert_close(out.y, F.instance_norm(x, weight=gamma, bias=beta, eps=FAMILY_EPS), **FAMILY_TOL)
    assert out.count == x[0, 0].numel()
    var, mean = torch.var_mean(x.flatten(2), dim=2, unbiased=False)  # (N, C)
    torch.testing.assert_close(out.mean.flatten(2).squeeze(2), mean, **FAMILY_TOL)
    torch.testing.assert_close(out.var.flatten(2).squeeze(2), var, **FAMILY_TOL)


@FAMILY
@given(seed=st.integers(0, 2**31 - 1))
def test_group_norm_matches_torch_for_every_valid_group_count(seed):
    x, gamma, beta = random_input(seed)
    n, c = x.shape[:2]
    for groups in [g for g in range(1, c + 1) if c % g == 0]:
        out = group_norm(x, groups, gamma, beta, eps=FAMILY_EPS)
        torch.testing.assert_close(out.y, F.group_norm(x, groups, gamma, beta, eps=FAMILY_EPS), **FAMILY_TOL)
        assert out.count == x[0].numel() // groups
        var, mean = torch.var_mean(x.reshape(n, groups, -1), dim=2, unbiased=False)  # (N, G)
        per_channel = c // groups
        torch.testing.assert_close(out.mean.flatten(1)[:, ::per_channel], mean, **FAMILY_TOL)
        torch.testing.assert_close(out.var.flatten(1)[:, ::per_channel], var, **FAMILY_TOL)
    if c > 1:
        with pytest.raises(ValueError):
            group_norm(x, c + 1)


@FAMILY
@given(seed=st.integers(0, 2**31 - 1))
def test_rms_norm_matches_torch(seed):
    x, _, _ = random_input(seed)
    g = generator(seed + 2)
    for ndim in range(1, x.dim()):
        shape = x.shape[-ndim:]
        gamma = torch.randn(*shape, generator=g, dtype=torch.float64)
        out = rms_norm(x, gamma, eps=FAMILY_EPS, normalized_ndim=ndim)
        torch.testing.assert_close(out.y, F.rms_norm(x, shape, gamma, eps=FAMILY_EPS), **FAMILY_TOL)
        assert (out.mean == 0).all()
        dims = tuple(range(x.dim() - ndim, x.dim()))
        torch.testing.assert_close(out.var, x.square().mean(dim=dims, keepdim=True), **FAMILY_TOL)
