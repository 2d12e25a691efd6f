"""The concept check: seven questions on what students believe of LN and BN, asked before a lecture and after it,
and the class's normalized gain between the two (Hake 1998).

Each item is a choice :class:`~.question.Question`. Its right option is picked by torch: the builder computes
what the options describe (which inputs an output depends on, which statistics eval mode reads, what γ and β
give) with torch's own ``F.*`` functions and ``nn`` modules in float64, and takes the one option that describes
it, or raises. The words are :data:`.check_text.ITEMS`.

The results are counts: per item and phase, how many answered and how many were right; and the *pairs*, the
voters who answered an item in both phases (an anonymous voter id pairs them), on which the gain is computed:

.. math::

    g = \\frac{\\text{post} - \\text{pre}}{1 - \\text{pre}}

with pre and post the pairs' shares right. Over all items, the shares are over every paired answer. g is
undefined without pairs, or when every pair was right before (pre = 1).
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lnviz.labs.classroom import check_text
from lnviz.labs.classroom.question import Question
from lnviz.labs.classroom.questions import link
from lnviz.maths import data
from lnviz.text import MINUS

PHASES = ("pre", "post")
FEW_PAIRS = 10  # fewer pairs than this: g is said to rest on few (one phone moves it by up to 1 / pairs of 1 − pre)
_DT = torch.float64
_TIGHT = dict(rtol=1e-12, atol=1e-12)  # "the same" in float64, for outputs of order 1 to 10


@functools.cache
def items() -> tuple[Question, ...]:
    """The check's items, in :data:`.check_text.ITEMS`'s order. Computed once."""
    if set(_BUILDERS) != set(check_text.ITEMS):
        raise RuntimeError(f"items without words or words without an item: {set(_BUILDERS) ^ set(check_text.ITEMS)}")
    return tuple(_BUILDERS[qid](qid) for qid in check_text.ITEMS)


def by_id(qid: str) -> Question | None:
    """The check's item ``qid``, or None if it is none of them."""
    return next((item for item in items() if item.id == qid), None)


def topic(qid: str) -> str:
    """An item's short name, for a table's row."""
    return check_text.ITEMS[qid]["topic"]


def _asked(qid: str, values: dict, answer: int, link: str) -> Question:
    """Item ``qid``: its words with torch's ``values`` filled in, and the option torch picked."""
    words = check_text.ITEMS[qid]
    return Question(
        id=qid,
        kind="choice",
        prompt=words["prompt"].format(**values),
        choices=tuple(choice.format(**values) for choice in words["choices"]),
        answer=answer,
        why=words["why"].format(**values),
        link=link,
    )


def _pick(truths: list[bool], what: str) -> int:
    """The index of the one option torch found true; an error unless exactly one is."""
    if sum(truths) != 1:
        raise RuntimeError(f"{what}: torch found options {truths} true, not exactly one")
    return truths.index(True)


def _e(value: float) -> str:
    """A small |Δ| in prose: one digit, such as 2e−15, or 0."""
    return "0" if value == 0 else f"{value:.0e}".replace("e-0", "e-").replace("-", MINUS)


def _f(value: float, decimals: int = 2) -> str:
    return f"{value:.{decimals}f}".replace("-", MINUS)


def _same(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, **_TIGHT)


def _largest(a: Tensor, b: Tensor) -> float:
    return float((a - b).abs().max())


def _same_words(a: Tensor, b: Tensor) -> str:
    """ "exactly the same" or "the same to 4e−16" (rounding), for outputs that are the same."""
    delta = _largest(a, b)
    return "bit for bit the same" if delta == 0 else f"the same to {_e(delta)}"


def _inputs_of(output: Callable[[Tensor], Tensor], x: Tensor, cell: tuple[int, ...]) -> Tensor:
    """Which inputs the output at ``cell`` depends on: where torch's gradient of it with respect to x is non-zero
    (bool, shaped like x)."""
    x = x.detach().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(output(x)[cell], x)
    return grad != 0


def _features(batch: int, features: int, seed: int) -> Tensor:
    """(B, H) activations whose features each have their own mean and scale, and whose samples differ too."""
    g = data.generator(seed)
    scale = 0.5 + 2 * torch.rand(1, features, generator=g, dtype=_DT)  # (1, H)
    offset = 3 * torch.randn(1, features, generator=g, dtype=_DT)  # (1, H)
    return torch.randn(batch, features, generator=g, dtype=_DT) * scale + offset  # (B, H)


def _ln_axis(qid: str) -> Question:
    batch, features, i, j = 6, 8, 2, 5
    x = _features(batch, features, seed=1)  # (B, H)
    used = _inputs_of(lambda x: F.layer_norm(x, (features,)), x, (i, j))  # (B, H)
    sets = [torch.zeros_like(used) for _ in range(4)]
    sets[0][i, :], sets[1][:, j], sets[2][:], sets[3][i, j] = True, True, True, True
    return _asked(
        qid,
        dict(batch=batch, features=features, i=i, j=j, zeros=int((~used).sum())),
        answer=_pick([bool((used == s).all()) for s in sets], qid),
        link=link("explorer", batch=batch, features=features, sample=i, feature=j),
    )


def _ln_batch_size(qid: str) -> Question:
    batch, features, i = 32, 8, 3
    x = _features(batch, features, seed=2)  # (B, H)
    in_batch = F.layer_norm(x, (features,))[i : i + 1]  # (1, H)
    try:
        alone = F.layer_norm(x[i : i + 1], (features,))  # (1, H)
    except (RuntimeError, ValueError):
        alone = None
    same = alone is not None and _same(in_batch, alone)
    changed = alone is not None and not same
    return _asked(
        qid,
        dict(batch=batch, same=_same_words(in_batch, alone) if same else ""),
        answer=_pick([same, changed, alone is None], qid),
        link=link("coupling", batch=16, features=features, sample=i),
    )


def _bn_eval(qid: str) -> Question:
    batch, features, steps, seed = 16, 4, 50, 3
    g = data.generator(seed)
    bn = nn.BatchNorm1d(features, dtype=_DT)
    for _ in range(steps):
        bn(_features(batch, features, seed=seed) + 0.3 * torch.randn(batch, features, generator=g, dtype=_DT))
    bn.eval()
    test = _features(batch, features, seed=seed) + 1.5  # (B, H): shifted, so its statistics are not the running ones
    with torch.no_grad():
        y = bn(test)  # (B, H)
        w, b, eps = bn.weight, bn.bias, bn.eps
        candidates = [
            F.batch_norm(test, None, None, w, b, training=True, eps=eps),  # the test batch's own
            (test - bn.running_mean) / torch.sqrt(bn.running_var + eps) * w + b,  # running
            test / torch.sqrt(torch.ones(features, dtype=_DT) + eps) * w + b,  # μ = 0, σ² = 1
            F.layer_norm(test, (features,), w, b, eps),  # each sample's own
        ]
    truths = [_same(y, c) for c in candidates]
    answer = _pick(truths, qid)
    return _asked(
        qid,
        dict(features=features, steps=steps, momentum=bn.momentum)
        | dict(match=_e(_largest(y, candidates[answer])), own=_f(_largest(y, candidates[0]))),
        answer=answer,
        link=link("train_eval", batch=batch, features=features, steps=steps, momentum=bn.momentum),
    )


def _gamma_beta(qid: str) -> Question:
    batch, features = 16, 4
    x = _features(batch, features, seed=4)  # (B, H)
    g = data.generator(40)
    gain, bias = 0.5 + torch.rand(features, generator=g, dtype=_DT), torch.randn(features, generator=g, dtype=_DT)
    eps = 1e-5
    y = F.batch_norm(x, None, None, gain, bias, training=True, eps=eps)  # (B, H)
    mean, var = x.mean(dim=0), x.var(dim=0, unbiased=False)  # (H,): the batch's own, as BN takes them
    root = torch.sqrt(var + eps)  # (H,)
    # A learned γ, β: the spread and mean BN gives each feature, and whether they give back x.
    spread_ok = _same(y.std(dim=0, unbiased=False), gain.abs() * torch.sqrt(var) / root)
    back = F.batch_norm(x, None, None, root, mean, training=True, eps=eps)  # γ = √(σ² + ε), β = μ
    # "Only if": the one γ, β per feature with γ · x̂ + β = x is the least-squares fit of x on [x̂, 1], exact here.
    x_hat = (x - mean) / root  # (B, H)
    fits = [
        torch.linalg.lstsq(torch.stack([x_hat[:, k], torch.ones(batch, dtype=_DT)], 1), x[:, k : k + 1]).solution
        for k in range(features)
    ]  # each (2, 1): γ, β
    only = _same(torch.cat(fits, 1), torch.stack([root, mean]))
    learned = nn.BatchNorm1d(features)
    truths = [
        _same(y, x),
        _same(y.mean(dim=0), bias) and spread_ok and _same(back, x) and only,
        not (learned.weight.requires_grad and learned.bias.requires_grad),
        _same(y, x * gain + bias),
    ]
    return _asked(
        qid,
        dict(mean=_e(_largest(y.mean(dim=0), bias)), back=_e(_largest(back, x))),
        answer=_pick(truths, qid),
        link=link("explorer", batch=batch, features=features, affine=True),
    )


def _transformer_token(qid: str) -> Question:
    b, t, h, s, tok, j = 2, 6, 8, 1, 3, 5
    g = data.generator(5)
    x = torch.randn(b, t, h, generator=g, dtype=_DT) * 2 + torch.randn(b, t, 1, generator=g, dtype=_DT)  # (B, T, H)
    used = _inputs_of(nn.LayerNorm(h, dtype=_DT), x, (s, tok, j))  # (B, T, H)
    sets = [torch.zeros_like(used) for _ in range(4)]
    sets[0][s, tok, :], sets[1][s], sets[2][:, tok, :], sets[3][:] = True, True, True, True
    return _asked(
        qid,
        dict(b=b, t=t, h=h, s=s, tok=tok, zeros=int((~used).sum())),
        answer=_pick([bool((used == w).all()) for w in sets], qid),
        link=link("transformer"),
    )


def _ln_eval(qid: str) -> Question:
    features = 8
    ln = nn.LayerNorm(features, dtype=_DT)
    sample = _features(1, features, seed=6)  # (1, H): one test sample
    with torch.no_grad():
        trained = ln.train()(sample)
        try:
            tested = ln.eval()(sample)
        except (RuntimeError, ValueError):
            tested = None
        own = F.layer_norm(sample, (features,), ln.weight, ln.bias, ln.eps)  # the sample's own μ, σ²
    running = any(name.startswith("running") for name, _ in ln.named_buffers())
    truths = [running, tested is not None and _same(tested, own) and _same(tested, trained), tested is None]
    return _asked(
        qid,
        dict(same=_same_words(tested, trained) if tested is not None else ""),
        answer=_pick(truths, qid),
        link=link("train_eval"),
    )


def _ln_output(qid: str) -> Question:
    batch, features = 8, 12
    x = _features(batch, features, seed=7)  # (B, H)
    y = F.layer_norm(x, (features,))  # (B, H)
    standard = {}
    for dim in (1, 0):  # rows: over each sample's features; columns: over each feature's samples
        mean, var = y.mean(dim=dim), y.var(dim=dim, unbiased=False)
        standard[dim] = bool(mean.abs().max() < 1e-9 and (var - 1).abs().max() < 1e-3)
    rows = y.mean(dim=1), y.var(dim=1, unbiased=False)  # (B,) each
    columns = y.mean(dim=0)  # (H,)
    outcomes = [(True, False), (False, True), (True, True), (False, False)]
    return _asked(
        qid,
        dict(batch=batch, features=features, mean=_e(float(rows[0].abs().max())))
        | dict(var=_e(float((rows[1] - 1).abs().max())), lo=_f(float(columns.min())), hi=_f(float(columns.max()))),
        answer=_pick([(standard[1], standard[0]) == o for o in outcomes], qid),
        link=link("explorer", batch=batch, features=features, output="x_hat"),
    )


_BUILDERS: dict[str, Callable[[str], Question]] = {
    "check-ln-axis": _ln_axis,
    "check-ln-batch-size": _ln_batch_size,
    "check-bn-eval": _bn_eval,
    "check-gamma-beta": _gamma_beta,
    "check-transformer-token": _transformer_token,
    "check-ln-eval": _ln_eval,
    "check-ln-output": _ln_output,
}


# --- the results: counts, pairs and the normalized gain -----------------------------------------------------


@dataclass(frozen=True)
class Counts:
    """One item's counts (or every item's, summed): how many answered it before (pre) and after (post), and how
    many of them were right; the ``pairs``, answers given both times by one voter, and how many of those were
    right before and after; ``voters``, the voters with at least one pair."""

    pre_answered: int = 0
    pre_right: int = 0
    post_answered: int = 0
    post_right: int = 0
    pairs: int = 0
    pairs_pre_right: int = 0
    pairs_post_right: int = 0
    voters: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(a + b for a, b in zip(self.as_row(), other.as_row(), strict=True)))

    def as_row(self) -> tuple[int, ...]:
        return (
            self.pre_answered,
            self.pre_right,
            self.post_answered,
            self.post_right,
            self.pairs,
            self.pairs_pre_right,
            self.pairs_post_right,
            self.voters,
        )

    @property
    def gain(self) -> float | None:
        """g = (post − pre) / (1 − pre) on the pairs' shares right; None with no pair, or every pair right before."""
        if not self.pairs or self.pairs_pre_right == self.pairs:
            return None
        return (self.pairs_post_right - self.pairs_pre_right) / (self.pairs - self.pairs_pre_right)

    @property
    def few(self) -> bool:
        """Whether g rests on fewer than :data:`FEW_PAIRS` voters."""
        return self.voters < FEW_PAIRS


@dataclass(frozen=True)
class Results:
    """The check's counts: each item's, in the check's order, and all of them together (``total``, whose
    ``voters`` are the voters with a pair in any item)."""

    per_item: tuple[tuple[Question, Counts], ...]
    total: Counts


Answers = Mapping[str, Mapping[str, str]]  # voter -> item id -> stored choice, for one phase


def results(questions: Iterable[Question], pre: Answers, post: Answers) -> Results:
    """The counts of ``questions`` from each phase's answers; answers to other items are left out."""
    per_item, paired = [], set()
    for q in questions:
        before = {v: q.right(a[q.id]) for v, a in pre.items() if q.id in a}
        after = {v: q.right(a[q.id]) for v, a in post.items() if q.id in a}
        both = before.keys() & after.keys()
        paired |= both
        per_item.append(
            (
                q,
                Counts(
                    len(before),
                    sum(before.values()),
                    len(after),
                    sum(after.values()),
                    len(both),
                    sum(before[v] for v in both),
                    sum(after[v] for v in both),
                    len(both),
                ),
            )
        )
    total = sum((c for _, c in per_item), Counts())
    return Results(tuple(per_item), Counts(*total.as_row()[:-1], len(paired)))


CSV_COLUMNS = (
    "question",
    "topic",
    "pre_answered",
    "pre_right",
    "post_answered",
    "post_right",
    "pairs",
    "pairs_pre_right",
    "pairs_post_right",
    "paired_voters",
    "g",
)


def to_csv(found: Results) -> str:
    """The counts as CSV: a row per item, then ``all``; counts only, never a voter. ``pairs`` counts answers
    (an item's are its paired voters); g is empty where it is undefined."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    rows = [(q.id, topic(q.id), c) for q, c in found.per_item] + [("all", "All questions", found.total)]
    for qid, name, c in rows:
        writer.writerow([qid, name, *c.as_row(), "" if c.gain is None else f"{c.gain:.4f}"])
    return out.getvalue()
