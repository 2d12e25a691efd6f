"""ui.heavy: the gate as a page sees it, through AppTest."""

from streamlit.testing.v1 import AppTest


def script():
    import streamlit as st

    from ui import heavy

    g = heavy.gate()
    others = [g.begin(f"other visitor {i}", "training race") for i in range(g.limits.concurrent)]
    with heavy.heavy("the sweep") as ticket:
        st.text("ran while full" if ticket else "refused while full")
    for other in others:
        g.end(other)
    with heavy.heavy("the sweep") as ticket:
        st.text("ran" if ticket else "refused")
        ticket.budget_s = -1.0  # as if it had used its whole budget
        ticket.check()
        st.text("went on past its budget")
    st.text(f"running afterwards: {g.running()}")
    build = heavy.deferred("a large download", lambda: b"x,y\n")
    st.text(f"download: {build()!r}, running afterwards: {g.running()}")


def test_a_page_sees_busy_then_runs_then_is_stopped_at_its_budget():
    at = AppTest.from_function(script, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [t.value for t in at.text]
    assert texts == ["refused while full", "ran", "running afterwards: 0", "download: b'x,y\\n', running afterwards: 0"]
    busy, stopped = (w.value for w in at.warning)
    assert busy.startswith("Busy: ") and "Try again in" in busy
    assert stopped.startswith("Stopped: the sweep used")
