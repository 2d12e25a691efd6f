"""The questions answered by building the answer on the phone (issue 49): tap the cells a norm's statistic for the
marked cell reads (torch's set: the statistic's gradient's support, :mod:`.cells`), or drag to predict a number.
Each answer is computed here, with torch in float64; the words are :data:`.text.QUESTIONS`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from lnviz.labs import family
from lnviz.labs.classroom import cells
from lnviz.labs.classroom.asking import asked, fixed, link
from lnviz.labs.classroom.question import Question
from lnviz.maths import data
from lnviz.maths.norms import layer_norm


def _grid(norm: str, x: Tensor, at: tuple[int, ...], stat: str, groups: int = 1) -> dict[str, Any]:
    """A cells question's grid for x, its marked element ``at`` and torch's cells: ``stat``'s gradient's support."""
    rows, cols = cells.grid(tuple(x.shape))
    answer = cells.support(norm, x, at, stat, groups)
    return dict(rows=rows, cols=cols, marked=cells.flat(tuple(x.shape), at), answer=answer)


def _bn_mu_cells(qid: str) -> Question:
    values = dict(dist="heterogeneous features", batch=4, features=6, seed=0, sample=2, feature=3)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    i, j = values["sample"], values["feature"]
    grid = _grid("BN", x, (i, j), "mu")
    mu = float(cells.statistic("BN", x, (i, j), "mu"))
    column = " + ".join(fixed(float(v)) for v in x[:, j])
    words = dict(batch=values["batch"], features=values["features"], j=j, values=column, mu=fixed(mu))
    return asked(qid, words | dict(rest=x.numel() - len(grid["answer"])), **grid, link=link("explorer", **values))


def _ln_sigma_cells(qid: str) -> Question:
    values = dict(dist="heterogeneous features", batch=4, features=6, seed=0, sample=1, feature=4)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    i, j = values["sample"], values["feature"]
    grid = _grid("LN", x, (i, j), "sigma")
    sigma = float(cells.statistic("LN", x, (i, j), "sigma"))
    grad = cells.gradient("LN", x, (i, j), "sigma")[i]  # (H,): the row's, the only non-zero ones
    words = dict(batch=values["batch"], features=values["features"], i=i, sigma=fixed(sigma))
    spread = dict(least=fixed(float(grad.min()), 3), most=fixed(float(grad.max()), 3))
    return asked(
        qid,
        words | spread | dict(rest=x.numel() - len(grid["answer"])),
        **grid,
        link=link("explorer", **values),
    )


def _family_cells(qid: str, norm: str, groups: int) -> Question:
    """A cells question on the family page's x of shape (N, C, L), its rows (n, c), named "n0 c1"."""
    values = dict(batch=2, channels=4 if norm == "GroupNorm" else 3, positions=4 if norm == "GroupNorm" else 6, seed=0)
    pick = dict(sample=1, channel=3 if norm == "GroupNorm" else 2, position=2 if norm == "GroupNorm" else 3)
    x = family.make_tensor(values["batch"], values["channels"], values["positions"], values["seed"])  # (N, C, L)
    at = (pick["sample"], pick["channel"], pick["position"])
    grid = _grid(norm, x, at, "mu", groups)
    n, c = at[:2]
    size = values["channels"] // groups
    first = c // size * size
    words = dict(values, groups=groups, n=n, c=c, size=size, first=first, last=first + size - 1)
    words |= dict(count=len(grid["answer"]), mu=fixed(float(cells.statistic(norm, x, at, "mu", groups))))
    names = tuple(f"n{k // values['channels']} c{k % values['channels']}" for k in range(grid["rows"]))
    kept = dict(groups=groups) if norm == "GroupNorm" else {}
    return asked(
        qid,
        words,
        **grid,
        row_names=names,
        link=link("family", **values, **kept, norm=norm, **pick),
    )


# The token question's sentence and its tokens as all-MiniLM-L6-v2's tokenizer cuts it (tests/test_questions.py).
TOKEN_SENTENCE = "The cat sat."
TOKENS = ("[CLS]", "the", "cat", "sat", ".", "[SEP]")


def _token_ln_cells(qid: str) -> Question:
    features, token = 8, 2
    x = torch.randn(len(TOKENS), features, generator=data.generator(0), dtype=torch.float64)  # (T, H): a toy H
    at = (token, 5)
    grid = _grid("LN per token", x, at, "sigma")
    sigma = float(cells.statistic("LN per token", x, at, "sigma"))
    words = dict(sentence=TOKEN_SENTENCE, tokens=len(TOKENS), features=features, token=TOKENS[token])
    return asked(
        qid,
        words | dict(sigma=fixed(sigma), others=len(TOKENS) - 1),
        **grid,
        row_names=TOKENS,
        link=link("transformer", text=TOKEN_SENTENCE, layer=0, site="ffn"),
    )


def _outlier_x_hat_drag(qid: str) -> Question:
    values = dict(dist="outlier feature", batch=16, features=16, seed=0, sample=0, feature=1)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    i, j, h = values["sample"], data.outlier_feature(values["features"]), values["features"]
    if j != values["feature"]:
        raise RuntimeError(f"{qid}: the outlier is feature {j}, the link chooses {values['feature']}")
    ln = layer_norm(x, eps=1e-5)
    answer = float(ln.x_hat[i, j])
    sigma = math.sqrt(float(ln.var[i, 0]) + 1e-5)
    words = dict(i=i, h=h, j=j, rest=h - 1, outlier=fixed(float(x[i, j])), bound=fixed(math.sqrt(h - 1), 3))
    return asked(
        qid,
        words | dict(mu=fixed(float(ln.mean[i, 0])), sigma=fixed(sigma)),
        answer=answer,
        link=link("explorer", **values, view="cell"),
    )


BUILDERS: dict[str, Callable[[str], Question]] = {  # each question's numbers, by id
    "bn-mu-cells": _bn_mu_cells,
    "ln-sigma-cells": _ln_sigma_cells,
    "group-norm-cells": lambda qid: _family_cells(qid, "GroupNorm", 2),
    "instance-norm-cells": lambda qid: _family_cells(qid, "InstanceNorm", 1),
    "token-ln-cells": _token_ln_cells,
    "outlier-x-hat-drag": _outlier_x_hat_drag,
}
