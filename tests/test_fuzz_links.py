"""Junk links on every page: nothing raises, every control ends in range, and the notes tell the truth.

hypothesis builds query strings from text, NaN, ±inf, 1e308, negative and huge
numbers, empty values, repeated keys and unknown options, for every control a
page draws (discovered by running the page) plus the link-level parameters.
Each must leave the page without an exception, every widget inside its
stated range, and each widget's value equal to what the control's parser says
the link gets, unless a note says otherwise (or the page lowered a whole
number to fit its grid).
"""

from __future__ import annotations

import os

import pytest
from conftest import WIDGETS, run_page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lnviz.views.pages import PAGES as REGISTRY
from ui.kit.controls import PARAMS_DRAWN

PAGES = [entry.file for entry in REGISTRY]
# A few examples a page in the suite (derandomized: the same ones each run); `make fuzz` runs 200.
EXAMPLES = int(os.environ.get("LNVIZ_FUZZ_EXAMPLES", "20"))
# Link-level parameters that are not controls but are read from every link.
EXTRAS = ("hide", "preset", "present", "embed", "v", "zzz")
# Link parameters a page reads that are not controls: the class page's room code.
OWN_PARAMS = {"pages/class.py": ("room",)}
# Pages whose buttons would start long work: the fuzz must not press them, and it can't
# (no clicks happen here), so every page is safe to load with any query.

JUNK = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "1e308",
            "-1e308",
            "1e12",
            "-1",
            "-5",
            "0",
            "1",
            "2",
            "3",
            "7",
            "12.7",
            "0x10",
            "1,5",
            "true",
            "false",
            "TRUE",
            "yes",
            "None",
            "[]",
            "%00",
            "🙂",
            "1e-05",
            "0.001",
            "64",
            "1024",
            "99999",
        ]
    ),
    st.text(max_size=12),
    st.integers(min_value=-(10**15), max_value=10**15).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def discover(page: str) -> dict:
    at = run_page(page)
    assert not at.exception, [e.value for e in at.exception]
    return dict(at.session_state[PARAMS_DRAWN]) if PARAMS_DRAWN in at.session_state else {}  # the class page has none


def widget_value(at, key: str):
    for kind in WIDGETS:
        for w in at.get(kind):
            if getattr(w, "key", None) == key:
                return True, w.value
    return False, None


@pytest.mark.parametrize("page", PAGES)
def test_junk_links_never_break_a_page(page):
    params = discover(page)
    keys = sorted(params)
    query_strategy = st.dictionaries(
        st.sampled_from([*keys, *EXTRAS, *OWN_PARAMS.get(page, ())]),
        st.one_of(JUNK, st.lists(JUNK, min_size=2, max_size=3)),
        max_size=len(keys) + 2,
    )

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(query=query_strategy)
    def check(query):
        at = run_page(page, query)  # links of every version
        assert not at.exception, (query, [e.value for e in at.exception])
        for key, p in params.items():
            drawn, value = widget_value(at, key)
            if not drawn:
                continue
            assert p.holds(value), (key, query.get(key), value)
            if key in query and "hide" not in query and query[key] != []:
                # Either the link's value was taken as the control's rules say, or the page
                # lowered a whole number to fit its grid, or a note says what happened.
                expected = p.parse(query[key])[0]
                lowered = p.kind == "int" and value < expected
                noted = any(p.label in i.value for i in at.info)
                assert value == expected or lowered or noted, (key, query[key], value, expected)

    check()
