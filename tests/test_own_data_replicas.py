"""Two real app servers sharing one real Redis (tests/conftest.py's ``replicas``): data pasted on one is opened by
its link on the other, and again after that server restarts, with the same numbers to the last bit."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from test_server_limits import paste

from harness import aio
from harness.apptest import stage_data, stage_grid
from harness.replicas import Replicas
from harness.wsclient import Session
from server.own_store import content_id
from ui.kit.page import SHARE_LABEL

pytestmark = pytest.mark.replicas


async def paste_for_link(base: str, text: str) -> str:
    """A session on ``base`` pastes ``text``: the query of the link in its share box."""
    session = Session(base)
    try:
        await session.open()
        await session.rerun(paste(session, text))
        await session.rerun([session.expander(SHARE_LABEL)])  # its link is drawn once it is open
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


def test_a_link_opens_the_same_data_on_another_replica_and_after_it_restarts(replicas: Replicas):
    x = np.random.default_rng(21).standard_normal((6, 9)) * 1e-3  # every float64 digit in the text
    text = "\n".join(",".join(map(repr, row)) for row in x.tolist())
    a, b = replicas.apps
    query = aio.run(paste_for_link(a.url, text))
    assert parse_qs(query)["own"] == [content_id(x)]

    on_b, said = aio.run(opened_stage(b.url, query))
    assert on_b.tobytes() == x.tobytes(), (on_b, b.log_tail())
    assert "Shared data, kept on the server until about" in said and "every replica" in said, said

    b = replicas.restart(1)  # replica B restarts: nothing of the data is left in its memory
    again, _ = aio.run(opened_stage(b.url, query))
    assert again.tobytes() == x.tobytes(), b.log_tail()
