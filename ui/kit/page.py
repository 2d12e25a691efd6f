"""The page kit: what every page needs, written once.

A page is a short script: declare the page and its controls, compute, place figures::

    page = Page.start(intro="...")  # this file's entry in the page registry: its title and controls
    with page.sidebar("Batch"):
        batch = page.control("batch")  # drawn as the state table says: a slider, at the link's value
    sample = page.index("sample", size=batch)
    result = page.compute(coupling.couple, batch, sample)
    page.chart(coupling.fig_delta(result), key="delta_chart", alt="...")
    page.finish()

What the kit owns, for every page:

- the page's entry in the registry (:mod:`lnviz.views.pages`), found by its file:
  its title and its controls;
- links: the door (:mod:`server.door`) has read the link, so a page's widgets start from values already
  checked; :meth:`Page.start` shows the door's notes and puts today's version, ``v``, in the address bar, so
  a reload or a copied URL reopens the same view;
- lecture mode and lessons: :meth:`Page.start` applies a lesson's values and
  shows its story; :meth:`Page.say` is prose a lecturer speaks instead;
  :meth:`Page.chart` scales every chart's text for a projector;
- under every chart, its data as a table (:meth:`Page.data_table`), for the
  keyboard and screen readers; left out in lecture mode;
- the notes about what a link's values became, under the title;
- :meth:`Page.compute`: a cached call whose ``ValueError`` becomes a plain
  warning that ends the page there;
- :meth:`Page.index`: an index into something whose size another control sets
  (a cell beyond the grid, a step beyond the steps) is kept inside it;
- :meth:`Page.device` and :meth:`Page.on_device`: the device picker, and one way
  of saying that the computation fell back to the CPU;
- :meth:`Page.finish`: the share link, built from the controls this run drew.

This module imports no torch, pandas or plotly: on a fresh server a page draws
its title and introduction while those load (seconds on a small CPU). The
methods that need them import them.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

import streamlit as st

from lnviz.figures import theme
from lnviz.views import links, param
from lnviz.views.pages import BY_NAME, PageEntry
from lnviz.views.param import Param
from server import budget, door, heap, heavy, limits
from ui.kit import boot, mode

if TYPE_CHECKING:
    import plotly.graph_objects as go
    import torch

    from lnviz.views.param import Controls

T = TypeVar("T")

# Link parameters that are not controls but belong to the view. Every share link also carries
# the state table's version, v (see lnviz.views.links.upgrade).
LINK_EXTRAS = ("preset", "hide", "present", "embed", "own")
# The share box: its label, and its key, which holds whether it is open: not part of a view, so not a control
# of the state table.
SHARE_LABEL = "Share this view"
SHARE_BOX = "share_box"


@functools.cache
def results() -> budget.Budget:
    """Every page's results, bounded by bytes (:mod:`server.budget`); a miss's garbage freed (``heap``)."""
    lim = limits.current()  # built on a page's first computation, not when this module is imported
    return budget.Budget(lim.cache_bytes, concurrent=lim.misses_at_once, after_miss=heap.Trimmer().maybe)


class Page:
    """One page's run: its controls, the ones drawn so far, and the places the kit writes to."""

    def __init__(self, entry: PageEntry) -> None:
        self.entry = entry
        self.name = entry.name
        self.drawn: dict[str, Param] = {}
        self._share = st.sidebar.container()  # filled by finish(), once every control is drawn
        self._notes = st.container()  # under the title: what the link's values became

    @classmethod
    def start(cls, intro: str | None = None, file: str | None = None, title: bool = True) -> Page:
        """The page's title, its lesson (if the link names one) and its introduction.

        The page is the registry's entry for the calling script (``pages/NAME.py``), or for ``file``.
        Before anything is drawn, the door's notes about the link are taken (:func:`server.door.take_notes`), a
        lesson's values given, and the address bar gets today's version. ``title=False``: a page whose own
        heading says where it is (the walkthrough's step, in lecture mode) leaves the title's height to its
        picture.
        """
        caller = inspect.currentframe().f_back  # not inspect.stack(), which reads source: ~20 ms a run
        entry = _entry(file or caller.f_code.co_filename)
        for note in door.take_notes():
            mode.add_note(note)
        mode.apply_lesson(entry.name)
        if st.query_params.get("v") != str(links.LINK_VERSION):
            st.query_params["v"] = str(links.LINK_VERSION)
        if title:
            st.title(entry.heading)
        mode.show_lesson(entry.name)
        page = cls(entry)
        if intro:
            page.say(intro)
        return page

    @property
    def table(self) -> Controls:
        """This page's controls, from the page registry."""
        return self.entry.controls

    @property
    def hidden(self) -> frozenset[str]:
        """The controls the link hides (``hide=eps,seed``): their values come from the link alone."""
        return mode.hidden()

    @property
    def presenting(self) -> bool:
        """Lecture mode (``present=1``): large type, fewer words, everything a step needs on one screen."""
        return mode.presenting()

    @staticmethod
    def prose_color(norm: str) -> str:
        """The Streamlit colour name of ``norm``'s role, for prose: ``f":{page.prose_color('LN')}[LN]"``."""
        return theme.PROSE.get(norm, "gray")

    # Controls --------------------------------------------------------------------------------------------------
    def control(self, key: str, where: Any = None, **kwargs: Any) -> Any:
        """Draw this page's control ``key`` as the table says (in ``where``, default the sidebar); its value."""
        from ui.kit import controls

        if not self.drawn:
            boot.before_controls()
        p = self.table[key]
        self.drawn[key] = p
        return controls.control(p, where, **kwargs)

    def controls(self, *keys: str, where: Any = None) -> tuple[Any, ...]:
        """Several controls at once, in order; their values."""
        return tuple(self.control(key, where=where) for key in keys)

    def index(self, key: str, size: int, where: Any = None, **kwargs: Any) -> int:
        """An index control kept inside ``range(size)``: a row of B rows, a step of N steps.

        A value held from a larger size is lowered before the widget is drawn. A link's value past the end of
        a grid its B or H set has been lowered at the door (:func:`lnviz.views.links.canonical`); one past a
        size the door can't know (your own data's, a lesson's beside a link's index) is used as the last, with
        a note.
        """
        held = st.session_state.get(key)
        if isinstance(held, int) and held > size - 1:
            st.session_state[key] = size - 1
        value = self.control(key, where, **kwargs)
        if value > size - 1:
            self.note(f"{self.table[key].label}: {value} is past the last of {size}; using {size - 1}.")
            value = size - 1
        return value

    @contextmanager
    def sidebar(self, header: str) -> Iterator[None]:
        """A section of the sidebar with a header; controls drawn inside go there."""
        with st.sidebar:
            st.header(header)
            yield

    def device(self, where: Any = None) -> torch.device:
        """The Device control, and the device it picks here (the CPU when the chosen one is missing)."""
        from lnviz.maths import device as devices

        preference = self.control("device", where, persist_state="session")
        picked = devices.pick(preference)
        missing = devices.unavailable(preference, picked)
        if missing:
            self.device_notice(missing)
        return picked

    def on_device(self, fn: Callable[[torch.device], T], dev: torch.device) -> tuple[T, torch.device]:
        """``fn(dev)``, or ``fn`` on the CPU if the GPU ran out of memory (and the page says so)."""
        from lnviz.maths import device as devices

        result, used, fallback = devices.with_fallback(fn, dev)
        if fallback:
            self.device_notice(fallback)
        return result, used

    def device_notice(self, text: str) -> None:
        """How every page says that torch runs somewhere other than where the link asked."""
        st.info(text, icon=":material/memory:")

    # Computing and showing -------------------------------------------------------------------------------------
    def compute(self, fn: Callable[..., T], *args: Any, shared: bool = False, gate: str = "", **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, cached across sessions by the arguments (the view's values, never the session).

        ``fn`` must depend on its arguments alone (it is cached by its file and
        name), and they must be plain values. With ``shared``,
        every session gets the same object (large tensors, never mutated), which a page must not keep
        past its run (a callback defined in its script keeps that run's globals). Fails as :meth:`run` does.

        The cache is the process's :func:`results`, bounded by bytes, not
        entries (``LNVIZ_CACHE_MIB``, default 256): a 1024 × 1024 result is
        about 32 MiB, a small one kilobytes. It is not an ``st.cache_*``, so a
        visitor's "clear caches" cannot empty it for everyone. A miss waits
        for one of a few slots in fair turns, charged to this run's client
        (:func:`server.heavy.client`): a classmate's one miss goes before the
        queue of a visitor flooding new seeds. ``LNVIZ_LIMITS=off`` makes it
        first come, first served. With ``gate`` (the action's name), a miss
        also takes a slot of the heavy-work gate (:func:`server.heavy.heavy`); a
        refusal is said and the page ends there.
        """
        # By file and name, not the function object: a page's functions are new on each run.
        code = fn.__code__
        key = (
            code.co_filename,
            fn.__qualname__,
            *map(_plain, args),
            *((k, _plain(v)) for k, v in sorted(kwargs.items())),
        )
        who = heavy.client() if limits.current().enabled else None
        cache = results()
        if gate and key not in cache:
            with heavy.heavy(gate) as ticket:
                if ticket is None:  # "Busy, try again in N s" is on the page
                    self.finish()
                    st.stop()
                value = self.run(cache.get_or_compute, key, lambda: fn(*args, **kwargs), who)
        else:
            value = self.run(cache.get_or_compute, key, lambda: fn(*args, **kwargs), who)
        return value if shared else copy.deepcopy(value)

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``; a ``ValueError`` (these settings can't be computed) becomes a plain
        warning, and the page ends there with its link."""
        try:
            return fn(*args, **kwargs)
        except ValueError as err:
            st.warning(f"These settings can't be computed: {err}", icon=":material/warning:")
            self.finish()  # the link and its notes, for the controls drawn so far
            st.stop()

    def metrics(self, values: dict[str, str], helps: dict[str, str] | None = None) -> None:
        """Headline numbers side by side: ``{label: value}``, with an optional help per label."""
        for column, (label, value) in zip(st.columns(len(values)), values.items(), strict=True):
            column.metric(label, value, help=(helps or {}).get(label))

    def say(self, markdown: str, where: Any = None) -> None:
        """Explanatory prose: shown normally, left out in lecture mode (the lecturer talks)."""
        if not mode.presenting():
            (where or st).markdown(markdown)

    def chart(self, fig: go.Figure, key: str | None, alt: str, where: Any = None, **kwargs: Any) -> Any:
        """Place a figure with its text alternative and, under it, its data as a table (see :meth:`data_table`).

        In lecture mode its text grows with the page's, and the table is left
        out. A chart without a key (a live redraw, replaced a moment later)
        has no table either.
        """
        presenting = mode.presenting()
        if presenting:
            from lnviz.figures import plot

            fig = plot.lecture(fig)
        kwargs.setdefault("width", "stretch")
        # No toolbar: on a touch screen it is always shown, over the titles and legends.
        kwargs.setdefault("config", {"displayModeBar": False})
        if presenting or key is None:
            return (where or st).plotly_chart(fig, key=key, alt=alt, **kwargs)
        box = (where or st).container()  # one element, so that the table stays under the chart even in an st.empty
        shown = box.plotly_chart(fig, key=key, alt=alt, **kwargs)
        self.data_table(fig, key, alt, box)
        return shown

    @staticmethod
    def data_table(fig: go.Figure, key: str, alt: str, where: Any = None) -> None:
        """A closed expander whose table (keyboard-navigable) lists every value of ``fig``; its key is
        ``key + "_data"``.

        The table is built only while the expander is open: closed, a slider
        move costs nothing more.
        """
        box = (where or st).expander(
            "Data of this chart", icon=":material/table:", key=f"{key}_data", on_change="rerun"
        )
        if not box.open:
            return
        from lnviz.figures import reader

        with box:
            st.caption(alt)
            st.dataframe(reader.table(fig), hide_index=True, width="stretch")

    def note(self, text: str) -> None:
        """Queue a note about the link, shown under the title by :meth:`finish`."""
        mode.add_note(text)

    # The end ---------------------------------------------------------------------------------------------------
    def finish(self, caveat: str | None = None, rerun_follows: bool = False) -> str:
        """Show the notes about the link, and the share box with the link to this view. Returns the link.

        The box draws its link only while it is open (opening it reruns the page): ``st.code`` makes the browser
        load and run the code highlighter (1.5 MB; 0.3-0.5 s of CPU in docs/benchmarks.md's renderer profile) at
        every visit of a page that shows no other code, a phone in a class included, for a box most leave closed.
        ``rerun_follows``: this run is a new visitor's first, whose stage's report reruns the page at once
        (:func:`ui.stage.stage.waiting`); the notes are kept for that run, not shown once and gone a moment later.
        """
        notes = st.session_state.get(mode.NOTES) if rerun_follows else st.session_state.pop(mode.NOTES, None)
        if notes:
            self._notes.info(
                "Some values in the link were adjusted:\n\n" + "\n".join(f"- {n}" for n in notes),
                icon=":material/link:",
            )
        link = self.link()
        box = self._share.expander(SHARE_LABEL, icon=":material/share:", key=SHARE_BOX, on_change="rerun")
        if box.open:
            with box:
                st.caption(caveat or "This link opens exactly this view, with the same numbers, on any machine.")
                st.code(link, language=None, wrap_lines=True)
        return link

    def link(self) -> str:
        """The link that reproduces this view: every drawn control that is not at its default, and the link extras."""
        from ui.kit import controls

        values = {key: controls.current(p) for key, p in self.drawn.items()}
        query = param.to_query(self.drawn.values(), values)
        for extra in LINK_EXTRAS:
            if extra in st.query_params:
                query[extra] = st.query_params[extra]
        query["v"] = str(links.LINK_VERSION)
        base = st.context.url or ""
        return base + ("?" + urlencode(query) if query else "")


def _plain(value: Any) -> Any:
    """``value`` as part of a cache key: itself when hashable, else its ``repr`` (a list of plain values).

    A tensor or array would hash by identity, which a later object may reuse: refused.
    """
    if hasattr(value, "nbytes"):
        raise TypeError("Page.compute takes plain values (numbers, text, tuples), not tensors or arrays")
    try:
        hash(value)
    except TypeError:
        return ("unhashable", repr(value))
    return value


def _entry(file: str) -> PageEntry:
    """The registry's entry for the page script ``file``; a script the registry lacks is a plain error."""
    name = Path(file).stem
    if name not in BY_NAME or Path(file).parent.name != "pages":
        raise LookupError(
            f"{file} is not a page of lnviz.views.pages.PAGES ({', '.join(BY_NAME)}); add its entry there"
        )
    return BY_NAME[name]
