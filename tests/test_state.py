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
    if note is None:
        # Accepted silently: the text must really denote that value.
        text = (raw[-1] if isinstance(raw, list) else raw).strip()
        assert param.parse(param.format(value))[0] == value
        assert text != ""


@pytest.mark.parametrize(
    "raw, want, noted",
    [
        ("64", 64, False),
        ("5000", 1024, True),
        ("-3", 1, True),
        ("12.7", 13, True),
        ("abc", 16, True),
        ("nan", 16, True),
        ("inf", 1024, True),
        ("", 16, True),
        (["3", "7"], 7, True),
    ],
)
def test_batch_parse(raw, want, noted):
    value, note = state.BATCH.parse(raw)
    assert value == want
    assert (note is not None) == noted


def test_eps_snaps_to_the_log_scale_and_keeps_zero():
    assert state.EPS.parse("0") == (0.0, None)
    assert state.EPS.parse("1e-5") == (1e-5, None)
    assert state.EPS.parse("0.001")[0] == 1e-3
    value, note = state.EPS.parse("3e-7")
    assert value in (2e-7, 5e-7) and note
    assert state.EPS.parse("-1")[0] == 0.0
    assert state.EPS.parse("1e9")[0] == 1.0
    assert state.EPS.parse("banana") == (1e-5, state.EPS.parse("banana")[1])


def test_eps_options_span_zero_and_log_scale():
    opts = state.eps_options()
    assert opts[0] == 0.0 and min(opts[1:]) == 1e-12 and max(opts) == 1.0
    assert list(opts) == sorted(opts)


def test_choice_is_case_insensitive_but_rejects_unknown():
    assert state.DIST.parse("STANDARD NORMAL") == ("standard normal", None)
    value, note = state.DIST.parse("uniform")
    assert value == state.DIST.default and "not one of the options" in note


def test_bool_parse():
    assert state.AFFINE.parse("true") == (True, None)
    assert state.AFFINE.parse("0") == (False, None)
    assert state.AFFINE.parse("maybe")[0] is False


def test_validate_fills_defaults_and_collects_notes():
    values, notes = state.validate(state.EXPLORER, {"batch": "8", "gain": "zz"})
    assert values["batch"] == 8 and values["gain"] == state.GAIN.default and values["seed"] == state.SEED.default
    assert len(notes) == 1 and "Gain" in notes[0]


def test_keys_are_unique_short_and_url_safe():
    keys = [p.key for p in state.EXPLORER]
    assert len(keys) == len(set(keys))
    assert all(k.isidentifier() and k.islower() and len(k) <= 12 for k in keys)
