"""Two real app servers sharing one real Redis: data pasted on one is opened by its link on the other, and again
after that server restarts, with the same numbers to the last bit."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from test_server_limits import arun, paste

from harness import redis
from harness.apptest import stage_data, stage_grid
from harness.server import AppProcess, free_port, start_app, stop, wait_app
from harness.wsclient import Session
from lnviz.serving.own_store import content_id

pytestmark = pytest.mark.replicas


async def paste_for_link(base: str, text: str) -> str:
    """A session on ``base`` pastes ``text``: the query of the link in its share box."""
    session = Session(base)
    try:
        await session.open()
        await session.rerun(paste(session, text))
        links = [c.value for c in session.tree.get("code") if "own=" in c.value]
        assert len(links) == 1, session.texts("warning")
        return urlparse(links[0]).query
    finally:
        await session.close()


async def opened_stage(base: str, query: str) -> tuple[np.ndarray, str]:
    """A new session opens the link ``query`` on ``base``: the x its stage shows, and the sidebar's captions."""
    session = Session(base, query=query)
    try:
        await session.open()
        data = stage_data(session.tree)
        return stage_grid(data, data["x"]), " ".join(session.texts("caption"))
    finally:
        await session.close()


def test_a_link_opens_the_same_data_on_another_replica_and_after_it_restarts(tmp_path: Path):
    x = np.random.default_rng(21).standard_normal((6, 9)) * 1e-3  # every float64 digit in the text
    text = "\n".join(",".join(map(repr, row)) for row in x.tolist())
    with redis.running() as store:
        env = {"LNVIZ_REDIS_URL": store.url}
        port_b = free_port()
        apps: list[AppProcess] = [start_app(free_port(), tmp_path / "a.log", env=env)]
        try:
            apps.append(start_app(port_b, tmp_path / "b.log", env=env))
            for app in apps:
                wait_app(app)
            query = arun(paste_for_link(apps[0].url, text))
            assert parse_qs(query)["own"] == [content_id(x)]

            on_b, said = arun(opened_stage(apps[1].url, query))
            assert on_b.tobytes() == x.tobytes(), (on_b, apps[1].log_tail())
            assert "Shared data, kept on the server until about" in said and "every replica" in said, said

            stop(apps[1].proc)  # replica B restarts: nothing of the data is left in its memory
            apps[1] = start_app(port_b, tmp_path / "b2.log", env=env)
            wait_app(apps[1])
            again, _ = arun(opened_stage(apps[1].url, query))
            assert again.tobytes() == x.tobytes(), apps[1].log_tail()
        finally:
            for app in apps:
                stop(app.proc)
