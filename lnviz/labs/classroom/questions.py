"""The class poll's question bank: each question's right answer, and every number its words quote, as torch
computes them.

Every answer that depends on numbers is computed here, with lnviz and torch
in float64, the first time :func:`bank` is called; none is typed by hand. So
is every number quoted in a prompt or an explanation; the words themselves are
:data:`.text.QUESTIONS`. Each question's ``link`` opens the view of lnviz that
shows why, with the same values the answer was computed from. What a question
is, and how its votes count, is :mod:`.poll`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from lnviz.labs import coupling, invariance, sequences, train_eval
from lnviz.labs.classroom import construct, text, transformer_question
from lnviz.labs.classroom.asking import asked, fixed, link, prose, tiny
from lnviz.labs.classroom.question import LiveQuestion, Question, written
from lnviz.maths import data, rounding
from lnviz.maths.norms import batch_norm, layer_norm, rms_norm


@functools.cache
def bank() -> tuple[Question, ...]:
    """Every question, in :data:`text.QUESTIONS`'s order, the order a lecture might ask them. Computed once."""
    if set(_BUILDERS) != set(text.QUESTIONS):
        raise RuntimeError(
            f"questions without words or words without a question: {set(_BUILDERS) ^ set(text.QUESTIONS)}"
        )
    return tuple(_BUILDERS[qid](qid) for qid in text.QUESTIONS)


def by_id(qid: str) -> Question:
    """The question with id ``qid``; KeyError if there is none."""
    for question in bank():
        if question.id == qid:
            return question
    raise KeyError(qid)


def _pick(outcomes: list[Any], seen: Any, what: str) -> int:
    """The index of the option whose outcome torch produced; an error if none describes it."""
    if seen not in outcomes:
        raise RuntimeError(f"{what}: torch gave {seen!r}, which no option describes")
    return outcomes.index(seen)


def _outcome(y: Tensor, bias: Tensor | float) -> str:
    """What an output y is, in an option's words: "nan", "0" or "beta" when every value is that, else "other"."""
    if bool(y.isnan().all()):
        return "nan"
    if bool((y == 0).all()):
        return "0"
    return "beta" if bool((y == bias).all()) else "other"


def _one_sample_coupling(qid: str) -> Question:
    batch, features, seed, sample, amount = 8, 16, 0, 2, 5.0
    c = coupling.couple(batch, features, seed, sample, "outlier", amount)
    every, alone = tuple(range(batch)), (sample,)
    outcomes = [(every, alone), (alone, every), (alone, alone), (every, every)]
    others = [i for i in range(batch) if i != sample]
    return asked(
        qid,
        dict(batch=batch, sample=sample, amount=amount, moved=fixed(float(c.bn_delta[others].max()))),
        answer=_pick(outcomes, (c.bn_rows_changed, c.ln_rows_changed), qid),
        link=link(
            "coupling", batch=batch, features=features, seed=seed, sample=sample, perturb="outlier", amount=amount
        ),
    )


def _bn_one_sample(qid: str) -> Question:
    x = torch.tensor([[3.1, -0.4, 2.0, 0.9]], dtype=torch.float64)  # (1, 4): one sample
    h = x.shape[1]
    gain, bias = torch.full((h,), 2.0, dtype=torch.float64), torch.full((h,), 0.7, dtype=torch.float64)
    stats = torch.zeros(h, dtype=torch.float64), torch.ones(h, dtype=torch.float64)
    try:
        y = F.batch_norm(x, *stats, gain, bias, training=True)
        seen, message = _outcome(y, bias), ""
    except ValueError as error:
        seen, message = "ValueError", str(error).split(",")[0]
    return asked(
        qid,
        dict(message=message),
        answer=_pick(["beta", "0", "nan", "ValueError"], seen, qid),
        link=link("explorer", batch=1),
    )


def _bn_one_sample_formula(qid: str) -> Question:
    x = torch.tensor([[3.1]], dtype=torch.float64)  # (1, 1): one sample, one feature
    gain, bias, eps = 2.0, 0.7, 1e-5
    # The batch's own statistics, passed as running ones: training mode would refuse one value per channel.
    own = batch_norm(
        x, gain, bias, eps, training=False, running_mean=x.mean(dim=0), running_var=x.var(dim=0, unbiased=False)
    )
    answer = float(own.y[0, 0])
    stats = own.mean.view(1), own.var.view(1)  # (C,): what eval mode reads as running statistics
    weights = torch.tensor([gain], dtype=x.dtype), torch.tensor([bias], dtype=x.dtype)
    fused = float(F.batch_norm(x, *stats, *weights, training=False, eps=eps))  # rounds x·scale − μ·scale
    digits = max(d for d in range(17) if round(fused, d) == bias)
    return asked(
        qid,
        dict(x=x.item(), gain=gain, bias=bias, answer=written(answer), fused=fused, digits=digits),
        answer=answer,
        link=link("explorer", batch=1, gain=gain, bias=bias),
    )


def _constant_row_eps0(qid: str) -> Question:
    values = dict(dist="constant row", batch=8, features=12, seed=0, bias=2.0, eps=0.0, sample=0)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    if bool((x[0] == values["bias"]).any()) or values["bias"] == 0:  # else "β" reads as "x itself" or as "0"
        raise RuntimeError(f"{qid}: β = {values['bias']} can't be told from the row's {float(x[0, 0])} or from 0")
    row = layer_norm(x, 1.0, values["bias"], eps=0.0).y[0]  # (H,)
    with_eps = layer_norm(x, 1.0, values["bias"], eps=1e-5).y[0]  # (H,)
    seen = _outcome(row, values["bias"])
    words = dict(constant=float(x[0, 0]), bias=values["bias"], features=values["features"])
    return asked(
        qid,
        words | dict(with_eps=prose(f"{float(with_eps.max()):g}")),
        answer=_pick(["0", "beta", "nan", "error"], seen, qid),
        link=link("explorer", **values, view="cell"),
    )


def _ln_invariance(qid: str) -> Question:
    eps, seed = 1e-5, 0
    result = invariance.invariance(eps, seed)
    delta, marks = result.table["LN"], invariance.marks(result.table)["LN"]
    options = ("weight_vector_rescale", "dataset_recenter", "case_rescale")
    unchanged = [name for name in options if marks[name]]
    if len(unchanged) != 1:
        raise RuntimeError(f"{qid}: LN is unchanged by {unchanged}, not by exactly one option")
    name = invariance.TRANSFORM_LABELS
    moved = dict(weights=fixed(delta["weight_vector_rescale"]), recenter=fixed(delta["dataset_recenter"]))
    return asked(
        qid,
        dict(factor=invariance.FACTOR, case=tiny(delta["case_rescale"])) | moved,
        choices=tuple(name[t].replace("<br>", " ").capitalize() for t in options),
        answer=options.index(unchanged[0]),
        link=link("invariance", eps=eps, seed=seed),
    )


def _sequence_values() -> dict[str, Any]:
    return dict(batch=8, length=24, features=8, spread=0.75, pad=0.0, extra=12, seed=0)


def _sequence_lab() -> sequences.SequenceLab:
    v = _sequence_values()
    return sequences.sequence_lab(v["batch"], v["length"], v["features"], v["seed"], v["spread"], v["pad"], v["extra"])


def _first_step_without_bn(lab: sequences.SequenceLab) -> int:
    """The first step of the test sequence where per-step BN has no statistics."""
    missing = lab.test_bn.y.isnan().any(dim=1)  # (T + extra,)
    return int(missing.nonzero()[0])


def _longer_sequence(qid: str) -> Question:
    v = _sequence_values()
    lab = _sequence_lab()
    step = 30
    ln_ok = bool(lab.test_ln.y[step].isfinite().all())
    bn_ok = bool(lab.test_bn.y[step].isfinite().all())
    total = v["length"] + v["extra"]
    outcomes = [(True, False), (False, True), (True, True), (False, False)]
    return asked(
        qid,
        dict(length=v["length"], total=total, step=step, features=v["features"], last=_first_step_without_bn(lab) - 1),
        answer=_pick(outcomes, (ln_ok, bn_ok), qid),
        link=link("sequences", **v),
    )


def _sequence_missing_steps(qid: str) -> Question:
    v = _sequence_values()
    lab = _sequence_lab()
    total = v["length"] + v["extra"]
    missing = int(lab.test_bn.y.isnan().any(dim=1).sum())
    first = _first_step_without_bn(lab)
    second = int(lab.lengths[1])  # lengths are sorted longest first
    reaching = int(lab.masked.count[first])
    steps = dict(first=first, before=v["length"] - 1, last=total - 1, reaching=reaching)
    return asked(
        qid,
        dict(seed=v["seed"], batch=v["batch"], length=v["length"], second=second, total=total, answer=written(missing))
        | steps,
        answer=float(missing),
        link=link("sequences", **v),
        hi=float(total),
    )


def _outlier_others(qid: str) -> Question:
    values = dict(dist="outlier feature", batch=16, features=16, seed=0, feature=1, sample=0)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    j, i, h = data.outlier_feature(values["features"]), values["sample"], values["features"]
    if j != values["feature"]:
        raise RuntimeError(f"{qid}: the outlier is feature {j}, the link chooses {values['feature']}")
    x_hat = layer_norm(x, eps=1e-5).x_hat[i]  # (H,)
    others = torch.cat([x_hat[:j], x_hat[j + 1 :]])  # (H - 1,)
    answer = float(others.mean())
    spread = dict(
        least=fixed(float(others.min())), most=fixed(float(others.max())), zeros=fixed(-1 / math.sqrt(h - 1), 3)
    )
    return asked(
        qid,
        dict(i=i, h=h, j=j, rest=h - 1, outlier=fixed(float(x[i, j])), answer=written(answer)) | spread,
        answer=answer,
        link=link("explorer", **values),
    )


def _rms_row(qid: str) -> Question:
    base = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)  # (1, H)
    shift = 10.0
    row = base + shift
    rms = rms_norm(row, eps=1e-5)
    answer = float(rms.y[0, 0])
    ln = float(layer_norm(row, eps=1e-5).y[0, 0])
    return asked(
        qid,
        dict(
            row=", ".join(f"{v:g}" for v in row[0].tolist()),
            shift=shift,
            answer=written(answer),
            rms=fixed(float(rms.var[0, 0].sqrt())),
            ln=fixed(ln, 3),
        ),
        answer=answer,
        link=link("invariance"),
    )


def _shift_rms_vs_ln(qid: str) -> Question:
    x = torch.randn(1, 8, generator=data.generator(0), dtype=torch.float64)  # (1, H): one sample
    shift = 3.0
    ln, rms = rounding.outputs(layer_norm(x + shift), layer_norm(x)), rounding.outputs(rms_norm(x + shift), rms_norm(x))
    seen = (not ln.unchanged, not rms.unchanged)
    return asked(
        qid,
        dict(ln=ln.words(), features=x.shape[1], shift=shift, rms=fixed(rms.delta)),
        answer=_pick([(True, False), (False, True), (True, True), (False, False)], seen, qid),
        link=link("invariance"),
    )


def _train_eval_shift(qid: str) -> Question:
    values = dict(batch=16, features=8, steps=50, momentum=0.1, shift=2.0, seed=0)
    te = train_eval.train_eval(**values)
    running = dict(running_mean=te.stats.running_mean[-1], running_var=te.stats.running_var[-1])
    plain = te.bn_unshifted.x  # (B, H): the test batch without the shift
    changes = [
        rounding.outputs(te.bn_train, te.bn_unshifted),
        rounding.outputs(te.bn_eval, batch_norm(plain, training=False, **running)),
        rounding.outputs(te.ln_train, te.ln_unshifted),
    ]
    unchanged = [change.unchanged for change in changes]
    if sum(unchanged) > 1:
        raise RuntimeError(f"{qid}: more than one output is unchanged: {changes}")
    amounts = values["shift"] * te.stats.scale  # (H,): each feature's shift, in its own units
    moved = dict(train=changes[0].words(), eval=fixed(changes[1].delta), ln=fixed(changes[2].delta))
    return asked(
        qid,
        dict(shift=values["shift"], least=fixed(float(amounts.min())), most=fixed(float(amounts.max()))) | moved,
        answer=unchanged.index(True) if any(unchanged) else 3,
        link=link("train_eval", **values),
    )


def _by_hand(x: float, mean: float, var: float, gain: float, bias: float, eps: float) -> tuple[float, float]:
    """x̂ and y from the numbers a prompt gives, as a student computes them."""
    x_hat = (x - mean) / math.sqrt(var + eps)
    return x_hat, gain * x_hat + bias


def _ln_cell(qid: str) -> Question:
    values = dict(dist="heterogeneous features", batch=8, features=12, seed=0, gain=1.5, bias=0.5, sample=2, feature=5)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    ln = layer_norm(x, values["gain"], values["bias"], eps=1e-5)
    i, j = values["sample"], values["feature"]
    answer, x_hat = float(ln.y[i, j]), float(ln.x_hat[i, j])
    exact = float(x[i, j]), float(ln.mean[i, 0]), float(ln.var[i, 0])
    # The fewest decimals for x, μ and σ² from which x̂ and y, worked by hand, come out as torch writes them.
    for decimals in range(2, 9):
        given = tuple(round(v, decimals) for v in exact)
        hand_x_hat, hand_y = _by_hand(*given, values["gain"], values["bias"], 1e-5)
        if fixed(hand_x_hat, 3) == fixed(x_hat, 3) and written(hand_y) == written(answer):
            break
    else:
        raise RuntimeError(f"{qid}: no rounding of x, μ, σ² gives torch's x̂ and y")
    cell, mean, var = (fixed(v, decimals) for v in given)
    return asked(
        qid,
        dict(i=i, j=j, gain=values["gain"], bias=values["bias"], answer=written(answer), x_hat=fixed(x_hat, 3))
        | dict(mean=mean, var=var, cell=cell),
        answer=answer,
        link=link("explorer", **values, view="cell"),
    )


def _transformer_largest_sigma(qid: str) -> Question:
    tq = transformer_question
    return LiveQuestion(
        tq.answer,
        id=qid,
        **text.QUESTIONS[qid],
        prompt=tq.PROMPT,
        choices=tq.OPTIONS,
        link=link("transformer", text=tq.SENTENCE, layer=tq.LAYER, site=tq.SITE),
    )


_BUILDERS: dict[str, Callable[[str], Question]] = {  # each question's numbers, by id; its words are text.QUESTIONS
    "ln-cell": _ln_cell,
    "one-sample-coupling": _one_sample_coupling,
    "bn-one-sample-formula": _bn_one_sample_formula,
    "bn-one-sample": _bn_one_sample,
    "constant-row-eps0": _constant_row_eps0,
    "outlier-others": _outlier_others,
    "ln-invariance": _ln_invariance,
    "shift-rms-vs-ln": _shift_rms_vs_ln,
    "rms-shifted-row": _rms_row,
    "train-eval-shift": _train_eval_shift,
    "longer-sequence": _longer_sequence,
    "sequence-missing-steps": _sequence_missing_steps,
    "transformer-largest-sigma": _transformer_largest_sigma,
    **construct.BUILDERS,
}
