"""The explorer's own data: refusals replace each other, and a link whose own data is gone says so."""

import numpy as np
import torch
from conftest import assert_no_exception, run_page, stage_x

from lnviz.maths import data
from lnviz.serving import own_store, upload
from ui import own_data

PAGE = "pages/explorer.py"
GOOD = "1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 0"


def generated() -> np.ndarray:
    return data.make_activations("heterogeneous features", 8, 12, 0).numpy()


def paste(at, text: str):
    at.text_area(key="paste").input(text).run()
    return at.button(key="use_paste").click().run()


def upload_warnings(at) -> list[str]:
    return [w.value for w in at.warning if "Accepted:" in w.value]


def test_the_paste_box_holds_what_the_parser_reads():
    at = run_page(PAGE)
    assert at.text_area(key="paste").proto.max_chars == upload.MAX_PASTE_CHARS


def test_a_refused_paste_replaces_the_previous_warning_and_a_good_one_clears_it():
    at = run_page(PAGE)
    paste(at, "1, 2\n3, oops")
    assert len(upload_warnings(at)) == 1 and "`oops`" in upload_warnings(at)[0]
    paste(at, "1, 2, 3\n4, 5")
    (only,) = upload_warnings(at)
    assert "Row 2 has 2 values" in only and "oops" not in only and "generated data" in only
    at.slider(key="gain").set_value(1.5).run()  # another rerun: the warning is about the text still in the box
    assert len(upload_warnings(at)) == 1
    at.text_area(key="paste").input("1, 2, 3").run()  # the text it was about is gone: so is the warning
    assert not upload_warnings(at)
    paste(at, "1, 2\n3, oops")
    paste(at, GOOD)
    assert_no_exception(at)
    assert not upload_warnings(at)
    np.testing.assert_allclose(stage_x(at), [[1, 2, 3, 4], [2, 4, 6, 9], [0, 0, 1, 0]])
    assert at.text_area(key="paste").value == ""  # the box is emptied once read


def test_a_paste_cut_at_the_box_limit_is_refused_as_such():
    at = run_page(PAGE)
    paste(at, "1,2\n" * (upload.MAX_PASTE_CHARS // 4))  # what a browser sends of a longer paste: the box's fill
    (only,) = upload_warnings(at)
    assert "cut off" in only


def test_own_data_is_marked_in_the_link_and_the_mark_goes_with_it():
    at = run_page(PAGE)
    assert own_data.OWN_PARAM not in at.query_params
    paste(at, GOOD)
    assert at.query_params[own_data.OWN_PARAM] == "3x4"
    at.button(key="own_data_off").click().run()
    assert own_data.OWN_PARAM not in at.query_params
    np.testing.assert_allclose(stage_x(at), generated(), rtol=1e-6, atol=1e-6)


def test_a_new_session_whose_own_data_is_gone_is_told_so():
    at = run_page(PAGE, {own_data.OWN_PARAM: "3x4"})  # after a restart: the link, and no data in the session
    assert_no_exception(at)
    (gone,) = [w.value for w in at.warning if "gone" in w.value]
    assert "(3 × 4)" in gone and "generated data" in gone
    np.testing.assert_allclose(stage_x(at), generated(), rtol=1e-6, atol=1e-6)
    at.slider(key="gain").set_value(1.5).run()
    assert [w for w in at.warning if "gone" in w.value], "the notice stays until the viewer acknowledges it"
    at.button(key="own_gone_ok").click().run()
    assert not [w for w in at.warning if "gone" in w.value]
    assert own_data.OWN_PARAM not in at.query_params


def test_the_marker_is_never_echoed():
    at = run_page(PAGE, {own_data.OWN_PARAM: "![x](http://host/px.gif) [log in](http://host/login)"})
    (gone,) = [w.value for w in at.warning if "gone" in w.value]
    assert "http" not in gone and "![" not in gone and "×" not in gone


def test_data_sent_by_another_page_is_marked_too():
    at = run_page(PAGE)
    own_x = torch.arange(12, dtype=torch.float64).reshape(3, 4) ** 2
    at.session_state[own_data.KEY] = own_data.hold(own_x, "the training page", "a visitor")
    at.run()
    assert at.query_params[own_data.OWN_PARAM] == "3x4"
    np.testing.assert_allclose(stage_x(at), own_x.numpy())


def test_a_hostile_file_name_is_shown_as_text():
    import re

    at = run_page(PAGE)
    name = "![x](http://host/px.gif) [log in](http://host/login) $\\huge{x}$ **big**.csv"
    at.session_state[own_data.KEY] = own_data.hold(np.ones((3, 4)) * np.arange(4), own_data.file_source(name), "a")
    at.run()
    assert_no_exception(at)
    shown = [m.value for m in [*at.info, *at.caption] if "your data" in m.value.lower()]
    assert len(shown) >= 2, shown
    for markdown in shown:
        assert "`" in markdown
        rest = re.sub(r"(`+)(?:.|\n)*?\1", "", markdown)  # what Markdown interprets: outside code spans
        assert not any(mark in rest for mark in ("](", "![", "$", "**big")), markdown


def test_sessions_pasting_the_same_matrix_hold_it_once_and_not_in_their_state(monkeypatch):
    monkeypatch.setattr(own_data, "STORE", own_store.OwnStore())  # this test's own
    sessions = [paste(run_page(PAGE), GOOD) for _ in range(3)]
    assert (len(own_data.STORE), own_data.STORE.bytes) == (1, 3 * 4 * 8), own_data.STORE._entries
    for at in sessions:
        held = at.session_state[own_data.KEY]
        assert not any(isinstance(v, np.ndarray | torch.Tensor) for v in held.values()), held
        np.testing.assert_allclose(stage_x(at), [[1, 2, 3, 4], [2, 4, 6, 9], [0, 0, 1, 0]])
    sessions[0].button(key="own_data_off").click().run()  # back to generated data: the matrix is let go
    assert len(own_data.STORE) == 0  # (AppTest gives every session one id: all three were one visitor)


def test_data_the_server_let_go_is_said_to_be_gone_never_shown_stale(monkeypatch):
    monkeypatch.setattr(own_data, "STORE", own_store.OwnStore(ttl_s=60))
    at = paste(run_page(PAGE), GOOD)
    assert at.query_params[own_data.OWN_PARAM] == "3x4"
    own_data.STORE.clock = lambda: 1e12  # an hour later, unused
    at.slider(key="gain").set_value(1.5).run()
    assert_no_exception(at)
    (gone,) = [w.value for w in at.warning if "gone" in w.value]
    assert "(3 × 4)" in gone and "generated data" in gone
    assert not [i for i in at.info if "Showing" in i.value]
    np.testing.assert_allclose(stage_x(at), generated(), rtol=1e-6, atol=1e-6)


def test_a_full_store_refuses_with_when_to_try_again_and_keeps_what_was_shown(monkeypatch):
    monkeypatch.setattr(own_data, "STORE", own_store.OwnStore(budget=3 * 4 * 8))
    first = paste(run_page(PAGE), GOOD)
    other = paste(run_page(PAGE), "1, 2\n3, 5")
    (refused,) = upload_warnings(other) or [w.value for w in other.warning if "Try again" in w.value]
    assert "Try again in" in refused and "generated data" in refused
    np.testing.assert_allclose(stage_x(first), [[1, 2, 3, 4], [2, 4, 6, 9], [0, 0, 1, 0]])


def test_a_large_file_is_read_under_the_heavy_gate_and_read_on_the_next_run_once_admitted(monkeypatch):
    import contextlib

    import streamlit as st

    from ui import heavy

    asked, busy = [], [True]

    @contextlib.contextmanager
    def gate(action, where=None):
        asked.append(action)
        if busy[0]:
            st.warning("Busy: a test holds the gate. Try again in 7 s.")
            yield None
        else:
            yield object()

    monkeypatch.setattr(heavy, "heavy", gate)
    rows = np.arange(1024 * 256, dtype=np.float64).reshape(1024, 256) / 7
    big = "\n".join(",".join(map(repr, row)) for row in rows.tolist()).encode()
    assert len(big) > upload.LIGHT_BYTES
    at = run_page(PAGE)
    at.file_uploader(key="upload").set_value(("big.csv", big, "text/csv")).run()
    assert_no_exception(at)
    assert asked == ["reading your file"] and [w for w in at.warning if "Try again in 7 s" in w.value]
    assert own_data.OWN_PARAM not in at.query_params
    busy[0] = False
    at.run()  # any later run: read now
    assert at.query_params[own_data.OWN_PARAM] == "1024x256" and len(asked) == 2
    busy[0] = True
    at.file_uploader(key="upload").set_value(("small.csv", GOOD.encode(), "text/csv")).run()
    assert at.query_params[own_data.OWN_PARAM] == "3x4" and len(asked) == 2  # a small file never waits


def test_sessions_showing_the_same_matrix_share_one_cached_computation(monkeypatch):
    from lnviz.labs import explorer
    from lnviz.serving import budget
    from ui import page as kit

    monkeypatch.setattr(kit, "RESULTS", budget.ByteLRU(64 * 2**20))
    normalize, calls = explorer.normalize, []

    def counted(x, eps):
        calls.append(tuple(x.shape))
        return normalize(x, eps)

    monkeypatch.setattr(explorer, "normalize", counted)
    for _ in range(3):
        at = paste(run_page(PAGE), GOOD)
        at.slider(key="gain").set_value(1.5).run()  # γ moves: no recomputation of the norms
        assert_no_exception(at)
    assert calls.count((3, 4)) == 1
