"""Pre-LN and Post-LN stacks against torch.nn.TransformerEncoderLayer, and Xiong et al.'s gradient claims."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from figcheck import assert_plotly_valid
from torch import nn

from lnviz.figures import theme
from lnviz.labs.training import transformer
from lnviz.maths.data import generator
from lnviz.views import pages, state

D = transformer.WIDTH


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Small matrices: a second OpenMP thread only waits for a shared, busy core."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _torch_stack(blocks, norm_first: bool) -> list[nn.TransformerEncoderLayer]:
    """PyTorch's own encoder layers holding the same weights (PyTorch multiplies on the left: y = x Wᵀ)."""
    layers = []
    for p in blocks:
        layer = nn.TransformerEncoderLayer(
            D, transformer.HEADS, 4 * D, dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64
        )
        with torch.no_grad():
            layer.self_attn.in_proj_weight.copy_(torch.cat([p["wq"].T, p["wk"].T, p["wv"].T]))
            layer.self_attn.in_proj_bias.zero_()
            layer.self_attn.out_proj.weight.copy_(p["wo"].T)
            layer.self_attn.out_proj.bias.zero_()
            layer.linear1.weight.copy_(p["w1"].T)
            layer.linear1.bias.copy_(p["b1"])
            layer.linear2.weight.copy_(p["w2"].T)
            layer.linear2.bias.copy_(p["b2"])
            for i, norm in ((1, layer.norm1), (2, layer.norm2)):
                norm.weight.copy_(p[f"gamma{i}"])
                norm.bias.copy_(p[f"beta{i}"])
        layers.append(layer)
    return layers


@pytest.mark.parametrize(("placement", "depth", "seed"), [("post", 3, 0), ("pre", 3, 1), ("post", 1, 2), ("pre", 2, 3)])
def test_stack_and_its_gradients_match_torch_encoder_layers(placement, depth, seed):
    g = generator(seed)
    blocks = transformer.init_blocks(depth, g)
    with torch.no_grad():  # non-trivial γ, β and biases, so that every parameter is checked
        for p in blocks:
            for name in ("b1", "b2", "beta1", "beta2"):
                p[name].normal_(0, 0.3, generator=g)
            for name in ("gamma1", "gamma2"):
                p[name].uniform_(0.5, 1.5, generator=g)
    x, readout, labels = transformer.init_task(g)
    layers = _torch_stack(blocks, norm_first=placement == "pre")

    h = x
    for layer in layers:
        h = layer(h)
    if placement == "pre":
        h = F.layer_norm(h, (D,))
    torch.testing.assert_close(transformer.forward(x, blocks, placement), h, rtol=0, atol=1e-10)

    loss_ref = F.cross_entropy((h @ readout).reshape(-1, transformer.CLASSES), labels.reshape(-1))
    params = [{k: v.clone().requires_grad_(True) for k, v in b.items()} for b in blocks]
    ours = transformer.loss(x, readout, labels, params, placement)
    torch.testing.assert_close(ours, loss_ref, rtol=0, atol=1e-10)
    ours.backward()
    loss_ref.backward()
    for p, layer in zip(params, layers, strict=True):
        wq, wk, wv = layer.self_attn.in_proj_weight.grad.split(D)
        pairs = {
            "wq": wq.T,
            "wk": wk.T,
            "wv": wv.T,
            "wo": layer.self_attn.out_proj.weight.grad.T,
            "w1": layer.linear1.weight.grad.T,
            "w2": layer.linear2.weight.grad.T,
            "b1": layer.linear1.bias.grad,
            "b2": layer.linear2.bias.grad,
            "gamma1": layer.norm1.weight.grad,
            "beta1": layer.norm1.bias.grad,
            "gamma2": layer.norm2.weight.grad,
            "beta2": layer.norm2.bias.grad,
        }
        for name, expected in pairs.items():
            torch.testing.assert_close(p[name].grad, expected, rtol=0, atol=1e-10, msg=name)
    norms_l = transformer.block_grad_norms(x, readout, labels, blocks, placement)
    expected_norms = [math.sqrt(sum(float(v.grad.square().sum()) for v in p.values())) for p in params]
    assert norms_l == pytest.approx(expected_norms, rel=1e-12)


def test_profile_is_seeded_shared_by_both_placements_and_leaves_the_global_rng_alone():
    before = torch.get_rng_state()
    a = transformer.grad_profile(4, seed=5, draws=2)
    b = transformer.grad_profile(4, seed=5, draws=2)
    c = transformer.grad_profile(4, seed=6, draws=2)
    assert torch.equal(torch.get_rng_state(), before)
    assert a == b and a.post != c.post
    assert len(a.post) == len(a.pre) == 4 and all(v > 0 for v in a.post + a.pre)
    # one draw of one block: the norms are those of the weights and task the seed gives
    one = transformer.grad_profile(1, seed=5, draws=1)
    g = generator(5)
    blocks = transformer.init_blocks(1, g)
    x, readout, labels = transformer.init_task(generator(6))
    assert one.post == transformer.block_grad_norms(x, readout, labels, blocks, "post")
    assert one.pre == transformer.block_grad_norms(x, readout, labels, blocks, "pre")


@pytest.mark.parametrize("seed", [0, 1])
def test_last_block_gradient_is_about_sqrt_depth_larger_for_post_ln(seed):
    """Xiong et al. (2020), Theorem 1: ‖∂L/∂θ_L‖ is O(1) for Post-LN and O(1/√L) for Pre-LN."""
    ratios = {}
    for depth in (3, 12):
        p = transformer.grad_profile(depth, seed=seed)
        ratios[depth] = p.post[-1] / p.pre[-1]
        assert 0.6 < ratios[depth] / math.sqrt(depth) < 1.6, (depth, ratios[depth])
    assert ratios[12] > 1.6 * ratios[3]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_post_ln_gradients_grow_towards_the_output_and_pre_ln_ones_do_not(seed):
    p = transformer.grad_profile(12, seed=seed)
    assert transformer.GradProfile.rise(p.post) > 1.3
    assert transformer.GradProfile.rise(p.pre) < 1.0
    assert min(p.post[6:]) > max(p.pre[6:])  # the upper half: Post-LN's gradients are the large ones


def test_bad_depth_and_placement_are_refused():
    with pytest.raises(ValueError, match="depth"):
        transformer.grad_profile(0)
    with pytest.raises(ValueError, match="draws"):
        transformer.grad_profile(2, draws=0)
    x, _, _ = transformer.init_task(generator(0))
    with pytest.raises(ValueError, match="placement"):
        transformer.forward(x, transformer.init_blocks(1, generator(0)), "middle")


def test_fig_grad_profile_plots_both_placements_per_block():
    p = transformer.grad_profile(5, seed=0, draws=1)
    fig = transformer.fig_grad_profile(p)
    post, pre = fig.data
    assert list(post.x) == list(pre.x) == [1, 2, 3, 4, 5]
    assert list(post.y) == list(p.post) and list(pre.y) == list(p.pre)
    assert post.name.startswith("Post-LN") and pre.name.startswith("Pre-LN")
    assert (post.line.color, pre.line.color) == theme.SERIES[:2]  # placements, not norms: never LN's or BN's colour
    assert f"{transformer.GradProfile.rise(p.post):.2f}" in post.name
    assert fig.layout.yaxis.type == "log"


@pytest.mark.parametrize(("depth", "draws"), [(1, 1), (5, 1), (20, 1)])  # one block; a few; past the whole-number ticks
def test_fig_grad_profile_passes_plotly_validation(depth, draws):
    assert_plotly_valid(transformer.fig_grad_profile(transformer.grad_profile(depth, seed=0, draws=draws)))


def test_depth_param():
    assert pages.TRAINING.depth is state.DEPTH
    assert state.DEPTH.key == "depth" and state.DEPTH.default == 12 and state.DEPTH.lo == 1
