"""ui.classroom.Watcher: one read of each watched room per look, and a rerun for exactly the phones that drew an
earlier version of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lnviz.serving import poll
from lnviz.serving.store import MemoryStore, StoreDown
from ui import classroom
from ui import store as shared_store

ROOT = Path(__file__).resolve().parents[1]


def test_a_look_reruns_the_sessions_of_a_room_that_moved_on_and_only_those(monkeypatch):
    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    reran: list[str] = []
    monkeypatch.setattr(classroom.streamlit_private, "rerun_session", lambda s: reran.append(s) or True)
    reads: list[str] = []
    real_room = store.room
    monkeypatch.setattr(store, "room", lambda code: reads.append(code) or real_room(code))
    moving, secret = poll.open_room(store, ("q1", "q2"))
    still, _ = poll.open_room(store, ("q1",))
    watcher = classroom.Watcher()
    watcher._thread = object()  # looks are made by hand here, not by the thread
    for session in ("a", "b", "c"):
        watcher.add(moving.code, session, moving.version)
    watcher.add(still.code, "d", still.version)

    watcher.check()
    assert reran == [] and sorted(reads) == sorted([moving.code, still.code])  # one read per room, not per phone
    store.act(moving.code, secret, "reveal", moving.version)
    watcher.check()
    assert sorted(reran) == ["a", "b", "c"]
    assert watcher.watched() == 1  # a, b and c watch again when their rerun draws the new version
    watcher.check()
    assert sorted(reran) == ["a", "b", "c"]  # not twice


def test_a_room_that_expired_reruns_its_phones_so_they_say_so_and_gone_sessions_are_let_go(monkeypatch):
    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    reran: list[str] = []
    monkeypatch.setattr(classroom.streamlit_private, "rerun_session", lambda s: reran.append(s) or True)
    watcher = classroom.Watcher()
    watcher._thread = object()
    watcher.add("GONEROOM", "a", 3)
    watcher.check()
    assert reran == ["a"]
    monkeypatch.setattr(classroom.streamlit_private, "session_alive", lambda s: s == "kept")
    room, _ = poll.open_room(store, ("q1",))
    watcher.add(room.code, "kept", room.version)
    watcher.add(room.code, "closed-tab", room.version)
    watcher.sweep()
    assert watcher.watched() == 1


def test_a_store_that_is_down_reruns_nobody(monkeypatch):
    class Down(MemoryStore):
        def room(self, code):
            raise StoreDown("refused")

    monkeypatch.setattr(shared_store, "_store", Down())
    reran: list[str] = []
    monkeypatch.setattr(classroom.streamlit_private, "rerun_session", lambda s: reran.append(s) or True)
    watcher = classroom.Watcher()
    watcher._thread = object()
    watcher.add("ABCDEFGH", "a", 0)
    watcher.check()
    assert reran == [] and watcher.watched() == 1


def test_importing_the_poll_registers_no_component_and_makes_no_watcher():
    """ui/ does no work at import: the cookie setter is registered, and the watcher made, where they are first used."""
    code = (
        "import gc, streamlit as st\n"
        "names = []\n"
        "real = st.components.v2.component\n"
        "st.components.v2.component = lambda name, **kw: names.append(name) or real(name, **kw)\n"
        "from ui import classroom\n"
        "print(names.count('lnviz_cookies'), sum(isinstance(o, classroom.Watcher) for o in gc.get_objects()))\n"
        "classroom._cookies(), classroom._cookies()\n"
        "print(names.count('lnviz_cookies'), classroom.watcher() is classroom.watcher())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "0", "1", "True"]  # and once used, one of each per process
