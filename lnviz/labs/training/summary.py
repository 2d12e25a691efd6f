"""The race's story: who finished ahead on the held-out set, by how much, and how soon each got there.

:func:`summarize` reads a :class:`~lnviz.labs.training.loop.Race` (finished,
stopped, or cut for a replay with ``Race.at``) and returns a frozen
:class:`Summary`; :func:`story` says it in words, :func:`story_table` as rows.
Every number comes from the curves the chart draws: the held-out loss and
accuracy at each variant's last evaluation, and the first evaluation at which
a curve reached a target. Losses are compared as the page prints them (three
significant digits), so the words never call a race for a number the reader
sees as equal. Finishes within :data:`CLOSE` of each other are called level:
on these small races another seed can swap them (at batch 1, LN against no
norm over seeds 0 to 5: within 5% four times, behind by 8% and 13% twice).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lnviz.labs.training.loop import Race
from lnviz.labs.training.tasks import VARIANTS

CLOSE = 1.05  # a loss within 5% of another's is "about level"
# Held-out accuracy a variant has to reach, per task. The adding task counts a sum within ±0.1 as right, and
# its races here stay far below 90%: its loss target alone tells the story.
ACCURACY_TARGET: dict[str, float] = {"spirals": 0.9}
NAMES = {"none": "no norm", "BN": "BN", "LN": "LN", "RMSNorm": "RMSNorm"}


def shown(loss: float) -> float:
    """A loss as the page prints it: three significant digits."""
    return float(f"{loss:.3g}")


def loss_text(loss: float) -> str:
    """A loss as the page prints it: 0.0839, 0.600, 1.50."""
    return f"{shown(loss):#.3g}".rstrip(".")


def times(ratio: float) -> str:
    """A ratio of two losses, e.g. "1.07×" or "2.3×"."""
    return f"{ratio:.2f}×" if ratio < 2 else f"{ratio:.1f}×"


@dataclass(frozen=True)
class Standing:
    """One variant at the end of the race (or of what ran of it).

    ``loss`` and ``accuracy``: held-out, at the last evaluation, step
    ``evaluated``. ``to_loss`` and ``to_accuracy``: the first evaluation step
    at which the held-out loss was at most the summary's ``target_loss``, or
    the accuracy at least its ``target_accuracy`` (None: never, or no target).
    ``failed_at``: the step at which the variant failed, or None.
    """

    variant: str
    loss: float
    accuracy: float
    evaluated: int
    to_loss: int | None
    to_accuracy: int | None
    failed_at: int | None


@dataclass(frozen=True)
class Summary:
    """Who finished ahead after ``done`` of ``steps`` steps, one :class:`Standing` per variant.

    ``ranking`` holds the variants that did not fail and whose final held-out
    loss is finite, lowest (as shown) first. ``target_loss`` is no norm's final held-out loss
    (None if no norm failed); ``target_accuracy`` comes from ACCURACY_TARGET.
    """

    task: str
    batch: int
    steps: int
    done: int
    every: int  # the held-out set was scored every this many steps
    standings: tuple[Standing, ...]
    ranking: tuple[str, ...]
    target_loss: float | None
    target_accuracy: float | None

    def standing(self, variant: str) -> Standing:
        for s in self.standings:
            if s.variant == variant:
                return s
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")

    @property
    def winner(self) -> str | None:
        """The variant with the lowest final held-out loss, or None if every variant failed."""
        return self.ranking[0] if self.ranking else None

    @property
    def margin(self) -> float:
        """The runner-up's final loss over the winner's, as shown (NaN with fewer than two ranked)."""
        if len(self.ranking) < 2:
            return float("nan")
        first, second = (shown(self.standing(v).loss) for v in self.ranking[:2])
        return second / first if first > 0 else float("inf")

    @property
    def leaders(self) -> tuple[str, ...]:
        """The ranked variants whose final loss (as shown) is within CLOSE of the winner's: about level with it."""
        if not self.ranking:
            return ()
        best = shown(self.standing(self.ranking[0]).loss)
        return tuple(v for v in self.ranking if shown(self.standing(v).loss) <= CLOSE * best)

    def versus(self, a: str, b: str) -> str | None:
        """How ``a`` finished against ``b`` on held-out loss: "lower", "higher" or "level"; None if one is not ranked."""
        if a not in self.ranking or b not in self.ranking:
            return None
        sa, sb = self.standing(a), self.standing(b)
        la, lb = shown(sa.loss), shown(sb.loss)
        if max(la, lb) <= CLOSE * min(la, lb):
            return "level"
        return "lower" if la < lb else "higher"


def _first(steps: tuple[int, ...], hits: list[bool]) -> int | None:
    return next((s for s, hit in zip(steps, hits, strict=True) if hit), None)


def summarize(result: Race) -> Summary:
    """The story of ``result``: final held-out loss and accuracy per variant, the ranking, and steps to targets."""
    none = result.curve("none")
    target_loss = None if none.failed else none.loss[-1]
    target_accuracy = ACCURACY_TARGET.get(result.task)
    standings = []
    for c in result.curves:
        to_loss = None if target_loss is None else _first(c.eval_steps, [v <= target_loss for v in c.loss])
        reached = [target_accuracy is not None and a >= target_accuracy for a in c.accuracy]
        standings.append(
            Standing(
                variant=c.variant,
                loss=c.loss[-1],
                accuracy=c.accuracy[-1],
                evaluated=c.eval_steps[-1],
                to_loss=to_loss,
                to_accuracy=_first(c.eval_steps, reached),
                failed_at=c.failed_at,
            )
        )
    trained = [s for s in standings if s.failed_at is None and math.isfinite(s.loss)]
    ranking = tuple(s.variant for s in sorted(trained, key=lambda s: shown(s.loss)))  # stable: VARIANTS order
    return Summary(
        task=result.task,
        batch=result.batch,
        steps=result.steps,
        done=result.done,
        every=result.eval_every,
        standings=tuple(standings),
        ranking=ranking,
        target_loss=target_loss,
        target_accuracy=target_accuracy,
    )


# ---------------------------------------------------------------- the words


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _headline(s: Summary) -> str:
    when = f"After {s.done} steps" if s.done == s.steps else f"After {s.done} of {s.steps} steps"
    if not s.ranking:
        return f"{when}, no model is left in the race: every one failed."
    w = s.standing(s.ranking[0])
    if len(s.ranking) == 1:
        return f"{when}, only {NAMES[w.variant]} is left in the race: held-out loss {loss_text(w.loss)}."
    leaders = s.leaders
    if len(leaders) > 1:
        names = _and([NAMES[v] for v in leaders])
        losses = _and([loss_text(s.standing(v).loss) for v in leaders])
        return (
            f"{when}, {names} are about level on held-out loss: {losses}, within 5% of the lowest, too close to "
            "call on one seed."
        )
    r = s.standing(s.ranking[1])
    return (
        f"{when}, {NAMES[w.variant]} has the lowest held-out loss: {loss_text(w.loss)}, {times(s.margin)} below "
        f"the next, {NAMES[r.variant]} ({loss_text(r.loss)})."
    )


def _accuracy(s: Summary) -> str | None:
    """Who leads on held-out accuracy (as shown, whole per cent), said against the loss winner."""
    if len(s.ranking) < 2:
        return None
    percent = {v: round(100 * s.standing(v).accuracy) for v in s.ranking}
    best = max(percent.values())
    leaders = [v for v in s.ranking if percent[v] == best]
    winner = s.ranking[0]
    if winner in leaders:
        shared = [NAMES[v] for v in leaders if v != winner]
        return f"The highest held-out accuracy, {best}%, is {NAMES[winner]}'s" + (
            f", shared with {_and(shared)}." if shared else "."
        )
    return (
        f"By held-out accuracy, though, {_and([NAMES[v] for v in leaders])} "
        f"{'leads' if len(leaders) == 1 else 'lead'}: {best}% against {NAMES[winner]}'s {percent[winner]}%."
    )


def _reached(s: Summary, steps: dict[str, int | None], goal: str, itself: str = "") -> str:
    """ "To get {goal}: LN by step 60, ...; BN never did." ``itself`` follows no norm's name."""
    ranked = [v for v in VARIANTS if v in s.ranking]
    got = sorted((steps[v], v) for v in ranked if steps[v] is not None)
    never = [NAMES[v] for v in ranked if steps[v] is None]
    if not got:
        return f"No model got {goal}."
    parts = [f"{NAMES[v]}{itself if v == 'none' else ''} by step {k}" for k, v in got]
    return f"To get {goal}: {', '.join(parts)}" + (f"; {_and(never)} never did." if never else ".")


def _targets(s: Summary) -> list[str]:
    """How soon each variant reached no norm's final loss and the accuracy target, as a sentence each."""
    said = []
    if s.target_loss is not None and len(s.ranking) > 1:
        steps = {st.variant: st.to_loss for st in s.standings}
        said.append(_reached(s, steps, f"down to no norm's final loss ({loss_text(s.target_loss)})", " itself"))
    if s.target_accuracy is not None and s.ranking:
        steps = {st.variant: st.to_accuracy for st in s.standings}
        said.append(_reached(s, steps, f"to {s.target_accuracy:.0%} held-out accuracy"))
    if said:
        said[-1] += f" (The held-out set is scored every {f'{s.every} steps' if s.every > 1 else 'step'}.)"
    return said


def _ln_against_none(s: Summary) -> str | None:
    """The page's question, LN against no norm, in the words the two numbers allow."""
    verdict = s.versus("LN", "none")
    if verdict is None:
        return None
    ln, none = s.standing("LN"), s.standing("none")
    numbers = f"{loss_text(ln.loss)} against {loss_text(none.loss)}"
    text = {
        "lower": f"LN against no norm: LN finished {times(shown(none.loss) / shown(ln.loss))} lower ({numbers}).",
        "level": f"LN against no norm: about level ({numbers}, within 5%), so this race does not show LN helping.",
        "higher": f"LN against no norm: LN finished higher ({numbers}), so at these settings LN did not beat the "
        "model without a norm.",
    }[verdict]
    if verdict != "lower" and ln.to_loss is not None and none.to_loss is not None and ln.to_loss < none.to_loss:
        text += f" It did get down to no norm's final loss first (step {ln.to_loss} against {none.to_loss})."
    if s.batch == 1:
        text += " At batch 1 LN trains where BN cannot" + (
            ", and here it also did better than no norm."
            if verdict == "lower"
            else ", but training at all is not the same as training better."
        )
    return text


def _failures(s: Summary) -> str | None:
    """The variants left out of the ranking: failed (the page warns why), or with a held-out loss that is not
    finite (their weights blew up on the held-out set before a training loss did)."""
    failed = [f"{NAMES[st.variant]} at step {st.failed_at}" for st in s.standings if st.failed_at is not None]
    lost = [
        f"{NAMES[st.variant]} ({st.loss})" for st in s.standings if st.failed_at is None and st.variant not in s.ranking
    ]
    said = []
    if failed:
        said.append(f"Failed, so not ranked (see the warning below): {_and(failed)}.")
    if lost:
        said.append(f"Held-out loss not a finite number, so not ranked: {_and(lost)}.")
    return " ".join(said) or None


def story(s: Summary, brief: bool = False) -> list[str]:
    """The summary in plain sentences, one paragraph each: the finish, accuracy, the targets, LN against no
    norm, and which variants failed. Every number is one the table and the chart show. ``brief`` leaves out
    accuracy and the targets, which the table also holds (for a projector)."""
    said = [_headline(s), *([] if brief else [_accuracy(s), *_targets(s)]), _ln_against_none(s), _failures(s)]
    return [text for text in said if text]


def story_alt(s: Summary) -> str:
    """The race chart's text alternative: what it shows, and its story."""
    return f"Held-out loss (log scale) and accuracy of each model over {s.done} steps. " + " ".join(story(s))


def story_table(s: Summary) -> list[dict[str, str]]:
    """One row per variant, ranked first, then the rest (a held-out loss that is not finite, or failed): final
    held-out loss and accuracy, steps to targets."""
    order = [*s.ranking, *(st.variant for st in s.standings if st.variant not in s.ranking)]
    loss_goal = None if s.target_loss is None else f"Loss ≤ {loss_text(s.target_loss)} by step"
    accuracy_goal = None if s.target_accuracy is None else f"{s.target_accuracy:.0%} accuracy by step"
    rows = []
    for variant in order:
        st = s.standing(variant)
        failed = st.failed_at is not None
        row = {
            "Model": NAMES[variant],
            "Held-out loss": f"failed at step {st.failed_at}"
            if failed
            else loss_text(st.loss),  # nan, inf shown as such
            "Accuracy": "–" if failed else f"{st.accuracy:.0%}",
        }
        for goal, step in ((loss_goal, st.to_loss), (accuracy_goal, st.to_accuracy)):
            if goal:
                row[goal] = "–" if failed else "never" if step is None else str(step)
        rows.append(row)
    return rows
