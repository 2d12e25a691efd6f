"""Lesson stories: what they claim is what the app shows, and the pages they send to exist."""

import itertools
import math
import re
from urllib.parse import parse_qs, urlparse

import pytest
import torch.nn.functional as F
from conftest import assert_no_exception, run_page

from lnviz.labs import coupling, explorer
from lnviz.maths import data
from lnviz.views import lessons, links, pages


def _links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", markdown)


def test_small_batch_lesson_sends_to_the_coupling_page_at_its_own_batch_size():
    """A new seed redraws all of x, so it cannot isolate BN's batch noise; the coupling page's sweep does."""
    lesson = lessons.LESSONS["small-batch"]
    (link,) = [u for u in _links(lesson.story) if urlparse(u).path == "/coupling"]
    query = {k: v[0] for k, v in parse_qs(urlparse(link).query).items()}
    assert query == {"batch": str(lesson.values["batch"]), "v": str(links.LINK_VERSION)}
    assert "jumps around" not in lesson.story

    at = run_page("pages/coupling.py", query)
    assert_no_exception(at)
    assert at.select_slider(key="batch").value == lesson.values["batch"]
    assert not at.info  # the link needed no adjusting
    assert "One sample, many batches" in [s.value for s in at.subheader]


def test_a_new_seed_moves_ln_about_as_much_as_bn_at_the_small_batch_lessons_settings():
    """Why the story no longer says that only BN's output jumps when the seed changes."""
    v = lessons.LESSONS["small-batch"].values
    out = [explorer.normalize(data.make_activations(v["dist"], v["batch"], v["features"], s)) for s in range(4)]
    for a, b in itertools.pairwise(out):
        ln = float((a.ln.y - b.ln.y).abs().mean())
        bn = float((a.bn.y - b.bn.y).abs().mean())
        assert 0.5 < ln / bn < 2

    # The coupling page's sweep keeps the sample: its LN output is one value, its BN output moves.
    sweep = coupling.sweep_for(v["batch"], v["features"], 0, 0)
    at_four = sweep.bn_y[sweep.sizes.index(v["batch"])]  # (R, H): one row per set of batch-mates
    assert float(at_four.std(dim=0).mean()) > 0.1
    assert sweep.ln_y.shape == (v["features"],)


@pytest.mark.parametrize("name", lessons.LESSONS)
def test_every_lesson_value_is_a_control_of_its_page_and_one_it_can_take(name):
    lesson = lessons.LESSONS[name]
    table = pages.CONTROLS[lesson.page]
    for key, value in lesson.values.items():
        assert key in table.keys(), f"{name}: {key!r} is not a control of /{lesson.page}"
        assert table[key].holds(value), f"{name}: {key}={value!r}"


def test_a_lesson_key_its_page_lacks_is_caught(monkeypatch):
    """The check above is not vacuous: the key the outlier lesson had before the rename fails it."""
    stale = lessons.Lesson("explorer", "t", "s", {"col": 5})
    monkeypatch.setitem(lessons.LESSONS, "stale", stale)
    with pytest.raises(AssertionError, match="'col' is not a control"):
        test_every_lesson_value_is_a_control_of_its_page_and_one_it_can_take("stale")


def test_the_outlier_feature_lesson_chooses_the_outlier_feature():
    lesson = lessons.LESSONS["outlier-feature"]
    at = run_page("pages/explorer.py", {"preset": "outlier-feature"})
    assert_no_exception(at)
    assert at.number_input(key="feature").value == lesson.values["feature"] == 1
    assert at.selectbox(key="dist").value == "outlier feature"
    assert "earlier lnviz" not in " ".join(i.value for i in at.info)
    # The outlier column is the chosen one: it is the column whose values are far the largest.
    x = data.make_activations(lesson.values["dist"], lesson.values["batch"], lesson.values["features"], 0)
    assert int(x.abs().mean(dim=0).argmax()) == 1


def test_a_lesson_of_another_page_is_noted_not_applied():
    at = run_page("pages/coupling.py", {"preset": "small-batch"})
    assert_no_exception(at)
    assert at.select_slider(key="batch").value == pages.COUPLING.batch.default
    assert "lesson of another page" in " ".join(i.value for i in at.info)


def test_the_outlier_lessons_numbers_are_torchs_at_seed_0():
    """At least 25; more than 9 times every other feature of its sample; the others' x̂ within 0.4 of −1/√15."""
    lesson = lessons.LESSONS["outlier-feature"]
    v = lesson.values
    assert "With seed 0" in lesson.story and "more than 9 times" in lesson.story and "within 0.4" in lesson.story
    x = data.make_activations(v["dist"], v["batch"], v["features"], seed=0)  # (16, 16)
    j = data.outlier_feature(v["features"])
    assert j == 1 and f"Feature {j} is" in lesson.story
    others = [k for k in range(v["features"]) if k != j]
    assert float(x[:, j].min()) >= 25
    assert float((x[:, j] / x[:, others].abs().amax(dim=1)).min()) > 9  # value by value, in every sample
    x_hat = F.layer_norm(x, (v["features"],), eps=1e-5)[:, others]  # (B, 15)
    assert float((x_hat + 1 / math.sqrt(15)).abs().max()) < 0.4
    bn = F.batch_norm(x, None, None, training=True, eps=1e-5)[:, others]  # (B, 15): each column on its own
    assert float(x_hat.std(dim=1).max()) < 0.25 < float(bn.std(dim=0).min())  # LN squashes each row; BN does not


def test_the_heterogeneous_samples_lesson_is_within_0_4_percent_at_seed_0():
    """Every row of LN's x̂ has variance σ²/(σ² + ε) within 0.4% of 1 with seed 0 and ε = 1e-5 (the story pins both)."""
    lesson = lessons.LESSONS["heterogeneous-samples"]
    v = lesson.values
    assert "within 0.4% of 1 with seed 0 and ε = 1e-5" in lesson.story and v["seed"] == 0 and v["eps"] == 1e-5
    x = data.make_activations(v["dist"], v["batch"], v["features"], seed=0)  # (B, H)
    x_hat = F.layer_norm(x, (v["features"],), eps=1e-5)
    assert float((1 - x_hat.var(dim=1, unbiased=False)).max()) < 0.004
    assert float(x_hat.mean(dim=1).abs().max()) < 1e-12
    # Why ε is pinned: the eps control reaches 1, where the same rows fall well short of 1.
    assert float((1 - F.layer_norm(x, (v["features"],), eps=1.0).var(dim=1, unbiased=False)).max()) > 0.004


def test_the_eps_lessons_numbers_are_torchs_at_seed_0():
    """σ² of sample 0 and the variance of its x̂, to the digits the story shows (it said σ² ≈ 1e-6: torch's is
    1.87e-6); at ε = 0 the row's x̂ has variance 1."""
    lesson = lessons.LESSONS["eps-matters"]
    v = lesson.values
    assert v["seed"] == 0 and v["eps"] == 1e-5 and "with seed 0" in lesson.story
    x = data.make_activations(v["dist"], v["batch"], v["features"], seed=v["seed"])  # (B, H)
    var = float(x[0].var(unbiased=False))
    x_hat = F.layer_norm(x, (v["features"],), eps=v["eps"])[0]  # (H,)
    shrunk = float(x_hat.var(unbiased=False))
    assert f"its σ² is {var:.1e}".replace("e-0", "e-") in lesson.story and var < v["eps"]
    assert f"has variance σ²/(σ² + ε) = {shrunk:.2f}, not 1" in lesson.story
    assert abs(shrunk - var / (var + v["eps"])) < 1e-12
    assert abs(float(F.layer_norm(x, (v["features"],), eps=0.0)[0].var(unbiased=False)) - 1) < 1e-9
