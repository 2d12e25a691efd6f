"""B's and H's steppers on the stage (issue 46): the stops either side on the page's scale, what fixes a size, and
the press's callback, which takes only a stop of a size the stage may move."""

from __future__ import annotations

import ast

from streamlit.testing.v1 import AppTest

from lnviz.views import pages, scales
from ui.stage import stage as live

TABLE = pages.BY_NAME["explorer"].controls
SIZES = scales.size_options()  # every size 1–16, then about 1.25× apart to 1024


def test_each_stepper_goes_to_the_next_stop_of_the_scale_and_stops_at_its_ends():
    for b in TABLE.batch.options:
        for h in (TABLE.features.lo, 12, TABLE.features.hi):
            shown = live.steppers(TABLE, frozenset(), b, h).shown
            k = SIZES.index(b)
            assert shown["batch"]["down"] == (SIZES[k - 1] if b > TABLE.batch.lo else None), b
            assert shown["batch"]["up"] == (SIZES[k + 1] if b < TABLE.batch.hi else None), b
    shown = live.steppers(TABLE, frozenset(), 8, TABLE.features.lo).shown
    assert shown["features"]["down"] is None and shown["features"]["up"] == TABLE.features.lo + 1  # H from 2
    assert live.steppers(TABLE, frozenset(), 16, 16).shown["batch"]["up"] == 20  # past 16, the scale's next
    assert live.steppers(TABLE, frozenset(), 8, 12).movable == {"batch": TABLE.batch, "features": TABLE.features}


def test_a_size_the_link_hides_or_your_own_data_sets_has_no_stepper_but_a_word():
    hidden = live.steppers(TABLE, frozenset({"batch", "eps"}), 8, 12)
    assert hidden.shown["batch"]["why"] == "B set by the link" and hidden.shown["features"]["why"] == ""
    assert set(hidden.movable) == {"features"}
    own = live.steppers(TABLE, frozenset(), 37, 5, own=True)
    assert {s["why"] for s in own.shown.values()} == {"your data's shape"} and own.movable == {}


def _press_script() -> None:
    import streamlit as st

    from lnviz.views import pages
    from ui.stage import stage as live

    table = pages.BY_NAME["explorer"].controls
    for size in st.session_state["pressed"]:  # each press in a session of its own
        st.session_state.pop("batch", None)
        st.session_state[live.KEY] = {"size": size}
        live._on_size({"batch": table.batch})
        st.text(repr((st.session_state.get("batch"), live.sized(), live.sized())))


def test_a_press_sets_the_widgets_stop_and_asks_the_fragments_page_to_rerun_once_and_nothing_else_gets_through():
    forged = [{"name": "features", "value": 13}, {"name": ["batch"], "value": 9}, {"name": "batch"}, "batch",
              {"name": "batch", "value": True}, {"name": "batch", "value": "9"}]  # fmt: skip
    pressed = [{"name": "batch", "value": 9}, {"name": "batch", "value": 100}, {"name": "batch", "value": 5000}]
    at = AppTest.from_function(_press_script, default_timeout=30)
    at.session_state["pressed"] = pressed + forged
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    seen = [ast.literal_eval(t.value) for t in at.text]
    # A value between stops goes to the nearest, one past the end to the end; the page reruns once.
    assert seen[:3] == [(9, True, False), (96, True, False), (1024, True, False)]
    assert seen[3:] == [(None, False, False)] * len(forged), list(zip(forged, seen[3:], strict=True))
