"""Link-level modes for teaching: lecture mode, hidden controls and lesson presets.

These parameters are read from the URL directly (they are not widgets):
``present=1`` turns on lecture mode, ``hide=eps,seed`` hides controls, and
``preset=small-batch`` applies a lesson from :mod:`lnviz.lessons`.
"""

from __future__ import annotations

import streamlit as st

from lnviz import lessons
from lnviz.param import quote

_TRUE = ("1", "true", "yes", "on")
NOTES = "_lnviz_url_notes"  # notes about what a link's values became; the page kit shows them

LECTURE_CSS = """
<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 20px; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.25rem; }
h1 { font-size: 3.2rem !important; }
h2, h3 { font-size: 2.1rem !important; }
[data-testid="stMainBlockContainer"] { max-width: 100%; padding-left: 2rem; padding-right: 2rem; }
.katex { font-size: 1.45em !important; }
</style>
"""


def add_note(note: str) -> None:
    """Queue a note about the link (Markdown; quote what the link said with :func:`lnviz.param.quote`)."""
    st.session_state.setdefault(NOTES, []).append(note)


def presenting() -> bool:
    """True when the link asks for lecture mode (``present=1``)."""
    return st.query_params.get("present", "").strip().lower() in _TRUE


def hidden() -> frozenset[str]:
    """The control keys a link hides (``hide=eps,seed``)."""
    raw = ",".join(st.query_params.get_all("hide"))
    return frozenset(k.strip() for k in raw.split(",") if k.strip())


def apply_lecture_style() -> None:
    """Large fonts and a full-width page in lecture mode; nothing otherwise."""
    if presenting():
        st.html(LECTURE_CSS)


def lesson() -> lessons.Lesson | None:
    """The lesson a link names with ``preset=``, if any."""
    return lessons.find(st.query_params.get("preset"))


def apply_lesson() -> None:
    """Before the controls: give each control the lesson's value, unless the link sets it.

    Done once per page visit (when the control has no state yet), so the
    user's later changes stick. An unknown preset name is noted.
    """
    name = st.query_params.get("preset")
    if not name:
        return
    found = lessons.find(name)
    if found is None:
        add_note(f"preset: {quote(name)} is not a lesson ({', '.join(lessons.LESSONS)}); ignored.")
        return
    for key, value in found.values.items():
        if key not in st.query_params and key not in st.session_state:
            st.session_state[key] = value


def show_lesson() -> None:
    """The lesson's title and story, above the page's content."""
    found = lesson()
    if found is not None:
        st.info(f"**{found.title}.** {found.story}", icon=":material/school:")
