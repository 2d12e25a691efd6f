"""The class poll's element in the browser (``lnviz/web/class/``): a phone's screen, or the projector's count,
drawn from the room's stream (``GET {base}/api/class/{code}/events``) with no script run on the server.

A components-v2 element, as the stage (:mod:`ui.stage.stage`): no iframe, its
JavaScript and CSS served from the installed package (``[tool.streamlit.component]``
in pyproject.toml, ``lnviz.class``). The page mounts it at each of its runs with
what the stream does not carry: the room's questions (:func:`lnviz.labs.classroom.render.entry`),
this voter's stored answer and the page's words. What the element sends back
are trigger values: ``vote`` (the page's callback stores it, :func:`ui.poll.phone.vote`), ``check`` (an answer to the
concept check, :func:`ui.poll.concept_check.answer`)
and ``need`` (a page run is all it asks for: the reasons of a question computed
at its reveal, or the projector's room moved on in another tab).
"""

from __future__ import annotations

import functools
import os
from typing import Any

import streamlit as st

from server import base_path
from ui.poll import routes

# A test reads how many page runs the class's element was drawn in (tests/test_browser_phone.py): the path of a
# file each run appends a line to, when this variable names one. Unset, nothing is counted.
RUNS_FILE = "LNVIZ_TEST_CLASS_RUNS"


@functools.cache
def _component() -> Any:
    """The element's component, registered once per process, on the first run that draws it."""
    return st.components.v2.component("lnviz.class", js="index.js", css="class.css")


def stream_url(code: str) -> str:
    """The address of room ``code``'s stream on the app's own origin, under ``server.baseUrlPath`` (:mod:`ui.poll.routes`)."""
    return base_path.prefix() + routes.EVENTS_PATH.format(code=code)


def reveal_url(code: str) -> str:
    """Where the element asks for torch's answer and reasons at room ``code``'s reveal (:mod:`server.class_reveal`)."""
    from server.class_reveal import REVEAL_PATH

    return base_path.prefix() + REVEAL_PATH.format(code=code)


def count_run(mode: str) -> None:
    """Under a test that set :data:`RUNS_FILE`: one line, ``mode``, for this page run."""
    path = os.environ.get(RUNS_FILE)
    if path:
        with open(path, "a", encoding="utf-8") as runs:
            runs.write(mode + "\n")


def _nothing() -> None:
    """``need``'s callback: the page run that follows a trigger is what the element asked for."""


def element(key: str, data: dict[str, Any], on_vote: Any = None, on_check: Any = None) -> None:
    """Mount the element with ``data`` (its ``mode``: "phone" or "count"); ``on_vote`` takes a phone's vote,
    ``on_check`` its answer to the concept check (:func:`ui.poll.concept_check.answer`)."""
    callbacks = {"on_need_change": _nothing}
    if on_vote is not None:
        callbacks["on_vote_change"] = on_vote
    if on_check is not None:
        callbacks["on_check_change"] = on_check
    _component()(key=key, data=data, **callbacks)
