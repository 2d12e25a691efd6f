"""The reveal route (server/class_reveal.py): torch's answer and reasons for the question whose answer a room shows now,
and nothing before the presenter shows it (a round's reveal included), nor of another room."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from lnviz.labs.classroom import questions, render
from server import class_reveal, poll
from server import process_store as shared_store
from server.limits import StoreDown
from server.store import MemoryStore


@pytest.fixture
def served(monkeypatch):
    store = MemoryStore()
    monkeypatch.setattr(shared_store, "_store", store)
    app = Starlette(routes=[Route(class_reveal.REVEAL_PATH, class_reveal.class_reveal)])
    return store, TestClient(app)


def test_only_a_room_showing_its_answer_gives_torch_s_answer_and_reasons(served):
    store, client = served
    room, secret = poll.open_room(store, ("bn-one-sample", "ln-cell"))
    url = class_reveal.REVEAL_PATH.format(code=room.code)
    assert client.get(url).status_code == 404 and client.get(url).json() == {}  # asking: nothing
    store.act(room.code, secret, "reveal", room.version)
    assert client.get(url).status_code == 404 and client.get(url).json() == {}  # round 1 revealed: nothing yet
    store.act(room.code, secret, "answer", room.version + 1)
    got = client.get(url)
    assert got.status_code == 200 and got.headers["cache-control"] == "no-store"
    question = questions.by_id("bn-one-sample")
    assert got.json() == {
        "question": question.id,
        "index": 0,
        "answer": question.answer,
        "answer_text": None,
        "why": render.spans(question.why),
    }
    store.act(room.code, secret, "next", room.version + 2)
    assert client.get(url).status_code == 404  # the next question is being asked
    assert client.get(class_reveal.REVEAL_PATH.format(code="ZZZZZZZZ")).status_code == 404
    assert client.get(class_reveal.REVEAL_PATH.format(code="<b>")).status_code == 404


def test_a_store_that_is_down_is_503_not_an_error(served, monkeypatch):
    store, client = served

    def down(code):
        raise StoreDown("refused")

    monkeypatch.setattr(store, "room", down)
    assert client.get(class_reveal.REVEAL_PATH.format(code="ABCDEFGH")).status_code == 503
