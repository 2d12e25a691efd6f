"""Train against eval: lnviz.labs.train_eval against torch.nn.BatchNorm1d / LayerNorm in float64, and the page."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, figures, run_page
from figcheck import assert_plotly_valid
from test_theme import ACHROMATIC, HUE_MIN, LN_BN_MIN, VISIONS, ciede2000, hue_and_chroma, seen
from torch import nn

from lnviz.figures import theme
from lnviz.labs import train_eval
from lnviz.views import pages

TOL = dict(rtol=0, atol=1e-12)


def _random_case(seed: int) -> tuple[int, int, int, float, float]:
    """(B, H, steps, momentum, shift) drawn from a generator of the test's own."""
    g = torch.Generator().manual_seed(2000 + seed)
    b = int(torch.randint(2, 33, (1,), generator=g))
    h = int(torch.randint(2, 17, (1,), generator=g))
    steps = int(torch.randint(1, 40, (1,), generator=g))
    momentum = float(torch.empty(1, dtype=torch.float64).uniform_(0.01, 1.0, generator=g))
    shift = float(torch.empty(1, dtype=torch.float64).uniform_(-5, 5, generator=g))
    return b, h, steps, momentum, shift


@pytest.mark.parametrize("seed", range(8))
def test_running_stats_match_batchnorm1d(seed: int) -> None:
    b, h, steps, momentum, shift = _random_case(seed)
    eps = [1e-5, 1e-3][seed % 2]
    result = train_eval.train_eval(b, h, steps, momentum, shift, seed, eps=eps)
    stats = result.stats
    module = nn.BatchNorm1d(h, eps=eps, momentum=momentum, affine=False, dtype=torch.float64)
    torch.testing.assert_close(stats.running_mean[0], module.running_mean, **TOL)
    torch.testing.assert_close(stats.running_var[0], module.running_var, **TOL)
    module.train()
    _, _, batches = train_eval.training_batches(b, h, steps, seed)
    for k, x in enumerate(batches, start=1):
        y = module(x)
        torch.testing.assert_close(stats.running_mean[k], module.running_mean, **TOL)
        torch.testing.assert_close(stats.running_var[k], module.running_var, **TOL)
        torch.testing.assert_close(stats.batch_var[k - 1], x.var(dim=0, unbiased=True), **TOL)
    assert k == steps
    torch.testing.assert_close(stats.last_train.y, y, **TOL)

    module.eval()
    torch.testing.assert_close(result.bn_eval.y, module(result.x_test), **TOL)
    module.train()
    torch.testing.assert_close(result.bn_train.y, module(result.x_test), **TOL)
    ln = nn.LayerNorm(h, eps=eps, elementwise_affine=False, dtype=torch.float64)
    torch.testing.assert_close(result.ln_train.y, ln.train()(result.x_test), **TOL)
    torch.testing.assert_close(result.ln_eval.y, ln.eval()(result.x_test), **TOL)
    assert float(result.ln_gap.max()) == 0.0


def test_running_mean_is_the_weighted_sum_of_batch_means() -> None:
    """Unrolled: μ̂_t = Σ_k m (1 − m)^(t − k) μ_k (start 0); σ̂²_t = (1 − m)^t + Σ_k m (1 − m)^(t − k) s²_k."""
    m, steps = 0.2, 25
    stats = train_eval.stream(12, 5, steps, m, 4)
    w = m * (1 - m) ** torch.arange(steps - 1, -1, -1, dtype=torch.float64)  # (S,)
    torch.testing.assert_close(stats.running_mean[-1], w @ stats.batch_mean, rtol=0, atol=1e-12)
    torch.testing.assert_close(stats.running_var[-1], (1 - m) ** steps + w @ stats.batch_var, rtol=0, atol=1e-12)


def test_momentum_one_keeps_only_the_last_batch() -> None:
    stats = train_eval.stream(6, 4, 3, 1.0, 9)
    x = stats.last_train.x
    torch.testing.assert_close(stats.running_mean[-1], x.mean(dim=0), **TOL)
    torch.testing.assert_close(stats.running_var[-1], x.var(dim=0, unbiased=True), **TOL)
    assert not torch.allclose(stats.running_var[-1], x.var(dim=0, unbiased=False))


def test_running_stats_converge_to_the_stream() -> None:
    short = train_eval.stream(64, 16, 3, 0.1, 1)
    long = train_eval.stream(64, 16, 300, 0.1, 1)
    assert float(long.mean_error[-1]) < 0.25 * float(short.mean_error[-1])
    assert float(long.var_error[-1]) < 0.5 * float(short.var_error[-1])
    assert float(long.mean_error[-1]) < 0.2
    torch.testing.assert_close(long.mean_error, (long.running_mean - long.loc).abs().mean(dim=1), **TOL)


def test_shifted_test_batch() -> None:
    """x_test = loc + scale·(shift + z) with z independent of shift and steps; BN eval carries the shift."""
    a = train_eval.train_eval(64, 8, 300, 0.1, 0.0, 3)
    b = train_eval.train_eval(64, 8, 10, 0.1, 3.0, 3)
    torch.testing.assert_close(b.x_test - a.x_test, 3.0 * a.stats.scale.expand(64, 8), rtol=0, atol=1e-12)
    c = train_eval.train_eval(64, 8, 300, 0.1, 3.0, 3)
    gap = (c.bn_eval.y - c.bn_train.y).mean()
    assert 2.5 < float(gap) < 3.5  # about `shift` standard deviations
    assert float(c.bn_gap.mean()) > 5 * float(a.bn_gap.mean())
    torch.testing.assert_close(
        c.bn_train.y, F.batch_norm(c.x_test, None, None, training=True, eps=1e-5), rtol=0, atol=1e-12
    )


def test_ln_has_no_mode_but_the_per_feature_shift_still_moves_it() -> None:
    """The invariance table's dataset re-centering: BN (train mode) removes a shared shift, LN does not."""
    r = train_eval.train_eval(16, 8, 50, 0.1, 2.0, 0)  # the page's defaults, shift 2
    plain = r.x_test - 2.0 * r.stats.scale
    torch.testing.assert_close(r.ln_unshifted.y, F.layer_norm(plain, (8,), eps=1e-5), **TOL)
    torch.testing.assert_close(
        r.ln_shift_delta, (F.layer_norm(r.x_test, (8,), eps=1e-5) - r.ln_unshifted.y).abs(), **TOL
    )
    assert float(r.ln_gap.max()) == 0.0  # no mode...
    assert float(r.ln_shift_delta.max()) > 0.5  # ...yet the shift moves it (0.76)
    assert float(r.bn_shift_delta.max()) < 1e-12
    assert float(train_eval.train_eval(16, 8, 50, 0.1, 0.0, 0).ln_shift_delta.max()) == 0.0


def test_page_says_the_shift_moves_ln_and_links_the_invariance_table() -> None:
    at = run_page(PAGE, {"shift": "2"})
    assert_no_exception(at)
    moved = _metric(at, "Shift's effect on LN")
    assert moved > 0.5
    prose = " ".join(m.value for m in at.markdown)
    assert "does not make it robust" in prose and f"{moved:.2f}" in prose
    assert "](/invariance)" in prose and "dataset re-centering" in prose


def test_the_caption_says_momentum_is_pytorchs_weight_of_the_new_batch_and_what_keras_writes() -> None:
    """nn.BatchNorm1d's momentum m weighs the new batch (μ̂ = (1 − m)·0 + m·μ_B after one step); Keras's momentum
    weighs the old value, so the page's m = 0.3 is Keras's 0.7."""
    m = 0.3
    x = torch.randn(16, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    module = nn.BatchNorm1d(4, momentum=m, affine=False, dtype=torch.float64)
    module(x)
    torch.testing.assert_close(module.running_mean, m * x.mean(dim=0), **TOL)
    keras = 1 - m  # Keras: moving = moving · momentum + batch · (1 − momentum)
    at = run_page(PAGE, {"momentum": str(m)})
    assert_no_exception(at)
    caption = " ".join(c.value for c in at.caption)
    assert "m is the weight of the new batch, PyTorch's convention" in caption
    assert f"Keras writes this decay as {keras:.4g}" in caption


@pytest.mark.parametrize(
    ("args", "match"),
    [((1, 4, 5, 0.1, 0.0, 0), "at least 2"), ((4, 4, 0, 0.1, 0.0, 0), "steps"), ((4, 4, 5, 0.0, 0.0, 0), "momentum")],
)
def test_train_eval_rejects_bad_arguments(args, match) -> None:
    with pytest.raises(ValueError, match=match):
        train_eval.train_eval(*args)


def test_figures_are_built_from_the_result() -> None:
    r = train_eval.train_eval(8, 6, 20, 0.3, 1.0, 5)
    fig = train_eval.fig_running(r.stats)
    assert len(fig.data) == 4 * train_eval.SHOWN_FEATURES
    runs = [t for t in fig.data if t.showlegend is not False and "true" not in t.name]
    for j, trace in enumerate(runs):
        np.testing.assert_allclose(trace.y, r.stats.running_mean[:, j].numpy(), rtol=1e-6)
    truths = [t for t in fig.data if "true" in t.name]
    np.testing.assert_allclose(truths[0].y, [float(r.stats.loc[0])] * 2, rtol=1e-6)
    np.testing.assert_allclose(truths[1].y, [float(r.stats.scale[0] ** 2)] * 2, rtol=1e-6)

    fig = train_eval.fig_outputs(r, sample=2)
    assert {t.line.color for t in fig.data} == {theme.ROLES["BN"], theme.ROLES["LN"]}
    got = {t.name: np.asarray(t.y) for t in fig.data}
    np.testing.assert_allclose(got["BN train mode"], r.bn_train.y[2].numpy(), rtol=1e-6)
    np.testing.assert_allclose(got["BN eval mode"], r.bn_eval.y[2].numpy(), rtol=1e-6)
    np.testing.assert_array_equal(got["LN train mode"], got["LN eval mode"])


@pytest.mark.parametrize("vision", VISIONS)
def test_features_are_drawn_in_no_norms_colour(vision) -> None:
    """The features' lines, which are no norm, can't be taken for LN or BN (once sky blue and orange)."""
    fig = train_eval.fig_running(train_eval.train_eval(8, 6, 20, 0.3, 1.0, 5).stats)
    colors = list(dict.fromkeys(t.line.color for t in fig.data))
    assert len(colors) == train_eval.SHOWN_FEATURES  # one per feature, its true value dotted in the same
    for color in colors:
        for norm in ("LN", "BN"):
            distance = float(ciede2000(*seen([color, theme.ROLES[norm]], vision)))
            assert distance >= LN_BN_MIN, f"{vision}: feature colour {color} is ΔE00 {distance:.1f} from {norm}'s"
            hue, chroma = hue_and_chroma(color)
            norm_hue, _ = hue_and_chroma(theme.ROLES[norm])
            assert chroma <= ACHROMATIC or abs((hue - norm_hue + 180) % 360 - 180) >= HUE_MIN


@pytest.mark.parametrize(
    ("b", "h", "steps", "sample"),
    [
        (8, 6, 20, 2),
        (2, 2, 1, 1),  # the smallest batch, fewer features than the chart shows, a single step
        (64, 32, 300, 63),
    ],
)
def test_figures_pass_plotly_validation(b, h, steps, sample) -> None:
    r = train_eval.train_eval(b, h, steps, 0.1, 2.0, 0)
    assert_plotly_valid(train_eval.fig_running(r.stats))
    assert_plotly_valid(train_eval.fig_outputs(r, sample=sample))


# The page, through the router.

PAGE = "pages/train_eval.py"


def _metric(at, start: str) -> float:
    return next(float(m.value) for m in at.metric if m.label.startswith(start))


def test_page_runs_and_every_control_acts() -> None:
    at = run_page(PAGE)
    assert_no_exception(at)
    running, outputs = figures(at)
    assert len(running.data[0].x) == pages.TRAIN_EVAL.steps.default + 1
    # features may come from another page (same key, same meaning): the figure follows the slider.
    assert len(outputs.data[0].y) == at.select_slider(key="features").value
    assert _metric(at, "LN:") == 0.0
    bn_gap = _metric(at, "BN:")
    assert bn_gap > 1.0

    at.slider(key="steps").set_value(3).run()
    err_short = _metric(at, "Mean |μ̂")
    at.slider(key="steps").set_value(300).run()
    assert_no_exception(at)
    err_long = _metric(at, "Mean |μ̂")
    assert err_long < 0.5 * err_short
    assert len(figures(at)[0].data[0].x) == 301

    curve = np.asarray(figures(at)[0].data[0].y)
    at.slider(key="momentum").set_value(0.5).run()
    assert not np.allclose(np.asarray(figures(at)[0].data[0].y), curve)

    at.slider(key="shift").set_value(0.0).run()
    assert _metric(at, "BN:") < bn_gap
    assert _metric(at, "LN:") == 0.0
    at.slider(key="shift").set_value(-4.0).run()
    assert _metric(at, "BN:") > bn_gap

    at.select_slider(key="batch").set_value(64).run()
    at.select_slider(key="features").set_value(12).run()
    assert_no_exception(at)
    assert len(figures(at)[1].data[0].y) == 12

    before = np.asarray(figures(at)[1].data[0].y)
    at.number_input(key="seed").set_value(7).run()
    assert not np.allclose(np.asarray(figures(at)[1].data[0].y), before)
    assert _metric(at, "LN:") == 0.0


def test_page_notes_bad_link_values() -> None:
    at = run_page(PAGE, {"momentum": "0", "steps": "many"})
    assert_no_exception(at)
    notes = " ".join(i.value for i in at.info)
    assert "Momentum" in notes and "Training steps" in notes
    assert len(figures(at)[0].data[0].x) == pages.TRAIN_EVAL.steps.default + 1


def test_page_clamps_a_wider_value_left_by_another_page() -> None:
    """The explorer's batch and features reach 1024; this page's sliders stop lower, and must not break."""
    at = run_page("pages/invariance.py")  # a page without these sliders, so the values below stay in the session
    at.session_state["batch"] = 500
    at.session_state["features"] = 100
    at.switch_page("pages/train_eval.py")
    at.run()
    assert_no_exception(at)
    assert at.select_slider(key="batch").value == pages.TRAIN_EVAL.batch.hi
    assert at.select_slider(key="features").value == pages.TRAIN_EVAL.features.hi
    assert len(figures(at)[1].data[0].y) == pages.TRAIN_EVAL.features.hi
