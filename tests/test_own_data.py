"""The explorer's own data: refusals replace each other, a link carries the data through the shared store, and a
link whose own data is gone says so."""

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
import torch
from conftest import assert_no_exception, run_page, share_box, share_link, stage_x

from lnviz.labs.explorer import own_text, upload
from lnviz.maths import data
from server import budget, own_share, own_store
from server import process_store as shared_store
from server.limits import Limits, StoreDown, StoreFull
from server.store import MemoryStore
from ui.labs import own_data

PAGE = "pages/explorer.py"
GOOD = "1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 0"
GOOD_X = [[1.0, 2, 3, 4], [2, 4, 6, 9], [0, 0, 1, 0]]


@pytest.fixture(autouse=True)
def fresh_shared_store(monkeypatch) -> MemoryStore:
    """Each test its own shared store (the process's one, server.process_store), with no quota used, taken for Redis: the
    in-process backend keeps the same contract (tests/test_store.py runs both)."""
    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    monkeypatch.setattr(shared_store, "shared", lambda: True)
    quota = own_share.new_quota()
    monkeypatch.setattr(own_data, "share_quota", lambda: quota)
    return store


def this_process(monkeypatch, **kw) -> budget.Budget:
    """A fresh budget of own matrices for this test, as the process's (own_data.store)."""
    kept = own_store.new(**kw)
    monkeypatch.setattr(own_data, "store", lambda: kept)
    return kept


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


def test_own_data_is_in_the_link_by_its_id_and_the_id_goes_with_it():
    at = run_page(PAGE)
    assert own_data.OWN_PARAM not in at.query_params
    paste(at, GOOD)
    assert at.query_params[own_data.OWN_PARAM] == own_store.content_id(np.array(GOOD_X))
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
    assert at.query_params[own_data.OWN_PARAM] == own_store.content_id(own_x.numpy())
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
    kept = this_process(monkeypatch)  # this test's own
    sessions = [paste(run_page(PAGE), GOOD) for _ in range(3)]
    assert (len(kept), kept.bytes) == (1, 3 * 4 * 8), kept._entries
    for at in sessions:
        held = at.session_state[own_data.KEY]
        assert not any(isinstance(v, np.ndarray | torch.Tensor) for v in held.values()), held
        np.testing.assert_allclose(stage_x(at), [[1, 2, 3, 4], [2, 4, 6, 9], [0, 0, 1, 0]])
    sessions[0].button(key="own_data_off").click().run()  # back to generated data: the matrix is let go
    assert len(kept) == 0  # (AppTest gives every session one id: all three were one visitor)


def test_data_the_server_let_go_comes_back_from_the_link_and_once_expired_there_is_said_to_be_gone(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(shared_store, "_store", MemoryStore(clock=lambda: clock[0]))
    kept = this_process(monkeypatch, ttl_s=60)
    at = paste(run_page(PAGE), GOOD)
    kept.clock = lambda: 1e12  # an hour later, unused: this process let it go
    at.slider(key="gain").set_value(1.5).run()
    assert_no_exception(at)
    assert not [w for w in at.warning if "gone" in w.value]
    np.testing.assert_array_equal(stage_x(at), GOOD_X)  # the link's id brought it back from the shared store
    kept.clock = lambda: 2e12
    clock[0] = Limits().blob_ttl_s + 1  # a day later: the shared store let it go too
    at.slider(key="gain").set_value(1.25).run()
    assert_no_exception(at)
    (gone,) = [w.value for w in at.warning if "gone" in w.value]
    assert "It is not there" in gone and "generated data" in gone
    assert not [i for i in at.info if "Showing" in i.value]
    np.testing.assert_allclose(stage_x(at), generated(), rtol=1e-6, atol=1e-6)


def test_a_full_store_refuses_with_when_to_try_again_and_keeps_what_was_shown(monkeypatch):
    kept = this_process(monkeypatch, budget=3 * 4 * 8)
    theirs = own_store.put(kept, "another visitor", np.array(GOOD_X))  # AppTest's sessions share one id
    other = paste(run_page(PAGE), "1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 1")  # as large: over an equal share, as theirs is
    (refused,) = upload_warnings(other) or [w.value for w in other.warning if "again in" in w.value]
    assert "equal share" in refused and "again in" in refused and "generated data" in refused
    np.testing.assert_array_equal(kept.get(theirs), GOOD_X)


def test_a_large_file_is_read_under_the_heavy_gate_and_read_on_the_next_run_once_admitted(monkeypatch):
    import contextlib

    import streamlit as st

    from server import heavy

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
    assert at.query_params[own_data.OWN_PARAM] == own_store.content_id(rows) and len(asked) == 2
    busy[0] = True
    at.file_uploader(key="upload").set_value(("small.csv", GOOD.encode(), "text/csv")).run()
    assert at.query_params[own_data.OWN_PARAM] == own_store.content_id(np.array(GOOD_X)) and len(asked) == 2


def test_sessions_showing_the_same_matrix_share_one_cached_computation(monkeypatch):
    from lnviz.labs import explorer
    from ui.kit import page as kit

    cache = budget.Budget(64 * 2**20)
    monkeypatch.setattr(kit, "results", lambda: cache)
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


def own_of(at) -> str:
    """The ``own`` value of the link in the page's share box."""
    return parse_qs(urlparse(share_link(at)).query)[own_data.OWN_PARAM][0]


def share_caption(at) -> str:
    return share_box(at).caption[0].value


def test_a_link_carries_pasted_data_to_a_new_session_on_another_server_exactly(monkeypatch):
    x = np.random.default_rng(3).standard_normal((5, 7)) * 1e3  # full float64 digits
    at = paste(run_page(PAGE), "\n".join(",".join(map(repr, row)) for row in x.tolist()))
    np.testing.assert_array_equal(stage_x(at), x)
    key = own_of(at)
    assert key == own_store.content_id(x) and own_share.valid_id(key)
    assert "anyone who has the link" in share_caption(at)
    # Another replica: its own process memory (own_data.store()), the same shared store.
    this_process(monkeypatch)
    other = run_page(PAGE, {"seed": "3", own_data.OWN_PARAM: key})
    assert_no_exception(other)
    torch.testing.assert_close(torch.from_numpy(stage_x(other)), torch.from_numpy(x), rtol=0, atol=0)
    said = " ".join(c.value for c in other.sidebar.caption)
    assert "shared by a link" in said and "Shared data, kept on the server until about" in said, said
    assert not [w for w in other.warning if "gone" in w.value]
    assert other.query_params[own_data.OWN_PARAM] == key


def test_an_unknown_id_is_said_plainly_and_never_echoed():
    key = "0123456789abcdef0123456789abcdef"
    at = run_page(PAGE, {own_data.OWN_PARAM: key})
    assert_no_exception(at)
    (gone,) = [w.value for w in at.warning if "gone" in w.value]
    assert "It is not there" in gone and "generated data" in gone and key not in gone
    np.testing.assert_allclose(stage_x(at), generated(), rtol=1e-6, atol=1e-6)
    at.button(key="own_gone_ok").click().run()
    assert own_data.OWN_PARAM not in at.query_params and not [w for w in at.warning if "gone" in w.value]


def test_bytes_under_an_id_that_are_not_its_grid_are_not_shown(fresh_shared_store):
    stored = own_share.to_bytes(np.ones((2, 3)))
    key = "0123456789abcdef0123456789abcdef"  # not the hash of those bytes' grid
    fresh_shared_store.put_blob(f"own:{key}", stored)
    at = run_page(PAGE, {own_data.OWN_PARAM: key})
    assert_no_exception(at)
    assert [w for w in at.warning if "gone" in w.value]
    np.testing.assert_allclose(stage_x(at), generated(), rtol=1e-6, atol=1e-6)


def test_over_the_quota_the_data_is_shown_and_the_link_says_it_cant_carry_it(monkeypatch):
    quota = own_share.new_quota(amount=64)  # less than the 3 x 4 grid's bytes
    monkeypatch.setattr(own_data, "share_quota", lambda: quota)
    at = paste(run_page(PAGE), GOOD)
    assert_no_exception(at)
    np.testing.assert_array_equal(stage_x(at), GOOD_X)
    assert at.query_params[own_data.OWN_PARAM] == "3x4"  # the shape only, as before: opened, it says "gone"
    caption = share_caption(at)
    assert "Not in the link" in caption and "an hour" in caption, caption


class DownStore(MemoryStore):
    """A shared store that can't be reached."""

    def put_blob(self, *args):
        raise StoreDown("connection refused")

    def renew_blob(self, *args):
        raise StoreDown("connection refused")

    def get_blob(self, *args):
        raise StoreDown("connection refused")


def test_a_store_that_cant_be_reached_is_said_plainly_and_never_raises(monkeypatch):
    monkeypatch.setattr(shared_store, "_store", DownStore())
    at = paste(run_page(PAGE), GOOD)
    assert_no_exception(at)
    np.testing.assert_array_equal(stage_x(at), GOOD_X)  # shown in this session all the same
    assert at.query_params[own_data.OWN_PARAM] == "3x4"
    assert "can't be reached" in share_caption(at)
    other = run_page(PAGE, {own_data.OWN_PARAM: own_store.content_id(np.array(GOOD_X))})
    assert_no_exception(other)
    (down,) = [w.value for w in other.warning if "can't be reached" in w.value]
    assert "generated data" in down
    np.testing.assert_allclose(stage_x(other), generated(), rtol=1e-6, atol=1e-6)


class FillingStore(MemoryStore):
    """A Redis that fills: once ``full``, at its maxmemory (noeviction), every write is refused and what it holds
    is still read."""

    full = False

    def put_blob(self, *args):
        if self.full:
            raise StoreFull("OOM command not allowed")
        return super().put_blob(*args)

    def renew_blob(self, *args):
        if self.full:
            raise StoreFull("OOM command not allowed")
        return super().renew_blob(*args)


def test_a_full_store_is_said_as_full_and_a_grid_it_holds_still_opens_by_its_link(monkeypatch):
    x = np.array([[5.0, 1, 2], [3, 9, 4]])
    store = FillingStore()
    own_share.share(store, own_share.new_quota(), x, "its opener")
    store.full = True
    monkeypatch.setattr(shared_store, "_store", store)
    at = paste(run_page(PAGE), GOOD)
    assert_no_exception(at)
    np.testing.assert_array_equal(stage_x(at), GOOD_X)
    caption = share_caption(at)
    assert "Not in the link" in caption and "as much data for links" in caption, caption  # not "can't be reached"
    other = run_page(PAGE, {own_data.OWN_PARAM: own_store.content_id(x)})  # its renewal refused: shown all the same
    assert_no_exception(other)
    np.testing.assert_array_equal(stage_x(other), x)


def test_the_same_matrix_pasted_again_stays_shown(monkeypatch):
    monkeypatch.setattr(shared_store, "_store", DownStore())  # no link to bring it back: this process alone
    at = paste(paste(run_page(PAGE), GOOD), GOOD)  # held again under the same id: not let go as the old one
    assert_no_exception(at)
    assert not [w for w in at.warning if "gone" in w.value]
    np.testing.assert_array_equal(stage_x(at), GOOD_X)


def test_without_redis_a_link_opens_the_data_from_this_process_and_no_second_copy_is_kept(
    monkeypatch, fresh_shared_store
):
    monkeypatch.setattr(shared_store, "shared", lambda: False)
    kept = this_process(monkeypatch, ttl_s=60)
    at = paste(run_page(PAGE), GOOD)
    key = own_of(at)
    assert key == own_store.content_id(np.array(GOOD_X))
    assert "this server process's memory" in share_caption(at)
    assert own_share.load(fresh_shared_store, key) is None  # kept once, within the bytes store() is bounded by
    other = run_page(PAGE, {own_data.OWN_PARAM: key})  # another browser, the same process
    assert_no_exception(other)
    np.testing.assert_array_equal(stage_x(other), GOOD_X)
    kept.clock = lambda: 1e12  # unused for an hour: let go
    late = run_page(PAGE, {own_data.OWN_PARAM: key})
    (gone,) = [w.value for w in late.warning if "gone" in w.value]
    assert "It is not there" in gone and "this server process's memory" in gone
    np.testing.assert_allclose(stage_x(late), generated(), rtol=1e-6, atol=1e-6)


def test_the_words_say_where_the_data_is_kept_and_never_echo_a_link_s_marker():
    shared, alone = (own_text.Keeping(s, Limits().blob_ttl_s, own_store.TTL_S) for s in (True, False))
    assert "every replica" in own_text.where(shared) and "process's memory" in own_text.where(alone)
    assert "(3 × 4)" in own_text.marker_gone("3x4", 120, 3600) and "120 s" in own_text.marker_gone("3x4", 120, 3600)
    hostile = "12x34](http://evil)"
    assert "evil" not in own_text.marker_gone(hostile, 120, 3600) and "×" not in own_text.marker_gone(
        hostile, 120, 3600
    )
    assert "can't hold now: Try again in 5 s." in own_text.link_gone("Try again in 5 s.", alone)
    assert "64 MiB of data an hour" in own_text.kept("quota", 0.0, shared, 64 * 2**20)
