"""The transformer page's words: each sentence with the numbers of this run, computed here, never typed.

Tokens are anyone's text: every token goes through :func:`lnviz.text.quote`,
a literal code span, never markup.
"""

from __future__ import annotations

import statistics

from torch import Tensor

from lnviz.labs.transformer import SPECIAL, Run, Site, kinds
from lnviz.text import quote

CLAIMED = 100, 1000  # Sun et al.'s massive activation: |x| over 100, and about 1,000 times the median |x|

SOURCES = {  # authors, year, title
    "sun": ("Sun et al.", 2024, "Massive Activations in Large Language Models"),
    "kovaleva": ("Kovaleva et al.", 2021, "BERT Busters: Outlier Dimensions that Disrupt Transformers"),
    "bondarenko": (
        "Bondarenko et al.",
        2021,
        "Understanding and Overcoming the Challenges of Efficient Transformer Quantization",
    ),
    "cooijmans": ("Cooijmans et al.", 2016, "Recurrent Batch Normalization"),
    "reimers": ("Reimers and Gurevych", 2019, "Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks"),
    "wang": (
        "Wang et al.",
        2020,
        "MiniLM: Deep Self-Attention Distillation for Task-Agnostic Compression of Pre-Trained Transformers",
    ),
}


def cite(key: str, inside: bool = False) -> str:
    """A source as a sentence names it, 'Sun et al. (2024, "…")', or ``inside`` parentheses, 'Sun et al. 2024, "…"'."""
    authors, year, title = SOURCES[key]
    return f'{authors} {year}, "{title}"' if inside else f'{authors} ({year}, "{title}")'


SITE_WORDS = {
    "embeddings": "the LayerNorm after the embeddings",
    "attention": "the LayerNorm after self-attention",
    "ffn": "the LayerNorm after the feed-forward block",
}


def _token(result: Run, s: int, t: int) -> str:
    where = f"sentence {s + 1}, token {t}" if len(result.tokens) > 1 else f"token {t}"
    return f"{quote(result.tokens[s][t])} ({where})"


def _n(value: float) -> str:
    return f"{value:.4g}".replace("-", "−")


def _e(value: float) -> str:
    return f"{value:.1e}".replace("-", "−")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def where(site: Site) -> str:
    """Which LayerNorm, in words: "layer 0's LayerNorm after the feed-forward block"."""
    words = SITE_WORDS[site.site]
    return words if site.site == "embeddings" else f"layer {site.layer}'s {words.removeprefix('the ')}"


def _spread(values: Tensor) -> str:
    """σ of one kind of token: "11.35", "11.21 and 11.35", or "0.6474 to 1.027"."""
    low, high = _n(float(values.min())), _n(float(values.max()))
    if low == high:
        return low
    return f"{low} and {high}" if values.numel() == 2 else f"{low} to {high}"


def point(result: Run, site: Site) -> str:
    """The page's point, with this run's numbers: LN divides each token by its own σ, compared with the others of
    its kind ([CLS], [SEP], the text's own tokens); BN over the tokens divides a feature by one σ for all."""
    groups = []
    for kind, mask in kinds(result).items():
        stds = site.ln_std[mask]  # (N,): the tokens of this kind
        n = stds.numel()
        if not n:
            continue
        if kind in SPECIAL:
            named = quote(kind) if n == 1 else f"the {n} {quote(kind)} tokens"
        else:
            named = f"the {_count(n, 'other token')}"
        groups.append(f"{named} by {_spread(stds)}")
    s, t, j, value = site.largest
    real = int(result.mask.sum())
    if bool((~result.mask).any()):
        pool = f"this batch's {real} real tokens (padding left out)"
    elif len(result.tokens) > 1:
        pool = f"this batch's {real} tokens"
    else:
        pool = f"the sentence's {real} tokens"
    return (
        f"The grid: x entering {where(site)}, a row per token, a column per feature. **LN** divides each token "
        f"by its own σ over its {site.x.shape[-1]} features: "
        f"{', '.join(groups)}. **BN** over the tokens (training mode: this batch's statistics) would divide "
        f"feature {j} of every token by one σ over {pool}, {_n(float(site.bn_std[j]))}; there |x| reaches "
        f"{_n(abs(value))}, at {quote(result.tokens[s][t])}."
    )


def cuts(result: Run) -> str:
    """What of the text was left out, or "" when nothing was."""
    return " ".join(result.cuts)


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
    """How far the largest |x| stands from the rest, against Sun et al.'s criterion, and the encoders' own
    literature on outlier features."""
    real = site.x[result.mask]  # (N, H): real tokens only
    median = float(real.abs().median())
    value = abs(site.largest[3])
    ratio = value / median if median > 0 else float("inf")
    size, times = CLAIMED
    if value > size and ratio >= times:
        verdict = "This one meets both."
    elif value > size:
        verdict = f"This one is over {size} but short of {times:,} times the median: large, not massive in their sense."
    else:
        verdict = f"This one is under {size}: not massive in their sense."
    return (
        f"**How large is {_n(value)}?** {ratio:,.0f} times the median |x| ({_n(median)}) over the {real.shape[0]} "
        f"tokens' {real.numel():,} values here. {cite('sun')} call an activation *massive* when it is over {size} "
        f"and about {times:,} times the median size in its hidden state, and found such activations in large "
        f"language models, mostly Pre-LN, unlike this Post-LN encoder. {verdict}\n\n"
        "Encoders of BERT's kind have outlier features of their own: a few dimensions where LayerNorm's γ and β are "
        f"outsized, which such a model cannot lose without breaking down ({cite('kovaleva', inside=True)}), and structured "
        f"outliers in a few dimensions of the residual stream, which make 8-bit quantization hard "
        f"({cite('bondarenko', inside=True)})."
    )


def off(result: Run, site: Site) -> str:
    """The features this LayerNorm switches off (γ and β about 0), with their numbers, or "" if it has none."""
    if not site.off:
        return ""
    numbers = "; ".join(
        f"feature {j}: γ = {_e(float(site.weight[j]))}, β = {_e(float(site.bias[j]))}" for j in site.off
    )
    top = site.x[result.mask].abs().amax(dim=0)  # (H,): each feature's largest |x| over the real tokens
    ranks = ", ".join(str(int((top > top[j]).sum()) + 1) for j in site.off)
    y = float(site.y[result.mask][:, list(site.off)].abs().max())
    last = site.layer == result.layers - 1 and site.site == "ffn"
    reach = "the sentence embedding, an average of these outputs," if last else "the next layer"
    return (
        f"**Switched off:** at features {_listed(site.off)} this LayerNorm's own γ and β are about 0 ({numbers}), so its "
        f"output there is 0 for every token (|y| ≤ {_e(y)}), whatever x holds. Not a fault of the page: these are "
        f"the model's released weights. Those features hold some of the largest |x| it receives (ranks {ranks} of "
        f"{site.x.shape[-1]} by largest |x| here), and {reach} gets none of them."
    )


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
        + (f" At features {_listed(site.off)} both are about 0: switched off (see under the grid)." if site.off else "")
    )


def _listed(features: tuple[int, ...]) -> str:
    """127; 127 and 223; 127, 223 and 319."""
    return ", ".join(map(str, features[:-1])) + (" and " if len(features) > 1 else "") + str(features[-1])


def check(site: Site) -> str:
    """The badge: the hooked output against LN's formula in float64 (see :func:`lnviz.labs.transformer.formula`)."""
    return f"LN's formula in float64 vs the module's output: max |Δ| = {site.check:.1e}"


def check_words(result: Run, site: Site) -> str:
    """What the badge checks, exactly."""
    return (
        "**The badge** compares this LayerNorm's output, as its hook recorded it, with "
        "y = γ (x − μ)/√(σ² + ε) + β computed here in float64 from the recorded x: μ and σ² over each token's "
        f"{site.x.shape[-1]} features, σ² divided by {site.x.shape[-1]} (biased), ε = {site.eps:g} inside the root, "
        f"the module's own γ and β. The model runs in {result.dtype}: a difference near 1e−6 is its rounding. "
        "Green under 1e−4."
    )


def batch(result: Run, site: Site) -> str:
    """What BN over (sentences × tokens) would pool in this batch, and the positions few sentences reach; "" for one
    sentence, which is no batch."""
    sentences, steps = result.mask.shape
    if sentences == 1:
        return ""
    padded = int((~result.mask).sum())
    j = site.largest[2]
    if not padded:
        return (
            f"The {sentences} sentences have the same length, {steps} tokens: BN over (sentences × tokens) pools "
            f"all {sentences * steps} of them, per feature. LN is per token: the other sentences never enter a "
            "token's μ and σ."
        )
    reach = result.mask.sum(dim=0)  # (T,): how many sentences have a real token at each position
    last = steps - 1
    text = (
        f"The {sentences} sentences are padded to {steps} tokens: {sentences * steps} (sentence, token) cells, "
        f"{padded} of them padding. BN over (sentences × tokens) takes each feature's μ and σ from all of them "
        f"unless the padding is masked: at feature {j}, σ is {_n(float(site.bn_std[j]))} over the real tokens and "
        f"{_n(float(site.bn_std_padded[j]))} with the padding. "
    )
    if int(reach[last]) < sentences:
        text += (
            f"Recurrent BN, as {cite('cooijmans')} define it, takes one μ and σ per position instead: "
            f"position {last} would rest on {int(reach[last])} of the {sentences} sentences. "
        )
    return text + "LN is per token: padding and the other sentences never enter a real token's μ and σ."


ONE_SENTENCE = (
    "Type two or more sentences, one per line, to see what a batch changes: BN's statistics pool the sentences, "
    "LN's do not."
)

MODEL = (
    "**The model** is all-MiniLM-L6-v2, made with sentence-transformers, the library of "
    f"{cite('reimers')}. It is a MiniLM, as in {cite('wang')}: BERT's architecture, here with 6 layers and "
    "H = 384 features per token, fine-tuned on sentence pairs to give sentence embeddings. It is not Devlin et al.'s "
    "BERT (12 layers of 768 features, pretrained to fill in masked words).\n\n"
    "**Its LayerNorms.** It is Post-LN, as BERT: a LayerNorm after the embeddings are summed, and in each layer one "
    "after self-attention and its residual add (*attention*) and one after the feed-forward block and its residual "
    "add (*ffn*), 13 in all, each with ε = 1e-12. A forward hook on each of those modules records what it receives, "
    "x, and what it gives back, y. Pick one in the sidebar."
)

# Examples a click puts in the box, with what each holds: one sentence, the similarity table's three, and three of
# uneven lengths. Short names: the three fit one row beside the box, in lecture mode with the sidebar open too.
EXAMPLES = {
    "The cat": "The cat sat on the mat because it was tired.",
    "Weather": "The weather is lovely today.\nIt's so sunny outside!\nHe drove to the stadium.",
    "Uneven": "Hi.\nThe quick brown fox jumps over the lazy dog.\nLayerNorm normalizes each token over its "
    "features, whatever the other tokens in the batch hold.",
}
EXAMPLE_HELP = {
    "The cat": "One sentence.",
    "Weather": "The three sentences of the model's own similarity table.",
    "Uneven": "Three sentences of very different lengths.",
}

EMBEDDINGS_LAYER = "The embeddings' LayerNorm comes before layer 0: the layer control does not change it."


SATURATION = (
    "Each grid's colours saturate at the 98th percentile of its |values|, so that a few huge ones do not wash out "
    "the rest; the cells beyond it carry their numbers."
)


def window(result: Run, order: str, start: int, shown: int, hidden: int) -> str:
    """What the grid's columns are, said as such, and how its colours are scaled."""
    if order == "largest":
        over = "the real tokens" if bool((~result.mask).any()) else "the tokens"
        return (
            f"Columns: {shown} of the {hidden} features, by their largest |x| over {over}, from the "
            f"{start + 1}{_ordinal(start + 1)} largest on, labelled by their indices. " + SATURATION
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
