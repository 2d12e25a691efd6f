"""The class poll's question bank: each question, its right answer as torch computes it, and how votes count.

A :class:`Question` is either a "choice" (pick one of a few options) or a
"number" (guess a value). Every answer that depends on numbers is computed
here, with lnviz and torch in float64, the first time :func:`bank` is called;
none is typed by hand. So is every number quoted in a prompt or an
explanation. Each question's ``link`` opens the view of lnviz that shows why,
with the same values the answer was computed from.

A vote is stored as text, as :meth:`Question.parse` writes it: an option's
index ("0", "1", ...) or a guess rounded to the question's ``decimals``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import torch
import torch.nn.functional as F
from torch import Tensor

from lnviz.labs import coupling, invariance, sequences, train_eval
from lnviz.labs.classroom import transformer_question
from lnviz.maths import data
from lnviz.maths.norms import batch_norm, layer_norm, rms_norm
from lnviz.views.links import LINK_VERSION
from lnviz.views.pages import BY_NAME

KINDS = ("choice", "number")
MAX_TEXT = 32  # the longest vote text read; a phone's number or an option's index is far shorter
# A number as a person types it: digits, one optional point, an optional exponent. ASCII only, so
# Python's float() never gets to read "1_000", "١٢" or " inf ".
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MOVED = 1e-9  # |Δ| above this counts as a change; float64 rounding of order-1 outputs stays near 1e-15


@dataclass(frozen=True)
class Question:
    """One poll question and its right answer.

    For ``kind`` "choice", ``answer`` is the index of the right option in
    ``choices``. For "number", ``answer`` is torch's value; a guess must lie in
    [``lo``, ``hi``], is stored rounded to ``decimals``, and counts as right
    when it is within ``tolerance`` of the answer (absolute, default 0.05:
    about what working from the prompt's 2-decimal numbers costs).
    """

    id: str  # short stable slug, e.g. "one-sample-bn"
    kind: str  # "choice" or "number"
    prompt: str  # one or two short sentences, markdown
    choices: tuple[str, ...] = ()  # "choice": the options; "number": ()
    answer: int | float = 0  # "choice": the right option's index; "number": torch's value
    why: str = ""  # shown after the reveal, with torch's numbers
    link: str = ""  # relative URL of the view that shows why, ending in v=LINK_VERSION
    lo: float = 0.0  # "number": the smallest guess taken
    hi: float = 0.0  # "number": the largest guess taken
    decimals: int = 2  # "number": guesses are stored rounded to this many decimals
    tolerance: float = 0.05  # "number": |guess − answer| up to this is right

    def __post_init__(self) -> None:
        if not _SLUG.fullmatch(self.id):
            raise ValueError(f"question id must be a lowercase slug, got {self.id!r}")
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "choice":
            if len(self.choices) < 2:
                raise ValueError(f"{self.id}: a choice question needs at least 2 options")
            if not isinstance(self.answer, int) or not 0 <= self.answer < len(self.choices):
                raise ValueError(f"{self.id}: answer must be an option's index, got {self.answer!r}")
            return
        if self.choices:
            raise ValueError(f"{self.id}: a number question has no options")
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"{self.id}: need finite lo < hi, got [{self.lo}, {self.hi}]")
        if not (math.isfinite(self.answer) and self.lo <= self.answer <= self.hi):
            raise ValueError(f"{self.id}: answer {self.answer} is not a guess one could give in [{self.lo}, {self.hi}]")
        if self.decimals < 0 or not self.tolerance >= 0:
            raise ValueError(f"{self.id}: decimals and tolerance must be >= 0")

    @property
    def answer_text(self) -> str:
        """The right answer as the reveal writes it: the option, or torch's value to 4 significant digits."""
        if self.kind == "choice":
            return self.choices[self.answer]
        return _g(self.answer)

    def parse(self, raw: object) -> str | None:
        """A vote as stored, or None if ``raw`` is not one.

        "choice": the option's index as a string ("0" to "n-1"), from an int
        or a string of ASCII digits. "number": the guess rounded to
        ``decimals``, as a string ("-0.00" written "0.00"), from an int, a
        float or a string such as "1.5", "-.25" or "2e-1". None for a bool,
        NaN or ±inf, a value out of range, an index that is no option, text
        that is not a plain number, and text over :data:`MAX_TEXT` characters.
        """
        if isinstance(raw, bool):
            return None
        if isinstance(raw, str):
            text = raw.strip()
            if len(raw) > MAX_TEXT or not text.isascii():
                return None
        if self.kind == "choice":
            if isinstance(raw, int):
                index = raw
            elif isinstance(raw, str) and text.isdigit():
                index = int(text)
            else:
                return None
            return str(index) if 0 <= index < len(self.choices) else None
        try:
            if isinstance(raw, int | float):
                value = float(raw)
            elif isinstance(raw, str) and _NUMBER.fullmatch(text):
                value = float(text)
            else:
                return None
        except OverflowError:  # an int too large for a float
            return None
        if not (math.isfinite(value) and self.lo <= value <= self.hi):
            return None
        stored = f"{round(value, self.decimals):.{self.decimals}f}"
        if float(stored) == 0:
            stored = f"{0:.{self.decimals}f}"
        return stored if self.lo <= float(stored) <= self.hi else None

    def right(self, vote: object) -> bool:
        """Whether ``vote`` is right: the right option, or a guess within ``tolerance`` of torch's value."""
        stored = self.parse(vote)
        if stored is None:
            return False
        if self.kind == "choice":
            return stored == str(self.answer)
        return abs(float(stored) - self.answer) <= self.tolerance + 1e-9  # the guess itself is rounded


def tally(question: Question, votes: Iterable[object]) -> dict[str, int]:
    """How many votes each answer got; votes :meth:`Question.parse` refuses are left out.

    "choice": every option's index, "0" to "n-1", with its count, zeros
    included. "number": each stored guess that was given, in increasing order.
    """
    counts = {str(i): 0 for i in range(len(question.choices))}
    for vote in votes:
        stored = question.parse(vote)
        if stored is not None:
            counts[stored] = counts.get(stored, 0) + 1
    if question.kind == "number":
        return dict(sorted(counts.items(), key=lambda item: float(item[0])))
    return counts


@functools.cache
def bank() -> tuple[Question, ...]:
    """Every question, in the order a lecture might ask them. Computed once, on the first call."""
    return tuple(build() for build in _BUILDERS)


def by_id(qid: str) -> Question:
    """The question with id ``qid``; KeyError if there is none."""
    for question in bank():
        if question.id == qid:
            return question
    raise KeyError(qid)


def link(page: str, **values: Any) -> str:
    """The relative URL of ``page`` (a name in :data:`lnviz.views.pages.BY_NAME`) with these control values.

    Each value is written as the control writes it, so a key that is not one
    of the page's controls raises KeyError here rather than making a dead link.
    """
    entry = BY_NAME[page]
    path = "/" if entry.default else f"/{entry.url_path}"
    query = {key: entry.controls[key].format(value) for key, value in values.items()} | {"v": str(LINK_VERSION)}
    return f"{path}?{urlencode(query, quote_via=quote)}"


def _plain(text: str) -> str:
    """A number's text for prose: a real minus sign."""
    return text.replace("-", "−")


def _g(value: float) -> str:
    """torch's value as the reveal writes it: 4 significant digits."""
    return _plain(f"{value:.4g}")


def _f(value: float, decimals: int = 2) -> str:
    return _plain(f"{value:.{decimals}f}")


def _e(value: float) -> str:
    """A tiny |Δ| in prose: one digit, such as 2e−15."""
    return _plain(f"{value:.0e}")


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


def _one_sample_coupling() -> Question:
    batch, features, seed, sample, amount = 8, 16, 0, 2, 5.0
    c = coupling.couple(batch, features, seed, sample, "outlier", amount)
    every, alone = tuple(range(batch)), (sample,)
    outcomes = [(every, alone), (alone, every), (alone, alone), (every, every)]
    others = [i for i in range(batch) if i != sample]
    return Question(
        id="one-sample-coupling",
        kind="choice",
        prompt=f"A batch has {batch} samples. Sample {sample} is replaced by a fresh random row, scaled by "
        f"{amount:g}. Whose outputs change under BN (training mode), and whose under LN?",
        choices=(
            f"BN: every sample's. LN: sample {sample}'s only.",
            f"BN: sample {sample}'s only. LN: every sample's.",
            f"Both: sample {sample}'s only.",
            "Both: every sample's.",
        ),
        answer=_pick(outcomes, (c.bn_rows_changed, c.ln_rows_changed), "one-sample-coupling"),
        why=f"BN's μ and σ² for each feature pool all {batch} samples. So every output moves: by up to "
        f"{_f(float(c.bn_delta[others].max()))} in the samples other than {sample}. LN's μ and σ² are each "
        f"sample's own. Only sample {sample}'s LN outputs move.",
        link=link(
            "coupling", batch=batch, features=features, seed=seed, sample=sample, perturb="outlier", amount=amount
        ),
    )


def _bn_one_sample() -> Question:
    x = torch.tensor([[3.1, -0.4, 2.0, 0.9]], dtype=torch.float64)  # (1, 4): one sample
    h = x.shape[1]
    gain, bias = torch.full((h,), 2.0, dtype=torch.float64), torch.full((h,), 0.7, dtype=torch.float64)
    stats = torch.zeros(h, dtype=torch.float64), torch.ones(h, dtype=torch.float64)
    try:
        y = F.batch_norm(x, *stats, gain, bias, training=True)
        seen, message = _outcome(y, bias), ""
    except ValueError as error:
        seen, message = "ValueError", str(error).split(",")[0]
    return Question(
        id="bn-one-sample",
        kind="choice",
        prompt="x has shape (1, 4): a batch of one sample. What does "
        "`F.batch_norm(x, running_mean, running_var, weight, bias, training=True)` do?",
        choices=("Returns β for every feature", "Returns 0 for every feature", "Returns NaN", "Raises ValueError"),
        answer=_pick(["beta", "0", "nan", "ValueError"], seen, "bn-one-sample"),
        why=f"torch raises ValueError: “{message}”. nn.BatchNorm1d does the same in training mode. The formula "
        "alone would give β (with the default ε = 1e-5), since x − μ = 0 and σ² = 0. In eval mode, with running "
        "statistics, one sample is fine.",
        link=link("explorer", batch=1),
    )


def _bn_one_sample_formula() -> Question:
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
    return Question(
        id="bn-one-sample-formula",
        kind="number",
        prompt=f"Suppose BN applied its formula to a batch of one sample anyway. With x = {x.item():g}, "
        f"γ = {gain:g}, β = {bias:g} and ε = 1e-5, what would y be?",
        answer=answer,
        why=f"torch: {_g(answer)}, which is β. The batch mean is the sample itself, so x − μ = 0 and "
        f"σ² = 0: y = γ · 0 / √ε + β. F.batch_norm in eval mode, with running_mean = {x.item():g} and "
        f"running_var = 0, gives {fused!r}: β to {digits} decimals. In training mode it refuses one "
        "value per channel.",
        link=link("explorer", batch=1, gain=gain, bias=bias),
        lo=-5.0,
        hi=5.0,
        tolerance=0.005,
    )


def _constant_row_eps0() -> Question:
    values = dict(dist="constant row", batch=8, features=12, seed=0, bias=0.5, eps=0.0, sample=0)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    row = layer_norm(x, 1.0, values["bias"], eps=0.0).y[0]  # (H,)
    with_eps = layer_norm(x, 1.0, values["bias"], eps=1e-5).y[0]  # (H,)
    seen = _outcome(row, values["bias"])
    constant = float(x[0, 0])
    return Question(
        id="constant-row-eps0",
        kind="choice",
        prompt=f"Sample 0 is constant: every feature is {constant:g}. With ε = 0 and β = {values['bias']:g}, "
        "what does LN give for it?",
        choices=("0 for every feature", "β for every feature", "NaN for every feature", "An error"),
        answer=_pick(["0", "beta", "nan", "error"], seen, "constant-row-eps0"),
        why=f"x − μ = 0 and σ² = 0, so x̂ = 0/0: torch gives NaN for all {values['features']} features. "
        f"With ε = 1e-5, x̂ = 0 and y = β: torch gives {_plain(f'{float(with_eps.max()):g}')}.",
        link=link("explorer", **values, view="cell"),
    )


def _ln_invariance() -> Question:
    eps, seed = 1e-5, 0
    result = invariance.invariance(eps, seed)
    delta, marks = result.table["LN"], invariance.marks(result.table)["LN"]
    options = ("weight_vector_rescale", "dataset_recenter", "case_rescale")
    unchanged = [name for name in options if marks[name]]
    if len(unchanged) != 1:
        raise RuntimeError(f"ln-invariance: LN is unchanged by {unchanged}, not by exactly one option")
    name = invariance.TRANSFORM_LABELS
    return Question(
        id="ln-invariance",
        kind="choice",
        prompt="Which change leaves LN's output unchanged? (Ba, Kiros and Hinton 2016, Table 1)",
        choices=tuple(name[t].replace("<br>", " ").capitalize() for t in options),
        answer=options.index(unchanged[0]),
        why=f"Scaling one case by δ = {invariance.FACTOR:g} scales its summed inputs, and so their μ and σ, by "
        f"{invariance.FACTOR:g}. LN's output moves by at most {_e(delta['case_rescale'])}, from ε alone. "
        f"Scaling one unit's weights moves it by up to {_f(delta['weight_vector_rescale'])}. Adding one vector "
        f"to every case moves it by up to {_f(delta['dataset_recenter'])}.",
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


def _longer_sequence() -> Question:
    v = _sequence_values()
    lab = _sequence_lab()
    step = 30
    ln_ok = bool(lab.test_ln.y[step].isfinite().all())
    bn_ok = bool(lab.test_bn.y[step].isfinite().all())
    total = v["length"] + v["extra"]
    return Question(
        id="longer-sequence",
        kind="choice",
        prompt=f"Training sequences have at most {v['length']} steps; a test sequence has {total}. Per-step BN "
        f"keeps one μ and σ² per training step. Which norm has the statistics it needs at step {step}?",
        choices=("Only LN", "Only per-step BN", "Both", "Neither"),
        answer=_pick([(True, False), (False, True), (True, True), (False, False)], (ln_ok, bn_ok), "longer-sequence"),
        why=f"LN computes μ and σ² from the token's own {v['features']} features, at any step. Per-step BN needs "
        f"2 training samples at a step: here it has them at steps 0 to {_first_step_without_bn(lab) - 1} only, "
        "and the lab gives NaN after that. One remedy reuses the last training step's statistics for longer "
        "sequences (Cooijmans et al. 2016).",
        link=link("sequences", **v),
    )


def _sequence_missing_steps() -> Question:
    v = _sequence_values()
    lab = _sequence_lab()
    total = v["length"] + v["extra"]
    missing = int(lab.test_bn.y.isnan().any(dim=1).sum())
    first = _first_step_without_bn(lab)
    second = int(lab.lengths[1])  # lengths are sorted longest first
    return Question(
        id="sequence-missing-steps",
        kind="number",
        prompt=f"Seed {v['seed']}: {v['batch']} training sequences, the longest {v['length']} steps, the "
        f"second-longest {second}. Per-step BN needs 2 real samples at a step. How many of the test "
        f"sequence's {total} steps have no BN statistics?",
        answer=float(missing),
        why=f"torch: {_g(missing)}. Only {int(lab.masked.count[first])} training sequence reaches step {first}, so "
        f"steps {first} to {v['length'] - 1} have too few samples, and steps {v['length']} to {total - 1} have "
        "none. LN needs nothing but the token itself.",
        link=link("sequences", **v),
        lo=0.0,
        hi=float(total),
        decimals=0,
        tolerance=0.0,
    )


def _outlier_others() -> Question:
    values = dict(dist="outlier feature", batch=16, features=16, seed=0, feature=1, sample=0)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    j, i, h = data.outlier_feature(values["features"]), values["sample"], values["features"]
    if j != values["feature"]:
        raise RuntimeError(f"outlier-others: the outlier is feature {j}, the link chooses {values['feature']}")
    x_hat = layer_norm(x, eps=1e-5).x_hat[i]  # (H,)
    others = torch.cat([x_hat[:j], x_hat[j + 1 :]])  # (H - 1,)
    answer = float(others.mean())
    return Question(
        id="outlier-others",
        kind="number",
        prompt=f"Sample {i} has {h} features. Feature {j} is an outlier, x = {_f(float(x[i, j]))}; the other "
        f"{h - 1} are standard normal. With ε = 1e-5, what x̂ does LN give those {h - 1}, on average?",
        answer=answer,
        why=f"torch: {_g(answer)} on average, from {_f(float(others.min()))} to {_f(float(others.max()))}. "
        f"The outlier dominates the sample's μ and σ. Were the {h - 1} exactly 0, each would get "
        f"−1/√{h - 1} ≈ {_f(-1 / math.sqrt(h - 1), 3)}. BN normalizes feature {j} in a column of its own.",
        link=link("explorer", **values),
        lo=-3.0,
        hi=3.0,
    )


def _rms_row() -> Question:
    base = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)  # (1, H)
    shift = 10.0
    row = base + shift
    rms = rms_norm(row, eps=1e-5)
    answer = float(rms.y[0, 0])
    ln = float(layer_norm(row, eps=1e-5).y[0, 0])
    return Question(
        id="rms-shifted-row",
        kind="number",
        prompt=f"A sample's summed inputs are ({', '.join(f'{v:g}' for v in row[0].tolist())}): "
        f"(1, 2, 3, 4) shifted by {shift:g}. With γ = 1 and ε = 1e-5, what does RMSNorm give for the first?",
        answer=answer,
        why=f"torch: {_g(answer)}. RMSNorm divides by √(mean(x²) + ε) = {_f(float(rms.var[0, 0].sqrt()))} and "
        f"does not subtract μ. LN subtracts μ first: it gives {_f(ln, 3)}, as it does for (1, 2, 3, 4).",
        link=link("invariance"),
        lo=-5.0,
        hi=5.0,
    )


def _shift_rms_vs_ln() -> Question:
    x = torch.randn(1, 8, generator=data.generator(0), dtype=torch.float64)  # (1, H): one sample
    shift = 3.0
    ln_d = float((layer_norm(x + shift).y - layer_norm(x).y).abs().max())
    rms_d = float((rms_norm(x + shift).y - rms_norm(x).y).abs().max())
    seen = (ln_d > MOVED, rms_d > MOVED)
    return Question(
        id="shift-rms-vs-ln",
        kind="choice",
        prompt="Every summed input of one sample is shifted by the same amount. Whose output for that sample changes?",
        choices=("Only LN's", "Only RMSNorm's", "Both", "Neither"),
        answer=_pick([(True, False), (False, True), (True, True), (False, False)], seen, "shift-rms-vs-ln"),
        why=f"LN subtracts the sample's μ, which takes up the shift: its output moves by {_e(ln_d)}, rounding. "
        f"RMSNorm does not subtract μ: with {x.shape[1]} standard-normal inputs shifted by {shift:g}, its output "
        f"moves by up to {_f(rms_d)}. The invariance table calls this weight matrix re-centering.",
        link=link("invariance"),
    )


def _train_eval_shift() -> Question:
    values = dict(batch=16, features=8, steps=50, momentum=0.1, shift=2.0, seed=0)
    te = train_eval.train_eval(**values)
    running = dict(running_mean=te.stats.running_mean[-1], running_var=te.stats.running_var[-1])
    plain = te.bn_unshifted.x  # (B, H): the test batch without the shift
    eval_d = (te.bn_eval.y - batch_norm(plain, training=False, **running).y).abs().max()
    deltas = [float(te.bn_shift_delta.max()), float(eval_d), float(te.ln_shift_delta.max())]
    unchanged = [d <= MOVED for d in deltas]
    if sum(unchanged) > 1:
        raise RuntimeError(f"train-eval-shift: more than one output is unchanged: {deltas}")
    amounts = values["shift"] * te.stats.scale  # (H,): each feature's shift, in its own units
    return Question(
        id="train-eval-shift",
        kind="choice",
        prompt=f"A test batch is shifted by {values['shift']:g} standard deviations in every feature. The "
        f"features' σ differ, so the shift does too: from {_f(float(amounts.min()))} to "
        f"{_f(float(amounts.max()))}. Which output does the shift leave unchanged?",
        choices=(
            "BN in training mode (the batch's own μ, σ²)",
            "BN in eval mode (running μ, σ²)",
            "LN",
            "None of them",
        ),
        answer=unchanged.index(True) if any(unchanged) else 3,
        why=f"BN in training mode moves by {_e(deltas[0])}, rounding: the batch's own μ takes up the shift. "
        f"In eval mode the running μ does not, and outputs move by up to {_f(deltas[1])}. LN moves by up to "
        f"{_f(deltas[2])}: the shift differs per feature, so it changes each sample's μ and σ "
        "(Ba, Kiros and Hinton 2016, Table 1: dataset re-centering, ✗ for LN).",
        link=link("train_eval", **values),
    )


def _ln_cell() -> Question:
    values = dict(dist="heterogeneous features", batch=8, features=12, seed=0, gain=1.5, bias=0.5, sample=2, feature=5)
    x = data.make_activations(values["dist"], values["batch"], values["features"], values["seed"])  # (B, H)
    ln = layer_norm(x, values["gain"], values["bias"], eps=1e-5)
    i, j = values["sample"], values["feature"]
    mean, var, cell = float(ln.mean[i, 0]), float(ln.var[i, 0]), float(x[i, j])
    answer = float(ln.y[i, j])
    return Question(
        id="ln-cell",
        kind="number",
        prompt=f"Sample {i} has μ = {_f(mean)} and σ² = {_f(var)}. Its feature {j} is x = {_f(cell)}. "
        f"With γ = {values['gain']:g}, β = {values['bias']:g} and ε = 1e-5, what is LN's y there?",
        answer=answer,
        why=f"torch: {_g(answer)}. x̂ = (x − μ) / √(σ² + ε) = {_f(float(ln.x_hat[i, j]), 3)}, and "
        f"y = {values['gain']:g} · x̂ + {values['bias']:g}.",
        link=link("explorer", **values, view="cell"),
        lo=-10.0,
        hi=10.0,
    )


class LiveQuestion(Question):
    """A :class:`Question` whose ``answer`` and ``why`` come from ``live()``, computed once, when first read.

    For an answer that costs more than building the bank should (a pretrained model's run): the bank is
    built when /class opens, the answer is read at the reveal. ``live`` checks its own answer.
    """

    def __init__(self, live: Callable[[], tuple[int, str]], **fields: Any) -> None:
        object.__setattr__(self, "_live", functools.cache(live))
        super().__init__(**fields)

    def __post_init__(self) -> None:  # everything but the answer, which is not computed yet
        Question(**{name: getattr(self, name) for name in ("id", "kind", "prompt", "choices")})

    # Data descriptors win over the dataclass's fields; the frozen __init__'s assignments to them are ignored.
    answer = property(lambda self: self._live()[0], lambda self, value: None)
    why = property(lambda self: self._live()[1], lambda self, value: None)


def _transformer_largest_sigma() -> Question:
    tq = transformer_question
    return LiveQuestion(
        tq.answer,
        id="transformer-largest-sigma",
        kind="choice",
        prompt=tq.PROMPT,
        choices=tq.OPTIONS,
        link=link("transformer", text=tq.SENTENCE, layer=tq.LAYER, site=tq.SITE),
    )


_BUILDERS: tuple[Callable[[], Question], ...] = (
    _ln_cell,
    _one_sample_coupling,
    _bn_one_sample_formula,
    _bn_one_sample,
    _constant_row_eps0,
    _outlier_others,
    _ln_invariance,
    _shift_rms_vs_ln,
    _rms_row,
    _train_eval_shift,
    _longer_sequence,
    _sequence_missing_steps,
    _transformer_largest_sigma,
)
