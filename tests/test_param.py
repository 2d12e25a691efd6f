"""A control's link values (lnviz.views.param): as strictly checked as the widget's, and echoed safely."""

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from lnviz import text
from lnviz.views import pages, param, state

JUNK = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e12", "-5", "", " ", "0x10", "1,5", "true"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**15), max_value=10**15).map(str),
)


EVERY = [p for controls in pages.CONTROLS.values() for p in controls]  # every page's version of each


@settings(max_examples=300, deadline=None)
@given(param=st.sampled_from(EVERY), raw=st.one_of(JUNK, st.lists(JUNK, min_size=1, max_size=3)))
def test_any_link_value_ends_in_range(param, raw):
    value, note = param.parse(raw)
    assert param.holds(value), (param.key, raw, value)
    assert param.parse(param.format(value)) == (value, None)
    if note is None and param.kind != "text":  # an empty text box is a value (the page says it is empty)
        assert (raw[-1] if isinstance(raw, list) else raw) != ""


DEFAULT = state.BATCH.default  # a value the slider can't take falls back to it


@pytest.mark.parametrize(
    "raw, want, noted",
    [
        ("64", 64, False),
        ("1e3", 1024, True),  # between the slider's stops (768, 1024): the nearest, noted
        ("100", 96, True),
        ("5", 5, False),  # every batch size up to 16 is a stop
        ("13", 13, False),
        ("5000", DEFAULT, True),
        ("-3", DEFAULT, True),
        ("12.7", 12, True),
        ("abc", DEFAULT, True),
        ("nan", DEFAULT, True),
        ("inf", DEFAULT, True),
        ("", DEFAULT, True),
        (["3", "7"], 7, True),
    ],
)
def test_batch_parse_follows_the_slider(raw, want, noted):
    value, note = state.BATCH.parse(raw)
    assert value == want
    assert (note is not None) == noted


def test_eps_takes_only_the_offered_steps_as_written():
    assert state.EPS.parse("0") == (0.0, None)
    assert state.EPS.parse("1e-05") == (1e-5, None)
    assert state.EPS.parse("0.001") == (1e-3, None)
    for junk in ("1e-3", "3e-7", "-1", "1e9", "banana"):
        value, note = state.EPS.parse(junk)
        assert value == state.EPS.default and "not one of the options" in note


def test_eps_options_span_zero_and_log_scale():
    opts = state.EPS.options
    assert opts[0] == 0.0 and min(opts[1:]) == 1e-12 and max(opts) == 1.0
    assert list(opts) == sorted(opts)


def test_choice_must_be_spelled_as_the_option():
    assert state.DIST.parse("standard normal") == ("standard normal", None)
    for junk in ("STANDARD NORMAL", "uniform", ""):
        value, note = state.DIST.parse(junk)
        assert value == state.DIST.default and "not one of the options" in note


def test_bool_parse():
    assert state.AFFINE.parse("true") == (True, None)
    assert state.AFFINE.parse("FALSE") == (False, None)
    value, note = state.AFFINE.parse("1")
    assert value is False and "not true or false" in note
    assert state.AFFINE.parse("maybe")[1] is not None


def test_note_compares_the_link_with_the_value_the_widget_took():
    assert state.BATCH.note("12", 12) is None
    assert "not a number" in state.BATCH.note("abc", 16)
    # A value this parser would take but the widget refused is still reported, with the value used.
    note = state.BATCH.note(["3", "7"], 16)
    assert "was not accepted" in note and "using 16" in note and "2 times" in note


def test_coerce_brings_held_values_into_range():
    assert state.BATCH.coerce(5000) == 1024 and state.BATCH.coerce(-4) == 1 and state.BATCH.coerce(100) == 96
    assert state.BATCH.coerce(float("nan")) == DEFAULT and state.BATCH.coerce("x") == DEFAULT
    assert state.DIST.coerce("uniform") == state.DIST.default
    assert state.AFFINE.coerce(1) is False and state.AFFINE.coerce(True) is True
    # A stage message is anyone's JSON: an integer too large for a float is refused like text, not raised.
    assert state.SAMPLE.coerce(10**400) == state.SAMPLE.default and state.GAIN.coerce(-(10**400)) == 1.0


def _live(monkeypatch):
    """ui.stage.stage, imported with the installed components found even where no Streamlit runtime runs yet (its
    component is declared when the module loads; without a runtime Streamlit's manager has no manifests)."""
    import streamlit.components.v2 as v2

    from harness.apptest import _components

    monkeypatch.setattr(v2, "get_bidi_component_manager", _components)
    from ui.stage import stage as live

    return live


def test_one_pick_for_the_stage_and_the_chart(monkeypatch):
    """ui.stage.stage.pick is the one cell pick: the stage's callback and the charts view's click both call it."""
    import inspect

    live = _live(monkeypatch)

    views = (ROOT / "ui" / "labs" / "details.py").read_text()  # the charts view, whose heatmap of x picks a cell
    assert "live.pick(" in views and 'session_state["sample"]' not in views
    assert "pick(" in inspect.getsource(live._on_pick)
    held = {}
    monkeypatch.setattr(live.st, "session_state", held)
    live.pick(10**400, "junk")  # anything a browser sends becomes a valid sample and feature
    assert held == {"sample": state.SAMPLE.default, "feature": state.FEATURE.default}
    live.pick(5.0, 7)
    assert held == {"sample": 5, "feature": 7}


def test_snap_puts_a_released_value_on_the_controls_steps():
    """The stage's ranges are the browser's: a release comes back clamped and on the state table's step."""
    assert state.GAIN.snap(1.3500000000000005) == 1.35 and state.GAIN.snap(1.337) == 1.35
    assert state.BIAS.snap(-0.024) == 0.0 and state.BIAS.snap(-4.9749) == -4.95
    assert state.GAIN.snap(7) == 5.0 and state.GAIN.snap(-(10**400)) == state.GAIN.default
    assert state.GAIN.snap("x") == state.GAIN.default and state.GAIN.snap(float("nan")) == state.GAIN.default
    assert state.SHIFT.snap(0.26) == 0.3 and state.MOMENTUM.snap(0.0149) == 0.01  # each control's own step
    # A choice: an option, or the default.
    assert state.EPS.snap(1e-5) == 1e-5 and state.EPS.snap(3e-5) == state.EPS.default
    assert state.BATCH.snap(12.7) == 12  # no step: coerce alone


def test_the_stages_release_goes_through_the_state_tables_snap(monkeypatch):
    live = _live(monkeypatch)
    held = {live.KEY: {"scrub": {"gain": 1.3500000000000005, "bias": 9, "eps": 1e-3}}}
    monkeypatch.setattr(live.st, "session_state", held)
    live._on_scrub()
    assert (held["gain"], held["bias"], held["eps"]) == (1.35, 5.0, 1e-3)


@pytest.mark.parametrize(
    "raw",
    [
        "![x](http://host/px.gif)",
        "[log in](http://host/login)",
        "<img src=x onerror=alert(1)>",
        ":red[boom] :material/home:",
        "$\\frac{1}{0}$",
        "`a``b`",
        "a\nb\tc",
        "9" * 4000,
    ],
)
def test_quote_is_one_short_literal_code_span(raw):
    quoted = text.quote(raw)
    fence = quoted[: len(quoted) - len(quoted.lstrip("`"))]
    inner = quoted[len(fence) : len(quoted) - len(fence)]
    assert quoted.endswith(fence) and fence not in inner  # nothing inside can close the span
    assert "\n" not in quoted and len(inner.strip()) <= text.QUOTE_LIMIT
    assert inner.strip() in raw.replace("\n", " ").replace("\t", " ") or inner.strip().endswith("…")


def test_a_note_quotes_what_the_link_said():
    note = state.BATCH.note("[log in](http://host)", 16)
    assert "`[log in](http://host)`" in note and "using 16" in note


def test_options_given_with_their_meanings_keep_their_order_and_say_what_each_is():
    p = param.Param("pick", "Pick", "choice", "b", options={"b": "the second letter", "a": "the first"})
    assert p.options == ("b", "a") and p.holds("a") and not p.holds("the first")
    assert p.meaning("a") == "the first" and p.but(label="Other").meaning("b") == "the second letter"
    assert p.parse("a") == ("a", None)
    with pytest.raises(KeyError):
        p.meaning("c")
