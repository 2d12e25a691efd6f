"""Inside a transformer: what a pretrained BERT's LayerNorms receive, token by token.

Each of the encoder's 13 LayerNorms (:mod:`lnviz.labs.transformer.model`)
normalizes every token over its H = 384 features. For x: (S, T, H), S
sentences padded to T tokens,

.. math::

    y = \\gamma \\, \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta,
    \\qquad \\mu, \\sigma^2 \\text{ over the last dimension: } (S, T, 1)

with the biased variance and ε = 1e-12 inside the square root, as
``F.layer_norm``. BatchNorm over the same activations would reduce each
feature over the tokens instead: (1, 1, H), over every (sentence, token),
the padding's included unless it is masked.

:func:`run` tokenizes a batch and runs it once, recording each LayerNorm's
input and output with forward hooks; :func:`site` reads one LayerNorm's
numbers from that run. Inputs are capped (:data:`MAX_SENTENCES` sentences of
at most :data:`MAX_TOKENS` tokens each); :func:`sentences` says in one
sentence what it refuses.
"""

from __future__ import annotations

import statistics
import time
import unicodedata
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from lnviz.labs.transformer.model import SITES, Model

MAX_SENTENCES = 8
MAX_TOKENS = 64  # [CLS] and [SEP] included
MAX_CHARS = 2000  # the text box's limit; a link's longer text is cut to it, and the page says so
ALLOWED_CONTROLS = "\n\t"  # line breaks separate sentences; a tab is a space


@dataclass(frozen=True)
class Run:
    """One batch through the encoder: every LayerNorm's input and output, (S, T, H), on the CPU.

    ``tokens[s][t]`` is token t of sentence s as the tokenizer writes it
    (``[CLS]``, ``the``, ``##s``, ``[SEP]``, ``[PAD]``); ``mask`` (S, T) is
    True at real tokens. ``inputs`` and ``outputs`` are keyed by (layer, site),
    the embeddings' LayerNorm as (0, "embeddings"); ``weight``, ``bias`` (H,)
    are each module's own γ and β.
    """

    sentences: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]
    mask: Tensor  # (S, T) bool
    inputs: dict[tuple[int, str], Tensor]  # (S, T, H) each
    outputs: dict[tuple[int, str], Tensor]  # (S, T, H) each
    weight: dict[tuple[int, str], Tensor]  # (H,) each
    bias: dict[tuple[int, str], Tensor]  # (H,) each
    eps: float
    layers: int
    device: str
    dtype: str
    seconds: float  # the forward, tokenizing included


@dataclass(frozen=True)
class Site:
    """One LayerNorm of a run, with LN's statistics per token and BN's per feature.

    Shapes for S sentences of T tokens and H features: ``x``, ``x_hat``, ``y``
    (S, T, H); LN's ``ln_mean``, ``ln_std`` (S, T), over each token's H
    features; BN's over the tokens, per feature (H,): ``bn_mean``, ``bn_std``
    over the real tokens (padding masked out) and ``bn_mean_padded``,
    ``bn_std_padded`` over every (sentence, token), padding included.
    ``bn_y`` (S, T, H) is x normalized by the masked BN statistics with the
    module's γ and β. ``check`` is max |F.layer_norm(x) − module output|.
    """

    layer: int
    site: str
    x: Tensor
    x_hat: Tensor
    y: Tensor
    module_y: Tensor
    weight: Tensor
    bias: Tensor
    eps: float
    ln_mean: Tensor
    ln_std: Tensor
    bn_mean: Tensor
    bn_std: Tensor
    bn_mean_padded: Tensor
    bn_std_padded: Tensor
    bn_x_hat: Tensor
    bn_y: Tensor
    check: float
    largest: tuple[int, int, int, float]  # (sentence, token, feature, x) of the largest |x| at a real token
    widest: tuple[int, int, float]  # (sentence, token, σ) of the real token with the largest σ
    median_std: float  # the median of the real tokens' σ


def sentences(text: str) -> tuple[str, ...]:
    """The sentences of ``text``, one per non-empty line, or ValueError with one plain sentence saying why not.

    Refused: an empty box, more than :data:`MAX_SENTENCES` lines, text over
    :data:`MAX_CHARS` characters, and control or invisible format characters
    (such as U+0000 or a right-to-left override), which the tokenizer would
    drop or which would make the shown tokens lie about the text.
    """
    if len(text) > MAX_CHARS:
        raise ValueError(f"The text has {len(text):,} characters; at most {MAX_CHARS:,} are taken.")
    for ch in text:
        if ch not in ALLOWED_CONTROLS and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise ValueError(
                f"The text holds a control or invisible character (U+{ord(ch):04X}); type plain text, "
                "one sentence per line."
            )
    lines = tuple(line.replace("\t", " ").strip() for line in text.splitlines())
    lines = tuple(line for line in lines if line)
    if not lines:
        raise ValueError("The box is empty: type a sentence, or pick an example.")
    if len(lines) > MAX_SENTENCES:
        raise ValueError(f"The text has {len(lines)} lines; at most {MAX_SENTENCES} sentences, one per line.")
    return lines


def tokenize(model: Model, batch: tuple[str, ...]) -> tuple[Tensor, Tensor, tuple[tuple[str, ...], ...]]:
    """ids and attention mask (S, T), padded to the longest sentence, and the tokens as text.

    ValueError if a sentence has more than :data:`MAX_TOKENS` tokens.
    """
    encoded = model.tokenizer.encode_batch(list(batch))
    for number, enc in enumerate(encoded, start=1):
        length = sum(enc.attention_mask)
        if length > MAX_TOKENS:
            raise ValueError(
                f"Sentence {number} has {length} tokens ([CLS] and [SEP] included); at most {MAX_TOKENS} are taken."
            )
    ids = torch.tensor([enc.ids for enc in encoded], dtype=torch.long)  # (S, T)
    mask = torch.tensor([enc.attention_mask for enc in encoded], dtype=torch.long)  # (S, T)
    return ids, mask, tuple(tuple(enc.tokens) for enc in encoded)


def run(model: Model, text: str, device: torch.device, dtype: torch.dtype = torch.float32) -> Run:
    """Tokenize ``text`` (:func:`sentences`), run the batch once on ``device``, and record every LayerNorm."""
    batch = sentences(text)
    start = time.perf_counter()
    ids, mask, tokens = tokenize(model, batch)
    seen, modules = model.forward(ids, mask, device, dtype)
    seconds = time.perf_counter() - start
    return Run(
        sentences=batch,
        tokens=tokens,
        mask=mask.bool(),
        inputs={k: x for k, (x, _) in seen.items()},
        outputs={k: y for k, (_, y) in seen.items()},
        weight={k: m.weight.detach().to("cpu", dtype).clone() for k, m in modules.items()},
        bias={k: m.bias.detach().to("cpu", dtype).clone() for k, m in modules.items()},
        eps=model.eps,
        layers=model.layers,
        device=str(device),
        dtype=str(dtype).removeprefix("torch."),
        seconds=seconds,
    )


def key(layer: int, site_name: str) -> tuple[int, str]:
    """The (layer, site) key of a LayerNorm: the embeddings' is one, whatever the layer."""
    if site_name not in SITES:
        raise ValueError(f"site must be one of {', '.join(SITES)}")
    return (0, site_name) if site_name == "embeddings" else (layer, site_name)


def site(result: Run, layer: int, site_name: str) -> Site:
    """LayerNorm ``site_name`` of ``layer`` in ``result``: LN's numbers per token, BN's per feature (see :class:`Site`)."""
    where = key(layer, site_name)
    x, module_y = result.inputs[where], result.outputs[where]  # (S, T, H) each
    weight, bias, eps = result.weight[where], result.bias[where], result.eps  # (H,), (H,)
    hidden = x.shape[-1]
    y = F.layer_norm(x, (hidden,), weight, bias, eps)  # (S, T, H): torch's LN of the recorded input
    mean = x.mean(dim=-1, keepdim=True)  # (S, T, 1): one μ per token
    var = x.var(dim=-1, unbiased=False, keepdim=True)  # (S, T, 1)
    x_hat = (x - mean) / torch.sqrt(var + eps)  # (S, T, H)
    real = result.mask.unsqueeze(-1).to(x.dtype)  # (S, T, 1)
    count = real.sum()
    bn_mean = (x * real).sum(dim=(0, 1)) / count  # (H,): over real tokens only
    bn_var = (((x - bn_mean) ** 2) * real).sum(dim=(0, 1)) / count  # (H,), biased
    bn_mean_padded = x.mean(dim=(0, 1))  # (H,): every (sentence, token), padding included
    bn_var_padded = x.var(dim=(0, 1), unbiased=False)  # (H,)
    bn_x_hat = (x - bn_mean) / torch.sqrt(bn_var + eps)  # (S, T, H)
    ln_std = var.squeeze(-1).sqrt()  # (S, T)
    flat = x.abs().masked_fill(~result.mask.unsqueeze(-1), -1.0)  # (S, T, H): padding never the largest
    s, t, j = (int(i) for i in torch.unravel_index(flat.argmax(), flat.shape))
    stds = ln_std.masked_fill(~result.mask, -1.0)  # (S, T)
    ws, wt = (int(i) for i in torch.unravel_index(stds.argmax(), stds.shape))
    return Site(
        layer=where[0],
        site=site_name,
        x=x,
        x_hat=x_hat,
        y=y,
        module_y=module_y,
        weight=weight,
        bias=bias,
        eps=eps,
        ln_mean=mean.squeeze(-1),
        ln_std=ln_std,
        bn_mean=bn_mean,
        bn_std=bn_var.sqrt(),
        bn_mean_padded=bn_mean_padded,
        bn_std_padded=bn_var_padded.sqrt(),
        bn_x_hat=bn_x_hat,
        bn_y=bn_x_hat * weight + bias,
        check=float((y - module_y).abs().max()),
        largest=(s, t, j, float(x[s, t, j])),
        widest=(ws, wt, float(ln_std[ws, wt])),
        median_std=statistics.median(ln_std[result.mask].tolist()),
    )


def window(values: Tensor, start: int, width: int, by_size: bool) -> Tensor:
    """The features a window of ``width`` shows, (width,) indices into H: from ``start`` on, or, ``by_size``,
    the features sorted by their largest |x| over the tokens (``values``: (S, T, H)), from the ``start``-th largest."""
    hidden = values.shape[-1]
    width = min(width, hidden)
    start = max(0, min(start, hidden - width))
    if not by_size:
        return torch.arange(start, start + width)
    order = values.abs().amax(dim=(0, 1)).argsort(descending=True)  # (H,): largest first
    return order[start : start + width]


def embeddings(result: Run) -> Tensor:
    """Sentence embeddings as sentence-transformers makes them for this model: (S, H), each of length 1.

    The last LayerNorm's output (the encoder's last hidden state) averaged over
    each sentence's real tokens, then L2-normalized.
    """
    last = result.outputs[(result.layers - 1, "ffn")]  # (S, T, H)
    real = result.mask.unsqueeze(-1).to(last.dtype)  # (S, T, 1)
    pooled = (last * real).sum(dim=1) / real.sum(dim=1)  # (S, H)
    return F.normalize(pooled, dim=1)
