"""A new visitor's first run draws the stage before any widget, at the values the widgets will then start at
(issue 32): ``ui.kit.controls.first_value`` against what Streamlit's own widget takes from the same link.

The oracle is the widget: a script reads each of the explorer's controls with ``first_value`` and then draws it
with ``ui.kit.controls.control``, bound to the URL, in the same run. Where ``first_value`` says it is sure, the two
must agree, or the stage of the first run would show numbers the page then changes; for a link whose values all
stand as written it must be sure, or the first run would draw the whole page after all. A link reaches a run
through the door (:mod:`server.door`), as a browser's does: whatever it said, every value then stands as written.
"""

import ast

import pytest
from streamlit.testing.v1 import AppTest

from lnviz.views import pages
from server import door as server_door

TABLE = pages.BY_NAME["explorer"].controls


def _script() -> None:
    import streamlit as st

    from lnviz.views import pages
    from ui.kit import controls

    table = pages.BY_NAME["explorer"].controls
    first = {p.key: controls.first_value(p) for p in table}
    for p in table:
        drawn = controls.control(p)
        st.text(repr((p.key, first[p.key][0], first[p.key][1], drawn)))


def _run(query: dict[str, str], session: dict | None = None, door: bool = True) -> dict[str, tuple]:
    """Each control's (first value, sure, the widget's value) for a new session opening ``?query`` (through the
    door unless ``door`` is False: a run that a link reaches without it)."""
    at = AppTest.from_function(_script, default_timeout=60)
    redirected = server_door.through("explorer", list(query.items())) if door else None
    for key, value in query.items() if redirected is None else redirected:
        at.query_params[key] = value
    for key, value in (session or {}).items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    rows = [ast.literal_eval(t.value) for t in at.text]
    return {key: (first, sure, drawn) for key, first, sure, drawn in rows}


def _agree(seen: dict[str, tuple]) -> None:
    for key, (first, sure, drawn) in seen.items():
        if sure:
            assert (first, type(first)) == (drawn, type(drawn)), (key, first, drawn)


def test_a_link_of_valid_values_is_sure_and_each_widget_starts_at_it():
    query = {
        "dist": "outlier feature", "batch": "10", "features": "14", "seed": "4", "draw": "whole",
        "gain": "1.5", "bias": "-0.25", "affine": "true", "eps": "0.001", "sample": "3", "feature": "6",
    }  # fmt: skip
    seen = _run(query)
    _agree(seen)
    assert all(seen[key][1] for key in query), {k: v for k, v in seen.items() if not v[1]}
    assert {key: TABLE[key].format(seen[key][2]) for key in query} == query


def test_no_link_is_sure_at_the_defaults():
    seen = _run({})
    _agree(seen)
    assert all(sure and first == TABLE[key].default for key, (first, sure, _) in seen.items())


@pytest.mark.parametrize(
    "query",
    [
        {"gain": "99"},  # out of range: the widget starts at the default, with a note
        {"batch": "100"},  # between a select slider's stops: the nearest
        {"seed": "1.5"},  # a fraction for a whole number
        {"seed": "inf"},
        {"dist": "normal"},  # not an option as written
        {"eps": "0.5"},
        {"view": ""},
        {"stage": "charts"},  # the view's old name
        {"hide": "gain", "gain": "2"},  # hidden: the link's value, no widget
        {"hide": "gain", "gain": "99"},
    ],
)
def test_a_link_the_widgets_would_change_is_sure_and_agrees_through_the_door(query):
    seen = _run(query)
    _agree(seen)
    assert all(sure for _, sure, _ in seen.values()), {k: v for k, v in seen.items() if not v[1]}


@pytest.mark.parametrize("query", [{"gain": "99"}, {"batch": "100"}, {"dist": "normal"}, {"stage": "charts"}])
def test_a_link_that_skipped_the_door_is_not_sure_or_agrees(query):
    _agree(_run(query, door=False))


def test_a_value_the_session_holds_is_the_widgets_and_beside_a_links_is_not_sure():
    seen = _run({"gain": "2"}, session={"gain": 0.5, "batch": 4})
    _agree(seen)
    assert seen["batch"][:2] == (4, True)  # a lesson's value, say
    assert seen["gain"][1:] == (False, 2.0)  # Streamlit's widget took the link's


def _release_script() -> None:
    import streamlit as st

    from lnviz.views import state
    from ui.kit import controls
    from ui.stage import stage as live

    if not st.session_state.get("released"):  # the first run: the stage alone, and a release on it
        st.session_state["released"] = True
        live._set({state.GAIN: 1.55})
    else:
        st.text(repr(controls.control(state.GAIN)))


def test_a_release_on_the_stage_before_the_widgets_came_is_in_the_link():
    # ui.stage.stage._set: a value given from code to a widget drawn later stays out of the URL, unless put there.
    at = AppTest.from_function(_release_script, default_timeout=60).run()
    assert at.query_params["gain"] == "1.55"
    at.run()
    assert [t.value for t in at.text] == ["1.55"] and at.query_params["gain"] == "1.55"
