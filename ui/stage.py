"""The stage: x with LayerNorm's and BatchNorm's outputs on one screen, scrubbable in the browser.

A Streamlit custom component (``st.components.v2``: no iframe, state both ways).
Its JavaScript and CSS are assets/stage/stage.js and stage.css, read once here
and sent by the app with the element; nothing comes from a CDN. Python sends
:func:`lnviz.stage.payload`, torch's numbers. While γ, β or ε is dragged the
browser previews the outputs from torch's x̂, μ and σ², with no round trip; on
release it reports the three values, and :func:`draw` puts them into the
widgets ``gain``, ``bias`` and ``eps`` (bound to the URL) in a callback, before
the rerun, so torch recomputes and a link reproduces the view. A click on a
cell does the same for ``sample`` and ``feature``. A control the link hides
(``hide=eps``) has no range on the stage either.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from lnviz import state
from ui import mode

# Its element carries the class st-key-live_stage; "stage" is already a URL parameter.
KEY = "live_stage"
ASSETS = Path(__file__).resolve().parents[1] / "assets" / "stage"

_component = st.components.v2.component(
    "lnviz_stage",
    js=(ASSETS / "stage.js").read_text(encoding="utf-8"),
    css=(ASSETS / "stage.css").read_text(encoding="utf-8"),
)


@dataclass(frozen=True)
class Scrub:
    """γ, β or ε released on the stage: the three controls' values then, valid for the widgets."""

    gain: float
    bias: float
    eps: float


@dataclass(frozen=True)
class Pick:
    """A cell of x chosen on the stage (clicked, or Enter on a focused cell)."""

    row: int
    col: int


def _scrub(value: Any) -> Scrub | None:
    """The browser's report as widget values (clamped, rounded to the step), or None if it is not one."""
    if not isinstance(value, dict):
        return None
    return Scrub(
        gain=round(state.GAIN.coerce(value.get("gain")), 2),
        bias=round(state.BIAS.coerce(value.get("bias")), 2),
        eps=float(state.EPS.coerce(value.get("eps"))),
    )


def _pick(value: Any, batch: int, features: int) -> Pick | None:
    if not isinstance(value, dict):
        return None
    row, col = state.SAMPLE.coerce(value.get("row")), state.FEATURE.coerce(value.get("col"))
    return Pick(row=min(row, batch - 1), col=min(col, features - 1))


def _set(values: dict[str, Any]) -> None:
    """Give the widgets new values, only those that changed: a value set from code goes into the URL."""
    for key, value in values.items():
        if st.session_state.get(key) != value:
            st.session_state[key] = value


def _on_scrub() -> None:
    scrub = _scrub(st.session_state[KEY].get("scrub"))
    if scrub is not None:
        _set({state.GAIN.key: scrub.gain, state.BIAS.key: scrub.bias, state.EPS.key: scrub.eps})


def _on_pick(batch: int, features: int) -> None:
    pick = _pick(st.session_state[KEY].get("pick"), batch, features)
    if pick is not None:
        _set({state.SAMPLE.key: pick.row, state.FEATURE.key: pick.col})


def draw(payload: dict[str, Any], cell: tuple[int, int]) -> Scrub | Pick | None:
    """Draw the stage for ``payload`` (:func:`lnviz.stage.payload`) with ``cell`` (row, col) chosen.

    Returns what the user did that started this run: a :class:`Scrub` (its
    values are already in the widgets ``gain``, ``bias``, ``eps``), a
    :class:`Pick` (already in ``sample`` and ``feature``), or None.
    """
    batch, features = payload["B"], payload["H"]
    locked = [key for key in (state.GAIN.key, state.BIAS.key, state.EPS.key) if key in mode.hidden()]
    data = {**payload, "cell": [int(cell[0]), int(cell[1])], "present": mode.presenting(), "locked": locked}
    result = _component(
        key=KEY,
        data=data,
        on_scrub_change=_on_scrub,
        on_pick_change=lambda: _on_pick(batch, features),
    )
    return _scrub(result.get("scrub")) or _pick(result.get("pick"), batch, features)
