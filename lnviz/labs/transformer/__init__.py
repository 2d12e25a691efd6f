"""Inside a transformer: what the LayerNorms of a small BERT-architecture encoder receive, token by token.

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
numbers from that run. Inputs are cut, and the run says what was cut
(``Run.cuts``): the first :data:`MAX_SENTENCES` sentences are kept, and of
each its first :data:`MAX_TOKENS` tokens. :func:`sentences` refuses in one
plain sentence only a text it cannot read: empty, or with control characters.
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
SPECIAL = ("[CLS]", "[SEP]")  # the tokens the tokenizer adds to every sentence, first and last
# |γ| and |β| both under this: the feature is switched off, its output 0 for every token. The model's last
# LayerNorm has three such features (γ, β about 1e-32 at 127 and 223, 1e-9 and 1e-7 at 319); the rest are over 0.2.
OFF = 1e-6


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
    cuts: tuple[str, ...] = ()  # what of the text was left out, one plain sentence each


@dataclass(frozen=True)
class Site:
    """One LayerNorm of a run, with LN's statistics per token and BN's per feature.

    Shapes for S sentences of T tokens and H features: ``x``, ``x_hat``, ``y``
    (S, T, H), ``x`` and ``y`` what the module received and gave back; LN's ``ln_mean``, ``ln_std`` (S, T), over each token's H
    features; BN's over the tokens, per feature (H,): ``bn_mean``, ``bn_std``
    over the real tokens (padding masked out) and ``bn_mean_padded``,
    ``bn_std_padded`` over every (sentence, token), padding included: BN in
    training mode, on this batch's own statistics. ``bn_y`` (S, T, H) is x
    normalized by the masked BN statistics with the module's γ and β.
    ``check`` is max |y − LN's formula|, the formula computed
    here in float64 from the recorded input (:func:`formula`), not by the
    functional the module calls. ``off`` are the features whose γ and β are
    both under :data:`OFF` in size: the module's output is 0 there.
    """

    layer: int
    site: str
    x: Tensor
    x_hat: Tensor
    y: Tensor
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
    off: tuple[int, ...]
    largest: tuple[int, int, int, float]  # (sentence, token, feature, x) of the largest |x| at a real token
    widest: tuple[int, int, float]  # (sentence, token, σ) of the real token with the largest σ
    median_std: float  # the median of the real tokens' σ


def sentences(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sentences of ``text``, one per non-empty line, and what was cut, one plain sentence each.

    Kept: the first :data:`MAX_CHARS` characters, then the first
    :data:`MAX_SENTENCES` lines. Refused, with ValueError and one plain
    sentence: an empty box, and control or invisible format characters (such
    as U+0000 or a right-to-left override), which the tokenizer would drop or
    which would make the shown tokens lie about the text.
    """
    cuts = []
    if len(text) > MAX_CHARS:
        cuts.append(f"Kept the first {MAX_CHARS:,} of the text's {len(text):,} characters.")
        text = text[:MAX_CHARS]
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
        cuts.append(f"Kept the first {MAX_SENTENCES} of the {len(lines)} sentences (one per line).")
        lines = lines[:MAX_SENTENCES]
    return lines, tuple(cuts)


def tokenize(
    model: Model, batch: tuple[str, ...]
) -> tuple[Tensor, Tensor, tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """ids and attention mask (S, T), padded to the longest sentence, the tokens as text, and what was cut.

    A sentence of more than :data:`MAX_TOKENS` tokens is cut as a tokenizer's
    truncation cuts it: [CLS], its first MAX_TOKENS − 2 pieces, and [SEP].
    """
    encoded = model.tokenizer.encode_batch(list(batch))
    pad_id = model.tokenizer.token_to_id("[PAD]") or 0
    rows, cuts = [], []
    for number, enc in enumerate(encoded, start=1):
        length = sum(enc.attention_mask)  # padding is on the right: the real tokens come first
        ids, tokens = list(enc.ids[:length]), list(enc.tokens[:length])
        if length > MAX_TOKENS:  # keep the closing [SEP], as truncation does
            ids, tokens = ids[: MAX_TOKENS - 1] + ids[-1:], tokens[: MAX_TOKENS - 1] + tokens[-1:]
            which = f"sentence {number}" if len(batch) > 1 else "the sentence"
            cuts.append(
                f"Kept the first {MAX_TOKENS} tokens of {which} (of {length}): [CLS], the first "
                f"{MAX_TOKENS - 2} pieces of its text, and [SEP]."
            )
        rows.append((ids, tokens))
    steps = max(len(ids) for ids, _ in rows)
    ids = torch.tensor([i + [pad_id] * (steps - len(i)) for i, _ in rows], dtype=torch.long)  # (S, T)
    mask = torch.tensor([[1] * len(i) + [0] * (steps - len(i)) for i, _ in rows], dtype=torch.long)  # (S, T)
    tokens = tuple(tuple(t + ["[PAD]"] * (steps - len(t))) for _, t in rows)
    return ids, mask, tokens, tuple(cuts)


def run(model: Model, text: str, device: torch.device, dtype: torch.dtype = torch.float32) -> Run:
    """Tokenize ``text`` (:func:`sentences`, :func:`tokenize`), run the batch once on ``device``, and record every
    LayerNorm."""
    batch, cut_lines = sentences(text)
    start = time.perf_counter()
    ids, mask, tokens, cut_tokens = tokenize(model, batch)
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
        cuts=cut_lines + cut_tokens,
    )


def key(layer: int, site_name: str) -> tuple[int, str]:
    """The (layer, site) key of a LayerNorm: the embeddings' is one, whatever the layer."""
    if site_name not in SITES:
        raise ValueError(f"site must be one of {', '.join(SITES)}")
    return (0, site_name) if site_name == "embeddings" else (layer, site_name)


def formula(x: Tensor, weight: Tensor, bias: Tensor, eps: float) -> Tensor:
    """LN's formula, written out in float64: y = γ (x − μ)/√(σ² + ε) + β, μ and σ² over the last dimension.

    x: (..., H); weight, bias: (H,). σ² is the biased variance and ε sits inside the root, as PyTorch's; no
    torch normalization function is called, so that the badge checks the module against the maths.
    """
    x, weight, bias = x.double(), weight.double(), bias.double()
    mean = x.sum(dim=-1, keepdim=True) / x.shape[-1]  # (..., 1): one μ per token
    var = ((x - mean) ** 2).sum(dim=-1, keepdim=True) / x.shape[-1]  # (..., 1): divided by H, not H − 1
    return weight * (x - mean) / torch.sqrt(var + eps) + bias  # (..., H)


def site(result: Run, layer: int, site_name: str) -> Site:
    """LayerNorm ``site_name`` of ``layer`` in ``result``: LN's numbers per token, BN's per feature (see :class:`Site`)."""
    where = key(layer, site_name)
    x, y = result.inputs[where], result.outputs[where]  # (S, T, H) each: what the module received and gave back
    weight, bias, eps = result.weight[where], result.bias[where], result.eps  # (H,), (H,)
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
        check=float((y.double() - formula(x, weight, bias, eps)).abs().max()),
        off=tuple(int(j) for j in torch.nonzero((weight.abs() < OFF) & (bias.abs() < OFF)).flatten()),
        largest=(s, t, j, float(x[s, t, j])),
        widest=(ws, wt, float(ln_std[ws, wt])),
        median_std=statistics.median(ln_std[result.mask].tolist()),
    )


def window(values: Tensor, real: Tensor, start: int, width: int, by_size: bool) -> Tensor:
    """The features a window of ``width`` shows, (width,) indices into H: from ``start`` on, or, ``by_size``,
    the features sorted by their largest |x| over the real tokens (``values``: (S, T, H), ``real``: (S, T) bool,
    padding left out as the largest |x| leaves it out), from the ``start``-th largest."""
    hidden = values.shape[-1]
    width = min(width, hidden)
    start = max(0, min(start, hidden - width))
    if not by_size:
        return torch.arange(start, start + width)
    order = values[real].abs().amax(dim=0).argsort(descending=True, stable=True)  # (H,): largest first
    return order[start : start + width]


def kinds(result: Run) -> dict[str, Tensor]:
    """The real tokens by kind, (S, T) bool each: "[CLS]" and "[SEP]" (one of each per sentence, added by the
    tokenizer) and "text" (the pieces of the sentences themselves)."""
    special = {
        name: torch.tensor([[t == name for t in row] for row in result.tokens]) & result.mask for name in SPECIAL
    }
    text = result.mask & ~special["[CLS]"] & ~special["[SEP]"]  # (S, T)
    return special | {"text": text}


def embeddings(result: Run) -> Tensor:
    """Sentence embeddings as sentence-transformers makes them for this model: (S, H), each of length 1.

    The last LayerNorm's output (the encoder's last hidden state) averaged over
    each sentence's real tokens, then L2-normalized.
    """
    last = result.outputs[(result.layers - 1, "ffn")]  # (S, T, H)
    real = result.mask.unsqueeze(-1).to(last.dtype)  # (S, T, 1)
    pooled = (last * real).sum(dim=1) / real.sum(dim=1)  # (S, H)
    return F.normalize(pooled, dim=1)
