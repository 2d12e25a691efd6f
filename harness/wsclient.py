"""A Streamlit session spoken to over its WebSocket, as the frontend does, drawing nothing.

One :class:`Session` is one browser tab's session: :meth:`Session.open` sends
the first rerun, :meth:`Session.rerun` sends changed widget states (Streamlit
keeps the others from the session's previous run) and collects every
``ForwardMsg`` until ``script_finished``; :attr:`Session.tree` is the last
run's elements, as AppTest sees them. Used by tests/test_server_limits.py and
``make load``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.testing.v1.element_tree import ElementTree, parse_tree_from_messages


def proof_cookie(base: str, page: str = "") -> str:
    """``lnviz_proof=…`` as a new browser earns it at ``base``: the page's proof of work solved (in Python, as a
    script would: :func:`harness.proofs.earn`); "" if the server gives none."""
    from harness.proofs import earn

    token = earn(base)
    return f"lnviz_proof={token}" if token else ""


# A run counts as finished on these statuses; "finished early" is a run interrupted by a newer one.
FINISHED = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
TIMEOUT = 120.0


@dataclass
class Session:
    base: str  # http://127.0.0.1:PORT
    query: str = ""  # the link's query string
    page: str = ""  # the page's URL path ("training" for /training); "" is the default page
    headers: dict[str, str] = field(default_factory=dict)  # e.g. a Cookie, through a load balancer
    ws: Any = None
    session_id: str = ""
    page_hash: str = ""
    run: list[ForwardMsg] = field(default_factory=list)  # the last finished run's messages
    seen: dict[str, ForwardMsg] = field(default_factory=dict)  # by hash: the server may send a reference
    ids: dict[str, str] = field(default_factory=dict)  # widget key -> widget id
    fragments: dict[str, str] = field(default_factory=dict)  # widget id -> the fragment it was drawn in
    keeps_cookies: bool = True  # False: a script that discards them, and so is never a proved browser

    async def connect(self) -> None:
        if self.keeps_cookies and "lnviz_proof=" not in self.headers.get("Cookie", ""):
            # As a browser: the page's HTML first, whose proof cookie (server.proved) the WebSocket then sends
            proof = await asyncio.to_thread(proof_cookie, self.base, self.page)
            self.headers = {**self.headers, "Cookie": "; ".join(filter(None, [self.headers.get("Cookie"), proof]))}
        url = self.base.replace("http://", "ws://", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(
            url,
            subprotocols=["streamlit"],
            origin=self.base,
            max_size=None,
            proxy=None,
            additional_headers=self.headers or None,
            open_timeout=TIMEOUT,
            ping_interval=None,  # a browser never pings: the server does, and this answers its pings
        )

    async def open(self) -> float:
        """Connect and run the page for the link: the milliseconds from the request to ``script_finished``."""
        await self.connect()
        return await self.rerun([])

    async def rerun(self, widgets: Iterable[WidgetState], timeout: float = TIMEOUT) -> float:
        """Send a rerun with ``widgets`` changed; collect its messages; the milliseconds it took.

        As the frontend does, a change to widgets drawn in one ``st.fragment`` reruns that fragment only.
        """
        widgets = list(widgets)
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.widget_states.CopyFrom(WidgetStates(widgets=widgets))
        msg.rerun_script.page_script_hash = self.page_hash
        if not self.page_hash:
            msg.rerun_script.page_name = self.page
        scopes = {self.fragments.get(w.id) for w in widgets}
        if len(scopes) == 1 and None not in scopes:
            msg.rerun_script.fragment_id = scopes.pop()
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        run: list[ForwardMsg] = []
        while True:
            fwd = ForwardMsg.FromString(await asyncio.wait_for(self.ws.recv(), timeout))
            kind = fwd.WhichOneof("type")
            if fwd.hash:
                self.seen[fwd.hash] = fwd
            if kind == "ref_hash":
                fwd = self._dereference(fwd)
            elif kind == "new_session":
                run = []  # a run interrupted by the next starts over
                self.session_id = fwd.new_session.initialize.session_id or self.session_id
            elif kind == "navigation":
                self.page_hash = fwd.navigation.page_script_hash
            elif kind == "delta" and fwd.delta.fragment_id:
                self._note_fragment(fwd.delta)
            run.append(fwd)
            if kind == "script_finished" and fwd.script_finished in FINISHED:
                self.run = run
                self.ids.update({e.key: e.id for e in self._widgets() if e.key})
                return (time.perf_counter() - start) * 1e3

    def _note_fragment(self, delta: Any) -> None:
        """Remember which fragment a widget was drawn in."""
        element = delta.new_element
        which = element.WhichOneof("type") if delta.HasField("new_element") else None
        widget_id = getattr(getattr(element, which), "id", "") if which else ""
        if widget_id:
            self.fragments[widget_id] = delta.fragment_id

    def _dereference(self, ref: ForwardMsg) -> ForwardMsg:
        if ref.ref_hash not in self.seen:
            raise RuntimeError(f"the server referred to message {ref.ref_hash}, never sent to this session")
        msg = ForwardMsg()
        msg.CopyFrom(self.seen[ref.ref_hash])
        msg.metadata.CopyFrom(ref.metadata)
        return msg

    @property
    def tree(self) -> ElementTree:
        return parse_tree_from_messages(self.run)

    def _widgets(self) -> list[Any]:
        kinds = ("slider", "number_input", "text_area", "button", "selectbox", "toggle", "text_input")
        return [w for kind in kinds for w in self.tree.get(kind)]

    def texts(self, kind: str) -> list[str]:
        """The text of every element of ``kind`` ("warning", "error", "markdown", ...) in the last run."""
        return [e.value for e in self.tree.get(kind)]

    def widget(self, key: str, **value: Any) -> WidgetState:
        """A widget state for the widget with ``key``: ``widget("gain", double_array_value=...)`` and so on."""
        state = WidgetState(id=self.ids[key])
        for name, v in value.items():
            if name == "double_array_value":
                state.double_array_value.data.extend(v)
            else:
                setattr(state, name, v)
        return state

    def expander(self, label: str, open: bool = True) -> WidgetState:
        """The state of the expander labelled ``label`` once opened (``open``) or closed, as the frontend sends it
        for an expander that reruns the page when it is (the share box)."""
        (box,) = [e for e in self.tree.get("expander") if e.label == label]
        return WidgetState(id=box.proto.id, bool_value=open)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
