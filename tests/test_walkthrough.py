"""The walkthrough (lnviz.labs.walkthrough and its page) against torch: every step's numbers, cells and controls."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, run_page, share_link, stage_data
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.apptest import stage_grid
from lnviz.labs import walkthrough as wt
from lnviz.labs.explorer.explain import num
from lnviz.maths import data
from lnviz.maths.data import generator
from lnviz.views import links

PAGE = "pages/walkthrough.py"
TOL = dict(atol=1e-10, rtol=1e-10)
SHOWN = dict(atol=1e-5, rtol=1e-5)  # figures carry float32
HYP = settings(max_examples=25, deadline=None, derandomize=True)
LN_STEPS, BN_STEPS = range(0, 6), range(6, 12)


def draw(g: torch.Generator, lo: int, hi: int) -> int:
    return int(torch.randint(lo, hi + 1, (1,), generator=g))


def random_case(seed: int):
    """x (B, H) of a random seeded shape, a cell (row, col), ε > 0, and γ, β: scalars or per-feature."""
    g = generator(seed)
    batch, features = draw(g, 2, 12), draw(g, 2, 12)
    x = 3.0 * torch.randn(batch, features, generator=g, dtype=torch.float64) + torch.randn(
        1, features, generator=g, dtype=torch.float64
    )
    row, col = draw(g, 0, batch - 1), draw(g, 0, features - 1)
    eps = (1e-5, 1e-3, 0.5)[draw(g, 0, 2)]
    if draw(g, 0, 1):
        gain = 1.0 + 0.5 * torch.randn(features, generator=g, dtype=torch.float64)
        bias = 0.5 * torch.randn(features, generator=g, dtype=torch.float64)
    else:
        gain, bias = float(torch.randn(1, generator=g)), float(torch.randn(1, generator=g))
    return x, gain, bias, eps, row, col


def as_vector(value, features: int) -> torch.Tensor:
    return value if isinstance(value, torch.Tensor) else torch.full((features,), value, dtype=torch.float64)


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_every_ln_step_is_torchs(seed):
    x, gain, bias, eps, row, col = random_case(seed)
    h = x.shape[1]
    walk = wt.steps(x, gain, bias, eps, row, col)
    assert len(walk) == wt.N_STEPS and [s.norm for s in walk] == ["LN"] * 6 + ["BN"] * 6
    line = x[row]
    mu, var = line.mean(), line.var(unbiased=False)
    w, b = as_vector(gain, h), as_vector(bias, h)
    expected = [line, line, line - mu, (line - mu) ** 2, F.layer_norm(x, (h,), eps=eps)[row]]
    expected.append(F.layer_norm(x, (h,), w, b, eps)[row])
    for k, want in zip(LN_STEPS, expected, strict=True):
        torch.testing.assert_close(walk[k].values, want, **TOL)
    assert math.isclose(walk[1].level, float(mu), rel_tol=1e-10, abs_tol=1e-10)
    assert math.isclose(walk[3].level, float(var), rel_tol=1e-10, abs_tol=1e-10)
    assert walk[3].values.mean().item() == pytest.approx(float(var), rel=1e-10, abs=1e-10)


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_every_bn_step_is_torchs(seed):
    x, gain, bias, eps, row, col = random_case(seed)
    h = x.shape[1]
    walk = wt.steps(x, gain, bias, eps, row, col)
    column = x[:, col]
    mu, var = column.mean(), column.var(unbiased=False)
    w, b = as_vector(gain, h), as_vector(bias, h)
    x_hat = F.batch_norm(x, None, None, training=True, eps=eps)[:, col]
    y = F.batch_norm(x, None, None, w, b, training=True, eps=eps)[:, col]
    expected = [column, column, column - mu, (column - mu) ** 2, x_hat, y]
    for k, want in zip(BN_STEPS, expected, strict=True):
        torch.testing.assert_close(walk[k].values, want, **TOL)
    assert math.isclose(walk[7].level, float(mu), rel_tol=1e-10, abs_tol=1e-10)
    assert math.isclose(walk[9].level, float(var), rel_tol=1e-10, abs_tol=1e-10)
    # The per-feature γ_j, β_j of the column are single numbers in the formula.
    assert num(float(w[col])) in walk[11].latex and num(float(b[col])) in walk[11].latex


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_masks_select_exactly_the_row_then_the_column(seed):
    x, gain, bias, eps, row, col = random_case(seed)
    walk = wt.steps(x, gain, bias, eps, row, col)
    rows = torch.arange(x.shape[0]).unsqueeze(1).expand_as(x)  # (B, H): each cell's sample
    cols = torch.arange(x.shape[1]).unsqueeze(0).expand_as(x)  # (B, H): each cell's feature
    for k in LN_STEPS:
        assert torch.equal(walk[k].mask, rows == row) and walk[k].index == row
    for k in BN_STEPS:
        assert torch.equal(walk[k].mask, cols == col) and walk[k].index == col


def test_formulas_carry_the_live_numbers():
    x = data.make_activations("standard normal", 5, 4, seed=3)
    walk = wt.steps(x, 2.0, 0.5, 0.1, sample=2, feature=1)
    mu, var = float(x[2].mean()), float(x[2].var(unbiased=False))
    assert f"{mu:.4g}" in walk[1].latex and "H = 4" in walk[0].latex
    assert f"{var:.4g}" in walk[3].latex
    assert f"{math.sqrt(var + 0.1):.4g}" in walk[4].latex
    for value in F.layer_norm(x, (4,), eps=0.1)[2].tolist():  # H = 4: every value is written
        assert f"{value:.4g}" in walk[4].latex
    assert f"{float(x[:, 1].mean()):.4g}" in walk[7].latex and "B = 5" in walk[6].latex
    assert len({s.latex for s in walk}) == wt.N_STEPS
    long = wt.steps(data.make_activations("standard normal", 2, 40, seed=0), sample=1, feature=0)
    assert r"\ldots" in long[0].latex and r"\ldots" not in long[6].latex


def test_bn_identity_needs_eps_and_the_population_statistics():
    """The last BN step's claim, checked with torch: γ = √(Var + ε), β = E give x back in eval mode, and only there."""
    x = data.make_activations("heterogeneous features", 64, 3, seed=4)
    text = wt.steps(x, sample=0, feature=1)[11].text
    assert "√(Var[xⱼ] + ε)" in text and "population" in text
    mean, var, eps = x.mean(0), x.var(0, unbiased=False), 1e-5  # (H,), (H,): this population's statistics
    back = F.batch_norm(x, mean, var, weight=(var + eps).sqrt(), bias=mean, training=False, eps=eps)
    torch.testing.assert_close(back, x, atol=1e-12, rtol=1e-12)
    without_eps = F.batch_norm(x, mean, var, weight=var.sqrt(), bias=mean, training=False, eps=eps)
    assert not torch.allclose(without_eps, x, atol=1e-9, rtol=0)  # √Var alone misses by a factor √(Var/(Var + ε))
    half = x[:8]  # a training batch: its own μ and σ² are not the population's
    trained = F.batch_norm(half, None, None, weight=(var + eps).sqrt(), bias=mean, training=True, eps=eps)
    assert not torch.allclose(trained, half, atol=1e-3, rtol=0)


def test_a_negative_mean_is_subtracted_in_parentheses():
    x = torch.tensor([[-3.0, -1.0], [1.0, 2.0]], dtype=torch.float64)
    assert r"- \left(-2\right)" in wt.steps(x, sample=0, feature=0)[2].latex


def test_single_sample_bn_shows_the_formula_and_says_torch_refuses():
    x = data.make_activations("standard normal", 1, 8, seed=2)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(x, None, None, training=True)  # what torch does
    walk = wt.steps(x, 2.0, 0.3, 1e-5, sample=0, feature=5)
    torch.testing.assert_close(walk[4].values, F.layer_norm(x, (8,))[0], **TOL)
    for k in BN_STEPS:
        assert torch.equal(walk[k].mask, torch.arange(8).expand(1, 8) == 5)
    torch.testing.assert_close(walk[6].values, x[:, 5], **TOL)
    assert walk[7].level == float(x[0, 5]) and walk[9].level == 0.0  # μ = x, the biased σ² of one value is 0
    assert walk[10].values.tolist() == [0.0] and walk[11].values.tolist() == [0.3]  # x̂ = 0/√ε, y = β
    for k in (10, 11):
        assert "PyTorch refuses" in walk[k].note and "y = β" in walk[k].note and "0/√ε = 0" in walk[k].note


def test_single_sample_bn_words_speak_of_one_value():
    """At B = 1 the words neither count "1 samples" nor speak of "the rest of the batch"; at ε = 0 no note says x̂ = 0."""
    x = data.make_activations("standard normal", 1, 8, seed=2)
    walk = wt.steps(x, 1.0, 0.0, 1e-5, sample=0, feature=5)
    words = " ".join(walk[k].text for k in BN_STEPS)
    for wrong in ("1 samples", "1 values", "divide by 1", "rest of the batch", "1 − 1"):
        assert wrong not in words
    assert "μ = x" in walk[7].text and "σ² = 0" in walk[9].text and "y = β" in walk[11].text
    # LN's words, along a row of 8, still count.
    assert "its 8 features" in walk[0].text and "divide by 8" in walk[1].text
    walk = wt.steps(x, 1.0, 0.3, 0.0, sample=0, feature=5)
    assert torch.isnan(walk[10].values).all() and torch.isnan(walk[11].values).all()
    for k in (10, 11):
        assert "NaN" in walk[k].note and "PyTorch refuses" in walk[k].note
        # torch's x̂ here is NaN, not 0: only the caveat's "for any ε > 0" speaks of 0/√ε.
        assert "σ² = 0, so x̂ = 0/√ε = 0" not in walk[k].note and "for any ε > 0" in walk[k].note
        assert "hatched" not in walk[k].note  # the stage draws no BN output at B = 1, so no cell to hatch


def test_zero_eps_on_a_constant_row_explains_the_nan():
    x = data.make_activations("constant row", 4, 6, seed=0)
    walk = wt.steps(x, 1.0, 0.0, 0.0, sample=0, feature=0)
    assert walk[3].level == 0.0 and "ε = 0" in walk[3].note
    for k in (4, 5):
        assert torch.isnan(walk[k].values).all() and "0/0" in walk[k].note and "NaN" in walk[k].note
        assert "those cells are hatched" in walk[k].note  # LN's output row is drawn, NaN cells hatched
    assert r"\text{NaN}" in walk[4].latex
    # The same row with ε > 0 is 0, as torch says, and the note says why.
    walk = wt.steps(x, 1.0, 0.0, 1e-5, sample=0, feature=0)
    torch.testing.assert_close(walk[4].values, F.layer_norm(x, (6,), eps=1e-5)[0], **TOL)
    assert torch.equal(walk[4].values, torch.zeros(6, dtype=torch.float64)) and "0/√ε" in walk[4].note


def test_eps_larger_than_the_variance_is_noted():
    x = data.make_activations("near-constant row", 4, 16, seed=0)
    walk = wt.steps(x, eps=1e-5, sample=0, feature=0)
    var = float(x[0].var(unbiased=False))
    assert var < 1e-5 and "smaller than ε" in walk[4].note
    assert f"{var / (var + 1e-5):.3g}" in walk[4].note
    assert walk[4].values.var(unbiased=False).item() == pytest.approx(var / (var + 1e-5), rel=1e-10)
    assert wt.steps(x, eps=1e-5, sample=1, feature=0)[4].note == ""


def test_bn_with_zero_eps_is_the_formula_and_says_torch_refuses():
    x = data.make_activations("standard normal", 6, 3, seed=1)
    with pytest.raises(ValueError, match="eps must be positive"):
        F.batch_norm(x, None, None, training=True, eps=0.0)
    walk = wt.steps(x, eps=0.0, sample=0, feature=2)
    column = x[:, 2]
    torch.testing.assert_close(walk[10].values, (column - column.mean()) / column.std(unbiased=False), **TOL)
    assert "refuses" in walk[10].note and "refuses" not in walk[4].note


@pytest.mark.parametrize(
    "x, row, col",
    [(torch.zeros(4, dtype=torch.float64), 0, 0), (torch.zeros(3, 4, dtype=torch.float64), 3, 0)],
)
def test_bad_input_raises_in_words(x, row, col):
    with pytest.raises(ValueError):
        wt.steps(x, sample=row, feature=col)


def test_the_stage_and_the_page_read_one_step_table():
    """Play's steps 1–12 are the walkthrough's twelve, with the same words; each lights its own norm, in order."""
    x = data.make_activations("heterogeneous features", 6, 9, seed=4)
    walk = wt.steps(x, sample=4, feature=7)
    table = wt.stage_steps(6, 9, 4, 7)
    assert len(table) == wt.N_STEPS + 2 and table[0]["ln"] == table[-1]["ln"] == 4  # everything, before and after
    for step, entry in zip(walk, table[1:-1], strict=True):
        assert entry["text"] == step.text and entry["title"] == step.label and entry["norm"] == step.norm
        assert entry["focus"] == step.norm.lower() and entry["shows"] == step.light.shows
    ln, bn = table[1:7], table[7:13]
    assert [e["ln"] for e in ln] == [0, 1, 1, 2, 2, 3] and all(e["bn"] == 0 for e in ln)
    assert [e["bn"] for e in bn] == [0, 1, 1, 2, 2, 3] and all(e["ln"] == 4 for e in bn)  # LN is done by then
    assert [e["fly"] for e in ln if e["fly"]] == ["ln-mu", "ln-sd", "ln-out"]
    assert [e["shows"] for e in bn if e["shows"]] == ["x − μ", "(x − μ)²", "x̂"]
    # What each step shows on x's line is what the walkthrough's step computed there.
    for k, step in enumerate(walk):
        if step.light.shows:
            assert step.symbol == step.light.shows, k


def test_without_a_batch_plays_bns_steps_in_words_only():
    table = wt.stage_steps(1, 5, 0, 2)
    assert table[-1]["bn"] == 0 and "BatchNorm" not in table[-1]["text"]
    assert "one sample" in table[7]["text"] and "σ² = 0" in table[10]["text"]  # B = 1: BN's words for one value


# The page, through the router.


def step_shown(at) -> int:
    return at.slider(key="step").value


def stage_step(at) -> dict:
    """The step the stage shows, from its data: the one step table's entry for the page's step."""
    data = stage_data(at)
    return wt.stage_steps(data["B"], data["H"], *data["cell"])[data["walk"]]  # what table.js gives the stage


def ln_row(at, name: str = "y") -> np.ndarray:
    """Row i of LN's ``name`` on the stage (its window holds the whole row at these sizes)."""
    data, i = stage_data(at), at.number_input(key="sample").value
    grid = stage_grid(data, data["ln"][name])
    assert data["C"] == data["H"]
    return grid[i - data["r0"]]


def bn_column(at, name: str = "y") -> np.ndarray:
    data, j = stage_data(at), at.number_input(key="feature").value
    grid = stage_grid(data, data["bn"][name])
    assert data["R"] == data["B"]
    return grid[:, j - data["c0"]]


def test_link_lands_on_its_step_and_next_back_move_through_both_norms():
    at = run_page(PAGE, {"v": "2", "step": "4", "gain": "1", "bias": "0"})
    assert_no_exception(at)
    assert step_shown(at) == 4 and "Step 4 of 12" in at.subheader[0].value
    assert stage_data(at)["walk"] == 4 and stage_step(at)["shows"] == "(x − μ)²" and stage_step(at)["focus"] == "ln"
    x = data.make_activations("heterogeneous features", 8, 12, seed=0, draw="whole")  # a version-2 link's draw
    var = float(x[0].var(unbiased=False))
    latex = stage_data(at)["formula"]
    assert num(var) in latex  # σ² of row 0, torch's number in the formula
    at.button(key="next").click().run()
    assert_no_exception(at)
    assert step_shown(at) == 5 and "Step 5 of 12" in at.subheader[0].value and stage_data(at)["formula"] != latex
    assert stage_step(at)["shows"] == "x̂"
    np.testing.assert_allclose(ln_row(at, "x_hat"), F.layer_norm(x, (12,))[0].numpy(), **TOL)
    assert "step=5" in share_link(at) and f"v={links.LINK_VERSION}" in share_link(at)
    at.slider(key="step").set_value(6).run()
    at.button(key="next").click().run()
    assert step_shown(at) == 7 and "BN" in at.subheader[0].value
    assert stage_step(at)["focus"] == "bn" and stage_step(at)["ln"] == 4 and stage_step(at)["bn"] == 0
    at.button(key="back").click().run()
    assert step_shown(at) == 6 and not at.button(key="back").disabled
    assert not at.get("plotly_chart") and not at.latex  # one picture: the stage, its formula on it


def test_a_link_from_before_counts_steps_from_0_and_keeps_its_defaults():
    old = run_page(PAGE, {"v": "1", "step": "3"})  # made when steps counted from 0 and γ = 1, β = 0
    new = run_page(PAGE, {"v": "2", "step": "4", "gain": "1", "bias": "0", "batch": "16", "features": "32"})
    assert_no_exception(old)
    assert step_shown(old) == 4 and old.slider(key="gain").value == 1.0 and old.slider(key="bias").value == 0.0
    assert stage_data(old) == stage_data(new) and stage_data(old)["formula"] == stage_data(new)["formula"]
    notes = " ".join(i.value for i in old.info)
    assert "counts from 0" in notes and "its 3 is 4" in notes and "earlier lnviz" in notes
    assert "step=4" in share_link(old) and f"v={links.LINK_VERSION}" in share_link(old)


def test_a_link_without_v_counts_steps_as_today():
    """/walkthrough?step=3, typed by hand or copied off the address bar, opens step 3 of today's 8 × 12 grid."""
    at = run_page(PAGE, {"step": "3"})
    assert_no_exception(at)
    assert step_shown(at) == 3 and (at.select_slider(key="batch").value, at.select_slider(key="features").value) == (
        8,
        12,
    )
    assert "earlier lnviz" not in " ".join(i.value for i in at.info)


def test_the_walkthroughs_own_gain_and_bias_show_the_last_step():
    at = run_page(PAGE, {"v": "2", "step": "6"})
    assert (at.slider(key="gain").value, at.slider(key="bias").value) == (1.5, 0.5)
    x = data.make_activations("heterogeneous features", 8, 12, seed=0, draw="whole")  # a version-2 link's draw
    np.testing.assert_allclose(ln_row(at), (1.5 * F.layer_norm(x, (12,))[0] + 0.5).numpy(), **TOL)
    assert stage_step(at)["ln"] == 3 and stage_step(at)["fly"] == "ln-out"  # LN's output lit, flown in


def test_back_is_disabled_at_the_first_step_and_next_at_the_last():
    at = run_page(PAGE)
    assert_no_exception(at)
    assert step_shown(at) == 1 and at.button(key="back").disabled and not at.button(key="next").disabled
    words = sum(len(m.value) for m in at.markdown)
    at.slider(key="step").set_value(12).run()
    assert at.button(key="next").disabled and not at.button(key="back").disabled
    assert "Step 12 of 12" in at.subheader[0].value and stage_data(at)["walk"] == 12
    lecture = run_page(PAGE, {"present": "1"})
    assert_no_exception(lecture)
    assert sum(len(m.value) for m in lecture.markdown) < words / 2
    assert (
        not lecture.latex and stage_data(lecture)["formula"] and not lecture.get("plotly_chart") and lecture.subheader
    )
    assert stage_data(lecture)["present"] is True
    assert at.title and not lecture.title  # on a projector the step's heading names the page


def test_junk_step_in_the_link_falls_back_to_the_first_with_a_note():
    at = run_page(PAGE, {"v": "2", "step": "99"})
    assert_no_exception(at)
    assert step_shown(at) == 1
    assert any("Step" in i.value and "99" in i.value for i in at.info)


def test_every_control_changes_the_walk():
    at = run_page(PAGE, {"v": "2", "step": "6", "gain": "1", "bias": "0"})
    changes = [
        ("slider", "gain", 2.0, dict(gain=2.0)),
        ("slider", "bias", -0.5, dict(bias=-0.5)),
        ("select_slider", "eps", 0.1, dict(eps=0.1)),
        ("toggle", "affine", True, dict(affine=True)),
        ("number_input", "seed", 7, dict(seed=7)),
        ("selectbox", "dist", "heterogeneous samples", dict(dist="heterogeneous samples")),
        ("select_slider", "batch", 5, dict(batch=5)),
        ("select_slider", "features", 6, dict(features=6)),
        ("radio", "draw", "stable", dict(draw="stable")),  # a version-2 link opens with the old draw
        ("number_input", "sample", 3, dict(sample=3)),
    ]
    view = dict(dist="heterogeneous features", batch=8, features=12, seed=0, gain=1.0, bias=0.0, affine=False)
    view |= dict(eps=1e-5, sample=0, draw="whole")
    before, latex = ln_row(at), stage_data(at)["formula"]
    for widget, key, value, change in changes:
        getattr(at, widget)(key=key).set_value(value).run()
        assert_no_exception(at)
        view |= change
        x = data.make_activations(view["dist"], view["batch"], view["features"], view["seed"], draw=view["draw"])
        w = torch.full((view["features"],), view["gain"], dtype=torch.float64)
        b = torch.full((view["features"],), view["bias"], dtype=torch.float64)
        if view["affine"]:
            g, c = data.random_affine(view["features"], view["seed"], view["draw"])
            w, b = view["gain"] * g, view["bias"] + c
        y = F.layer_norm(x, (view["features"],), w, b, view["eps"])[view["sample"]]
        now = ln_row(at)
        np.testing.assert_allclose(now, y.numpy(), **TOL, err_msg=key)
        assert now.shape != before.shape or not np.allclose(now, before), key
        assert stage_data(at)["formula"] != latex, f"{key}: the formula kept its numbers"
        before, latex = now, stage_data(at)["formula"]
    at.slider(key="step").set_value(12).run()
    at.number_input(key="feature").set_value(4).run()
    assert_no_exception(at)
    x = data.make_activations(view["dist"], 5, 6, 7)
    g, c = data.random_affine(6, 7)
    y = F.batch_norm(x, None, None, 2.0 * g, -0.5 + c, training=True, eps=0.1)[:, 4]
    np.testing.assert_allclose(bn_column(at), y.numpy(), **TOL)
    assert stage_data(at)["cell"] == [3, 4] and stage_step(at)["focus"] == "bn"


def test_a_link_that_hides_the_step_pins_it():
    at = run_page(PAGE, {"v": "2", "hide": "step", "step": "8"})
    assert_no_exception(at)
    assert "Step 8 of 12" in at.subheader[0].value and "step" not in {s.key for s in at.slider}
    assert at.button(key="back").disabled and at.button(key="next").disabled and stage_data(at)["walk"] == 8


def test_single_sample_and_zero_eps_are_explained_on_the_page():
    at = run_page(PAGE, {"v": "2", "batch": "1", "step": "11"})
    assert_no_exception(at)
    assert any("B = 1" in w.value and "PyTorch refuses" in w.value for w in at.warning)
    assert (
        stage_data(at)["bn"] is None and "= √ε" in stage_step(at)["text"] and stage_data(at)["walk"] == 11
    )  # B = 1: words for one value
    at = run_page(PAGE, {"v": "2", "dist": "constant row", "eps": "0", "step": "5"})
    assert_no_exception(at)
    assert any("0/0" in w.value for w in at.warning) and r"\text{NaN}" in stage_data(at)["formula"]
