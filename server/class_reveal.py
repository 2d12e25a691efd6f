"""``GET {base}/api/class/{code}/reveal``: torch's answer and reasons for the question whose answer a room shows now.

A phone's element (``lnviz/web/class/``) is given the room's questions without
torch's answers or reasons, so that no phone holds them before the presenter
shows them (a round's reveal does not: peer instruction may ask the class again);
when the presenter does, it asks this route once, with no script run. Only a
room showing its answer answers (else 404, with nothing in it); what it gives is
what the results show anyway: the question's id, torch's answer and why, and
never a vote. The bank is imported on the first request, not when the server
starts.
"""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from server import poll
from server.limits import StoreDown
from server.process_store import store

REVEAL_PATH = "/api/class/{code}/reveal"
_NONE = {"Cache-Control": "no-store"}


def revealed(code: str) -> dict | None:
    """The current question's answer and reasons if room ``code`` shows its answer, else None."""
    from lnviz.labs.classroom import questions, render

    room = store().room(code)
    if room is None or room.closed or room.phase != "answer" or room.question is None:
        return None
    entry = render.entry(questions.by_id(room.question), reveal=True)
    found = {k: entry[k] for k in ("answer", "answer_text", "why")}
    return {"question": room.question, "index": room.index, **found}


async def class_reveal(request: Request) -> Response:
    code = poll.valid_code(request.path_params["code"])
    try:
        found = await anyio.to_thread.run_sync(revealed, code) if code else None
    except StoreDown:
        return JSONResponse({}, status_code=503, headers=_NONE)
    if found is None:
        return JSONResponse({}, status_code=404, headers=_NONE)
    return JSONResponse(found, headers=_NONE)
