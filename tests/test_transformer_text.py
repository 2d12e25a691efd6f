"""The Pre-LN/Post-LN words follow the profile on the chart, and attribute what the papers say."""

import re

import pytest
from conftest import assert_no_exception, figures, run_page

from lnviz.labs.training import transformer, transformer_text
from lnviz.labs.training.transformer import GradProfile

POST_GROWS = "Post-LN's gradient grows towards the output"
POST_FLAT = "Post-LN's profile is flat"
PRE_FALLS = "Pre-LN's gradient falls towards the output"


def _profile(post_rise: float, pre_rise: float, depth: int = 6) -> GradProfile:
    """A made-up profile with the given last/first ratios (only the ends matter to the words)."""
    post = (1.0,) * (depth - 1) + (post_rise,)
    pre = (0.5,) * (depth - 1) + (0.5 * pre_rise,)
    return GradProfile(depth=depth, seed=0, draws=4, post=post, pre=pre)


@pytest.mark.parametrize(
    "rise, expected",
    [
        (2.14, POST_GROWS),  # 12 blocks, seed 0
        (1.28, POST_GROWS),  # 8 blocks
        (1.106, POST_GROWS),  # shown as 1.11×
        (1.104, POST_FLAT),  # shown as 1.10×: not above 1.1
        (1.04, POST_FLAT),  # 4 blocks
        (0.95, POST_FLAT),  # 3 blocks
        (0.8, "Post-LN's gradient falls towards the output"),
    ],
)
def test_post_ln_grows_towards_the_output_only_when_the_shown_ratio_is_above_1_1(rise, expected):
    text = transformer_text.after_chart(_profile(rise, 1.0))
    assert expected in text
    assert f"{rise:.2f}× the first's" in text
    if expected != POST_GROWS:
        assert POST_GROWS not in text


@pytest.mark.parametrize(
    "rise, expected",
    [(0.24, PRE_FALLS), (0.44, PRE_FALLS), (0.85, PRE_FALLS), (0.95, "Pre-LN's profile is flat"), (1.2, "grows")],
)
def test_pre_ln_says_plainly_how_it_moves_and_what_xiong_et_al_report(rise, expected):
    text = transformer_text.after_chart(_profile(1.0, rise))
    assert expected in text and f"{rise:.2f}× the first's" in text
    assert "about the same across layers" in text  # Xiong et al. §3.4
    assert "shrink a little" not in text
    assert ("NormFormer" in text) == (expected == PRE_FALLS)


def test_the_theorem_is_a_scaling_of_one_matrix_and_warm_up_is_a_hypothesis():
    text = transformer_text.after_chart(_profile(1.0, 1.0, depth=12))
    assert "Theorem 1" in text and "second feed-forward weight" in text and "grows like √L" in text
    assert "√12 = 3.5" in text and "says about" not in text
    # Upper bounds only, on one matrix: the words neither promise the √L in the measured norms nor call it a scaling.
    assert "gives upper bounds" in text and "Bounds are not values" in text and "all of a block's parameters" in text
    assert "gives this scaling" not in text
    assert "hypothesize" in transformer_text.WARM_UP and "Liu et al. (2020)" in transformer_text.WARM_UP
    one = transformer_text.after_chart(_profile(1.0, 1.0, depth=1))
    assert POST_GROWS not in one and "no first-to-last profile" in one


def test_the_page_describes_the_profile_it_draws():
    """At 3 blocks this stack's Post-LN profile is flat (about 0.95×) and Pre-LN's falls (about 0.70×)."""
    at = run_page("pages/training.py", {"depth": "3"})
    assert_no_exception(at)
    (fig,) = figures(at)
    drawn = {t.name.split(" ")[0]: GradProfile.rise(tuple(t.y)) for t in fig.data}
    text = " ".join(m.value for m in at.markdown)
    assert transformer_text.trend(drawn["Post-LN"]) == "flat" and POST_FLAT in text and POST_GROWS not in text
    assert transformer_text.trend(drawn["Pre-LN"]) == "falls" and PRE_FALLS in text
    for name, rise in drawn.items():
        assert f"{rise:.2f}× the first's" in text, name
    assert re.search(r"width d = 64, 4 heads, .* averaged over 4 draws", text)
    assert transformer.WIDTH == 64 and transformer.HEADS == 4
