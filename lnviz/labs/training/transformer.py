"""Pre-LN against Post-LN: where the LayerNorm sits in a residual stack changes its gradients.

Xiong et al. (2020), "On Layer Normalization in the Transformer Architecture",
report that at initialization the original Transformer (Post-LN, the norm
after each residual add) has large gradients near the output, while Pre-LN
(the norm before each sublayer, plus one final norm) keeps about the same
gradient norm in every layer. Per block, with x of shape
(B, T, d), tokens in the last dimension:

=========  ====================================================================
Post-LN    x ← LN(x + Attn(x));        x ← LN(x + FFN(x))
Pre-LN     x ← x + Attn(LN(x));        x ← x + FFN(LN(x));  at the end LN(x)
=========  ====================================================================

LN reduces over the d features of each token (lnviz.maths.norms.layer_norm). Both
stacks get the very same weights and input. :func:`grad_profile` reports, per
block, the norm of the loss gradient over all of the block's parameters.
Xiong et al.'s Theorem 1 bounds from above the gradient of the last layer's
second FFN matrix: O(d√(ln d)) for Post-LN, O(d√(ln d / L)) for Pre-LN, bounds
whose ratio grows like √L (not a prediction for the norms measured here). They hypothesize that large gradients are one reason Post-LN needs
warm-up; Liu et al. (2020) argue that unbalanced gradients are not the root
cause. In this small stack Post-LN's profile is flat up to about 6 blocks and
rises beyond; Pre-LN's falls towards the output (last/first 0.44 at 12 blocks,
0.24 at 32), the direction Shleifer et al. (2021) report during pretraining.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import plotly.graph_objects as go
import torch
import torch.nn.functional as F
from torch import Tensor

from lnviz.figures import plot, theme
from lnviz.maths import norms
from lnviz.maths.data import generator
from lnviz.maths.device import compute_dtype

WIDTH = 64  # d, features per token
HEADS = 4
TOKENS = 16  # T
SAMPLES = 8  # B
CLASSES = 32  # the readout's vocabulary


@dataclass(frozen=True)
class GradProfile:
    """Per block l = 1..depth, the gradient norm at initialization, for both placements.

    ``post[l - 1]`` and ``pre[l - 1]`` are ‖∂L/∂θ_l‖, the Euclidean norm of the
    loss gradient over all of block l's parameters θ_l (attention, feed-forward
    and LN weights), averaged over ``draws`` independent draws of weights and
    input; both placements see the very same draws.
    """

    depth: int
    seed: int
    draws: int
    post: tuple[float, ...]
    pre: tuple[float, ...]

    @staticmethod
    def spread(values: tuple[float, ...]) -> float:
        """Largest over smallest gradient norm across the blocks: 1 for a perfectly flat profile."""
        return max(values) / min(values)

    @staticmethod
    def rise(values: tuple[float, ...]) -> float:
        """Last block's gradient norm over the first's: > 1 when gradients grow towards the output."""
        return values[-1] / values[0]


def init_blocks(depth: int, g: torch.Generator) -> list[dict[str, Tensor]]:
    """Weights of ``depth`` blocks, float64 on the CPU, drawn from ``g``.

    Per block: Wq, Wk, Wv, Wo of shape (d, d), W1 (d, 4d) and W2 (4d, d),
    Xavier-uniform as in the Transformer; biases b1 (4d,), b2 (d,) at 0; each
    LN's γ1, γ2 at 1 and β1, β2 at 0, shape (d,). Activations multiply on the
    right: y = x W.
    """
    blocks = []
    for _ in range(depth):
        block = {}
        for name, shape in (
            ("wq", (WIDTH, WIDTH)),
            ("wk", (WIDTH, WIDTH)),
            ("wv", (WIDTH, WIDTH)),
            ("wo", (WIDTH, WIDTH)),
            ("w1", (WIDTH, 4 * WIDTH)),
            ("w2", (4 * WIDTH, WIDTH)),
        ):
            block[name] = torch.nn.init.xavier_uniform_(torch.empty(shape, dtype=torch.float64), generator=g)
        block["b1"] = torch.zeros(4 * WIDTH, dtype=torch.float64)
        block["b2"] = torch.zeros(WIDTH, dtype=torch.float64)
        for i in (1, 2):
            block[f"gamma{i}"] = torch.ones(WIDTH, dtype=torch.float64)
            block[f"beta{i}"] = torch.zeros(WIDTH, dtype=torch.float64)
        blocks.append(block)
    return blocks


def init_task(g: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
    """(x, readout, labels): tokens x ~ N(0, 1) of shape (B, T, d), a readout (d, V) ~ N(0, 1/d), labels (B, T).

    x has the unit scale of a Transformer's scaled embeddings; the readout
    gives logits of unit variance from a normalized x, as a tied embedding does.
    """
    x = torch.randn(SAMPLES, TOKENS, WIDTH, generator=g, dtype=torch.float64)  # (B, T, d)
    readout = torch.randn(WIDTH, CLASSES, generator=g, dtype=torch.float64) / math.sqrt(WIDTH)  # (d, V)
    labels = torch.randint(0, CLASSES, (SAMPLES, TOKENS), generator=g)  # (B, T)
    return x, readout, labels


def _attention(x: Tensor, p: dict[str, Tensor]) -> Tensor:
    """Multi-head self-attention, x (B, T, d) → (B, T, d), HEADS heads of d / HEADS."""
    b, t, d = x.shape

    def split(w: Tensor) -> Tensor:
        return (x @ w).view(b, t, HEADS, d // HEADS).transpose(1, 2)  # (B, heads, T, d/heads)

    q, k, v = split(p["wq"]), split(p["wk"]), split(p["wv"])
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // HEADS), dim=-1)  # (B, heads, T, T)
    return (weights @ v).transpose(1, 2).reshape(b, t, d) @ p["wo"]  # (B, T, d)


def _ffn(x: Tensor, p: dict[str, Tensor]) -> Tensor:
    """Position-wise feed-forward, x (B, T, d) → ReLU(x W1 + b1) W2 + b2, (B, T, d)."""
    return torch.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def forward(x: Tensor, blocks: list[dict[str, Tensor]], placement: str) -> Tensor:
    """The stack's output, x (B, T, d) → (B, T, d), with LN at ``placement`` "post" or "pre"."""
    if placement not in ("post", "pre"):
        raise ValueError(f"placement must be 'post' or 'pre', got {placement!r}")
    for p in blocks:
        if placement == "post":
            x = norms.layer_norm(x + _attention(x, p), p["gamma1"], p["beta1"]).y  # (B, T, d)
            x = norms.layer_norm(x + _ffn(x, p), p["gamma2"], p["beta2"]).y
        else:
            x = x + _attention(norms.layer_norm(x, p["gamma1"], p["beta1"]).y, p)  # (B, T, d)
            x = x + _ffn(norms.layer_norm(x, p["gamma2"], p["beta2"]).y, p)
    if placement == "pre":
        x = norms.layer_norm(x).y  # the final norm
    return x


def loss(x: Tensor, readout: Tensor, labels: Tensor, blocks: list[dict[str, Tensor]], placement: str) -> Tensor:
    """Cross-entropy of the stack's logits, forward(x) @ readout of shape (B, T, V), against ``labels`` (B, T)."""
    logits = forward(x, blocks, placement) @ readout  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def block_grad_norms(
    x: Tensor, readout: Tensor, labels: Tensor, blocks: list[dict[str, Tensor]], placement: str
) -> tuple[float, ...]:
    """‖∂L/∂θ_l‖ for each block l, over all its parameters, for the given weights (not changed)."""
    params = [{k: v.detach().clone().requires_grad_(True) for k, v in b.items()} for b in blocks]
    flat = [p for b in params for p in b.values()]
    grads = torch.autograd.grad(loss(x, readout, labels, params, placement), flat)
    per_block = len(flat) // len(params)
    return tuple(
        float(torch.sqrt(sum(gr.square().sum() for gr in grads[i : i + per_block])))
        for i in range(0, len(flat), per_block)
    )


def grad_profile(depth: int, seed: int = 0, device: torch.device | str = "cpu", draws: int = 4) -> GradProfile:
    """The gradient norm of each block at initialization, Post-LN and Pre-LN, computed live.

    Each draw takes fresh weights (:func:`init_blocks`, from ``seed``) and a
    fresh task (:func:`init_task`, from seed + 1): B = SAMPLES sequences of
    T = TOKENS tokens of width d, a readout to V = CLASSES classes and random
    labels, as a stand-in for a language model's loss. Both placements get the
    same draws; the norms are averaged over ``draws``. Float64 where the device
    has it.
    """
    if not (isinstance(depth, int) and depth >= 1):
        raise ValueError(f"depth must be a whole number >= 1, got {depth!r}")
    if not (isinstance(draws, int) and draws >= 1):
        raise ValueError(f"draws must be a whole number >= 1, got {draws!r}")
    device = torch.device(device)
    dtype = compute_dtype(device)
    g_weights, g_task = generator(seed), generator(seed + 1)
    sums = {"post": [0.0] * depth, "pre": [0.0] * depth}
    for _ in range(draws):
        blocks = [{k: v.to(device, dtype) for k, v in b.items()} for b in init_blocks(depth, g_weights)]
        x, readout, labels = init_task(g_task)
        x, readout, labels = x.to(device, dtype), readout.to(device, dtype), labels.to(device)
        for placement in ("post", "pre"):
            norms_l = block_grad_norms(x, readout, labels, blocks, placement)
            sums[placement] = [a + b for a, b in zip(sums[placement], norms_l, strict=True)]
    return GradProfile(
        depth=depth,
        seed=seed,
        draws=draws,
        post=tuple(v / draws for v in sums["post"]),
        pre=tuple(v / draws for v in sums["pre"]),
    )


# Placements of LN, not norms: series colours, never LN's blue or BN's vermillion. Each has its own dash
# and marker as well, for a reader who can't tell the colours apart.
PLACEMENT_STYLES = {
    "Post-LN": dict(color=theme.SERIES[0], dash=None, symbol="circle"),
    "Pre-LN": dict(color=theme.SERIES[1], dash="dash", symbol="square"),
}


def fig_grad_profile(profile: GradProfile) -> go.Figure:
    """‖∂L/∂θ_l‖ (y, log) against the block index l = 1..depth (x), one line per placement of LN.

    Each line's legend entry gives its last/first ratio; the y title, the
    number of draws the norms are averaged over.
    """
    layers = list(range(1, profile.depth + 1))
    traces = []
    for name, values in (("Post-LN", profile.post), ("Pre-LN", profile.pre)):
        style = PLACEMENT_STYLES[name]
        traces.append(
            plot.line(
                layers,
                list(values),
                f"{name} (last/first {GradProfile.rise(values):.2f}×)",
                style["color"],
                dash=style["dash"],
                markers=dict(size=7, symbol=style["symbol"]),
            )
        )
    layout = dict(
        # A figure title at the top of the figure, above the legend (an annotation can't be placed there).
        title=dict(
            text="Gradient norm per block at initialization",
            x=0.5,
            xanchor="center",
            y=1,
            yanchor="top",
            yref="container",
            pad=dict(t=6),
            font=dict(size=theme.TITLE_SIZE),
        ),
        xaxis=dict(title=dict(text="block l (1 = next to the input)")) | (dict(dtick=1) if profile.depth < 16 else {}),
        yaxis=dict(type="log", title=dict(text=f"‖∂L/∂θ<sub>l</sub>‖, mean of {profile.draws} draws")),
        legend=plot.legend_above(),
    )
    return plot.figure(traces, layout, margin=dict(l=70, r=20, t=80, b=50), height=380)
