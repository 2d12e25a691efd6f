"""The numbers of the poll question that the /transformer page answers live: which token has the largest σ.

Its prompt and options are fixed text; :func:`answer` runs the pretrained
model, and :class:`lnviz.labs.classroom.question.LiveQuestion` calls it the
first time the answer is read (at the reveal), not when the bank is built:
the /class page never waits for the model, nor imports ``transformers``,
before a room reaches this question's reveal.
"""

from __future__ import annotations

import torch

from lnviz.labs.classroom.question import written

SENTENCE = "The cat sat on the mat because it was tired."
LAYER, SITE = 0, "ffn"  # the input of layer 0's second LayerNorm, after the feed-forward block
# Short enough that the projector's results fit under it at 1280 × 720 in the second round.
PROMPT = (
    f"all-MiniLM-L6-v2 (a MiniLM, BERT's architecture) reads “{SENTENCE}” Entering layer 0's second LayerNorm, "
    "which token's 384 features have the largest σ?"
)
# Four options, as the other choice questions: the projector's results fit 1280 × 720 with four.
OPTIONS = ("[CLS], the first token", "cat", "[SEP], the last token", "another token")
_TOKENS = ("[CLS]", "cat", "[SEP]")  # the token each named option stands for


def answer() -> tuple[int, str]:
    """The option of the token with the largest σ at that LayerNorm, and why, with the model's numbers.

    ValueError, with the page's sentence, when the model's files are missing or altered.
    """
    from lnviz.labs import transformer
    from lnviz.labs.transformer import model

    loaded = model.shared()
    if isinstance(loaded, str):
        raise ValueError(loaded)
    result = transformer.run(loaded, SENTENCE, torch.device("cpu"), torch.float64)
    site = transformer.site(result, LAYER, SITE)
    _, t, std = site.widest
    token = result.tokens[0][t]
    s, lt, j, value = site.largest
    why = (
        f"The model: {token} (token {t}) has σ = {written(std)}, {std / site.median_std:.3g} times the median "
        f"token's σ ({written(site.median_std)}). Its largest |x| is x = {written(value)} at "
        f"{result.tokens[s][lt]}, feature {j}. LN divides each token by its own σ."
    )
    return (_TOKENS.index(token) if token in _TOKENS else len(OPTIONS) - 1), why
