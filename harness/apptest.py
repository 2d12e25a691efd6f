"""A page of the app run through the real router with Streamlit's AppTest, and what it drew.

Shared by tests/ and benchmarks/, which import this and not each other.
"""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
from streamlit.components.v2.bidi_component.main import _make_trigger_id  # the id the frontend computes too
from streamlit.testing.v1 import AppTest

from harness.server import ROOT
from server import door

# AppTest's names for the kinds of widget a page's controls are drawn as (ui.kit.controls).
WIDGETS = ("slider", "number_input", "select_slider", "selectbox", "radio", "segmented_control", "toggle", "text_area")

DEFAULT_PAGE = "pages/explorer.py"

# Long enough for torch's first import on a loaded 2-core machine.
APP_TIMEOUT = 120
_component_manager = None


def _components():
    """The installed components (the stage's manifest in lnviz's pyproject), found once per process.

    AppTest scans every installed distribution's metadata for component
    manifests on each new AppTest (0.2–0.3 s here): the link fuzz alone makes
    thousands. What it finds does not change within a test process.
    """
    global _component_manager
    if _component_manager is None:
        from streamlit.components.v2.component_manager import BidiComponentManager

        manager = BidiComponentManager()
        manager.discover_and_register_components(start_file_watching=False)
        _component_manager = manager
    return _component_manager


def run_page(page: str, query: dict[str, str | list[str]] | None = None, timeout: float = APP_TIMEOUT) -> AppTest:
    """Run the router, ``router.py``, switched to ``page`` (a path such as "pages/explorer.py").

    ``query`` is the link's query string, as the browser would send it (a list: the key repeated). It goes
    through the door first (:func:`server.door.through`), as a browser's request does: the page's run gets the
    canonical link and the door's notes. Without ``v`` it is read as a link of today's version, as the app
    reads one (see :func:`lnviz.views.links.version`).
    """
    query = dict(query or {})
    pairs = [(k, v) for k, values in query.items() for v in (values if isinstance(values, list) else [values])]
    redirected = door.through(Path(page).stem, pairs)
    if redirected is not None:
        query = {}
        for key, value in redirected:
            query.setdefault(key, []).append(value)
        query = {key: values[0] if len(values) == 1 else values for key, values in query.items()}
    at = AppTest.from_file(str(ROOT / "router.py"), default_timeout=timeout)
    at._bidi_component_manager = _components()
    for key, value in query.items():
        at.query_params[key] = value
    if page != DEFAULT_PAGE:
        # AppTest runs the router's own widgets only when no page switch precedes the
        # first run, so the default page is reached without one.
        at.switch_page(page)
    at.run()
    return at


def decode_typed_arrays(node):
    """Plotly's compact binary arrays ({"dtype", "bdata", "shape"}) back to numpy, everywhere in ``node``."""
    if isinstance(node, dict):
        if "bdata" in node and "dtype" in node:
            arr = np.frombuffer(base64.b64decode(node["bdata"]), dtype=np.dtype(node["dtype"]))
            shape = node.get("shape")
            if shape:
                arr = arr.reshape([int(n) for n in str(shape).split(",")])
            return arr
        return {k: decode_typed_arrays(v) for k, v in node.items()}
    if isinstance(node, list):
        return [decode_typed_arrays(v) for v in node]
    return node


def figures(at: AppTest) -> list[go.Figure]:
    """Every plotly chart on the page, decoded from its element spec."""
    return [go.Figure(decode_typed_arrays(json.loads(el.proto.spec))) for el in at.get("plotly_chart")]


def share_box(at: AppTest) -> Any:
    """The page's share box (the page kit puts it at the top of the sidebar), opened as a visitor opens it, which
    reruns the page, if it was closed: its link and caption are drawn only while it is open."""
    from ui.kit.page import SHARE_BOX, SHARE_LABEL

    (box,) = [e for e in at.sidebar.expander if e.label == SHARE_LABEL]
    if not box.code:
        at.session_state[SHARE_BOX] = True
        at.run()
        (box,) = [e for e in at.sidebar.expander if e.label == SHARE_LABEL]
    return box


def share_link(at: AppTest) -> str:
    """The link in the page's share box (:func:`share_box`)."""
    return share_box(at).code[0].value


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def stage_data(at: AppTest) -> dict:
    """The data the explorer's stage was drawn with (:func:`lnviz.labs.explorer.stage.payload`): torch's numbers for its window."""
    (stage,) = [c for c in at.get("bidi_component") if c.proto.component_name == "lnviz.stage"]
    return json.loads(stage.proto.json)


def stage_grid(data: dict, values: list) -> np.ndarray:
    """One of the stage data's flat lists of numbers (``data["x"]``, ``data["ln"]["y"]``, ...) as its window of
    the grid, (R, C) float64; non-finite values come as strings, which ``float`` reads."""
    return np.asarray([float(v) for v in values], dtype=np.float64).reshape(data["R"], data["C"])


def stage_x(at: AppTest) -> np.ndarray:
    """x as the stage shows it: its window of the grid (the whole grid when it fits), float64."""
    data = stage_data(at)
    return stage_grid(data, data["x"])


# The class poll's element (ui.poll.live): what the page gave it, and a vote as the element sends one.
_votes = itertools.count(1)


def class_element(phone) -> dict:
    """What the page gave the phone's element (ui.poll.phone) at its last run."""
    (found,) = [e for e in phone.get("bidi_component") if e.proto.component_name == "lnviz.class"]
    return json.loads(found.proto.json)


def class_vote(phone, answer: str, index: int | None = None, round: int | None = None) -> None:
    """What the element does at a tap or Send: its trigger value ``vote``, for the round it drew (or another)."""
    (found,) = [e for e in phone.get("bidi_component") if e.proto.component_name == "lnviz.class"]
    drawn = json.loads(found.proto.json)["room"]
    vote = {"index": drawn["index"] if index is None else index, "round": drawn["round"] if round is None else round}
    states = phone._tree.get_widget_states()
    state = states.widgets.add()
    state.id = _make_trigger_id(found.proto.id, "events")
    state.json_trigger_value = json.dumps([{"event": "vote", "value": {**vote, "answer": answer, "n": next(_votes)}}])
    phone._run(states)
    assert_no_exception(phone)
