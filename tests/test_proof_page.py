"""Without a proof a session reads but takes nothing of the server's to hold: no place in the heavy-work queue,
no own data held (AppTest sessions, proved or not by harness/proofs.py)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from harness.apptest import assert_no_exception, run_page
from server import proof


def queued():
    import streamlit as st

    from server import heavy

    with heavy.heavy("the sweep") as ticket:
        st.text("ran" if ticket else "refused")
    st.text(f"running afterwards: {heavy.gate().running()}")


def test_a_heavy_action_needs_a_proved_browser_and_one_without_is_told_why(proved):
    at = AppTest.from_function(queued, default_timeout=60).run()
    assert [t.value for t in at.text] == ["ran", "running afterwards: 0"] and not at.warning
    proved.forget()
    at = AppTest.from_function(queued, default_timeout=60).run()
    assert [t.value for t in at.text] == ["refused", "running afterwards: 0"]
    assert [w.value for w in at.warning] == [proof.NEEDS]


def test_a_paste_needs_a_proved_browser_and_the_explorer_still_draws_without_one(proved):
    proved.forget()
    at = run_page("pages/explorer.py")
    assert_no_exception(at)
    at.text_area(key="paste").input("1,2\n3,4").run()
    at.button(key="use_paste").click().run()
    assert_no_exception(at)
    assert any(proof.NEEDS in w.value for w in at.warning)
    assert at.text_area(key="paste").value != ""  # not read
    proved.fresh()
    at.text_area(key="paste").input("1,2\n3,5").run()
    at.button(key="use_paste").click().run()
    assert not any(proof.NEEDS in w.value for w in at.warning)
    assert at.text_area(key="paste").value == ""  # read, and held


def test_with_the_limits_off_no_proof_is_asked(proved, monkeypatch):
    from server import limits
    from server.limits import Limits

    monkeypatch.setattr(limits, "current", lambda: Limits.off())
    proved.forget()
    at = AppTest.from_function(queued, default_timeout=60).run()
    assert [t.value for t in at.text] == ["ran", "running afterwards: 0"] and not at.warning
