"""Link-level modes for teaching: lecture mode, hidden controls and lesson presets.

These parameters are read from the URL directly (they are not widgets), as the door left them (:mod:`server.door`):
``present=1`` turns on lecture mode, ``hide=eps,seed`` hides controls, and
``preset=small-batch`` applies a lesson from :mod:`lnviz.views.lessons`. Streamlit's
own ``embed=true`` (an iframe) also drops the sidebar here.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from lnviz.views import lessons

if TYPE_CHECKING:
    import plotly.graph_objects as go

_TRUE = ("1", "true", "yes", "on")
NOTES = "_lnviz_url_notes"  # notes about what a link's values became; the page kit shows them

ASSETS = Path(__file__).resolve().parents[2] / "assets"


def add_note(note: str) -> None:
    """Queue a note about the link (Markdown; quote what the link said with :func:`lnviz.text.quote`), once: a
    new visitor's first run keeps its notes for the run that follows (:meth:`ui.kit.page.Page.finish`), which reads
    the same link and would queue the same note again."""
    notes = st.session_state.setdefault(NOTES, [])
    if note not in notes:
        notes.append(note)


def presenting() -> bool:
    """True when the link asks for lecture mode (``present=1``)."""
    return st.query_params.get("present", "").strip().lower() in _TRUE


def embedded() -> bool:
    """True in Streamlit's embed mode (``embed=true``): the app in an iframe, on a slide.

    Streamlit keeps ``embed`` out of ``st.query_params``; ``st.context`` says it.
    """
    return bool(st.context.is_embedded)


def hidden() -> frozenset[str]:
    """The control keys a link hides (``hide=eps,seed``)."""
    raw = ",".join(st.query_params.get_all("hide"))
    return frozenset(k.strip() for k in raw.split(",") if k.strip())


@functools.cache
def _css(name: str) -> str:
    return (ASSETS / name).read_text()


def apply_style() -> None:
    """lnviz's stylesheet (assets/style.css); in lecture mode also large type and a full-width page (lecture.css);
    in embed mode no sidebar (embed.css)."""
    css = _css("style.css") + (_css("lecture.css") if presenting() else "") + (_css("embed.css") if embedded() else "")
    st.html(f"<style>{css}</style>")


def fit_numbers(fig: go.Figure, key: str) -> go.Figure:
    """``fig`` as the chart keyed ``key`` draws it in this mode (lecture mode's larger text), its heatmaps' cell
    numbers hidden where the chart is drawn too narrow for them (:func:`lnviz.figures.plot.numbers_fit`): never
    over a cell's edge, and still in the hover. A container query on the chart's own width, which the browser knows
    and the server doesn't."""
    from lnviz.figures import plot  # built by lnviz, the figure's kit is loaded already

    fig = plot.lecture(fig) if presenting() else fig  # the page kit's chart leaves a scaled figure as it is
    if least := plot.numbers_fit(fig):
        box = f".st-key-{key}"
        st.html(
            f"<style>{box} {{ container-type: inline-size; }}"
            f" @container (width < {least}px) {{ {box} .heatmap-label {{ display: none; }} }}</style>"
        )
    return fig


def lesson(page: str) -> lessons.Lesson | None:
    """The lesson a link names with ``preset=``, if it is one of ``page``'s."""
    found = lessons.find(st.query_params.get("preset"))
    return found if found is not None and found.page == page else None


def apply_lesson(page: str) -> None:
    """Before the controls: give each of ``page``'s controls the lesson's value, unless the link sets it.

    Done once per page visit (when the control has no state yet), so the
    user's later changes stick. An unknown preset name, or a lesson of
    another page, has left the link at the door, with a note (:mod:`server.door`).
    """
    found = lesson(page)
    if found is None:
        return
    for key, value in found.values.items():
        if key not in st.query_params and key not in st.session_state:
            st.session_state[key] = value


def show_lesson(page: str) -> None:
    """The lesson's title and story, above the page's content."""
    found = lesson(page)
    if found is not None:
        st.info(f"**{found.title}.** {found.story}", icon=":material/school:")
