"""lnviz.labs.classroom.check: each item's right answer computed again here with torch, another way than the
builder's (a perturbation where it took a gradient, the running statistics' update by hand where it read the
module's), on data of this test's own with the prompt's shapes; and the counts and the normalized gain against a
hand computation in plain Python."""

from __future__ import annotations

import csv
import io
import random
import re

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lnviz.labs.classroom import check

DT = torch.float64


def item(qid: str):
    found = check.by_id(qid)
    assert found is not None, qid
    return found


def numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def right(qid: str) -> str:
    found = item(qid)
    return found.choices[found.answer]


def depends_on(output, x: torch.Tensor, cell: tuple[int, ...]) -> set[tuple[int, ...]]:
    """The inputs whose change (by 1, one at a time) changes the output at ``cell``: a perturbation, no gradient."""
    base = output(x)[cell]
    found = set()
    for index in torch.cartesian_prod(*(torch.arange(n) for n in x.shape)).tolist():
        moved = x.clone()
        moved[tuple(index)] += 1.0
        if abs(float(output(moved)[cell] - base)) > 1e-9:
            found.add(tuple(index))
    return found


def test_the_check_has_six_to_eight_choice_items_with_their_words_filled_in():
    items = check.items()
    assert 6 <= len(items) <= 8 and len({q.id for q in items}) == len(items)
    for q in items:
        assert q.kind == "choice" and len(q.choices) >= 3 and q.why and "v=" in q.link
        for text in (q.prompt, q.why, *q.choices):
            assert "{" not in text and "}" not in text, (q.id, text)
        assert check.topic(q.id)


def test_ln_depends_on_its_own_row_only():
    q = item("check-ln-axis")
    batch, features, i, j = numbers(q.prompt)[:4]
    x = torch.randn(batch, features, dtype=DT, generator=torch.Generator().manual_seed(11)) * 3 + 1
    found = depends_on(lambda x: F.layer_norm(x, (features,)), x, (i, j))
    assert found == {(i, k) for k in range(features)}
    assert right(q.id) == f"Sample {i}'s {features} features: its row"


def test_ln_gives_a_sample_the_same_output_alone_as_in_a_batch():
    q = item("check-ln-batch-size")
    (batch,) = numbers(q.prompt)[:1]
    x = torch.randn(batch, 6, dtype=DT, generator=torch.Generator().manual_seed(12)) * 2
    alone = torch.stack([F.layer_norm(x[k], (6,)) for k in range(batch)])  # each sample as a batch of its own
    assert torch.allclose(alone, F.layer_norm(x, (6,)), rtol=0, atol=1e-12)
    assert right(q.id) == "is the same both times"


def test_bn_in_eval_mode_uses_the_running_statistics_its_training_batches_left():
    q = item("check-bn-eval")
    features, steps = numbers(q.prompt)[1:3]
    g = torch.Generator().manual_seed(13)
    bn = nn.BatchNorm1d(features, dtype=DT)
    mean, var = torch.zeros(features, dtype=DT), torch.ones(features, dtype=DT)
    for _ in range(steps):
        batch = torch.randn(8, features, generator=g, dtype=DT) * 3 + 2
        bn(batch)
        m = bn.momentum  # running = (1 − m) running + m batch, with the unbiased variance
        mean, var = (1 - m) * mean + m * batch.mean(0), (1 - m) * var + m * batch.var(0, unbiased=True)
    test = torch.randn(8, features, generator=g, dtype=DT) - 4
    with torch.no_grad():
        y = bn.eval()(test)
    assert torch.allclose(y, (test - mean) / torch.sqrt(var + bn.eps), rtol=0, atol=1e-10)
    own = (test - test.mean(0)) / torch.sqrt(test.var(0, unbiased=False) + bn.eps)
    assert (y - own).abs().max() > 1
    assert right(q.id) == "The running averages it kept in training, per feature"


def test_gamma_and_beta_set_a_new_mean_and_spread_and_give_back_x_only_at_the_batchs_own_statistics():
    g = torch.Generator().manual_seed(14)
    x = torch.randn(10, 3, generator=g, dtype=DT) * torch.tensor([1.0, 4.0, 0.5], dtype=DT) + 7
    bn = nn.BatchNorm1d(3, dtype=DT)
    assert bn.weight.requires_grad and bn.bias.requires_grad  # learned, not fixed at 1 and 0
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([2.0, -0.5, 1.5]))
        bn.bias.copy_(torch.tensor([0.3, -1.0, 4.0]))
        y = bn(x)
        assert torch.allclose(y.mean(0), bn.bias, rtol=0, atol=1e-12)  # mean β
        var = x.var(0, unbiased=False)
        spread = bn.weight.abs() * var.sqrt() / (var + bn.eps).sqrt()
        assert torch.allclose(y.std(0, unbiased=False), spread, rtol=0, atol=1e-12)  # spread |γ|, up to ε
        assert not torch.allclose(y, x) and not torch.allclose(y, bn.weight * x + bn.bias)
        bn.weight.copy_((var + bn.eps).sqrt())
        bn.bias.copy_(x.mean(0))
        assert torch.allclose(bn(x), x, rtol=0, atol=1e-12)  # γ = √(σ² + ε), β = μ: x back
        bn.weight.add_(0.01)  # any other γ does not
        assert not torch.allclose(bn(x), x, rtol=0, atol=1e-6)
    assert right("check-gamma-beta").startswith("Give each feature a new mean β and spread |γ|")


def test_ln_in_a_transformer_pools_one_tokens_features():
    q = item("check-transformer-token")
    b, t, h = numbers(q.prompt)[:3]
    s, tok = numbers(q.prompt)[-2:]
    x = torch.randn(b, t, h, dtype=DT, generator=torch.Generator().manual_seed(15))
    ln = nn.LayerNorm(h, dtype=DT)
    with torch.no_grad():
        found = depends_on(ln, x, (s, tok, 0))
    assert found == {(s, tok, k) for k in range(h)}
    assert right(q.id) == f"Token {tok}'s own {h} features"


def test_ln_keeps_no_running_statistics_and_its_eval_mode_is_its_training_mode():
    ln = nn.LayerNorm(5, dtype=DT)
    assert not list(ln.buffers()) and not hasattr(ln, "running_mean")
    x = torch.randn(1, 5, dtype=DT, generator=torch.Generator().manual_seed(16)) * 3
    with torch.no_grad():
        assert torch.equal(ln.train()(x), ln.eval()(x))
        own = (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + ln.eps)
        assert torch.allclose(ln(x), own, rtol=0, atol=1e-12)
    assert right("check-ln-eval") == "The test sample's own, over its features, as in training"


def test_ln_standardizes_each_row_and_not_each_column():
    q = item("check-ln-output")
    batch, features = numbers(q.prompt)[2:4]
    x = torch.randn(batch, features, dtype=DT, generator=torch.Generator().manual_seed(17)) * 2 + torch.arange(
        features, dtype=DT
    )
    y = F.layer_norm(x, (features,))
    assert torch.allclose(y.mean(1), torch.zeros(batch, dtype=DT), atol=1e-12)
    assert torch.allclose(y.var(1, unbiased=False), torch.ones(batch, dtype=DT), atol=1e-4)
    assert not torch.allclose(y.mean(0), torch.zeros(features, dtype=DT), atol=0.1)
    assert right(q.id) == "Each sample, over its features: each row"


# --- the counts and the gain, against plain Python ----------------------------------------------------------


def hand_gain(items, pre: dict, post: dict, qid: str | None = None) -> float | None:
    """g from the answers as a person computes it: the pairs' shares right before and after."""
    before = after = pairs = 0
    for q in items:
        if qid is not None and q.id != qid:
            continue
        for voter in pre:
            if q.id in pre[voter] and voter in post and q.id in post[voter]:
                pairs += 1
                before += pre[voter][q.id] == str(q.answer)
                after += post[voter][q.id] == str(q.answer)
    if pairs == 0 or before == pairs:
        return None
    pre_share, post_share = before / pairs, after / pairs
    return (post_share - pre_share) / (1 - pre_share)


def random_answers(items, voters: list[str], rng: random.Random, skip: float) -> dict[str, dict[str, str]]:
    return {
        v: {q.id: str(rng.randrange(len(q.choices))) for q in items if rng.random() > skip}
        for v in voters
        if rng.random() > 0.2
    }


@pytest.mark.parametrize("seed", range(20))
def test_the_gain_per_item_and_overall_is_the_hand_computations(seed):
    items = check.items()
    rng = random.Random(seed)
    voters = [f"voter{k}" for k in range(rng.randrange(1, 40))]
    pre, post = random_answers(items, voters, rng, 0.3), random_answers(items, voters, rng, 0.3)
    found = check.results(items, pre, post)
    for q, counts in found.per_item:
        expected = hand_gain(items, pre, post, q.id)
        assert counts.gain == pytest.approx(expected) if expected is not None else counts.gain is None
        assert counts.pre_answered == sum(q.id in a for a in pre.values())
        assert counts.post_right == sum(a.get(q.id) == str(q.answer) for a in post.values())
    expected = hand_gain(items, pre, post)
    assert found.total.gain == pytest.approx(expected) if expected is not None else found.total.gain is None
    both = {v for v in pre if v in post and set(pre[v]) & set(post[v])}
    assert found.total.voters == len(both) and found.total.few == (len(both) < check.FEW_PAIRS)


def test_g_is_undefined_without_pairs_or_when_every_pair_was_right_before_and_may_be_negative():
    items = check.items()
    q = items[0]
    wrong = str((q.answer + 1) % len(q.choices))
    all_right = check.results([q], {"a": {q.id: str(q.answer)}}, {"a": {q.id: wrong}})
    assert all_right.total.gain is None and all_right.total.pairs == 1
    unpaired = check.results([q], {"a": {q.id: wrong}}, {"b": {q.id: str(q.answer)}})
    assert unpaired.total.gain is None and unpaired.total.pairs == 0 and unpaired.total.pre_answered == 1
    worse = check.results(
        [q], {"a": {q.id: wrong}, "b": {q.id: str(q.answer)}}, {"a": {q.id: wrong}, "b": {q.id: wrong}}
    )
    assert worse.total.gain == pytest.approx((0 - 0.5) / (1 - 0.5))


def test_the_csv_holds_counts_only_and_reads_back_as_the_results():
    items = check.items()
    pre = {"secret-voter-id-1": {q.id: "0" for q in items}, "secret-voter-id-2": {items[0].id: "1"}}
    post = {"secret-voter-id-1": {q.id: str(q.answer) for q in items}}
    found = check.results(items, pre, post)
    text = check.to_csv(found)
    assert "secret-voter-id" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["question"] for r in rows] == [q.id for q in items] + ["all"]
    for row, (_, counts) in zip(rows, [*found.per_item, (None, found.total)], strict=True):
        assert int(row["pre_answered"]) == counts.pre_answered and int(row["pairs"]) == counts.pairs
        assert (row["g"] == "") == (counts.gain is None)
        if counts.gain is not None:
            assert float(row["g"]) == pytest.approx(counts.gain, abs=1e-4)
    assert set(rows[0]) == set(check.CSV_COLUMNS)
