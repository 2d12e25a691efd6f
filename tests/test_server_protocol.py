"""One real server (the session's default one, tests/conftest.py's ``app_process``), spoken to as a hostile client would: the parts of Streamlit's protocol a viewer never needs
cost the others nothing.

- A ``clear_cache`` message neither resets the gate for heavy work nor throws away anyone's cached computations.
- A stage message costs the server under 50 ms of CPU, whatever its size up to the WebSocket's limit, and
  anything in it is coerced to a valid value.

Clients speak Streamlit's protocol over the WebSocket (harness/wsclient.py), as a browser's frontend does.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import time
import urllib.parse
import urllib.request

from streamlit.components.v2.bidi_component.main import _make_trigger_id  # the id the frontend computes too
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from harness import aio
from harness.server import ROOT
from harness.wsclient import Session

STAGE_MESSAGE_CPU_S = 0.050  # the target: what one stage message may cost the server


def cpu_s(pid: int) -> float:
    """The CPU seconds (user and system) process ``pid`` has used."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alert_bodies(fwd: ForwardMsg) -> list[str]:
    element = fwd.delta.new_element if fwd.WhichOneof("type") == "delta" else None
    return [element.alert.body] if element is not None and element.WhichOneof("type") == "alert" else []


def progressing(fwd: ForwardMsg) -> bool:
    element = fwd.delta.new_element if fwd.WhichOneof("type") == "delta" else None
    return element is not None and element.WhichOneof("type") == "progress"


async def press_run(session: Session) -> None:
    """Press the training page's Run without waiting for the run to end."""
    msg = BackMsg()
    msg.rerun_script.query_string = session.query
    msg.rerun_script.widget_states.widgets.append(session.widget("run", trigger_value=True))
    msg.rerun_script.page_script_hash = session.page_hash
    await session.ws.send(msg.SerializeToString())


async def until(session: Session, seen, timeout: float) -> list[ForwardMsg]:
    """Read ``session``'s messages until ``seen(msg)`` is true of one; all read (TimeoutError past ``timeout``)."""
    got: list[ForwardMsg] = []
    deadline = time.monotonic() + timeout
    while True:
        fwd = ForwardMsg.FromString(await asyncio.wait_for(session.ws.recv(), deadline - time.monotonic()))
        got.append(fwd)
        if seen(fwd):
            return got


async def clear_cache_during_a_race(base: str) -> tuple[list[str], bool]:
    """One session runs a long race; another sends clear_cache; a third presses Run.

    What the third is told first, and whether its race started at once.
    """
    long_race = "steps=3000&batch=256&depth=32"
    racer, clearer, second = (Session(base, query=long_race, page="training") for _ in range(3))
    for s in (racer, clearer, second):
        await s.open()
    try:
        await press_run(racer)
        await until(racer, progressing, 60)  # the race holds the gate
        msg = BackMsg()
        msg.clear_cache = True
        await clearer.ws.send(msg.SerializeToString())
        await asyncio.sleep(0.5)  # real time: the server handles the clearer's message before the next press
        await press_run(second)
        read = await until(second, lambda f: bool(alert_bodies(f)) or progressing(f), 60)
        told = [body for f in read for body in alert_bodies(f)]
        return told, any(progressing(f) for f in read)
    finally:
        stop = BackMsg()
        stop.stop_script = True  # the race would run on after its tab closed, on the server other tests share
        await racer.ws.send(stop.SerializeToString())
        for s in (racer, clearer, second):
            await s.close()


async def visit(base: str) -> None:
    """Open the explorer once and leave: its computations are cached."""
    session = Session(base)
    await session.open()
    await session.close()


def test_clear_cache_from_a_browser_resets_neither_the_gate_nor_the_caches(app_process):
    aio.run(visit(app_process.url))
    told, started = aio.run(clear_cache_during_a_race(app_process.url))
    assert not started and told and told[0].startswith("Waiting for a turn on this shared server"), told


def test_no_cache_of_the_app_is_one_a_clear_cache_could_empty():
    """The page kit's results, own data and the gates live in plain objects (server/budget.py, own_store.py,
    server/heavy.py), not in st.cache_*: even with the limits off, when Streamlit honours clear_cache, it empties
    nothing of lnviz's (tests/test_page_cache.py checks the results' cache against Streamlit's clear)."""
    code = [
        ROOT / "app.py",
        ROOT / "router.py",
        *(ROOT / "server").glob("*.py"),
        *(ROOT / "ui").rglob("*.py"),
        *(ROOT / "pages").glob("*.py"),
    ]
    for path in code:
        tree = ast.parse(path.read_text())
        used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not used & {"cache_data", "cache_resource"}, path


# One stage message


async def open_stage(base: str) -> tuple[Session, str]:
    """A session on the explorer, and the id of its stage's event list (the trigger aggregator)."""
    session = Session(base)
    await session.open()
    (stage,) = session.tree.get("bidi_component")
    return session, _make_trigger_id(stage.proto.id, "events")


def scrubs(n: int, **last: object) -> str:
    """A stage event list: ``n`` releases of γ, β and ε at their defaults, the last one with ``last`` in it."""
    value = {"gain": 1.0, "bias": 0.0, "eps": 1e-5}
    events = [{"event": "scrub", "value": value}] * (n - 1) + [{"event": "scrub", "value": {**value, **last}}]
    return json.dumps(events, separators=(",", ":"))  # as a browser writes it


def link(session: Session) -> dict[str, str]:
    """The page's link after the last run: the values set from code that differ from their defaults."""
    queries = [f.page_info_changed.query_string for f in session.run if f.WhichOneof("type") == "page_info_changed"]
    return dict(urllib.parse.parse_qsl(queries[-1])) if queries else {}


async def stage_costs(base: str, pid: int, texts: dict[str, str]) -> dict[str, float]:
    """The least server CPU (s) of three reruns with each event list, and the controls after the last."""
    session, events = await open_stage(base)
    try:
        costs = {}
        for name, text in texts.items():
            runs = []
            for _ in range(3):
                before = cpu_s(pid)
                await session.rerun([WidgetState(id=events, json_trigger_value=text)])
                runs.append(cpu_s(pid) - before)
            costs[name] = min(runs)
        return costs
    finally:
        await session.close()


def test_one_stage_message_costs_the_server_little_whatever_its_size(app_process):
    texts = {
        "one event": scrubs(1),
        "10,800 events (0.67 MB)": scrubs(10_800),
        "the most the server reads (4.9 MB)": scrubs(79_000),
    }
    sizes = [len(text) for text in texts.values()]
    assert 0.66e6 < sizes[1] < 0.68e6 and 4.8e6 < sizes[-1] < 4.99e6, sizes  # server.maxWidgetStateSize: 5 MB
    costs = aio.run(stage_costs(app_process.url, app_process.proc.pid, texts))
    print({name: f"{cost * 1e3:.0f} ms" for name, cost in costs.items()})
    for name, cost in costs.items():
        # Each rerun also redraws the page: the message itself may add at most the target.
        assert cost - costs["one event"] < STAGE_MESSAGE_CPU_S, (name, costs)


def errors(session: Session) -> int:
    return len(session.tree.get("exception"))


async def stage_sends(base: str, texts: list[str]) -> list[tuple[dict[str, str], int]]:
    """Each event list in turn: γ, β and the sample in the link after it, and how many exceptions it drew."""
    session, events = await open_stage(base)
    try:
        out = []
        for text in texts:
            await session.rerun([WidgetState(id=events, json_trigger_value=text)])
            values = link(session)
            out.append(({k: values[k] for k in ("gain", "bias", "sample") if k in values}, errors(session)))
        return out
    finally:
        await session.close()


def test_a_stage_list_is_handled_once_its_last_values_count_and_any_value_is_coerced(app_process):
    huge = 10**400
    picks = json.dumps([{"event": "pick", "value": {"row": 3, "col": 2}}, {"event": "pick", "value": {"row": huge}}])
    outcomes = aio.run(
        stage_sends(
            app_process.url,
            [
                scrubs(100, gain=1.5),  # a list a browser could send: the last release counts
                scrubs(1, gain=huge, bias=-huge),  # numbers no float holds: the defaults
                picks,
                scrubs(1, gain=2.0, bias=0.5) + " " * 20_000,  # longer than a browser sends: ignored
            ],
        )
    )
    # The link leaves out what is at its default.
    assert outcomes == [({"gain": "1.5"}, 0), ({}, 0), ({}, 0), ({}, 0)], outcomes
