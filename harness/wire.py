"""A tab's WebSocket frames as Chromium's network layer saw them, through the DevTools protocol.

Parsed with Streamlit's protobuf classes. Two things the page itself cannot
tell: when each frame went out and came in at the network layer, which splits
a press at the ``script_finished`` message; and an independent count of the
messages, bytes and finished runs, which must agree with the page's own
(:data:`harness.settle.COUNTED_JS`), or the run reports an error.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

OK_STATUSES = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)


@dataclass(frozen=True)
class Frame:
    """One WebSocket frame, as Chromium's network layer saw it."""

    at: float  # seconds, the network's monotonic clock
    sent: bool
    kind: str | None  # the BackMsg or ForwardMsg type
    status: int | None  # a script_finished's status
    size: int  # payload bytes


@dataclass
class Wire:
    """Every WebSocket frame of one tab through the DevTools protocol, parsed with Streamlit's protobuf classes.

    Two things the page itself cannot tell: when each frame went out and came
    in at the network layer, which splits a press at the ``script_finished``
    message (rerun request out to ``script_finished`` in: the server's time,
    plus whatever time a busy page held the network layer back, since Chromium
    reads a WebSocket only as fast as the page consumes it); and an
    independent count of the messages, bytes and finished runs, which must
    agree with the page's own.
    """

    frames: list[Frame] = field(default_factory=list)

    def attach(self, cdp: Any) -> None:
        """Listen on a DevTools session (sync or async) whose Network domain is, or will be, enabled."""
        cdp.on("Network.webSocketFrameSent", lambda event: self._frame(event, sent=True))
        cdp.on("Network.webSocketFrameReceived", lambda event: self._frame(event, sent=False))

    def _frame(self, event: dict[str, Any], sent: bool) -> None:
        response = event["response"]
        if response.get("opcode") != 2:  # Streamlit's messages are binary frames
            return
        payload = base64.b64decode(response["payloadData"])
        msg = (BackMsg if sent else ForwardMsg).FromString(payload)
        kind = msg.WhichOneof("type")
        status = msg.script_finished if kind == "script_finished" else None
        self.frames.append(Frame(event["timestamp"], sent, kind, status, len(payload)))

    def mark(self) -> int:
        return len(self.frames)

    def server_ms(self, since: int) -> float | None:
        """From the last rerun request after frame ``since`` to the successful ``script_finished`` that answers it."""
        frames = self.frames[since:]
        asks = [f.at for f in frames if f.sent and f.kind == "rerun_script"]
        done = [
            f.at
            for f in frames
            if not f.sent and f.kind == "script_finished" and f.status in OK_STATUSES and asks and f.at >= asks[-1]
        ]
        return (done[0] - asks[-1]) * 1000 if done else None

    def received(self) -> dict[str, int]:
        frames = [f for f in self.frames if not f.sent and f.kind != "heartbeat_ack"]
        return {
            "messages": len(frames),
            "bytes": sum(f.size for f in frames),
            "finished": sum(f.kind == "script_finished" for f in frames),
        }
