"""server.heavy: the gate as a page sees it, through AppTest."""

import pytest
from streamlit.testing.v1 import AppTest


def script():
    import threading

    import streamlit as st

    from server import heavy, limits

    wait_s, heavy.PAGE_WAIT_S = heavy.PAGE_WAIT_S, 0.5
    g = heavy.gate()
    others = [g.begin(f"other visitor {i}", "training race") for i in range(limits.current().concurrent)]
    with heavy.heavy("the sweep") as ticket:
        st.text("ran while full" if ticket else "refused while full")
    # A page waits its turn: another visitor's race ends while it waits, and it runs.
    heavy.PAGE_WAIT_S = 30.0
    threading.Timer(1.0, lambda: [g.end(other) for other in others]).start()
    with heavy.heavy("the sweep") as ticket:
        st.text("ran after waiting" if ticket else "refused")
        ticket.budget_s = -1.0  # as if it had used its whole budget
        ticket.check()
        st.text("went on past its budget")
    st.text(f"running afterwards: {g.running()}")
    build = heavy.deferred("a large download", lambda: b"x,y\n")
    st.text(f"download: {build()!r}, running afterwards: {g.running()}")
    heavy.PAGE_WAIT_S = wait_s


def test_a_page_waits_its_turn_then_runs_then_is_stopped_at_its_budget():
    at = AppTest.from_function(script, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [t.value for t in at.text]
    assert texts == [
        "refused while full",
        "ran after waiting",
        "running afterwards: 0",
        "download: b'x,y\\n', running afterwards: 0",
    ]
    busy, stopped = (w.value for w in at.warning)
    assert busy.startswith("Busy: ") and "Try again in" in busy
    assert stopped.startswith("Stopped: the sweep used")


def test_the_gate_outlives_a_cache_clear():
    # st.cache_resource.clear() is what a browser's clear_cache did: a gate in that cache was rebuilt empty.
    import streamlit as st

    from server import heavy

    g = heavy.gate()
    ticket = g.begin("alice", "training race")
    try:
        st.cache_resource.clear()
        st.cache_data.clear()
        assert heavy.gate() is g and heavy.gate().running() == 1
    finally:
        g.end(ticket)


def test_a_download_is_built_at_once_while_races_hold_every_heavy_slot():
    # A 0.4 s build was refused for 60 s behind a race: downloads have a lane of their own.
    import time

    from server import heavy, limits

    g = heavy.gate()
    races = [g.begin(f"racer {i}", "training race") for i in range(limits.current().concurrent)]
    try:
        build = heavy.deferred("the values as CSV", lambda: b"x,y\n")
        start = time.monotonic()
        assert build() == b"x,y\n"
        assert time.monotonic() - start < 1.0
    finally:
        for race in races:
            g.end(race)


def test_a_download_waits_briefly_for_another_download_instead_of_failing():
    import threading

    from server import heavy, slots

    g = heavy.gate()
    other = g.begin("another visitor", "their CSV", lane=slots.DOWNLOADS)
    threading.Timer(0.5, g.end, args=(other,)).start()
    assert heavy.deferred("the values as CSV", lambda: b"x,y\n")() == b"x,y\n"


@pytest.mark.parametrize("off", [False, True])
def test_every_store_the_glue_builds_takes_its_numbers_from_the_process_limits(monkeypatch, off):
    """LNVIZ_LIMITS=off reaches the class poll's store, own data, the share quota and the page kit's cache."""
    from server import limits
    from server import process_store as shared_store
    from server.limits import LIFTED, Limits
    from ui.kit import page as kit
    from ui.labs import own_data

    monkeypatch.delenv("LNVIZ_REDIS_URL", raising=False)
    monkeypatch.delenv("LNVIZ_CACHE_MIB", raising=False)
    monkeypatch.delenv("LNVIZ_OWN_DATA_MIB", raising=False)
    if off:
        monkeypatch.setenv("LNVIZ_LIMITS", "off")
    else:
        monkeypatch.delenv("LNVIZ_LIMITS", raising=False)
    built = (limits.current, own_data.store, own_data.share_quota, kit.results, shared_store._process_store)
    for cached in built:
        cached.cache_clear()
    monkeypatch.setattr(shared_store, "_store", None)
    try:
        lim = limits.current()
        assert lim.enabled is not off and (lim == Limits.off()) is off
        held = shared_store.store().limits
        assert (held.max_voters, held.voters_per_address, held.max_rooms) == (
            (LIFTED, LIFTED, LIFTED) if off else (2000, 60, 10_000)
        )
        mine = own_data.store()
        assert (mine.budget, mine.holder_bytes) == ((LIFTED, LIFTED) if off else (128 * 2**20, 16 * 2**20))
        assert own_data.share_quota().amount == (LIFTED if off else 64 * 2**20)
        assert kit.results().budget == (LIFTED if off else 256 * 2**20)
    finally:
        monkeypatch.undo()
        for cached in built:
            cached.cache_clear()
