"""The training race: norms, models and data against torch, the race's promises, and the page."""

from __future__ import annotations

import dataclasses
import math

import plotly.graph_objects as go
import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, figures, run_page
from figcheck import assert_plotly_valid
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from lnviz.figures.theme import ROLES
from lnviz.labs import training
from lnviz.maths.data import generator
from lnviz.views import pages, state
from lnviz.views.state import MAX_SEED, SEED
from ui.labs import own_data
from ui.labs.race import KEEP


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models: a second OpenMP thread only waits for a shared, busy core."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _random_affine(norm: training.Norm, g: torch.Generator) -> None:
    with torch.no_grad():
        norm.weight.copy_(1 + 0.5 * torch.randn(norm.weight.shape, generator=g, dtype=torch.float64))
        if hasattr(norm, "bias"):
            norm.bias.copy_(0.5 * torch.randn(norm.bias.shape, generator=g, dtype=torch.float64))


# ---------------------------------------------------------------- Norm against torch.nn


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(2, 24), features=st.integers(2, 48), seed=st.integers(0, 10_000))
def test_norm_layer_and_rms_match_torch(batch, features, seed):
    g = generator(seed)
    x = (3 * torch.randn(batch, features, generator=g, dtype=torch.float64) + 1).requires_grad_(True)
    for kind, ref in (
        ("LN", nn.LayerNorm(features, eps=1e-5, dtype=torch.float64)),
        ("RMSNorm", nn.RMSNorm(features, eps=1e-5, dtype=torch.float64)),
    ):
        ours = training.Norm(kind, features).double()
        _random_affine(ours, g)
        ref.load_state_dict(ours.state_dict())
        y, y_ref = ours(x), ref(x)
        torch.testing.assert_close(y, y_ref, rtol=0, atol=1e-10)
        up = torch.randn(batch, features, generator=g, dtype=torch.float64)
        grads = torch.autograd.grad((y * up).sum(), [x, *ours.parameters()])
        grads_ref = torch.autograd.grad((y_ref * up).sum(), [x, *ref.parameters()])
        for a, b in zip(grads, grads_ref, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-10)


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(2, 24), features=st.integers(1, 32), seed=st.integers(0, 10_000))
def test_norm_batch_matches_batchnorm1d_in_training_and_eval(batch, features, seed):
    g = generator(seed)
    ours = training.Norm("BN", features).double()
    _random_affine(ours, g)
    ref = nn.BatchNorm1d(features, eps=1e-5, momentum=0.1, dtype=torch.float64)
    ref.load_state_dict(ours.state_dict(), strict=False)
    for _ in range(3):  # running statistics are updated the same way, step after step
        x = 2 * torch.randn(batch, features, generator=g, dtype=torch.float64) - 1
        torch.testing.assert_close(ours(x), ref(x), rtol=0, atol=1e-10)
        torch.testing.assert_close(ours.running_mean, ref.running_mean, rtol=0, atol=1e-12)
        torch.testing.assert_close(ours.running_var, ref.running_var, rtol=0, atol=1e-12)
    ours.eval()
    ref.eval()
    x = torch.randn(batch, features, generator=g, dtype=torch.float64)
    torch.testing.assert_close(ours(x), ref(x), rtol=0, atol=1e-10)


def test_norm_batch_refuses_one_sample_like_torch():
    x = torch.randn(1, 8, generator=generator(0), dtype=torch.float64)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(8, dtype=torch.float64)(x)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        training.Norm("BN", 8).double()(x)
    training.Norm("BN", 8).double().eval()(x)  # eval mode uses running statistics: one sample is fine


def test_norm_none_is_identity_and_unknown_kind_is_refused():
    x = torch.randn(4, 5, generator=generator(1))
    assert training.Norm("none", 5)(x) is x
    with pytest.raises(ValueError, match="unknown norm"):
        training.Norm("WN", 5)


# ---------------------------------------------------------------- models against plain torch.nn.functional


def _norm_ref(kind: str, norm: training.Norm, a: torch.Tensor) -> torch.Tensor:
    if kind == "none":
        return a
    if kind == "LN":
        return F.layer_norm(a, a.shape[-1:], norm.weight, norm.bias, 1e-5)
    if kind == "RMSNorm":
        return F.rms_norm(a, a.shape[-1:], norm.weight, 1e-5)
    return F.batch_norm(a, norm.running_mean, norm.running_var, norm.weight, norm.bias, False, 0.0, 1e-5)


@pytest.mark.parametrize("variant", training.VARIANTS)
def test_mlp_matches_functional_chain(variant):
    g = generator(11)
    model = training.build_model("spirals", variant, seed=5).double().eval()
    for norm in model.norms:
        if variant != "none":
            _random_affine(norm, g)
        if variant == "BN":
            norm.running_mean.copy_(torch.randn(norm.running_mean.shape, generator=g, dtype=torch.float64))
            norm.running_var.copy_(torch.rand(norm.running_var.shape, generator=g, dtype=torch.float64) + 0.5)
    x = torch.randn(13, 2, generator=g, dtype=torch.float64)
    h = x
    for linear, norm in zip(model.linears, model.norms, strict=True):
        h = torch.relu(_norm_ref(variant, norm, F.linear(h, linear.weight, linear.bias)))
    expected = F.linear(h, model.head.weight, model.head.bias)
    torch.testing.assert_close(model(x), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("variant", training.VARIANTS)
def test_rnn_matches_a_per_sequence_loop_and_ignores_padding(variant):
    """Oracle: each sequence run on its own, for exactly its length, with torch.nn.functional."""
    g = generator(21)
    model = training.build_model("adding", variant, seed=3).double().eval()
    norm = model.norms[0]
    if variant != "none":
        _random_affine(norm, g)
    data = training.adding(9, generator(4))
    x = data.x.double()
    out = model(x, data.lengths)
    for i in range(9):
        h = torch.zeros(1, model.hidden, dtype=torch.float64)
        for t in range(int(data.lengths[i])):
            a = F.linear(x[i : i + 1, t], model.inp.weight, model.inp.bias) + F.linear(h, model.rec.weight)
            h = torch.tanh(_norm_ref(variant, norm, a))
        expected = F.linear(h, model.head.weight, model.head.bias).squeeze()
        torch.testing.assert_close(out[i], expected, rtol=0, atol=1e-10)
    noisy = x.clone()
    padding = torch.arange(training.LONGEST).unsqueeze(0) >= data.lengths.unsqueeze(1)  # (B, T)
    noisy[padding] = 7.0
    torch.testing.assert_close(model(noisy, data.lengths), out, rtol=0, atol=0)


def test_variants_share_their_initial_linear_weights_and_the_seed_decides_them():
    models = {v: training.build_model("spirals", v, seed=8) for v in training.VARIANTS}
    other = training.build_model("spirals", "none", seed=9)
    shared = {k: v for k, v in models["none"].state_dict().items()}
    assert shared and all("norms" not in k for k in shared)
    for variant, model in models.items():
        state = model.state_dict()
        for k, v in shared.items():
            assert torch.equal(state[k], v), (variant, k)
    assert not torch.equal(other.state_dict()["linears.0.weight"], shared["linears.0.weight"])
    bound = 1 / math.sqrt(2)
    assert shared["linears.0.weight"].abs().max() <= bound


# ---------------------------------------------------------------- data


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 64), seed=st.integers(0, MAX_SEED))
def test_adding_problem_targets_markers_and_padding(n, seed):
    data = training.adding(n, generator(seed))
    assert data.x.shape == (n, training.LONGEST, 2) and data.y.shape == (n,)
    values, markers = data.x[..., 0], data.x[..., 1]
    assert ((data.lengths >= training.SHORTEST) & (data.lengths <= training.LONGEST)).all()
    alive = torch.arange(training.LONGEST).unsqueeze(0) < data.lengths.unsqueeze(1)
    assert (values[~alive] == 0).all() and (markers[~alive] == 0).all()
    assert ((values >= 0) & (values < 1)).all()
    assert (markers.sum(dim=1) == 2).all()
    positions = markers.nonzero()[:, 1].view(n, 2)  # (n, 2), sorted per row
    half = data.lengths // 2
    assert (positions[:, 0] < half).all() and (positions[:, 1] >= half).all()
    torch.testing.assert_close(data.y, (values * markers).sum(dim=1), rtol=0, atol=1e-6)


def test_spirals_are_two_labelled_arms_and_seeded():
    data = training.spirals(2000, generator(0))
    assert data.x.shape == (2000, 2) and set(data.y.tolist()) == {0, 1}
    assert 800 < int(data.y.sum()) < 1200
    radius = data.x.norm(dim=1)
    assert radius.max() < 1 + 5 * training.SPIRAL_NOISE
    # class 1 is class 0 turned by π: the two arms have the same radial profile
    assert abs(float(radius[data.y == 0].mean() - radius[data.y == 1].mean())) < 0.03
    again = training.spirals(2000, generator(0))
    assert torch.equal(again.x, data.x) and torch.equal(again.y, data.y)
    assert not torch.equal(training.spirals(2000, generator(1)).x, data.x)


# ---------------------------------------------------------------- the race


@pytest.mark.parametrize(("task", "steps"), [("spirals", 25), ("adding", 15)])
def test_a_short_race_lowers_every_variants_held_out_loss(task, steps):
    result = training.run(task, 32, 0.01, steps, seed=2)
    assert result.complete and result.done == steps
    for c in result.curves:
        assert c.failed is None
        assert c.eval_steps[0] == 0 and c.eval_steps[-1] == steps
        assert len(c.train_loss) == len(c.step_seconds) == steps
        assert c.loss[-1] < c.loss[0], (task, c.variant, c.loss)
        assert 0 <= min(c.accuracy) and max(c.accuracy) <= 1
        assert c.ms_per_step > 0


def test_same_seed_same_curves_and_weights_other_seed_differs():
    a = training.run("spirals", 8, 0.02, 12, seed=7)
    b = training.run("spirals", 8, 0.02, 12, seed=7)
    c = training.run("spirals", 8, 0.02, 12, seed=8)
    for ca, cb, cc in zip(a.curves, b.curves, c.curves, strict=True):
        assert (ca.loss, ca.accuracy, ca.train_loss) == (cb.loss, cb.accuracy, cb.train_loss)
        assert all(torch.equal(ca.state[k], cb.state[k]) for k in ca.state)
        assert ca.train_loss != cc.train_loss


def test_the_race_leaves_the_global_rng_alone():
    before = torch.get_rng_state()
    training.run("adding", 4, 0.01, 3, seed=1)
    training.build_model("spirals", "LN", seed=1)
    assert torch.equal(torch.get_rng_state(), before)


def test_bn_at_batch_one_fails_with_the_explanation_and_the_others_train():
    result = training.run("spirals", 1, 0.01, 15, seed=0)
    bn = result.curve("BN")
    assert bn.failed == training.BN_BATCH_ONE
    assert "batch 1" in bn.failed and "0/√ε" in bn.failed
    assert bn.train_loss == () and bn.eval_steps == (0,) and math.isnan(bn.ms_per_step)
    for variant in ("none", "LN", "RMSNorm"):
        c = result.curve(variant)
        assert c.failed is None and len(c.train_loss) == 15


def test_bn_at_batch_one_in_the_recurrent_task_too():
    result = training.run("adding", 1, 0.01, 3, seed=0)
    assert result.curve("BN").failed == training.BN_BATCH_ONE
    assert result.curve("LN").failed is None


def test_a_diverging_variant_stops_with_a_message_and_the_race_goes_on():
    result = training.run("spirals", 16, 1e30, 5, seed=0)
    none = result.curve("none")
    assert none.failed is not None and none.failed.startswith("none diverged")
    assert len(none.train_loss) < 5
    assert result.complete


def test_snapshots_come_every_few_steps_and_stopping_keeps_a_consistent_partial_race():
    stream = training.race("spirals", 8, 0.01, 12, seed=0, every=5)
    first = next(stream)
    stream.close()  # what the page's Stop amounts to: no more snapshots are asked for
    assert first.done == 5 and not first.complete
    for c in first.curves:
        assert len(c.train_loss) == 5 and c.eval_steps[-1] <= 5
    assert [s.done for s in training.race("spirals", 8, 0.01, 12, seed=0, every=5)] == [5, 10, 12]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("circles", 8, 0.01, 5), "unknown task"),
        (("spirals", 0, 0.01, 5), "batch"),
        (("spirals", 8, 0.0, 5), "learning rate"),
        (("spirals", 8, float("nan"), 5), "learning rate"),
        (("spirals", 8, 0.01, 0), "steps"),
    ],
)
def test_bad_settings_are_refused_in_words(args, message):
    with pytest.raises(ValueError, match=message):
        training.run(*args, seed=0)


# ---------------------------------------------------------------- activations for the explorer


def test_activations_are_the_inputs_of_the_chosen_norm_of_the_trained_model():
    result = training.run("spirals", 16, 0.01, 5, seed=3)
    model = training.build_model("spirals", "LN", 3)
    model.load_state_dict(result.curve("LN").state)
    data = training.spirals(256, generator(3 + 3))
    first = F.linear(data.x, model.linears[0].weight, model.linears[0].bias)
    norm = model.norms[0]
    second_in = torch.relu(F.layer_norm(first, (64,), norm.weight, norm.bias, 1e-5))
    second = F.linear(second_in, model.linears[1].weight, model.linears[1].bias)
    x1 = training.activations(result, "LN", 1)
    x2 = training.activations(result, "LN", 2)
    assert x1.dtype == torch.float64 and x1.shape == (256, 64) and x1.device.type == "cpu"
    torch.testing.assert_close(x1, first.double(), rtol=0, atol=1e-6)
    torch.testing.assert_close(x2, second.double(), rtol=0, atol=1e-5)
    assert training.activations(result, "none", 1, rows=1024).shape == (1024, 64)


def test_activations_of_the_recurrent_model_are_each_sequences_last_summed_input():
    result = training.run("adding", 8, 0.01, 3, seed=1)
    model = training.build_model("adding", "RMSNorm", 1)
    model.load_state_dict(result.curve("RMSNorm").state)
    data = training.adding(50, generator(1 + 3))
    x = training.activations(result, "RMSNorm", 1, rows=50)
    assert x.shape == (50, training.ADDING_HIDDEN)
    for i in (0, 17, 49):
        h = torch.zeros(1, model.hidden)
        for t in range(int(data.lengths[i])):
            a = model.inp(data.x[i : i + 1, t]) + model.rec(h)
            h = torch.tanh(F.rms_norm(a, a.shape[-1:], model.norms[0].weight, 1e-5))
        torch.testing.assert_close(x[i], a[0].double(), rtol=0, atol=1e-5)


def test_activations_refuse_failed_models_missing_layers_and_too_many_rows():
    result = training.run("adding", 1, 0.01, 2, seed=0)
    with pytest.raises(ValueError, match="batch 1"):
        training.activations(result, "BN", 1)
    with pytest.raises(ValueError, match="1 normalized layer"):
        training.activations(result, "LN", 2)
    with pytest.raises(ValueError, match="rows"):
        training.activations(result, "LN", 1, rows=1025)
    assert training.layers("adding") == 1 and training.layers("spirals") == training.SPIRAL_LAYERS


# ---------------------------------------------------------------- figures and controls


def _synthetic_race(steps: int) -> training.Race:
    """A finished race with made-up curves: the figure only has to place them."""
    g = generator(9)
    curves = []
    for variant in training.VARIANTS:
        evals = tuple(range(0, steps + 1, 10))
        curves.append(
            training.Curve(
                variant=variant,
                eval_steps=evals,
                loss=tuple(torch.rand(len(evals), generator=g, dtype=torch.float64).add(0.01).tolist()),
                accuracy=tuple(torch.rand(len(evals), generator=g, dtype=torch.float64).tolist()),
                train_loss=tuple(torch.rand(steps, generator=g, dtype=torch.float64).add(0.01).tolist()),
                step_seconds=tuple(torch.rand(steps, generator=g, dtype=torch.float64).mul(1e-3).tolist()),
                state={},
            )
        )
    return training.Race("spirals", 8, 0.01, steps, 0, "cpu", steps, 1.0, tuple(curves))


def test_fig_race_has_three_traces_per_variant_in_its_colour():
    result = _synthetic_race(400)
    fig = training.fig_race(result)
    assert isinstance(fig, go.Figure) and len(fig.data) == 3 * len(training.VARIANTS)
    for i, c in enumerate(result.curves):
        held_out, train, accuracy = fig.data[3 * i : 3 * i + 3]
        assert held_out.name == c.variant == accuracy.name
        assert {held_out.line.color, train.line.color, accuracy.line.color} == {ROLES[c.variant]}
        assert list(held_out.x) == list(c.eval_steps) and list(held_out.y) == list(c.loss)
        assert list(accuracy.y) == list(c.accuracy) and accuracy.xaxis == "x2"
        assert len(train.y) == 58  # 400 steps averaged into blocks of 7, the last one of 1
        assert train.y[0] == pytest.approx(sum(c.train_loss[:7]) / 7)
        assert train.y[-1] == pytest.approx(c.train_loss[-1]) and train.x[-1] == 400
        assert sum(train.y[:-1]) * 7 + train.y[-1] == pytest.approx(sum(c.train_loss))
    assert fig.layout.yaxis.type == "log" and tuple(fig.layout.xaxis.range) == (0, 400)
    assert_plotly_valid(fig)


def test_fig_race_names_a_failed_variant_and_fig_step_time_shows_the_medians():
    result = training.run("spirals", 1, 0.01, 4, seed=0)
    fig = training.fig_race(result)
    assert "BN (failed)" in [t.name for t in fig.data]
    bars = training.fig_step_time(result).data[0]
    assert list(bars.y) == ["none", "LN", "RMSNorm"]  # BN never finished a step
    assert list(bars.x) == [result.curve(v).ms_per_step for v in bars.y]
    assert list(bars.marker.color) == [ROLES[v] for v in bars.y]
    assert_plotly_valid(fig)
    assert_plotly_valid(training.fig_step_time(result))


def test_params_have_stable_unique_keys_and_strict_parsing():
    keys = [p.key for p in pages.TRAINING]
    assert keys == ["task", "batch", "lr", "steps", "seed", "variant", "layer", "depth", "device"]
    assert pages.TRAINING.seed is SEED
    assert pages.TRAINING.batch.lo == 1 and pages.TRAINING.batch.default >= 8
    options = state.LR.options
    assert list(options) == sorted(options) and options[0] == 1e-4 and options[-1] == 1.0
    assert state.LR.parse("0.002") == (0.002, None)
    value, note = state.LR.parse("0.003")  # off the grid: a valid option instead, and a note says so
    assert value in options and note
    assert state.TASK.parse("adding") == ("adding", None)
    value, note = state.TASK.parse("circles")
    assert value in training.TASKS and note
    value, note = pages.TRAINING.batch.parse("0")
    assert pages.TRAINING.batch.lo <= value <= pages.TRAINING.batch.hi and note


# ---------------------------------------------------------------- the page


def _race_figure(at):
    return next(f for f in figures(at) if len(f.data) == 3 * len(training.VARIANTS))


def _losses(fig):
    return [tuple(t.y) for t in fig.data[::3]]


def test_page_first_load_explains_and_waits_for_run():
    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    assert_no_exception(at)
    assert at.title[0].value == "Training race"
    assert any("Press **Run**" in i.value for i in at.info)
    (grad_fig,) = figures(at)  # only the Pre-LN/Post-LN profile until a race runs
    assert [len(t.x) for t in grad_fig.data] == [3, 3]


def test_page_every_control_changes_the_race():
    at = run_page("pages/training.py", {"steps": "10", "depth": "3", "batch": "16"})
    at.button(key="run").click().run()
    assert_no_exception(at)
    base = _race_figure(at)
    assert "Step 10 of 10" in at.get("progress")[0].proto.text
    assert any("wall time" in (f.layout.title.text or "").lower() for f in figures(at))

    at.radio(key="task").set_value("adding")
    at.button(key="run").click().run()
    assert_no_exception(at)
    adding = _race_figure(at)
    assert _losses(adding) != _losses(base)
    assert any("adding problem" in c.value for c in at.caption)

    at.radio(key="task").set_value("spirals")
    at.select_slider(key="lr").set_value(0.05)
    at.button(key="run").click().run()
    assert _losses(_race_figure(at)) != _losses(base)

    at.select_slider(key="lr").set_value(0.01)
    at.number_input(key="seed").set_value(4)
    at.button(key="run").click().run()
    seeded = _race_figure(at)
    assert _losses(seeded) != _losses(base)

    at.slider(key="steps").set_value(20)
    at.button(key="run").click().run()
    assert tuple(_race_figure(at).layout.xaxis.range) == (0, 20)

    at.number_input(key="batch").set_value(1)
    at.button(key="run").click().run()
    assert_no_exception(at)
    assert any(training.BN_BATCH_ONE in w.value for w in at.warning)
    assert "BN (failed)" in [t.name for t in _race_figure(at).data]


def test_page_suggested_race_sets_the_controls_and_runs():
    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    at.button(key="try_rnn").click().run()
    assert_no_exception(at)
    settings = training.SUGGESTED["rnn"][2]
    assert at.radio(key="task").value == settings["task"] == "adding"
    assert at.select_slider(key="lr").value == settings["lr"]
    assert at.slider(key="steps").value == 10  # the user's steps are kept
    assert "Step 10 of 10" in at.get("progress")[0].proto.text
    at.number_input(key="layer").set_value(2)
    at.button(key="send").click().run()  # the recurrent model has a single norm layer
    assert any("1 normalized layer" in w.value for w in at.warning)
    assert "explorer_activations" not in at.session_state
    at.button(key="try_one").click().run()
    assert any(training.BN_BATCH_ONE in w.value for w in at.warning)


def test_page_returns_to_a_finished_race_from_the_cache_and_shows_a_stopped_one():
    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    at.button(key="run").click().run()
    first = _race_figure(at)
    at.number_input(key="seed").set_value(1)
    at.button(key="run").click().run()
    at.number_input(key="seed").set_value(0)
    at.run()  # no Run click: the finished race comes back as it was
    assert _losses(_race_figure(at)) == _losses(first)
    at.button(key="run").click().run()
    assert any("from the cache" in c.value for c in at.caption)

    races = at.session_state["training_races"]
    races[("spirals", 32, 0.01, 20, 0, "cpu")] = next(training.race("spirals", 32, 0.01, 20, 0, "cpu", every=5))
    at.session_state["training_races"] = races
    at.slider(key="steps").set_value(20)
    at.button(key="stop").click().run()
    assert_no_exception(at)
    assert any("Stopped at step 5 of 20" in i.value for i in at.info)
    assert len(_race_figure(at).data[1].y) == 5


def test_page_sends_a_trained_layer_to_the_explorer():
    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    at.button(key="send").click().run()
    assert any("Run a race first" in i.value for i in at.info)
    at.button(key="run").click().run()
    at.selectbox(key="variant").set_value("BN")
    at.number_input(key="layer").set_value(2)
    at.button(key="send").click().run()
    assert_no_exception(at)
    sent = at.session_state["explorer_activations"]
    x = own_data.store().get(sent["id"])
    assert x.shape == (256, 64) and str(x.dtype) == "float64"
    assert "BN layer 2" in sent["source"] and "spirals" in sent["source"]
    assert at.title[0].value != "Training race"  # the explorer is showing now


def test_page_depth_control_recomputes_the_gradient_profile():
    at = run_page("pages/training.py", {"depth": "3"})
    at.slider(key="depth").set_value(5).run()
    assert_no_exception(at)
    (grad_fig,) = figures(at)
    assert [len(t.x) for t in grad_fig.data] == [5, 5]
    assert any("√5" in m.value for m in at.markdown)


def test_the_log_loss_axis_reads_as_plain_numbers():
    wide = training.log_ticks([0.004, 0.7, 2.5, float("nan"), 0.0])
    assert wide["ticktext"] == ["0.001", "0.01", "0.1", "1", "10"]
    assert wide["tickvals"] == [0.001, 0.01, 0.1, 1.0, 10.0]
    short = training.log_ticks([0.3, 0.69])
    assert short["ticktext"] == ["0.1", "0.2", "0.5", "1", "2", "5"]
    assert training.log_ticks([0.05, 1.5])["ticktext"] == ["0.01", "0.03", "0.1", "0.3", "1", "3", "10", "30"]
    assert training.log_ticks([float("inf")]) == {}
    fig = training.fig_race(_synthetic_race(100))
    assert all("e" not in t for t in fig.layout.yaxis.ticktext)


# ---------------------------------------------------------------- a past step, for the replay


def test_race_at_a_step_is_the_snapshot_the_live_race_yielded_then():
    whole = training.run("spirals", 8, 0.02, 20, seed=5)
    live = {s.done: s for s in training.race("spirals", 8, 0.02, 20, seed=5, every=5)}
    for step in (5, 10, 15):
        past = whole.at(step)
        assert past.done == step and not past.complete
        for cut, then in zip(past.curves, live[step].curves, strict=True):
            assert (cut.eval_steps, cut.loss, cut.accuracy) == (then.eval_steps, then.loss, then.accuracy)
            assert cut.train_loss == then.train_loss and cut.failed is then.failed is None
            assert cut.state == {}  # weights are kept for the last step only
    assert whole.at(20) is whole
    assert whole.eval_steps == tuple(range(21)) and whole.eval_every == 1
    for bad in (-1, 21, 2.5):
        with pytest.raises(ValueError, match="steps 0 to 20"):
            whole.at(bad)


def test_race_at_a_step_before_a_failure_has_not_failed_yet():
    result = training.run("spirals", 16, 1e30, 5, seed=0)
    none = result.curve("none")
    assert none.failed_at == len(none.train_loss) + 1 <= 5
    assert result.at(none.failed_at - 1).curve("none").failed is None
    assert result.at(none.failed_at).curve("none").failed == none.failed
    assert all((c.failed_at is None) == (c.failed is None) for c in result.curves)
    bn = training.run("spirals", 1, 0.01, 3, seed=0).curve("BN")
    assert bn.failed_at == 1 and bn.at(0).failed is None and bn.at(1).failed == training.BN_BATCH_ONE


# ---------------------------------------------------------------- the race's story


def _race_of(final: dict[str, float], accuracy: dict[str, float] | None = None, batch: int = 8, steps: int = 30):
    """A finished race whose held-out curves fall linearly from 0.7 to ``final`` (one evaluation every 10 steps)
    and whose accuracy rises from 0.5 to ``accuracy``; a variant missing from ``final`` failed at step 1."""
    evals = tuple(range(0, steps + 1, 10))
    curves = []
    for variant in training.VARIANTS:
        end = final.get(variant)
        if end is None:
            curve = training.Curve(variant, (0,), (0.7,), (0.5,), (), (), {}, failed=training.BN_BATCH_ONE)
        else:
            fall = [0.7 + (end - 0.7) * s / steps for s in evals]
            rise = [0.5 + ((accuracy or {}).get(variant, 0.8) - 0.5) * s / steps for s in evals]
            curve = training.Curve(variant, evals, tuple(fall), tuple(rise), (0.5,) * steps, (1e-3,) * steps, {})
        curves.append(curve)
    return training.Race("spirals", batch, 0.01, steps, 0, "cpu", steps, 1.0, tuple(curves))


def _shown(x: float) -> float:
    return float(f"{x:.3g}")


def test_summary_follows_the_curves_of_a_small_seeded_race():
    result = training.run("spirals", 16, 0.02, 20, seed=3)
    s = training.summarize(result)
    final = {c.variant: c.loss[-1] for c in result.curves}
    assert {st.variant: st.loss for st in s.standings} == final
    assert {st.variant: st.accuracy for st in s.standings} == {c.variant: c.accuracy[-1] for c in result.curves}
    ranked = sorted(final, key=lambda v: (_shown(final[v]), training.VARIANTS.index(v)))
    assert s.ranking == tuple(ranked) and s.winner == ranked[0]
    assert s.margin == pytest.approx(_shown(final[ranked[1]]) / _shown(final[ranked[0]]))
    assert s.target_loss == final["none"] and s.target_accuracy == 0.9
    for c in result.curves:
        st = s.standing(c.variant)
        reached = [step for step, loss in zip(c.eval_steps, c.loss, strict=True) if loss <= final["none"]]
        accurate = [step for step, a in zip(c.eval_steps, c.accuracy, strict=True) if a >= 0.9]
        assert st.to_loss == (reached[0] if reached else None)
        assert st.to_accuracy == (accurate[0] if accurate else None)
    assert s.standing("none").to_loss is not None  # no norm reaches its own final loss, at the latest at the end
    words = " ".join(training.story(s))
    for variant in {*s.leaders, *s.ranking[:2], "LN", "none"}:  # the finish, and LN against no norm
        assert f"{_shown(final[variant]):#.3g}".rstrip(".") in words  # as the table prints it


def test_a_variant_with_a_held_out_loss_that_is_not_finite_is_in_the_table_as_in_the_words():
    # Its weights blew up on the held-out set before a training loss did: not ranked, not failed.
    s = training.summarize(_race_of({"none": 0.3, "BN": float("nan"), "LN": 0.05}))  # RMSNorm failed
    assert "BN" not in s.ranking and s.standing("BN").failed_at is None
    assert "BN (nan)" in " ".join(training.story(s))
    rows = {r["Model"]: r for r in training.story_table(s)}
    assert set(rows) == {"LN", "no norm", "BN", "RMSNorm"} and rows["BN"]["Held-out loss"] == "nan"


def test_summary_picks_the_winner_and_says_by_how_much():
    s = training.summarize(_race_of({"none": 0.3, "BN": 0.2, "LN": 0.05, "RMSNorm": 0.1}))
    assert s.ranking == ("LN", "RMSNorm", "BN", "none") and s.winner == "LN" and s.margin == 2.0
    assert s.leaders == ("LN",) and s.versus("LN", "none") == "lower"
    assert [s.standing(v).to_loss for v in s.ranking] == [20, 20, 30, 30]  # the first evaluation ≤ 0.3
    words = training.story(s)
    assert words[0] == (
        "After 30 steps, LN has the lowest held-out loss: 0.0500, 2.0× below the next, RMSNorm (0.100)."
    )
    assert "LN against no norm: LN finished 6.0× lower (0.0500 against 0.300)." in words
    assert "To get down to no norm's final loss (0.300): LN by step 20, RMSNorm by step 20, BN by step 30, " in (
        " ".join(words)
    )
    rows = training.story_table(s)
    assert [r["Model"] for r in rows] == ["LN", "RMSNorm", "BN", "no norm"]
    assert rows[0] == {
        "Model": "LN",
        "Held-out loss": "0.0500",
        "Accuracy": "80%",
        "Loss ≤ 0.300 by step": "20",
        "90% accuracy by step": "never",
    }


def test_a_race_ln_loses_is_not_told_as_an_ln_win():
    s = training.summarize(_race_of({"none": 0.1, "BN": 0.3, "LN": 0.2, "RMSNorm": 0.25}, {"LN": 0.95}))
    assert s.winner == "none" and s.versus("LN", "none") == "higher"
    words = " ".join(training.story(s))
    assert words.startswith("After 30 steps, no norm has the lowest held-out loss: 0.100, 2.0× below the next, LN")
    assert "LN finished higher (0.200 against 0.100), so at these settings LN did not beat" in words
    assert "LN has the lowest" not in words and "LN finished" not in words.replace("LN finished higher", "")
    # LN leads on accuracy: said as accuracy, against the loss winner
    assert "By held-out accuracy, though, LN leads: 95% against no norm's 80%." in words
    assert training.story_alt(s).endswith(words)


def test_finishes_within_five_percent_are_called_level_as_the_page_rounds_them():
    s = training.summarize(_race_of({"none": 0.2, "BN": 0.5, "LN": 0.196, "RMSNorm": 0.21}))
    assert s.leaders == ("LN", "none") and s.versus("LN", "none") == "level"
    words = training.story(s)
    assert words[0].startswith("After 30 steps, LN and no norm are about level on held-out loss: 0.196 and 0.200")
    assert any(w.startswith("LN against no norm: about level (0.196 against 0.200") for w in words)
    assert not any("has the lowest" in w or "lower (" in w for w in words)
    # 0.2004 and 0.2 print as 0.200 both: level, whatever the fourth digit says
    tie = training.summarize(_race_of({"none": 0.2, "BN": 0.5, "LN": 0.2004, "RMSNorm": 0.3}))
    assert tie.margin == 1.0 and tie.versus("LN", "none") == "level"


def test_batch_one_says_what_happened_to_bn_and_whether_ln_beat_no_norm():
    behind = training.summarize(_race_of({"none": 0.5, "LN": 0.6, "RMSNorm": 0.55}, batch=1))
    assert behind.ranking == ("none", "RMSNorm", "LN") and behind.standing("BN").failed_at == 1
    words = " ".join(training.story(behind))
    assert "At batch 1 LN trains where BN cannot, but training at all is not the same as training better." in words
    assert "Failed, so not ranked (see the warning below): BN at step 1." in words
    rows = training.story_table(behind)
    assert rows[-1]["Model"] == "BN" and rows[-1]["Held-out loss"] == "failed at step 1"
    ahead = training.summarize(_race_of({"none": 0.6, "LN": 0.4, "RMSNorm": 0.55}, batch=1))
    assert "At batch 1 LN trains where BN cannot, and here it also did better than no norm." in " ".join(
        training.story(ahead)
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_batch_one_race_is_told_as_its_numbers_say(seed):
    s = training.summarize(training.run("spirals", 1, 0.01, 20, seed=seed))
    ln, none = _shown(s.standing("LN").loss), _shown(s.standing("none").loss)
    words = " ".join(training.story(s))
    assert "not ranked (see the warning below): BN at step 1." in words and "BN" not in s.ranking
    if max(ln, none) <= training.CLOSE * min(ln, none):
        assert "LN against no norm: about level" in words
    elif ln < none:
        assert "LN finished" in words and "lower" in words and "did better than no norm" in words
    else:
        assert "LN did not beat the model without a norm" in words and "LN has the lowest" not in words


def test_brief_story_keeps_the_finish_ln_against_no_norm_and_the_failures():
    s = training.summarize(_race_of({"none": 0.5, "LN": 0.6, "RMSNorm": 0.55}, batch=1))
    full, brief = training.story(s), training.story(s, brief=True)
    assert brief == [full[0], *full[-2:]] and len(full) == len(brief) + 3


def test_fig_race_replay_keeps_the_axes_of_the_whole_race_and_marks_the_step():
    whole = training.run("spirals", 8, 0.02, 20, seed=1)
    end = training.fig_race(whole, whole=whole)
    early = training.fig_race(whole.at(4), whole=whole)
    assert [len(t.x) for t in early.data[::3]] == [5] * 4  # held-out evaluations at steps 0 to 4
    assert list(early.data[2].y) == list(whole.curve("none").accuracy[:5])
    assert tuple(early.layout.yaxis.range) == tuple(end.layout.yaxis.range)
    assert early.layout.yaxis.tickvals == end.layout.yaxis.tickvals
    assert [s.x0 for s in early.layout.shapes] == [4, 4] and not end.layout.shapes
    low, high = end.layout.yaxis.range
    losses = [v for c in whole.curves for v in c.loss]
    assert 10**low < min(losses) and max(losses) < 10**high
    assert_plotly_valid(early)


def test_a_held_out_loss_that_is_not_finite_is_not_ranked():
    s = training.summarize(_race_of({"none": 0.3, "BN": 0.2, "LN": float("nan"), "RMSNorm": 0.1}))
    assert s.ranking == ("RMSNorm", "BN", "none") and s.versus("LN", "none") is None
    words = " ".join(training.story(s))
    assert "Held-out loss not a finite number, so not ranked: LN (nan)." in words and "LN against" not in words


# ---------------------------------------------------------------- a race one can watch


@pytest.fixture(autouse=True)
def _replays_without_waiting(monkeypatch):
    """No race is too fast to watch and a replay's frames follow without a pause, so page tests stay fast."""
    monkeypatch.setattr(training.loop, "REPLAY_SECONDS", 0.0)


def test_a_race_faster_than_a_replay_is_replayed_at_a_pace_one_can_follow(monkeypatch):
    monkeypatch.setattr(training.loop, "REPLAY_SECONDS", 8.0)
    result = _synthetic_race(300)  # trained in 1.0 s; evaluated at steps 0, 10, ..., 300
    assert training.too_fast_to_watch(result)
    assert training.replay_pause(result) == pytest.approx(8.0 / 30)  # 30 frames after step 0, over 8 s
    assert not training.too_fast_to_watch(dataclasses.replace(result, elapsed=8.5))  # watched live
    assert not training.too_fast_to_watch(result.at(150))  # stopped: the page says where, no replay


def _in_order(node) -> list:
    """Every element under ``node`` (an AppTest block), in the order the page shows them."""
    children = getattr(node, "children", None)
    if children is None:
        return [node]
    return [e for _, child in sorted(children.items()) for e in _in_order(child)]


def _pauses(monkeypatch) -> list:
    """Record each time the page asks how long to pause between a replay's frames, and answer 0 s."""
    asked: list = []
    monkeypatch.setattr(training, "replay_pause", lambda result: asked.append(result) or 0.0)
    return asked


def test_page_replays_a_fast_race_at_once_under_run(monkeypatch):
    asked = _pauses(monkeypatch)
    monkeypatch.setattr(training.loop, "REPLAY_SECONDS", 60.0)  # 10 steps train far faster than this
    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    at.button(key="run").click().run()
    assert_no_exception(at)
    result = _race_in_session(at, steps=10)
    assert asked == [result]  # trained in well under REPLAY_SECONDS: drawn in again without a click
    assert _losses(_race_figure(at)) == [c.loss for c in result.curves]  # and it ends on the whole race
    assert "Step 10 of 10" in at.get("progress")[0].proto.text
    # In view under Run: the run button, the progress, the replay's slider, then the race's chart.
    order = _in_order(at.main)
    where = {id(e): k for k, e in enumerate(order)}
    run_at = where[id(at.button(key="run"))]
    slider_at = where[id(at.select_slider(key="replay"))]
    (chart,) = [c for c in at.get("plotly_chart") if c.proto.alt.startswith("Held-out loss")]
    assert run_at < where[id(at.get("progress")[0])] < slider_at < where[id(chart)]
    assert where[id(chart)] < min(where[id(s)] for s in at.subheader)  # above the verdict
    at.number_input(key="seed").set_value(1).run()  # no Run: nothing new, nothing replayed
    assert len(asked) == 1


def test_page_watches_a_slow_race_live_and_does_not_replay_it(monkeypatch):
    asked = _pauses(monkeypatch)
    monkeypatch.setattr(training.loop, "REPLAY_SECONDS", -1.0)  # any race is slower than this
    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    at.button(key="run").click().run()
    assert_no_exception(at)
    assert asked == []
    assert _losses(_race_figure(at)) == [c.loss for c in _race_in_session(at, steps=10).curves]


# ---------------------------------------------------------------- the page: the story and the replay


def _race_in_session(at, steps: int = 20, batch: int = 32):
    return at.session_state["training_races"][("spirals", batch, 0.01, steps, 0, "cpu")]


def test_page_tells_how_the_race_ended_in_words_a_table_and_the_charts_alt():
    at = run_page("pages/training.py", {"steps": "20", "depth": "3"})
    at.button(key="run").click().run()
    assert_no_exception(at)
    result = _race_in_session(at)
    s = training.summarize(result)
    assert "How the race ended" in [h.value for h in at.subheader]
    shown = [m.value for m in at.markdown]
    story = training.story(s)
    assert f"**{story[0]}**" in shown and all(text in shown for text in story[1:])
    table = at.table[0].value
    assert table.to_dict("records") == training.story_table(s)
    (chart,) = [c for c in at.get("plotly_chart") if c.proto.alt.startswith("Held-out loss")]
    assert chart.proto.alt == training.story_alt(s)


def test_page_in_lecture_mode_keeps_the_finish_and_the_table():
    at = run_page("pages/training.py", {"steps": "20", "depth": "3", "batch": "1", "present": "1"})
    at.button(key="run").click().run()
    assert_no_exception(at)
    s = training.summarize(_race_in_session(at, batch=1))
    shown = [m.value for m in at.markdown]
    brief, full = training.story(s, brief=True), training.story(s)
    assert f"**{brief[0]}**" in shown and all(text in shown for text in brief[1:])
    assert not any(text in shown for text in full if text not in brief)  # the table holds those
    assert len(at.table) == 1


def test_page_replay_slider_shows_the_race_as_it_stood_at_that_step():
    at = run_page("pages/training.py", {"steps": "20", "depth": "3"})
    at.button(key="run").click().run()
    result = _race_in_session(at)
    replay = at.select_slider(key="replay")
    assert replay.value == 20 and list(replay.options) == [str(k) for k in result.eval_steps]
    end = _race_figure(at)
    replay.set_value(7).run()
    assert_no_exception(at)
    early = _race_figure(at)
    assert _losses(early) == [c.loss for c in result.at(7).curves]
    assert [s.x0 for s in early.layout.shapes] == [7, 7]
    assert tuple(early.layout.yaxis.range) == tuple(end.layout.yaxis.range)
    said = training.story(training.summarize(result.at(7)))[0]
    assert said.startswith("After 7 of 20 steps") and said in [c.value for c in at.caption]
    (chart,) = [c for c in at.get("plotly_chart") if c.proto.alt.startswith("Held-out loss")]
    assert "over 7 steps" in chart.proto.alt
    assert "How the race ended" in [h.value for h in at.subheader]  # the summary is still the whole race's
    at.number_input(key="seed").set_value(1)
    at.button(key="run").click().run()  # a new race: the replay starts at its end
    assert at.select_slider(key="replay").value == 20 and not _race_figure(at).layout.shapes


def test_page_play_draws_the_race_in_again_without_training():
    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    at.button(key="run").click().run()
    result = _race_in_session(at, steps=10)
    at.select_slider(key="replay").set_value(3).run()
    at.button(key="play").click().run()
    assert_no_exception(at)
    assert _race_in_session(at, steps=10) is result  # the recorded race, not a new one
    assert at.select_slider(key="replay").value == 10
    assert _losses(_race_figure(at)) == [c.loss for c in result.curves]


def test_page_a_stopped_race_says_where_it_stopped():
    at = run_page("pages/training.py", {"steps": "20", "depth": "3"})
    races = {("spirals", 32, 0.01, 20, 0, "cpu"): next(training.race("spirals", 32, 0.01, 20, 0, "cpu", every=5))}
    at.session_state["training_races"] = races
    at.run()
    assert_no_exception(at)
    assert "Where the race stopped, at step 5" in [h.value for h in at.subheader]
    assert any(m.value.startswith("**After 5 of 20 steps") for m in at.markdown)
    assert at.select_slider(key="replay").value == 5


def test_a_session_keeps_its_last_races_only():
    """Races stay in the session by their settings, the newest KEEP of them: a visitor who tries many settings
    does not hold every race they ran."""
    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    older = next(training.race("spirals", 32, 0.01, 10, 0, "cpu", every=5))
    at.session_state["training_races"] = {("spirals", 32, 0.01, 10, s, "cpu"): older for s in range(100, 100 + KEEP)}
    at.button(key="run").click().run()
    assert_no_exception(at)
    races = at.session_state["training_races"]
    assert KEEP == len(races) == 8
    assert ("spirals", 32, 0.01, 10, 100, "cpu") not in races  # the oldest went
    assert list(races)[-1] == ("spirals", 32, 0.01, 10, 0, "cpu") and races[list(races)[-1]].complete


def test_a_race_is_heavy_work_and_waits_its_turn_when_the_server_is_busy(monkeypatch):
    from server import heavy, limits

    class Full:
        """A gate with every slot taken."""

        def begin(self, session, action, wait_s=0.0, on_wait=None):
            return limits.Busy("server", 7, f"{action} is running for 2 other visitors.")

        def end(self, ticket):
            pass

    at = run_page("pages/training.py", {"steps": "10", "depth": "3"})
    monkeypatch.setattr(heavy, "gate", lambda: Full())
    at.button(key="run").click().run()
    assert_no_exception(at)
    assert any("Busy: the training race" in w.value and "Try again in 7 s" in w.value for w in at.warning)
    assert not any("How the race ended" in s.value for s in at.subheader)  # no race ran


def test_a_race_can_be_stopped_between_any_two_steps_not_only_at_a_snapshot():
    # A shared server's gate stops an action once its share is over: it must not wait for the next snapshot.
    from lnviz.labs import training

    steps_started = []

    def tick() -> None:
        steps_started.append(len(steps_started) + 1)
        if len(steps_started) == 4 + 7:  # four first evaluations, then the steps
            raise RuntimeError("stop here")

    snapshots = []
    with pytest.raises(RuntimeError, match="stop here"):
        for snapshot in training.race("spirals", 8, 0.01, 50, 0, every=5, tick=tick):
            snapshots.append(snapshot.done)
    assert snapshots == [5] and len(steps_started) == 11
