"""The state table: values from a link are as strictly checked as a widget's."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnviz import state

JUNK = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e12", "-5", "", " ", "0x10", "1,5", "true"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**15), max_value=10**15).map(str),
)


def in_range(p: state.Param, value) -> bool:
    if p.kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and p.lo <= value <= p.hi
    if p.kind == "float":
        return isinstance(value, float) and math.isfinite(value) and p.lo <= value <= p.hi
    if p.kind == "bool":
        return isinstance(value, bool)
    return value in p.options


@settings(max_examples=300, deadline=None)
@given(param=st.sampled_from(state.EXPLORER), raw=st.one_of(JUNK, st.lists(JUNK, min_size=1, max_size=3)))
def test_any_link_value_ends_in_range(param, raw):
    value, note = param.parse(raw)
    assert in_range(param, value), (param.key, raw, value)
    assert param.parse(param.format(value)) == (value, None)
    if note is None:
        assert (raw[-1] if isinstance(raw, list) else raw) != ""


@pytest.mark.parametrize(
    "raw, want, noted",
    [
        ("64", 64, False),
        ("1e3", 1000, False),
        ("5000", 16, True),
        ("-3", 16, True),
        ("12.7", 12, True),
        ("abc", 16, True),
        ("nan", 16, True),
        ("inf", 16, True),
        ("", 16, True),
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
    opts = state.eps_options()
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
    assert state.AFFINE.parse("1") == (False, state.AFFINE.parse("1")[1])
    assert state.AFFINE.parse("maybe")[1] is not None


def test_validate_fills_defaults_and_collects_notes():
    values, notes = state.validate(state.EXPLORER, {"batch": "8", "gain": "zz"})
    assert values["batch"] == 8 and values["gain"] == state.GAIN.default and values["seed"] == state.SEED.default
    assert len(notes) == 1 and "Gain" in notes[0]


def test_keys_are_unique_short_and_url_safe():
    keys = [p.key for p in state.EXPLORER]
    assert len(keys) == len(set(keys))
    assert all(k.isidentifier() and k.islower() and len(k) <= 12 for k in keys)


def test_note_compares_the_link_with_the_value_the_widget_took():
    assert state.BATCH.note("12", 12) is None
    assert "not a number" in state.BATCH.note("abc", 16)
    # A value this parser would take but the widget refused is still reported, with the value used.
    note = state.BATCH.note(["3", "7"], 16)
    assert "was not accepted" in note and "using 16" in note and "2 times" in note


def test_coerce_brings_held_values_into_range():
    assert state.BATCH.coerce(5000) == 1024 and state.BATCH.coerce(-4) == 1
    assert state.BATCH.coerce(float("nan")) == 16 and state.BATCH.coerce("x") == 16
    assert state.DIST.coerce("uniform") == state.DIST.default
    assert state.AFFINE.coerce(1) is False and state.AFFINE.coerce(True) is True
