"""The explorer's details: the chosen cell's formulas, the input and outputs as heatmaps (a click on x picks a
cell, as on the stage), the grid as tables, the chosen row against the chosen column, and the downloads; and what
they are drawn from.

Each view is ``view(page, shown)``; x is (B, H), samples by features.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
import torch

import ui.kit.downloads
from lnviz.labs import explorer
from lnviz.labs.explorer import Exploration, explain, export, figures, text
from ui.kit.controls import Normalization
from ui.kit.page import Page
from ui.labs.own_data import OwnData
from ui.stage import stage as live


@dataclass(frozen=True)
class Inputs:
    """What the explorer computes from: generated data (``dist``, B, H, seed) or the user's own (``own``, whose
    x sets B and H), the seed of the per-feature γ and β, how x and they are drawn (``draw``), and the device."""

    dist: str | None  # None with your own data
    batch: int
    features: int
    seed: int
    own: OwnData | None
    device: torch.device
    draw: str = "stable"


@dataclass(frozen=True)
class Shown:
    """One run below the input: the inputs, torch's result with γ and β, the chosen cell, and the window of the
    grid that the heatmaps and tables show around it. ``output`` is y or x_hat where the view draws outputs."""

    inputs: Inputs
    result: Exploration
    norm: Normalization
    cell: tuple[int, int]
    output: str | None
    rows: slice
    cols: slice


def numbers(page: Page, shown: Shown) -> None:
    """The same grid as tables: x, and each norm's output."""
    result, output = shown.result, shown.output
    st.subheader("The numbers")
    bn = None if result.bn is None else getattr(result.bn, output)
    tables = {"x": result.x, "LN " + output: getattr(result.ln, output), "BN " + output: bn}
    for values, tab in zip(tables.values(), st.tabs(list(tables)), strict=True):
        with tab:
            if values is None:
                st.info(explorer.BN_SINGLE_SAMPLE)
            else:
                st.dataframe(explorer.table(values, shown.rows, shown.cols), width="stretch")


def distributions(page: Page, shown: Shown) -> None:
    """The chosen cell's row (what LN pools) against its column (what BN pools), before and after each norm."""
    (i, j), result = shown.cell, shown.result
    st.subheader(f"Row {i} against column {j}, before and after")
    prose, alt = text.distributions(i, j, shown.inputs.batch, shown.inputs.features, result.bn is not None)
    page.say(prose)
    page.chart(figures.fig_distributions(explorer.distributions(result, shown.cell)), key="hist_chart", alt=alt)


def _pytorch(line: str) -> None:
    """A line of PyTorch as inline code, to read and select. Not ``st.code``: its highlighter cost this machine's
    headless Chromium 0.6 s of its main thread and about 1 s of CPU in all on a first view of the explorer, for two
    one-line snippets (docs/benchmarks.md, "The explorer's lines of PyTorch")."""
    st.markdown(f"`{line}`")


def cell(page: Page, shown: Shown) -> None:
    """The chosen cell, step by step: each norm's formula with torch's numbers, and the line of PyTorch.

    The formulas (KaTeX) wait until the browser has drawn the stage (:func:`ui.stage.stage.waiting`): a new
    visitor's browser would load and run KaTeX and its fonts first. Each line of PyTorch comes with its formula."""
    (i, j), result, eps = shown.cell, shown.result, shown.norm.eps
    batch, features = shown.inputs.batch, shown.inputs.features
    later = live.waiting()
    st.subheader(f"Cell (sample {i}, feature {j}), step by step")
    ln_col, bn_col = st.columns(2)
    with ln_col:
        st.markdown(f":blue[**LayerNorm**]: statistics of row {i}, over its {features} features")
        if not later:
            st.latex(explain.latex(result.ln, i, j, "LN"))
            _pytorch(explain.pytorch_line("LN", i, j, features, eps))
    with bn_col:
        st.markdown(f":orange[**BatchNorm**]: statistics of column {j}, over the {batch} sample{'s' * (batch != 1)}")
        if result.bn is None:
            st.info(explorer.BN_SINGLE_SAMPLE)
            return
        if not later:
            st.latex(explain.latex(result.bn, i, j, "BN"))
            _pytorch(explain.pytorch_line("BN", i, j, features, eps))
        if eps == 0:
            st.caption(explorer.BN_ZERO_EPS)


def downloads(page: Page, shown: Shown) -> None:
    """x and the outputs as CSV and .npy, and a script that reproduces the view. Built only while this view is
    shown: the highlighted script alone cost the browser about 200 ms of work on every γ or β move."""
    result, inputs, norm = shown.result, shown.inputs, shown.norm
    st.subheader("Take it with you")
    arrays = {"x": result.x, "ln_y": result.ln.y} | ({} if result.bn is None else {"bn_y": result.bn.y})
    if inputs.own is not None:
        ui.kit.downloads.buttons(arrays)
        st.caption(text.OWN_SCRIPT)
        return
    args = (inputs.dist, inputs.batch, inputs.features, inputs.seed, norm.gain, norm.bias, norm.affine, norm.eps)
    ui.kit.downloads.buttons(arrays, export.script(*args, inputs.draw))


def _pick_from_chart() -> None:
    """A cell clicked on the charts view's heatmap of x: the same pick as a click on the stage."""
    points = st.session_state["grid_chart"].selection.points
    cells = [p for p in points if p.get("curve_number") == 1]  # fig_grid's cell picker
    if cells:
        live.pick(cells[0]["y"], cells[0]["x"])


def charts(page: Page, shown: Shown) -> None:
    """The input with each norm's statistics, and the two outputs."""
    (batch, features), output = (shown.inputs.batch, shown.inputs.features), shown.output
    st.subheader("The input x, with each norm's statistics")
    page.say(text.CHARTS_INPUT)
    alt = f"Heatmap of x ({batch} × {features}) with LN's μ and σ per row and BN's per column."
    fig = figures.fig_grid(shown.result, shown.rows, shown.cols, shown.cell)
    page.chart(fig, key="grid_chart", alt=alt, on_select=_pick_from_chart, selection_mode="points")
    st.subheader("The outputs: LN normalizes each row, BN each column")
    alt = f"Heatmaps of LN's and BN's {output}, side by side: LN's rows and BN's columns each normalized."
    page.chart(figures.fig_outputs(shown.result, shown.rows, shown.cols, shown.cell, output), "outputs_chart", alt)


def warnings(shown: Shown, kind: str) -> None:
    """Above the view ``kind``: when its heatmaps or tables show a window of a large grid, where x̂ = 0/0, and
    what BN is at B = 1 or ε = 0 (where the view does not say it itself)."""
    batch, features, rows, cols = shown.inputs.batch, shown.inputs.features, shown.rows, shown.cols
    if kind in SHOWS_OUTPUTS and (rows.stop - rows.start, cols.stop - cols.start) != (batch, features):
        what = "heatmaps" if kind == "charts" else "tables"
        st.info(text.details_window(what, batch, features, rows, cols), icon=":material/zoom_in:")
    if bad := explorer.degenerate(shown.result):
        st.warning(text.zero_over_zero(bad), icon=":material/warning:")
    if shown.result.bn is None and kind not in ("cell", "numbers"):  # those two say it in BN's own place
        st.info(explorer.BN_SINGLE_SAMPLE, icon=":material/info:")
    elif shown.result.bn is not None and shown.norm.eps == 0 and kind != "cell":  # the cell view: beside BN's formula
        st.caption(explorer.BN_ZERO_EPS)


# The views of the details, by the value of the view control (lnviz.views.state.VIEW): one is computed, sent and
# drawn. SHOWS_OUTPUTS: those that draw the outputs (as y or as x̂), in a window of a large grid.
VIEWS = {"cell": cell, "charts": charts, "distributions": distributions, "numbers": numbers, "downloads": downloads}
SHOWS_OUTPUTS = ("charts", "numbers")
