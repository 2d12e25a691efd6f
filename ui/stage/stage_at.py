"""``GET {base}/api/stage/{token}?gain=…&bias=…``: the stage's numbers at another γ and β, from torch, with no
script run (issue 32).

A press on the sidebar's γ reruns the page's fragment: the request, the server's run and the browser's render
of every element come before the stage shows torch's numbers, several times a bare slider's whole press. The
stage needs less: the statistics and x̂ of the grid it shows do not depend on γ and β. So the explorer *offers*
each stage it draws (:func:`offer`): what its payload was made from, but γ and β. The stage watches the
sidebar's γ and β and, as one moves, asks this route for torch's payload at the new values
(``lnviz/web/stage/view/follow.js``). The route recomputes y = γ x̂ + β with the same functions the page uses
(:func:`lnviz.labs.explorer.with_affine`, :func:`lnviz.labs.explorer.stage.payload`), so what the stage draws
is what the rerun that follows sends it again.

What an offer holds: a weak reference to the page's cached result (:meth:`ui.kit.page.Page.compute`, ``shared``),
so that an offer never keeps a grid the cache has let go (the route then answers 404, and the stage waits for
the rerun), and the window's place, the locked controls and what :func:`ui.stage.stage.draw` adds. One offer per
session, under a random token only that session's page was given, replaced by the session's next. The process
keeps :data:`OFFERS` of them; past that, the oldest offer of the client (browser) holding the most goes, so one
client's offers never push out another's: with the latest 4,096 kept, one client making 10 offers a second pushed
every other stage's out in about 7 minutes (issue 47, attack 8). A client's answers cost it their compute time,
from a budget that refills (``Limits.stage_ms_per_client`` per ``stage_window_s``, a sliding window counter of
``limits``): past it, 429 with when to try again, and its stage waits for the rerun. Four tokens of one client
asked back to back took 26 s of CPU in 40 s; now it gets a quarter of a core (an answer at 1024 × 1024 takes about
25 ms here: a drag there is answered for about 4 s, then its stage follows the reruns; a small grid's never waits).
A token's requests are answered one at a time (a second while one is computing: 429), and those its stage
asks ahead of a move (``ahead=1``: while one of the sliders has the keyboard's focus, the values one step either
side) one at a time beside them; on a worker thread, never on the event loop, in a fair turn of the page kit's
computations (:func:`ui.kit.page.results`'s misses lane, charged to the session's client; no turn within
:data:`TURN_WAIT_S`: 429, and the stage waits for the rerun); each costs less than the
rerun it stands in front of. Each offer has a serial number, which the stage's answers carry: the stage keeps
what it fetched ahead only while the number is the same.
Nothing here imports torch until a request needs it: the server lists its routes at start.
"""

from __future__ import annotations

import functools
import itertools
import math
import secrets
import threading
import time
import weakref
from collections import Counter, OrderedDict
from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import streamlit as st
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lnviz.views import state
from server import base_path, heavy, limits
from server.limits import Busy
from server.quota import Quota
from server.slots import MISSES
from ui.kit import page

if TYPE_CHECKING:
    from lnviz.labs.explorer import Exploration

STAGE_AT_PATH = "/api/stage/{token}"
OFFERS = 4096  # the offers a process keeps, the latest sessions' (each a few hundred bytes and a weak reference)
MOVED = (state.GAIN, state.BIAS)  # what the route recomputes at: the sidebar's plain sliders
_TOKEN = "_lnviz_stage_at"  # this session's token, in its session state
_NONE = {"Cache-Control": "no-store"}
_SERIAL = itertools.count(1)  # each offer's number: the stage drops what it fetched ahead when it changes
TURN_WAIT_S = 2.0  # how long a request waits for its turn among the page kit's computations; then 429
AHEAD = "ahead"  # a request's flag: asked ahead of a move (follow.js), one at a time beside the one asked for a move


@dataclass(frozen=True)
class Offer:
    """How a stage's payload was made, but γ and β: :func:`lnviz.labs.explorer.with_affine` of ``base`` with the
    per-feature ``g``, ``b``, then its ``rows`` × ``cols`` window; ``extra``: what :func:`ui.stage.stage.draw` adds."""

    base: weakref.ref[Exploration]  # before γ and β: the page's cached result
    g: Any  # (H,) tensor or None
    b: Any  # (H,) tensor or None
    values: tuple[float, float]  # the gain and bias the page drew it at
    rows: slice
    cols: slice
    locked: frozenset[str]
    extra: Mapping[str, Any]
    client: Hashable = None  # whom its computations are charged to, in the fair turns of the page's misses

    def at(self, gain: float, bias: float) -> dict[str, Any] | None:
        """The stage's data at ``gain`` and ``bias``, or None if the cache has let the result go."""
        from lnviz.labs import explorer  # torch: not when the server starts and lists its routes
        from lnviz.labs.explorer import stage

        base = self.base()
        if base is None:
            return None
        result = explorer.with_affine(base, gain, bias, self.g, self.b)
        return {**stage.payload(result, self.rows, self.cols, locked=self.locked), **self.extra}


class Offers:
    """A process's offers by token, at most ``size``: past them, the oldest of the client holding the most goes;
    which tokens are computing."""

    def __init__(self, size: int = OFFERS) -> None:
        self._size = size
        self._offers: OrderedDict[str, Offer] = OrderedDict()  # least recently offered first
        self._held: Counter[Hashable] = Counter()  # offers per client
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    def put(self, token: str, offer: Offer) -> None:
        with self._lock:
            old = self._offers.pop(token, None)
            if old is not None:
                self._held[old.client] -= 1
            self._offers[token] = offer
            self._held[offer.client] += 1
            while len(self._offers) > self._size:
                most = max(self._held.values())
                oldest = next(t for t, o in self._offers.items() if self._held[o.client] == most)
                self._held[self._offers.pop(oldest).client] -= 1
            self._held = +self._held  # clients that hold none are forgotten

    def get(self, token: str) -> Offer | None:
        with self._lock:
            return self._offers.get(token)

    def begin(self, token: str) -> bool:
        """Whether ``token`` may compute now (none of its requests is); if so, it is marked until :meth:`end`."""
        with self._lock:
            if token in self._busy:
                return False
            self._busy.add(token)
            return True

    def end(self, token: str) -> None:
        with self._lock:
            self._busy.discard(token)


@functools.cache
def offers() -> Offers:
    """This process's offers."""
    return Offers()


@functools.cache
def spent() -> Quota:
    """The milliseconds of compute each client's answers took lately, in this process (its offers are here)."""
    lim = limits.current()
    return Quota("stage-ms", lim.stage_ms_per_client, max(1, math.ceil(lim.stage_window_s)), exact=False)


def offer(
    base: Exploration,
    g: Any,
    b: Any,
    values: tuple[float, float],
    rows: slice,
    cols: slice,
    locked: Collection[str],
) -> Any:
    """Offer the stage this run draws, made from ``base`` (see :class:`Offer`), under this session's token: a
    function of ``extra`` (what :func:`ui.stage.stage.draw` adds to the payload) that returns what the stage's data
    carries (``stage_at``: the route's address and the keys it takes)."""

    def put(extra: Mapping[str, Any]) -> dict[str, Any]:
        token = st.session_state.get(_TOKEN)
        if not isinstance(token, str):
            token = st.session_state[_TOKEN] = secrets.token_urlsafe(18)
        frozen = frozenset(locked)
        keys = [p.key for p in MOVED if p.key not in frozen]
        offered = {"url": base_path.prefix() + STAGE_AT_PATH.format(token=token), "keys": keys}
        offered["serial"] = next(_SERIAL)
        # The route's answers carry the offer too, so that the stage goes on following the sliders after one.
        client = heavy.client() if limits.current().enabled else None  # as the page kit charges a miss
        extra = {**extra, "stage_at": offered}
        offers().put(token, Offer(weakref.ref(base), g, b, values, rows, cols, frozen, extra, client))
        return offered

    return put


def values_of(found: Offer, query: Mapping[str, str]) -> tuple[float, float] | None:
    """The gain and bias a request asks for, each on its control's steps (:meth:`lnviz.views.param.Param.snap`);
    a locked one stays as drawn; None for a value that is not a finite number."""
    out = []
    for param, drawn in zip(MOVED, found.values, strict=True):
        raw = query.get(param.key)
        if raw is None or param.key in found.locked:
            out.append(drawn)
            continue
        try:
            number = float(raw)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        out.append(float(param.snap(number)))
    return out[0], out[1]


def numbers(token: str, query: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """The route's answer for ``token``: (HTTP status, JSON body); a 429's body may say ``retry_after_s``."""
    found = offers().get(token)
    if found is None:
        return 404, {}
    values = values_of(found, query)
    if values is None:
        return 400, {}
    budget = str(found.client) if found.client is not None else None  # None: the limits are off
    if budget is not None and not spent().test(budget):
        return 429, {"retry_after_s": spent().retry_after_s(budget)}
    slot = f"{token}#{AHEAD}" if query.get(AHEAD) else token
    if not offers().begin(slot):
        return 429, {}
    try:
        misses = page.results().misses  # the page kit's fair turns for computations (server.slots)
        turn = None if misses is None else misses.begin(found.client, "stage", wait_s=TURN_WAIT_S, lane=MISSES)
        if isinstance(turn, Busy):
            return 429, {}
        start = time.perf_counter()
        try:
            data = found.at(*values)
        finally:
            if turn is not None:
                misses.end(turn)
            if budget is not None:  # what it took, whatever the budget has left: the next waits for it
                spent().charge(budget, max(1, round((time.perf_counter() - start) * 1000)))
    finally:
        offers().end(slot)
    return (404, {}) if data is None else (200, data)


async def stage_at(request: Request) -> Response:
    token = str(request.path_params["token"])[:64]
    status, body = await anyio.to_thread.run_sync(numbers, token, dict(request.query_params))
    headers = {**_NONE, "Retry-After": str(body.pop("retry_after_s"))} if "retry_after_s" in body else _NONE
    return JSONResponse(body, status_code=status, headers=headers)
