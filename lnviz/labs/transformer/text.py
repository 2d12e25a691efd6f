"""The transformer page's words: each sentence with the numbers of this run, computed here, never typed.

Tokens are anyone's text: every token goes through :func:`lnviz.text.quote`,
a literal code span, never markup.
"""

from __future__ import annotations

import statistics

from lnviz.labs.transformer import MAX_SENTENCES, MAX_TOKENS, Run, Site
from lnviz.text import quote

INTRO = (
    "Type a sentence, or several, one per line, and a pretrained transformer runs on it: "
    "sentence-transformers' **all-MiniLM-L6-v2**, a BERT encoder with 6 layers and H = 384 features per token. "
    "It is Post-LN: a LayerNorm after the embeddings, and in each layer one after self-attention and one after "
    "the feed-forward block (*ffn*), 13 in all, with ε = 1e-12. Forward hooks on those modules record what each "
    "one receives and gives back. Below, the chosen LayerNorm's input x: one row per token, one column per "
    f"feature. At most {MAX_SENTENCES} sentences of at most {MAX_TOKENS} tokens each."
)

SUN = (
    'Sun et al. (2024), "Massive Activations in Large Language Models", name activations that are far larger '
    "than the rest, in a few features and at a few tokens, *massive activations*."
)


def _token(result: Run, s: int, t: int) -> str:
    where = f"sentence {s + 1}, token {t}" if len(result.tokens) > 1 else f"token {t}"
    return f"{quote(result.tokens[s][t])} ({where})"


def _n(value: float) -> str:
    return f"{value:.4g}".replace("-", "−")


def largest(result: Run, site: Site) -> str:
    """The largest |x| at this LayerNorm, and the token with the largest σ against the median token's."""
    s, t, j, value = site.largest
    ws, wt, std = site.widest
    ratio = std / site.median_std if site.median_std > 0 else float("inf")
    return (
        f"**The largest |x|** at this LayerNorm is x = {_n(value)}, at {_token(result, s, t)}, feature {j}. "
        f"**The token with the largest σ** is {_token(result, ws, wt)}: σ = {_n(std)}, {ratio:.3g} times the "
        f"median token's σ ({_n(site.median_std)})."
    )


def massive(result: Run, site: Site) -> str:
    """How far the largest |x| stands from the rest, in this run: what Sun et al.'s phrase would rest on here."""
    real = site.x[result.mask]  # (N, H): real tokens only
    median = float(real.abs().median())
    ratio = abs(site.largest[3]) / median if median > 0 else float("inf")
    return (
        f"{SUN} Here, in this run, the largest |x| is {ratio:,.0f} times the median |x| ({_n(median)}) over "
        f"the {real.shape[0]} real tokens' {real.numel():,} values. That is this model on this text; other "
        "layers and sentences may differ: try them."
    )


def ln_vs_bn(result: Run, site: Site) -> str:
    """What LN and BN over the tokens divide the largest feature by."""
    s, t, j, _ = site.largest
    stds = site.ln_std[result.mask]  # (N,)
    others = [v for k, v in enumerate(site.ln_std[result.mask].tolist()) if k != _flat(result, s, t)]
    spread = f"the other tokens by {_n(min(others))} to {_n(max(others))}" if others else "there is no other token"
    return (
        f"**LN** divides each token by its own σ (over its {site.x.shape[-1]} features): "
        f"{quote(result.tokens[s][t])} by {_n(float(site.ln_std[s, t]))}, {spread}. "
        f"**BN over the tokens** would divide feature {j} of every token by one σ over the {stds.numel()} real "
        f"tokens: {_n(float(site.bn_std[j]))}."
    )


def _flat(result: Run, s: int, t: int) -> int:
    """The index of real token (s, t) among the real tokens, row-major."""
    return int(result.mask[:s].sum()) + int(result.mask[s, :t].sum())


def affine(site: Site) -> str:
    """The module's γ and β at the largest feature, ranked among all H: computed, for this LayerNorm."""
    j = site.largest[2]
    hidden = site.weight.shape[0]
    gamma, beta = float(site.weight[j]), float(site.bias[j])
    rank_g = int((site.weight.abs() > abs(gamma)).sum()) + 1
    rank_b = int((site.bias.abs() > abs(beta)).sum()) + 1
    med_g = statistics.median(site.weight.abs().tolist())
    med_b = statistics.median(site.bias.abs().tolist())
    return (
        f"This LayerNorm's own γ and β (learned, one per feature). At feature {j}, where the largest |x| is, "
        f"γ = {_n(gamma)} (|γ| ranks {rank_g} of {hidden}, 1 the largest; median |γ| {_n(med_g)}) and "
        f"β = {_n(beta)} (|β| ranks {rank_b} of {hidden}; median |β| {_n(med_b)})."
    )


def check(site: Site) -> str:
    """The badge: F.layer_norm of the recorded input against the module's recorded output."""
    return f"F.layer_norm(x, γ, β, ε = {site.eps:g}) vs the module: max |Δ| = {site.check:.1e}"


def batch(result: Run, site: Site) -> str:
    """What BN over (sentences × tokens) would pool in this batch, and the positions few sentences reach."""
    sentences, steps = result.mask.shape
    padded = int((~result.mask).sum())
    reach = result.mask.sum(dim=0)  # (T,): how many sentences have a real token at each position
    last = steps - 1
    j = site.largest[2]
    shift = float((site.bn_std_padded[j] - site.bn_std[j]).abs())
    text = (
        f"The {sentences} sentences are padded to {steps} tokens: {sentences * steps} (sentence, token) cells, "
        f"{padded} of them padding. BN over (sentences × tokens) takes each feature's μ and σ from all of them "
        f"unless the padding is masked; at feature {j} that moves σ by {_n(shift)}. "
    )
    if int(reach[last]) < sentences:
        text += (
            f"Per position, as BN is applied to sequences step by step, position {last} rests on "
            f"{int(reach[last])} of the {sentences} sentences. "
        )
    return text + "LN is per token: padding and the other sentences never enter a real token's μ and σ."


# Examples a click puts in the box: one sentence, the similarity table's three, and a batch of unequal lengths.
EXAMPLES = {
    "The cat": "The cat sat on the mat because it was tired.",
    "Weather": "The weather is lovely today.\nIt's so sunny outside!\nHe drove to the stadium.",
    "Unequal lengths": "Hi.\nThe quick brown fox jumps over the lazy dog.\nLayerNorm normalizes each token over its "
    "features, whatever the other tokens in the batch hold.",
}

EMBEDDINGS_LAYER = "The embeddings' LayerNorm comes before layer 0: the layer control does not change it."


SATURATION = (
    "Each grid's colours saturate at the 98th percentile of its |values| in view, so that a few huge values do "
    "not wash out the rest; the cells beyond it carry their numbers. Hover a cell for its value."
)


def window(order: str, start: int, shown: int, hidden: int) -> str:
    """What the grid's columns are, said as such, and how its colours are scaled."""
    if order == "largest":
        return (
            f"Columns: {shown} of the {hidden} features, sorted by their largest |x| over the tokens, from the "
            f"{start + 1}{_ordinal(start + 1)} largest on (the column labels are the features' indices). " + SATURATION
        )
    return f"Columns: features {start} to {start + shown - 1} of {hidden}, in order. " + SATURATION


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def unknown(result: Run) -> str:
    """A note when the vocabulary had no piece for some characters (odd Unicode: emoji, rare scripts)."""
    count = sum(token == "[UNK]" for tokens in result.tokens for token in tokens)
    if not count:
        return ""
    return f"{count} token{'s are' if count > 1 else ' is'} [UNK]: the model's vocabulary has no piece for them."
