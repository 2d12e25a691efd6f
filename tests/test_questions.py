"""The class poll's question bank: every right answer is torch's, every link opens a real view, votes count right.

Each answer is recomputed here from torch.nn.functional (float64), on the
same inputs, without calling the code under test.
"""

import math
import re
from urllib.parse import parse_qs, urlparse

import pytest
import torch
import torch.nn.functional as F
from figcheck import assert_plotly_valid
from hypothesis import given
from hypothesis import strategies as st

from lnviz.figures import reader, theme
from lnviz.labs import train_eval
from lnviz.labs.classroom import cells_figure, figures, questions, text
from lnviz.labs.classroom.question import LiveQuestion, Question, tally, written
from lnviz.labs.classroom.questions import bank, by_id
from lnviz.maths import data
from lnviz.views import pages
from lnviz.views.links import LINK_VERSION

F64 = torch.float64


def test_the_bank_has_about_twenty_questions_of_every_kind_with_unique_ids():
    ids = [q.id for q in bank()]
    assert len(ids) == len(set(ids)) and 16 <= len(ids) <= 22
    assert sum(q.kind == "number" for q in bank()) >= 3 and sum(q.kind == "choice" for q in bank()) >= 3
    assert sum(q.kind == "cells" for q in bank()) >= 5 and sum(q.drag for q in bank()) >= 1
    assert by_id("ln-cell").kind == "number"
    with pytest.raises(KeyError):
        by_id("no-such-question")


# --- number questions: torch's value, recomputed ---------------------------------------------------------------


def test_ln_cell_is_torchs_layer_norm_of_the_explorers_grid():
    q = by_id("ln-cell")
    x = data.make_activations("heterogeneous features", 8, 12, 0)  # (B, H): the grid the link opens
    h = x.shape[1]
    y = F.layer_norm(x, (h,), torch.full((h,), 1.5, dtype=F64), torch.full((h,), 0.5, dtype=F64), 1e-5)
    x_hat = float(F.layer_norm(x, (h,), eps=1e-5)[2, 5])
    assert q.answer == pytest.approx(float(y[2, 5]), abs=1e-12)
    # The prompt's μ, σ² and x are torch's, to the digits shown, and worked by hand they give torch's x̂ and y to
    # the digits the reveal shows (μ, σ², x to 2 decimals gave x̂ = 0.980 against torch's 0.979).
    text = {k: re.search(rf"{k} = (−?\d+\.\d+)", q.prompt).group(1) for k in ("μ", "σ²", "x")}
    mu, var, cell = (float(text[k].replace("−", "-")) for k in ("μ", "σ²", "x"))
    for key, exact in (("μ", x[2].mean()), ("σ²", x[2].var(unbiased=False)), ("x", x[2, 5])):
        given, decimals = float(text[key].replace("−", "-")), len(text[key].split(".")[1])
        assert abs(given - float(exact)) <= 0.5 * 10**-decimals + 1e-12, key
    by_hand = (cell - mu) / math.sqrt(var + 1e-5)
    assert f"{by_hand:.3f}" == f"{x_hat:.3f}" and f"= {x_hat:.3f}, and y" in q.why
    assert f"{1.5 * by_hand + 0.5:.4g}" == f"{float(y[2, 5]):.4g}"
    assert q.right(f"{1.5 * by_hand + 0.5:.2f}")


def test_a_number_questions_reasons_do_not_say_torchs_answer_again():
    """The reveal shows "torch's answer: 1.969" (the phone) or the chart's "torch: 1.969" (the projector) beside
    the reasons: they don't say it a second time."""
    for q in bank():
        if q.kind == "number":
            assert "torch:" not in q.why and written(q.answer) not in q.why, (q.id, q.why)


def test_bn_one_sample_formula_is_beta():
    """The formula with the batch's own μ and σ² (its only sample, and 0), written out in torch."""
    q = by_id("bn-one-sample-formula")
    x = torch.tensor([[3.1]], dtype=F64)
    mu, var = x.mean(dim=0), x.var(dim=0, unbiased=False)
    y = 2.0 * (x - mu) / torch.sqrt(var + 1e-5) + 0.7
    assert q.answer == pytest.approx(float(y), abs=1e-12) == pytest.approx(0.7)
    assert "running_mean = 3.1 and running_var = 0" in q.why and "{" not in q.why
    # What the explanation says torch does: eval mode with these statistics gives β, training mode refuses.
    w, b = torch.tensor([2.0], dtype=F64), torch.tensor([0.7], dtype=F64)
    assert float(F.batch_norm(x, mu, var, w, b, training=False, eps=1e-5)) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(x, mu.clone(), var.clone(), w, b, training=True)
    # The digits it quotes: eval mode's fused arithmetic lands near β, not on it, and agrees to that many decimals.
    fused = float(F.batch_norm(x, mu, var, w, b, training=False, eps=1e-5))
    digits = int(re.search(rf"gives {re.escape(repr(fused))}: β to (\d+) decimals", q.why).group(1))
    assert round(fused, digits) == 0.7 != round(fused, digits + 1)


def test_outlier_others_is_the_mean_x_hat_of_the_other_features():
    q = by_id("outlier-others")
    x = data.make_activations("outlier feature", 16, 16, 0)  # (B, H)
    x_hat = F.layer_norm(x, (16,), eps=1e-5)[0]  # (H,): sample 0
    others = torch.cat([x_hat[:1], x_hat[2:]])
    assert q.answer == pytest.approx(float(others.mean()), abs=1e-12)
    assert float(x[0, 1]) > 9 * float(x[0].abs().topk(2).values[1])  # feature 1 is the outlier
    assert q.right(f"{-1 / math.sqrt(15):.2f}")  # the exact-zeros value the explanation gives counts as right
    assert "−1/√15 ≈ −0.258" in q.why


def test_rms_shifted_row_is_torchs_rms_norm():
    q = by_id("rms-shifted-row")
    row = torch.tensor([[11.0, 12.0, 13.0, 14.0]], dtype=F64)
    assert q.answer == pytest.approx(float(F.rms_norm(row, (4,), eps=1e-5)[0, 0]), abs=1e-12)
    ln_shifted = F.layer_norm(row, (4,), eps=1e-5)[0, 0]
    ln_plain = F.layer_norm(row - 10, (4,), eps=1e-5)[0, 0]
    assert f"{float(ln_shifted):.3f}".replace("-", "−") in q.why
    assert f"{float(ln_plain):.3f}" == f"{float(ln_shifted):.3f}"  # "as it does for (1, 2, 3, 4)"
    # F.rms_norm puts ε inside the root: x / √(mean(x²) + ε), which the reasons say is torch's, not the paper's
    torch.testing.assert_close(F.rms_norm(row, (4,), eps=0.5), row / (row.square().mean() + 0.5).sqrt())
    assert "√(mean(x²) + ε)" in q.why and "ε inside the root, as `F.rms_norm` puts it" in q.why


def _sequence_batch():
    """The sequences lab's training batch at the link's values, rebuilt: lengths, then BN's counts per step."""
    from lnviz.labs import sequences

    v = parse_qs(urlparse(by_id("sequence-missing-steps").link).query)
    b, t, h, seed = int(v["batch"][0]), int(v["length"][0]), int(v["features"][0]), int(v["seed"][0])
    x, mask, _lengths, test_x = sequences.make_sequences(
        b, t, h, seed, float(v["spread"][0]), float(v["pad"][0]), int(v["extra"][0])
    )
    return x, mask, test_x


def test_sequence_missing_steps_counts_the_steps_where_torchs_batch_norm_cannot_run():
    q = by_id("sequence-missing-steps")
    x, mask, test_x = _sequence_batch()
    total, steps = test_x.shape[0], x.shape[1]
    missing = 0
    for t in range(total):
        if t >= steps:
            missing += 1
            continue
        real = x[mask[:, t], t]  # (n_t, H): the real tokens at step t
        try:
            F.batch_norm(real, None, None, training=True)
        except ValueError:
            missing += 1
    assert q.answer == missing == 19
    # The prompt gives what the count needs: BN has 2 samples up to the second-longest sequence's last step.
    second = int(mask.sum(dim=1).sort(descending=True).values[1])
    assert f"the longest {steps} steps, the second-longest {second}." in q.prompt and missing == total - second
    assert q.right("19") and not q.right("18") and q.parse("19.4") == "19"


# --- choice questions: the phenomenon, computed ----------------------------------------------------------------


def test_one_sample_coupling_bn_moves_every_row_and_ln_only_the_changed_one():
    q = by_id("one-sample-coupling")
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(0), dtype=F64)
    x_new = x.clone()
    x_new[2] = 5.0 * torch.randn(16, generator=torch.Generator().manual_seed(1), dtype=F64)

    def moved(norm):
        return {i for i in range(8) if float((norm(x_new)[i] - norm(x)[i]).abs().max()) > 1e-9}

    bn = moved(lambda t: F.batch_norm(t, None, None, training=True))
    ln = moved(lambda t: F.layer_norm(t, (16,)))
    assert bn == set(range(8)) and ln == {2}
    assert q.choices[q.answer] == "BN: every sample's. LN: sample 2's only."


def test_bn_one_sample_raises_in_training_mode_and_runs_in_eval_mode():
    q = by_id("bn-one-sample")
    x = torch.randn(1, 4, dtype=F64)
    stats = (torch.zeros(4, dtype=F64), torch.ones(4, dtype=F64))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(x, *stats, training=True)
    with pytest.raises(ValueError):
        torch.nn.BatchNorm1d(4, dtype=F64).train()(x)
    assert F.batch_norm(x, *stats, training=False).isfinite().all()  # eval mode: one sample is fine
    assert torch.nn.BatchNorm1d(4, dtype=F64).eval()(x).isfinite().all()
    assert q.choices[q.answer] == "Raises ValueError"
    # "The formula alone would give β" holds for ε > 0 only, and the explanation says which ε: at ε = 0 it is 0/0.
    own = (x.mean(dim=0), x.var(dim=0, unbiased=False))  # (H,): the batch's own μ and σ² = 0
    beta = torch.full((4,), 0.7, dtype=F64)
    torch.testing.assert_close(F.batch_norm(x, *own, None, beta, training=False, eps=1e-5), beta.view(1, 4))
    assert F.batch_norm(x, *own, None, beta, training=False, eps=0.0).isnan().all()
    assert "would give β (with the default ε = 1e-5)" in q.why


def test_constant_row_with_eps_0_is_nan_under_layer_norm_and_beta_with_eps():
    q = by_id("constant-row-eps0")
    values = {k: v[0] for k, v in parse_qs(urlparse(q.link).query).items()}  # the view the question opens
    x = data.make_activations(values["dist"], int(values["batch"]), int(values["features"]), int(values["seed"]))
    beta = float(values["bias"])
    bias = torch.full((12,), beta, dtype=F64)
    assert F.layer_norm(x, (12,), None, bias, eps=0.0)[0].isnan().all()
    with_eps = F.layer_norm(x, (12,), None, bias, eps=1e-5)[0]
    assert torch.equal(with_eps, bias)
    # β is neither the row's own value nor 0, so "β for every feature" can't be read as "LN gives x back" or as 0
    assert float(x[0, 0]) != beta != 0 and bool((x[0] == x[0, 0]).all())
    assert f"β = {beta:g}" in q.prompt and f"every feature is {float(x[0, 0]):g}" in q.prompt
    assert f"torch gives {float(with_eps[0]):g}." in q.why
    assert q.choices[q.answer] == "NaN for every feature"


def test_ln_invariance_layer_norm_survives_only_the_single_case_rescale():
    q = by_id("ln-invariance")
    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(16, 10, generator=g, dtype=F64), torch.randn(12, 10, generator=g, dtype=F64)

    def ln(w, x):
        return F.layer_norm(x @ w.T, (12,), eps=0.0)

    one_unit, one_case = w.clone(), x.clone()
    one_unit[0] *= 3.0
    one_case[0] *= 3.0
    shifted = x + torch.randn(10, generator=g, dtype=F64)
    delta = {
        "Weight vector re-scaling": (ln(one_unit, x) - ln(w, x)).abs().max(),
        "Dataset re-centering": (ln(w, shifted) - ln(w, x)).abs().max(),
        "Single training case re-scaling": (ln(w, one_case) - ln(w, x)).abs().max(),
    }
    assert set(q.choices) == set(delta)
    unchanged = [name for name, d in delta.items() if d < 1e-12]
    assert unchanged == [q.choices[q.answer]] == ["Single training case re-scaling"]


def test_shift_rms_vs_ln_only_rms_norm_moves():
    q = by_id("shift-rms-vs-ln")
    x = torch.randn(5, 8, dtype=F64)
    assert (F.layer_norm(x + 3, (8,)) - F.layer_norm(x, (8,))).abs().max() < 1e-12
    assert (F.rms_norm(x + 3, (8,), eps=1e-5) - F.rms_norm(x, (8,), eps=1e-5)).abs().max() > 0.1
    assert q.choices[q.answer] == "Only RMSNorm's"
    # the one rule's words (lnviz.maths.rounding): unchanged, or unchanged to rounding with its max |Δ|
    assert re.search(r"its output is unchanged( \(to rounding: max \|Δ\| = \de−1[3-9]\))?\.", q.why), q.why


def test_train_eval_shift_only_training_mode_batch_norm_removes_it():
    q = by_id("train-eval-shift")
    g = torch.Generator().manual_seed(0)
    scale = torch.exp(0.5 * torch.randn(8, generator=g, dtype=F64))  # (H,): each feature's own spread
    z = torch.randn(16, 8, generator=g, dtype=F64)
    plain, shifted = scale * z, scale * (z + 2.0)
    running = (torch.zeros(8, dtype=F64), torch.ones(8, dtype=F64))
    train = (F.batch_norm(shifted, None, None, training=True) - F.batch_norm(plain, None, None, training=True)).abs()
    evals = (F.batch_norm(shifted, *running) - F.batch_norm(plain, *running)).abs()
    ln = (F.layer_norm(shifted, (8,)) - F.layer_norm(plain, (8,))).abs()
    assert train.max() < 1e-12 < 0.1 < evals.min() and ln.max() > 0.1
    assert q.answer == 0 and q.choices[0].startswith("BN in training mode")
    assert re.search(r"BN in training mode is unchanged( \(to rounding: max \|Δ\| = \de−1[3-9]\))?:", q.why), q.why
    # The prompt says the amounts differ per feature, and by how much, as the lab's test batch has them.
    te = train_eval.train_eval(batch=16, features=8, steps=50, momentum=0.1, shift=2.0, seed=0)  # the link's values
    amounts = (te.x_test - te.bn_unshifted.x)[0]  # (H,): each feature's shift
    assert amounts.max() - amounts.min() > 1.0
    assert f"so the shift does too: from {amounts.min():.2f} to {amounts.max():.2f}." in q.prompt


def test_longer_sequence_layer_norm_needs_no_training_statistics():
    q = by_id("longer-sequence")
    x, mask, test_x = _sequence_batch()
    assert test_x.shape[0] > 30 >= x.shape[1]  # step 30 is past every training sequence: BN has no statistics there
    assert F.layer_norm(test_x[30:31], (test_x.shape[1],)).isfinite().all()  # LN needs only the token
    assert q.choices[q.answer] == "Only LN"
    # "steps 0 to 16 only": two or more real samples up to step 16, one from step 17 on.
    count = mask.sum(dim=0)  # (T,)
    assert int(count[16]) >= 2 and count[17:].tolist() == [1] * (x.shape[1] - 17)
    assert (
        "steps 0 to 16 only" in q.why
        and "Only 1 training sequence reaches step 17" in by_id("sequence-missing-steps").why
    )


# --- links ------------------------------------------------------------------------------------------------------


def _page_of(path: str) -> pages.PageEntry:
    for entry in pages.PAGES:
        if path.lstrip("/") in entry.paths:
            return entry
    raise AssertionError(f"no page is served at {path!r}")


def check_link(link: str) -> None:
    url = urlparse(link)
    assert not url.scheme and not url.netloc, link
    entry = _page_of(url.path)
    query = parse_qs(url.query, keep_blank_values=True)
    assert query.pop("v", None) == [str(LINK_VERSION)], link
    assert link.endswith(f"v={LINK_VERSION}")
    for key, raw in query.items():
        assert key in entry.controls.keys(), f"{link}: {key!r} is not a control of /{entry.name}"
        assert len(raw) == 1, f"{link}: {key} given {len(raw)} times"
        _value, note = entry.controls[key].parse(raw)
        assert note is None, f"{link}: {note}"


@pytest.mark.parametrize("qid", [q.id for q in bank()])
def test_every_link_opens_a_real_page_with_values_it_takes_as_they_are(qid):
    check_link(by_id(qid).link)


@pytest.mark.parametrize(
    "bad", ["/nowhere?v=3", "/coupling?batch=1&v=3", "/coupling?col=2&v=3", "/coupling?batch=8", "/?eps=3e-5&v=3"]
)
def test_the_link_check_catches_a_bad_link(bad):
    with pytest.raises(AssertionError):
        check_link(bad)


def test_a_question_link_names_controls_not_made_up_keys():
    with pytest.raises(KeyError):
        questions.link("coupling", col=2)


# --- parse, right, tally ----------------------------------------------------------------------------------------


CHOICE = by_id("one-sample-coupling")
NUMBER = by_id("ln-cell")
RIGHT = f"{NUMBER.answer:.2f}"  # a guess on torch's answer, as a phone sends it (1.2 is a wrong one)


def test_parse_reads_valid_votes():
    assert [CHOICE.parse(v) for v in (0, "1", " 3 ", 2)] == ["0", "1", "3", "2"]
    assert NUMBER.parse("3.476") == "3.48" and NUMBER.parse(3) == "3.00" and NUMBER.parse("-.004") == "0.00"
    assert NUMBER.parse("2e-1") == "0.20" and NUMBER.parse(-10) == "-10.00" and NUMBER.parse(10.0) == "10.00"


@pytest.mark.parametrize(
    "bad",
    [
        True,
        False,
        None,
        4,
        -1,
        "4",
        "-1",
        "1.0",
        "one",
        "",
        " ",
        "٣",
        "²",
        "1" * 40,
        "0" * 40 + "1",
        1.0,
        [0],
        b"0",
        float("nan"),
    ],
)
def test_choice_parse_refuses(bad):
    assert CHOICE.parse(bad) is None


@pytest.mark.parametrize(
    "bad",
    [True, None, "nan", "inf", "-inf", float("nan"), float("inf"), 10.01, -10.01, "11", "1_0", "١٢", "1,5", "0x10",
     "3" + "0" * 40, "0" * 40 + "1", 10**400, "1e400", "", "abc", [1.0], "+-1"],
)  # fmt: skip
def test_number_parse_refuses(bad):
    assert NUMBER.parse(bad) is None


@given(st.one_of(st.text(max_size=50), st.integers(), st.floats(), st.booleans(), st.none()))
def test_parse_returns_none_or_a_stored_vote_that_parses_to_itself(raw):
    for q in (CHOICE, NUMBER):
        stored = q.parse(raw)
        assert stored is None or q.parse(stored) == stored
        if stored is not None and q.kind == "number":
            assert q.lo <= float(stored) <= q.hi and len(stored.split(".")[1]) == q.decimals


@given(st.floats(min_value=-10, max_value=10))
def test_any_number_in_range_is_a_vote(value):
    assert NUMBER.parse(value) == NUMBER.parse(repr(value)) is not None


def test_right_marks_the_right_option_and_guesses_within_the_tolerance():
    assert CHOICE.right(str(CHOICE.answer)) and not CHOICE.right(str(CHOICE.answer + 1)) and not CHOICE.right("x")
    assert NUMBER.right(f"{NUMBER.answer:.2f}") and NUMBER.right(f"{NUMBER.answer + 0.04:.2f}")
    assert not NUMBER.right(f"{NUMBER.answer + 0.07:.2f}") and not NUMBER.right("nan")


def test_tally_counts_every_option_and_each_guess():
    assert tally(CHOICE, ["0", "0", "3", "9", "x", True]) == {"0": 2, "1": 0, "2": 0, "3": 1}
    assert tally(CHOICE, []) == {"0": 0, "1": 0, "2": 0, "3": 0}
    counts = tally(NUMBER, ["3.48", "3.476", "-1", "2.5", "nan", "99"])
    assert counts == {"-1.00": 1, "2.50": 1, "3.48": 2} and list(counts) == ["-1.00", "2.50", "3.48"]


def test_a_question_refuses_inconsistent_fields():
    with pytest.raises(ValueError):
        Question("bad id", "choice", "p", ("a", "b"))
    with pytest.raises(ValueError):
        Question("q", "choice", "p", ("a", "b"), answer=2)
    with pytest.raises(ValueError):
        Question("q", "number", "p", answer=5.0, lo=0.0, hi=1.0)
    with pytest.raises(ValueError):
        Question("q", "number", "p", answer=float("nan"), lo=0.0, hi=1.0)


# --- the figure and its text ------------------------------------------------------------------------------------


def test_choice_results_draw_bars_per_round_with_counts_and_mark_the_right_option():
    rounds = [tally(CHOICE, ["0", "0", "1"]), tally(CHOICE, ["0", "2", "2", "2"])]
    fig = figures.fig_results(CHOICE, rounds)
    assert_plotly_valid(fig)
    bars = [t for t in fig.data if t.type == "bar"]
    assert [b.name for b in bars] == ["round 1", "round 2"] and all(b.orientation == "h" for b in bars)
    assert list(bars[0].text) == ["2", "1", "0", "0"] and list(bars[1].text) == ["1", "0", "3", "0"]
    colours = {b.marker.color for b in bars}
    assert len(colours) == 2 and not colours & {figures.theme.ROLES["LN"], figures.theme.ROLES["BN"]}
    labels = [a.text.replace("<br>", " ").replace("\u00a0", " ") for a in fig.layout.annotations]
    assert [i for i, t in enumerate(labels) if "✓ right" in t] == [CHOICE.answer]
    for i, (label, option) in enumerate(zip(labels, CHOICE.choices, strict=True)):
        assert label.startswith(f"{chr(65 + i)}. ") and option in label  # its letter and whole text, wrapped
    (outline,) = [s for s in fig.layout.shapes if s.name == "✓ right"]
    assert outline.y0 < CHOICE.answer < outline.y1
    # Each option's bars lie in its own slot, under its label: never in another option's.
    for bar in bars:
        for i, y in enumerate(bar.y):
            assert fig.layout.annotations[i].y < y - bar.width / 2 and y + bar.width / 2 < i + 0.5
    assert_plotly_valid(figures.fig_results(CHOICE, rounds[:1], presenting=True))


def test_a_projected_results_chart_is_scaled_once_and_stays_short():
    """fig_results lays itself out for the projector; the page kit's chart (plot.lecture) must not scale it again."""
    long = Question("q", "choice", "p", tuple("an option of forty-three characters, long " + c for c in "abcd"), 1)
    for rounds in ([tally(long, ["0", "1"])], [tally(long, ["0"]), tally(long, ["1", "1"])]):
        fig = figures.fig_results(long, rounds, presenting=True)
        assert figures.plot.lecture(fig).to_dict() == fig.to_dict()
        sizes = {a.font.size for a in fig.layout.annotations}
        assert sizes == {round(figures.theme.FONT_SIZE * figures.theme.LECTURE_SCALE, 1)}
        assert fig.layout.height <= 360  # the browser test checks that this fits a 1280 × 720 projector


def test_number_results_draw_the_guesses_and_torchs_value_as_a_labelled_line():
    assert abs(NUMBER.answer - 1.2) > 0.5
    rounds = [tally(NUMBER, [RIGHT, RIGHT, "1.2"])]
    fig = figures.fig_results(NUMBER, rounds, presenting=True)
    assert_plotly_valid(fig)
    assert [t.type for t in fig.data] == ["bar"]
    shown = reader.table(fig)  # the kit's reader: also reads the compact arrays of the lecture copy
    assert shown["x"].tolist() == pytest.approx(sorted([1.2, float(RIGHT)]))
    assert shown["y"].tolist() == ([1, 2] if float(RIGHT) > 1.2 else [2, 1])
    label = f"torch: {NUMBER.answer:.4g}"
    (line,) = [s for s in fig.layout.shapes if s.type == "line"]
    assert line.x0 == line.x1 == pytest.approx(NUMBER.answer) and line.name == label
    assert label in [a.text for a in fig.layout.annotations]
    assert fig.layout.annotations[0].font.size > figures.theme.TITLE_SIZE  # presenting: the lecture scale
    assert_plotly_valid(figures.fig_results(NUMBER, []))


def test_torchs_label_sits_on_the_side_of_its_line_that_has_room():
    """Guesses all below torch's value put the line at the range's right end: a label anchored to its left ran off
    the plot (a projector showed "torch: 1" of 1.969). Guesses all above it put the line at the left end."""
    below = [f"{NUMBER.answer - d:.2f}" for d in (1.0, 2.0)]
    above = [f"{NUMBER.answer + d:.2f}" for d in (1.0, 2.0)]
    for guesses, side in ((below, "right"), (above, "left")):
        (note,) = figures.fig_results(NUMBER, [tally(NUMBER, guesses)], presenting=True).layout.annotations
        assert note.xanchor == side and (note.xshift < 0) == (side == "right")


def test_results_text_lists_every_count_per_round_and_marks_the_right_answer():
    rounds = [tally(CHOICE, ["0", "0", "1"]), tally(CHOICE, ["0", "2", "2", "2"])]
    text = figures.results_text(CHOICE, rounds)
    for k, counts in enumerate(rounds):
        block = text.split(f"Round {k + 1}:")[1].split("Round")[0]
        for i, option in enumerate(CHOICE.choices):
            n = counts[str(i)]
            line = f"{n} {'vote' if n == 1 else 'votes'}: {option}"
            assert line in block
            assert (line + " (✓ right)" in block) == (i == CHOICE.answer)
    number = figures.results_text(NUMBER, [tally(NUMBER, [RIGHT, "1.2"])])
    assert f"1 vote: {RIGHT} (✓ right)" in number and "1 vote: 1.20\n" in number
    assert f"torch: {NUMBER.answer:.4g}" in number


def test_every_question_draws_and_reads():
    """Every question of the bank but the one the model answers (its answer and why cost a pretrained model's run:
    tests/test_transformer_lab.py draws and reads it, where the model is loaded anyway)."""
    for q in bank():
        if not isinstance(q, LiveQuestion):
            draws_and_reads(q)


def draws_and_reads(q) -> None:
    """``q``'s words all filled in, and its reveal after a class that all gave torch's answer: a valid chart, and a
    text that marks the right answer (a cells question's reveal is cells_figure's)."""
    assert "{" not in q.prompt + q.why + "".join(q.choices), q.id  # no f-string left unformatted
    if q.kind == "cells":
        assert_plotly_valid(cells_figure.fig_cells(q, [tally(q, [q.answer])]))
        return
    votes = [str(q.answer)] if q.kind == "choice" else [f"{q.answer:.{q.decimals}f}"]
    rounds = [tally(q, votes)]
    assert_plotly_valid(figures.fig_results(q, rounds))
    assert "(✓ right)" in figures.results_text(q, rounds), q.id


def test_the_bank_is_the_text_modules_questions_in_its_order_each_with_its_words_filled_in():
    assert [q.id for q in bank()] == list(text.QUESTIONS)
    for q in bank():
        assert q.kind == text.QUESTIONS[q.id]["kind"]
        words = (q.prompt, *q.choices) + (() if isinstance(q, LiveQuestion) else (q.why,))  # a live why costs a model
        assert all(w and "{" not in w and "}" not in w for w in words), q.id


def test_words_without_a_question_to_compute_are_an_error_not_a_gap(monkeypatch):
    monkeypatch.setitem(text.QUESTIONS, "no-such-question", dict(kind="choice"))
    with pytest.raises(RuntimeError, match="no-such-question"):
        questions.bank.__wrapped__()


# --- cells and drag questions -----------------------------------------------------------------------------------


GRID = Question("grid-q", "cells", "p", answer=(2, 7, 12), rows=3, cols=5, marked=7, axes=("sample", "feature"))


def test_a_cells_vote_is_a_hex_mask_of_the_tapped_cells_bit_k_cell_k():
    # 15 cells: 4 hex digits; bit k (value 2**k) is cell k, row-major
    assert GRID.parse("1084") == "1084" == GRID.parse([2, 7, 12]) == GRID.parse((12, 7, 2)) == GRID.parse({2, 7, 12})
    assert int("1084", 16) == 2**2 + 2**7 + 2**12
    assert GRID.parse("0") == "0000" and GRID.parse([]) == "0000"  # nothing tapped is a vote, and a wrong one
    assert GRID.parse(" 00001084 ") == "1084" and GRID.parse("7FFF") == "7fff"  # any case, any leading zeros
    assert GRID.parse(GRID.answer) == "1084" and question_mask([0, 5], 8) == "21"


def question_mask(cells, n):
    from lnviz.labs.classroom.question import mask, unmask

    assert unmask(mask(cells, n)) == tuple(sorted(set(cells)))
    return mask(cells, n)


@pytest.mark.parametrize(
    "bad",
    [True, None, 0, 1084, "8000", "10000", "g", "", " ", "0x10", "-1", "1.0", "٣", "0" * 40 + "1", [15], [-1],
     [True], [1.0], ["1"], list(range(16)), "1084 1", b"1084"],
)  # fmt: skip
def test_cells_parse_refuses(bad):
    assert GRID.parse(bad) is None


@given(st.one_of(st.text(max_size=40), st.integers(), st.lists(st.integers(-2, 20), max_size=20), st.none()))
def test_a_cells_vote_parses_to_itself_and_never_names_a_cell_past_the_grid(raw):
    stored = GRID.parse(raw)
    assert stored is None or (GRID.parse(stored) == stored and len(stored) == 4 and int(stored, 16) < 2**15)


def test_only_the_exact_set_is_right():
    assert GRID.right("1084") and GRID.right([12, 2, 7])
    assert not GRID.right([2, 7]) and not GRID.right([2, 7, 12, 0]) and not GRID.right("0") and not GRID.right("x")


def test_tally_counts_each_cells_taps_the_exact_sets_and_the_votes():
    votes = ["1084", [2, 7], [7], "zz", [2, 7, 12], "0"]
    counts = tally(GRID, votes)
    assert list(counts) == [str(k) for k in range(15)] + ["right", "votes"]
    taps = {k: 0 for k in range(15)} | {2: 3, 7: 4, 12: 2}
    assert [counts[str(k)] for k in range(15)] == [taps[k] for k in range(15)]
    assert counts["right"] == 2 and counts["votes"] == 5  # "zz" is no vote
    assert tally(GRID, []) == dict.fromkeys(map(str, range(15)), 0) | {"right": 0, "votes": 0}


def test_a_cells_answer_reads_as_rows_and_columns():
    assert GRID.answer_text == "feature 2 of every sample"
    row = Question("r", "cells", "p", answer=(5, 6, 7, 8, 9), rows=3, cols=5, axes=("token", "feature"))
    assert row.answer_text == "every feature of token 1"
    two = Question("t", "cells", "p", answer=(7, 8, 12, 13), rows=3, cols=5, row_names=("a", "b", "c"))
    assert two.answer_text == "columns 2, 3 of rows b, c"
    odd = Question("o", "cells", "p", answer=(0, 6), rows=3, cols=5)
    assert odd.answer_text == "column 0 of row 0; column 1 of row 1"


def test_a_cells_question_refuses_inconsistent_fields():
    good = dict(id="q", kind="cells", prompt="p", rows=2, cols=2, answer=(0, 1))
    Question(**good)
    for bad in (
        dict(rows=9),  # past a phone's 8 targets of 44 px
        dict(cols=0),
        dict(marked=4),
        dict(answer=(1, 0)),  # not sorted
        dict(answer=(0, 0)),
        dict(answer=(4,)),
        dict(answer=frozenset({0})),
        dict(answer=(True,)),
        dict(choices=("a", "b")),
        dict(row_names=("a",)),
        dict(drag=True),
    ):
        with pytest.raises(ValueError):
            Question(**good | bad)
    assert Question(**good).row_names == ("0", "1")


def test_a_drag_question_is_a_number_question_with_its_step():
    drag = by_id("outlier-x-hat-drag")
    assert drag.kind == "number" and drag.drag and drag.step == 0.5  # 80 stops over [0, 40], not 400
    assert drag.parse("3.84") == "3.8" and drag.right("4.0") and not drag.right("3.5")  # 4.0: the stop nearest torch's
    with pytest.raises(ValueError):
        Question("q", "choice", "p", ("a", "b"), drag=True)
    number = dict(id="q", kind="number", prompt="p", answer=1.23, lo=0.0, hi=10.0, decimals=2, drag=True)
    # The coarsest 1, 2 or 5 × 10^k at least 10^−decimals with half a step within the tolerance, ending on hi.
    for tolerance, step in ((0.25, 0.5), (0.2, 0.2), (0.05, 0.1), (1.0, 2.0), (3.0, 5.0)):
        q = Question(**number, tolerance=tolerance)
        assert q.step == step and q.lo + round((q.answer - q.lo) / step) * step == pytest.approx(
            q.answer, abs=tolerance
        )
    assert Question(**number | dict(drag=False), tolerance=3.0).step == 0.01  # a typed guess: the rounding's
    with pytest.raises(ValueError, match="fiddly"):  # 1,000 stops of 0.01
        Question(**number, tolerance=0.004)
    assert not any(q.drag for q in bank() if q.id != "outlier-x-hat-drag")


def _dependence(fn, x: torch.Tensor, at: tuple[int, ...]) -> tuple[int, ...]:
    """The cells of x whose change changes fn(x) at ``at``, as F computes it; every other cell leaves it bit for bit."""
    y = fn(x)[at]
    moved = []
    for k in range(x.numel()):
        other = x.clone()
        other.view(-1)[k] += 0.75
        if fn(other)[at] != y:
            moved.append(k)
    return tuple(moved)


def _link_values(q: Question) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(q.link).query).items()}


def test_the_cells_questions_answers_are_the_cells_the_functional_reads_on_the_linked_views_data():
    from lnviz.labs import family

    for qid, fn in (
        ("bn-mu-cells", lambda x: F.batch_norm(x, None, None, training=True)),
        ("ln-sigma-cells", lambda x: F.layer_norm(x, x.shape[-1:])),
    ):
        q, v = by_id(qid), _link_values(by_id(qid))
        x = data.make_activations(v["dist"], int(v["batch"]), int(v["features"]), int(v["seed"]))  # (B, H)
        at = (int(v["sample"]), int(v["feature"]))
        assert (q.rows, q.cols, q.marked) == (*x.shape, at[0] * x.shape[1] + at[1])
        assert q.answer == _dependence(fn, x, at), qid
    for qid in ("group-norm-cells", "instance-norm-cells"):
        q, v = by_id(qid), _link_values(by_id(qid))
        shape = (int(v["batch"]), int(v["channels"]), int(v["positions"]))  # (N, C, L)
        x = family.make_tensor(*shape, int(v["seed"]))
        at = (int(v["sample"]), int(v["channel"]), int(v["position"]))
        groups = int(v.get("groups", 1))
        fn = (lambda x, groups=groups: F.group_norm(x, groups)) if v["norm"] == "GroupNorm" else F.instance_norm
        assert (q.rows, q.cols) == (shape[0] * shape[1], shape[2]) and q.marked == (at[0] * shape[1] + at[1]) * shape[
            2
        ] + at[2]
        assert q.answer == _dependence(fn, x, at), qid
        # the family page outlines the same cells
        assert q.answer == tuple(
            family.pooled_mask(shape, v["norm"], at, groups).flatten().nonzero().flatten().tolist()
        )
        assert q.row_names[q.marked // q.cols] == f"n{at[0]} c{at[1]}"
    q = by_id("token-ln-cells")
    x = torch.randn(q.rows, q.cols, dtype=F64)  # LN per token reads the token's row whatever the values
    at = divmod(q.marked, q.cols)
    assert q.answer == _dependence(lambda x: F.layer_norm(x, x.shape[-1:]), x, at)
    assert sum(q.right(q.answer) for q in bank() if q.kind == "cells") == 5


def test_the_token_questions_rows_are_the_tokenizers_tokens_of_the_linked_sentence():
    from tokenizers import Tokenizer

    from lnviz.labs.transformer import files

    q = by_id("token-ln-cells")
    sentence = _link_values(q)["text"]
    tokenizer = Tokenizer.from_file(str(files.bundled() / files.TOKENIZER))
    tokenizer.no_padding()
    assert tuple(tokenizer.encode(sentence).tokens) == q.row_names and f"“{sentence}”" in q.prompt


def test_the_drag_questions_answer_is_torchs_x_hat_of_the_outlier_under_its_bound():
    q, v = by_id("outlier-x-hat-drag"), _link_values(by_id("outlier-x-hat-drag"))
    x = data.make_activations(v["dist"], int(v["batch"]), int(v["features"]), int(v["seed"]))  # (B, H)
    i, j, h = int(v["sample"]), int(v["feature"]), int(v["features"])
    x_hat = float(F.layer_norm(x, (h,), eps=1e-5)[i, j])
    assert q.answer == pytest.approx(x_hat, abs=1e-12) and x[i, j] > 5 * x_hat  # far out, yet x̂ stays small
    assert x_hat < math.sqrt(h - 1) and f"√{h - 1} ≈ {math.sqrt(h - 1):.3f}" in q.why
    assert f"x = {float(x[i, j]):.2f}" in q.prompt and q.lo <= 0 < math.sqrt(h - 1) < q.hi


# --- the cells figure -------------------------------------------------------------------------------------------


def _rings(fig, name: str, xaxis: str = "x") -> list[tuple[float, float, float, float]]:
    """Each ring of the trace ``name`` on ``xaxis``'s grid, as (x0, x1, y0, y1): five points and a break each."""
    (trace,) = [t for t in fig.data if t.name == name and t.xaxis == xaxis]
    xs, ys = list(trace.x), list(trace.y)
    rings = [(xs[k : k + 5], ys[k : k + 5]) for k in range(0, len(xs), 6)]
    return [(min(x), max(x), min(y), max(y)) for x, y in rings]


def _outline_seen_on_every_fill(fig, q: Question) -> None:
    """torch's outline of each of its cells: two rings inside the cell, clear of the white gaps around it (a casing
    over the edge read as a gap), the outer one in ink, the inner one white just within it, drawn over the grid
    and under the star; on the palest fill the ink, on the darkest the white, stands out (WCAG's 3:1 for a
    graphic)."""
    from test_theme import contrast

    names = [t.name for t in fig.data]
    inner = f"{cells_figure.TORCH}, inner"
    assert (
        names.index("round 1") < names.index(cells_figure.TORCH) < names.index(inner) < names.index(cells_figure.MARKED)
    )
    ink, white = _rings(fig, cells_figure.TORCH), _rings(fig, inner)
    assert len(ink) == len(white) == len(q.answer)
    colours = {t.name: t.line.color for t in fig.data if t.name in (cells_figure.TORCH, inner) and t.mode == "lines"}
    assert colours == {cells_figure.TORCH: theme.INK, inner: "white"}
    for (x0, x1, y0, y1), (u0, u1, v0, v1) in zip(ink, white, strict=True):
        assert 0.5 < x1 - x0 < 1 and 0.5 < y1 - y0 < 1  # inside the cell's edge
        assert x0 < u0 < u1 < x1 and y0 < v0 < v1 < y1
    pale, dark = theme.SEQUENTIAL[0][1], theme.SEQUENTIAL[-1][1]
    assert contrast(theme.INK, pale) >= 3 and contrast("#ffffff", dark) >= 3


def test_the_cells_figure_paints_each_cells_share_outlines_torchs_cells_and_stars_the_marked_one():
    q = by_id("group-norm-cells")
    votes = [q.answer, [q.marked], [*q.answer, 0], "zz"]
    rounds = [tally(q, votes), tally(q, [q.answer, q.answer])]
    fig = cells_figure.fig_cells(q, rounds, presenting=True)
    assert_plotly_valid(fig)
    shown = reader.table(fig)  # the kit's reader: also reads the compact arrays of the lecture copy
    for k, cast in enumerate(([v for v in votes if q.parse(v)], [q.answer, q.answer])):
        taps = [sum(cell in set(v) for v in cast) for cell in range(q.cells)]
        grid = shown[shown["trace"] == f"round {k + 1}"]
        assert grid["value"].tolist() == pytest.approx([t / len(cast) for t in taps])
        assert (grid["y"] * q.cols + grid["x"]).tolist() == list(range(q.cells))  # row-major, as the phone's
        assert grid["text"].tolist() == [str(round(100 * v)) for v in grid["value"]]  # in %, as the note says
    for grid in (t for t in fig.data if t.type == "heatmap"):
        assert grid.zmin == 0 and grid.zmax == 1 and grid.texttemplate == "%{text}"  # the share written in each cell
    outlined = {(round((x0 + x1) / 2), round((y0 + y1) / 2)) for x0, x1, y0, y1 in _rings(fig, cells_figure.TORCH)}
    assert outlined == {(k % q.cols, k // q.cols) for k in q.answer}
    _outline_seen_on_every_fill(fig, q)
    stars = shown[shown["trace"] == cells_figure.MARKED]
    assert len(stars) == 2 and {(round(x), round(y)) for x, y in zip(stars["x"], stars["y"], strict=True)} == {
        (q.marked % q.cols, q.marked // q.cols)
    }
    captions = [a.text for a in fig.layout.annotations]
    assert captions == ["round 1: % of 3 votes, 1 right", "round 2: % of 2 votes, 2 right"]
    hidden = cells_figure.fig_cells(q, rounds[:1], answer=False)
    assert "torch" not in str(hidden.to_dict())  # peer instruction's first reveal
    with pytest.raises(ValueError):
        cells_figure.fig_cells(CHOICE, rounds)
