"""lnviz.labs.sequences against torch, and the sequences page driven through the router."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, figures, run_page
from figcheck import assert_plotly_valid
from hypothesis import given, settings
from hypothesis import strategies as st

from lnviz.labs import sequences as sq
from lnviz.maths.data import generator
from lnviz.views import pages

PAGE = "pages/sequences.py"
EPS = 1e-5
TOL = dict(atol=1e-10, rtol=1e-10)
HYP = settings(max_examples=25, deadline=None, derandomize=True)


def random_batch(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded (B, T, H) batch with an arbitrary (unsorted) real-token mask and garbage in the pads."""
    g = generator(seed)
    b = int(torch.randint(2, 9, (1,), generator=g))
    t = int(torch.randint(1, 12, (1,), generator=g))
    h = int(torch.randint(2, 7, (1,), generator=g))
    lengths = torch.randint(0, t + 1, (b,), generator=g)  # some steps get 0 or 1 real samples
    mask = torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)  # (B, T)
    real = 3.0 * torch.randn(b, t, h, generator=g, dtype=torch.float64) + 1.0
    junk = 100.0 * torch.randn(b, t, h, generator=g, dtype=torch.float64)
    return torch.where(mask.unsqueeze(-1), real, junk), mask


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_masked_batch_norm_is_torch_batch_norm_on_the_real_tokens(seed):
    x, mask = random_batch(seed)
    out = sq.masked_batch_norm(x, mask, eps=EPS)
    assert out.mean.shape == (1, x.shape[1], x.shape[2]) and out.var.shape == out.mean.shape
    for t in range(x.shape[1]):
        real = x[mask[:, t], t]  # (n_t, H): only the sequences still running at step t
        n = real.shape[0]
        assert int(out.count[t]) == n
        if n < 2:
            if n == 1:
                with pytest.raises(ValueError):
                    F.batch_norm(real, None, None, training=True, eps=EPS)
            assert torch.isnan(out.mean[0, t]).all() and torch.isnan(out.var[0, t]).all()
            assert torch.isnan(out.x_hat[:, t]).all()
            continue
        running_mean = torch.zeros(x.shape[2], dtype=x.dtype)
        running_var = torch.zeros(x.shape[2], dtype=x.dtype)
        # momentum 1 makes torch store the batch's own statistics (the variance unbiased)
        y = F.batch_norm(real, running_mean, running_var, training=True, momentum=1.0, eps=EPS)
        torch.testing.assert_close(out.x_hat[mask[:, t], t], y, **TOL)
        torch.testing.assert_close(out.mean[0, t], running_mean, **TOL)
        torch.testing.assert_close(out.var[0, t], running_var * (n - 1) / n, **TOL)
        assert torch.isnan(out.x_hat[~mask[:, t], t]).all()


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_masked_statistics_never_read_the_padding(seed):
    x, mask = random_batch(seed)
    other = torch.where(mask.unsqueeze(-1), x, torch.full_like(x, -7.0))
    a, b = sq.masked_batch_norm(x, mask), sq.masked_batch_norm(other, mask)
    assert torch.equal(a.mean.nan_to_num(), b.mean.nan_to_num())
    assert torch.equal(a.var.nan_to_num(), b.var.nan_to_num())
    assert torch.equal(a.x_hat.nan_to_num(), b.x_hat.nan_to_num())


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_per_step_batch_norm_is_torch_batch_norm_on_each_padded_step(seed):
    x, _ = random_batch(seed)
    out = sq.per_step_batch_norm(x, eps=EPS)
    b, t_steps, h = x.shape
    assert out.mean.shape == (1, t_steps, h) and out.x_hat.shape == (b, t_steps, h) and out.count == b
    for t in range(t_steps):
        running_mean = torch.zeros(h, dtype=x.dtype)
        running_var = torch.zeros(h, dtype=x.dtype)
        y = F.batch_norm(x[:, t], running_mean, running_var, training=True, momentum=1.0, eps=EPS)
        torch.testing.assert_close(out.x_hat[:, t], y, **TOL)
        torch.testing.assert_close(out.mean[0, t], running_mean, **TOL)
        torch.testing.assert_close(out.var[0, t], running_var * (b - 1) / b, **TOL)


@HYP
@given(
    batch=st.integers(2, 12),
    steps=st.integers(2, 20),
    features=st.integers(2, 6),
    seed=st.integers(0, 10_000),
    spread=st.floats(0.0, 1.0),
    pad=st.floats(-10.0, 10.0),
    extra=st.integers(1, 10),
)
def test_lab_matches_torch_and_padding_leaves_ln_alone(batch, steps, features, seed, spread, pad, extra):
    lab = sq.sequence_lab(batch, steps, features, seed, spread, pad, extra, eps=EPS)
    lengths = lab.lengths
    assert lengths.tolist() == sorted(lengths.tolist(), reverse=True)
    assert int(lengths[0]) == steps
    assert int(lengths.min()) >= max(1, round(steps * (1 - spread)))
    assert lab.mask.sum(dim=1).tolist() == lengths.tolist()
    assert (lab.x[~lab.mask] == pad).all()

    torch.testing.assert_close(lab.ln.y, F.layer_norm(lab.x, (features,), eps=EPS), **TOL)
    torch.testing.assert_close(lab.test_ln.y, F.layer_norm(lab.test_x, (features,), eps=EPS), **TOL)
    assert lab.ln_shift < 1e-12  # a token's LN never reads another token, padding or not

    # BN at test time: per-step statistics for t < T where n_t >= 2, nothing else
    assert lab.test_x.shape == (steps + extra, features)
    has_stats = torch.zeros(steps + extra, dtype=torch.bool)
    has_stats[:steps] = lab.mask.sum(dim=0) >= 2
    assert torch.isnan(lab.test_bn.y[~has_stats]).all()
    assert torch.isfinite(lab.test_bn.y[has_stats]).all()
    assert torch.isfinite(lab.test_ln.y).all()
    for t in has_stats.nonzero().flatten().tolist():
        real = lab.x[lab.mask[:, t], t]  # (n_t, H)
        y = F.batch_norm(
            lab.test_x[t : t + 1],
            real.mean(dim=0),
            real.var(dim=0, unbiased=False),
            training=False,
            eps=EPS,
        )
        torch.testing.assert_close(lab.test_bn.y[t : t + 1], y, **TOL)


def test_padding_moves_naive_bn_but_not_masked_bn_or_ln():
    a = sq.sequence_lab(8, 24, 8, 3, 0.8, 0.0, 5)
    b = sq.sequence_lab(8, 24, 8, 3, 0.8, 9.0, 5)
    real = a.mask.unsqueeze(-1).expand_as(a.x)
    assert torch.equal(a.x[real], b.x[real])
    assert torch.equal(a.ln.y[real], b.ln.y[real])
    assert torch.equal(a.masked.mean.nan_to_num(), b.masked.mean.nan_to_num())
    padded_steps = (~a.mask).any(dim=0)  # (T,)
    assert padded_steps.any()
    assert not torch.allclose(a.naive.mean[0, padded_steps], b.naive.mean[0, padded_steps])
    assert b.bn_shift > 0.1


def test_without_padding_both_per_step_bns_agree():
    lab = sq.sequence_lab(8, 16, 8, 5, 0.0, 4.0, 3)
    assert lab.mask.all()
    assert lab.bn_shift < 1e-10
    torch.testing.assert_close(lab.naive.mean, lab.masked.mean, **TOL)


def test_seeded_and_the_test_length_leaves_training_data_alone():
    a = sq.sequence_lab(6, 20, 4, 11, 0.5, 0.0, 2)
    b = sq.sequence_lab(6, 20, 4, 11, 0.5, 0.0, 40)
    c = sq.sequence_lab(6, 20, 4, 12, 0.5, 0.0, 2)
    assert torch.equal(a.x, b.x) and torch.equal(a.lengths, b.lengths)
    assert torch.equal(a.test_x, sq.sequence_lab(6, 20, 4, 11, 0.5, 0.0, 2).test_x)
    assert not torch.equal(a.x, c.x)


@pytest.mark.parametrize(
    "args",
    [
        (1, 10, 4, 0, 0.5, 0.0, 3),  # one sequence: BN has nothing to pool
        (4, 10, 4, 0, 1.5, 0.0, 3),  # spread outside [0, 1]
        (4, 10, 1, 0, 0.5, 0.0, 3),  # one feature
        (4, 100, 4, 0, 0.5, 0.0, 64),  # longer than the drift that was drawn
    ],
)
def test_bad_settings_raise_value_error(args):
    with pytest.raises(ValueError):
        sq.sequence_lab(*args)


def test_mask_shape_is_checked():
    with pytest.raises(ValueError):
        sq.masked_batch_norm(torch.zeros(3, 4, 2, dtype=torch.float64), torch.ones(3, 5, dtype=torch.bool))


def test_figures_show_the_lab():
    lab = sq.sequence_lab(6, 12, 4, 2, 0.9, 1.5, 4)
    col = 2
    heat, pads = sq.fig_batch(lab, col).data
    for b in range(6):
        for t in range(12):
            shown = heat.z[b][t]
            if lab.mask[b, t]:
                assert math.isclose(shown, float(lab.x[b, t, col]), rel_tol=1e-6)
            else:
                assert shown is None or math.isnan(shown)
    assert len(pads.x) == int((~lab.mask).sum())
    assert {(b, t) for b, t in zip(pads.y, pads.x, strict=True)} == {tuple(i) for i in (~lab.mask).nonzero().tolist()}

    stats = sq.fig_step_stats(lab, col)
    bars = [tr for tr in stats.data if tr.type == "bar"][0]
    assert list(bars.y) == lab.mask.sum(dim=0).tolist()
    bands = {(s.x0, s.x1) for s in stats.layout.shapes if s.type == "rect"}
    missing = (lab.mask.sum(dim=0) < 2).nonzero().flatten().tolist()
    covered = {t for t in range(12) for x0, x1 in bands if x0 < t < x1}
    assert covered == set(missing)

    test = sq.fig_test(lab, col)
    bn_line = [tr for tr in test.data if tr.name.startswith("BN")][0]
    assert len(bn_line.x) == 16
    assert all(v is None or math.isnan(v) for v in bn_line.y[12:])
    for fig in (sq.fig_batch(lab, col), stats, test):
        assert_plotly_valid(fig)


def _lines(fig, name):
    return np.concatenate([np.asarray(tr.y, dtype=np.float64) for tr in fig.data if tr.name == name])


def _same(a, b) -> bool:
    """Equal arrays, NaN (padding, steps without statistics) equal to NaN."""
    return np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True)


def _metric(at, label):
    return [m.value for m in at.metric if m.label == label][0]


@pytest.mark.parametrize("seed", range(3))
def test_padding_moves_sigma2_either_way_as_the_page_says(seed):
    """Pooled over n real values and B − n pads p: mean f μ + (1 − f) p, variance f σ² + f (1 − f)(μ − p)², f = n/B.

    So padding shrinks σ² where (μ − p)² < σ²·B/n: about 40% of the padded cells at the defaults, not never.
    """
    batch, pad = 8, 0.0
    lab = sq.sequence_lab(batch, 24, 8, seed, 0.75, pad, 12)
    n = lab.masked.count.to(torch.float64).view(-1, 1)  # (T, 1)
    mixed = ((n < batch) & (n >= 2)).flatten()
    mu, var, f = lab.masked.mean[0][mixed], lab.masked.var[0][mixed], (n / batch)[mixed]
    torch.testing.assert_close(lab.naive.mean[0][mixed], f * mu + (1 - f) * pad, **TOL)
    torch.testing.assert_close(lab.naive.var[0][mixed], f * var + f * (1 - f) * (mu - pad) ** 2, **TOL)
    grows = (mu - pad) ** 2 > var * batch / n[mixed]
    assert torch.equal(grows, lab.naive.var[0][mixed] > var)
    assert 0.2 < float((~grows).double().mean()) < 0.6


def test_page_says_padding_can_shrink_sigma2_and_cites_the_ln_papers_reasons():
    at = run_page(PAGE)
    assert_no_exception(at)
    prose = " ".join(m.value for m in at.markdown)
    assert "inflates" not in prose and "must keep" not in prose
    assert "shrinks when p is near it" in prose and "Here padding shrinks σ² in " in prose
    assert '"appears to require"' in prose and "hidden-to-hidden dynamics" in prose
    # §3.1 gives both reasons, unranked; Cooijmans et al. keep per-step statistics and reuse T_max's beyond it.
    assert "main reason" not in prose and "§3.1, gives a second reason" in prose
    assert "keep per-step statistics up to the longest training length T_max, and reuse T_max's" in prose
    # "Two or three samples" is this one batch's count, not that of running statistics over many batches.
    assert "this one training batch" in prose and "In this one-batch example" in prose
    assert "over many training batches" in prose


def test_page_runs_and_every_control_acts():
    at = run_page(PAGE)
    assert_no_exception(at)
    batch, stats, test = figures(at)
    assert len(batch.data[0].z) == 8 and len(batch.data[0].z[0]) == 24
    assert len(test.data[0].x) == 24 + 12
    assert _metric(at, "LN shift from padding") == "0.000"

    at.slider(key="pad").set_value(8.0).run()
    assert_no_exception(at)
    batch2, stats2, _ = figures(at)
    assert _same(batch2.data[0].z, batch.data[0].z)  # real tokens unchanged
    assert not _same(_lines(stats2, "over the padded batch"), _lines(stats, "over the padded batch"))
    assert _same(_lines(stats2, "over real tokens only"), _lines(stats, "over real tokens only"))
    assert _metric(at, "LN shift from padding") == "0.000"

    at.slider(key="spread").set_value(0.0).run()
    batch3, _, _ = figures(at)
    assert len(batch3.data[1].x) == 0  # nothing padded
    assert _metric(at, "BN shift from padding") == "0.000"

    at.select_slider(key="length").set_value(32).run()
    at.select_slider(key="extra").set_value(20).run()
    at.select_slider(key="batch").set_value(12).run()
    assert_no_exception(at)
    batch4, _, test4 = figures(at)
    assert len(batch4.data[0].z) == 12 and len(batch4.data[0].z[0]) == 32
    assert len(test4.data[0].x) == 52

    at.slider(key="feature").set_value(3).run()
    batch5, _, _ = figures(at)
    assert not _same(batch5.data[0].z, batch4.data[0].z)

    at.number_input(key="seed").set_value(7).run()
    batch6, _, _ = figures(at)
    assert not _same(batch6.data[0].z, batch5.data[0].z)

    at.select_slider(key="features").set_value(2).run()
    assert_no_exception(at)
    assert at.slider(key="feature").value == 1  # the chosen feature is kept inside the grid
    assert figures(at)[0].layout.title.text.endswith("(feature 1)")


def test_page_reads_the_link_and_notes_what_it_fixed():
    at = run_page(PAGE, {"length": "10", "extra": "5", "pad": "abc", "batch": "500"})
    assert_no_exception(at)
    batch, _, test = figures(at)
    assert (
        len(batch.data[0].z) == pages.SEQUENCES.batch.default
    )  # out of range: the widget's rule drops it for the default
    assert len(batch.data[0].z[0]) == 10
    assert len(test.data[0].x) == 15
    # The extra test steps, named as the test chart counts them: from 0, so T = 10 is the first one past training.
    (helps,) = [m.proto.help for m in at.metric if m.label == "Steps without BN stats"]
    steps = list(test.data[0].x)
    assert steps[0] == 0 and f"adds 5 more, counted from 0 as every step is: steps {steps[10]} to {steps[-1]}." in helps
    notes = " ".join(i.value for i in at.info)
    assert "Pad value" in notes and "Batch size B" in notes


def test_the_page_says_laurent_and_amodei_normalize_only_the_input_to_hidden_term():
    at = run_page(PAGE)
    assert_no_exception(at)
    prose = " ".join(m.value for m in at.markdown)
    assert (
        "normalize only the input-to-hidden term W xₜ" in prose and "Laurent et al. 2016; Amodei et al. 2016" in prose
    )
    assert "share one set of statistics over all steps (Laurent" not in prose
