"""The main explorer: one grid x (B, H), LayerNorm by rows against BatchNorm by columns."""

import streamlit as st

from ui.page import Page

GUIDE = (
    "Each row of the grid **x** is one sample, each column one feature.\n\n"
    ":blue[**LayerNorm**] takes one mean μ and one standard deviation σ per **row**: each sample is normalized "
    "over its own H features. Its output sits right of x, its μ and σ between them (on a narrow screen, under "
    "x).\n\n"
    ":orange[**BatchNorm**] takes one μ and σ per **column**: each feature is normalized over the B samples of "
    "the batch, so in training mode every output depends on the whole batch. Its output sits under x (on a "
    "narrow screen, under LayerNorm's).\n\n"
    "Both then compute y = γ (x − μ) / √(σ² + ε) + β, with the biased variance, as PyTorch does. Drag γ, β or "
    "ε: the outputs follow in your browser, and torch recomputes them when you let go. Hover a cell for its "
    "numbers, click it to choose it for the details below, and press Play to watch the reduction.\n\n"
    "The details show one thing at a time, chosen above them: the chosen cell's formulas with torch's numbers, "
    "charts of each norm's μ and σ and of the outputs, the chosen row and column before and after, the grid as "
    "tables, "
    "or downloads."
)
page = Page.start()

# The rest needs torch, whose first import on a fresh server takes seconds on a small CPU:
# the title is on the viewer's screen meanwhile.
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402

from lnviz.labs import explorer  # noqa: E402
from lnviz.labs.explorer import Exploration, explain, export, figures, stage  # noqa: E402
from lnviz.maths import data, device  # noqa: E402
from ui import heavy, own_data  # noqa: E402
from ui import stage as live  # noqa: E402
from ui.controls import Normalization, normalization_controls  # noqa: E402
from ui.own_data import OwnData  # noqa: E402


@dataclass(frozen=True)
class Inputs:
    """What the explorer computes from, chosen in the input section: generated data (``dist``, B, H, seed) or
    the user's own (``own``, whose x sets B and H), the seed of the per-feature γ and β, how x and they are
    drawn from it (``draw``), and the device."""

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


def input_section() -> tuple[Inputs, Any]:
    """The sidebar's input and compute sections: generated data or your own, and the device; and the place
    between them where :func:`below` draws γ, β and ε."""
    own = own_data.panel()
    with page.sidebar("Input"):
        if own is None:
            dist = page.control("dist")
            st.caption(data.DISTS[dist])
            batch, features = page.controls("batch", "features")
        else:
            dist, (batch, features) = None, own.x.shape
            st.caption(f"Your data: {own.source}, {batch} × {features}. {own.kept}")
            own_data.back_button()
        seed = page.control("seed", help="Same seed, same numbers. With your own data: the per-feature γ, β.")
        draw = page.control("draw", horizontal=True)
    norm_box = st.sidebar.container()  # γ, β, ε: drawn by below() before the compute section, in the fragment
    with page.sidebar("Compute"):
        picked = page.device()
    return Inputs(dist, batch, features, seed, own, picked, draw), norm_box


def own_normalized(key: str, device_type: str, eps: float) -> Exploration:
    """:func:`lnviz.labs.explorer.generated` for your own data, by its id (the hash of its content): sessions showing the same
    matrix share one computation, cached and bounded like the generated ones."""
    dev = torch.device(device_type)
    return explorer.normalize(own_data.stored(key).to(dev, device.compute_dtype(dev)), eps)


def compute(inputs: Inputs, dev: torch.device, eps: float) -> Exploration:
    """Both norms of the inputs' x on ``dev``, before γ and β."""
    if inputs.own is None:
        args = (inputs.dist, inputs.batch, inputs.features, inputs.seed, dev.type, eps, inputs.draw)
        return page.compute(explorer.generated, *args, shared=True)  # shared with the walkthrough
    return page.compute(own_normalized, inputs.own.id, dev.type, eps, shared=True)


def the_stage(shown: Shown) -> None:
    """x and both outputs, live: a window of the grid around the chosen cell, and what a change of B or H kept."""
    inputs, norm = shown.inputs, shown.norm
    batch, features = inputs.batch, inputs.features
    rows, cols = stage.window(batch, features, *shown.cell)
    same = ("explorer", inputs.dist, inputs.seed, inputs.draw, inputs.own and inputs.own.id, norm)
    note = live.resized(same, shown.result)
    live.draw(stage.payload(shown.result, rows, cols, locked=page.hidden, resized=note), shown.cell)
    if (rows.stop - rows.start, cols.stop - cols.start) != (batch, features):
        st.caption(
            f"The stage shows samples {rows.start}–{rows.stop - 1} and features {cols.start}–{cols.stop - 1} of "
            f"the {batch} × {features} grid, around the chosen cell; μ and σ are over the whole grid."
        )


def badges(inputs: Inputs, result: Exploration) -> None:
    """Where torch ran, how long it took, and what it ran on; whose data this is; what the stage shows."""
    dtype = str(result.x.dtype).removeprefix("torch.")
    st.markdown(
        f":violet-badge[:material/memory: {device.label(result.device)}] "
        f":gray-badge[torch {result.seconds * 1e3:.2f} ms for both norms] "
        f":gray-badge[x: {inputs.batch} × {inputs.features}, {dtype}]"
    )
    if inputs.own is not None:
        own = inputs.own
        st.info(
            f"Showing **your data** ({own.source}), {inputs.batch} × {inputs.features}.", icon=":material/upload_file:"
        )
    if not page.presenting:
        with st.expander("What am I looking at?", icon=":material/help:"):
            st.markdown(GUIDE)


def warnings(shown: Shown, kind: str) -> None:
    """Say when the view's heatmaps or tables show a window of a large grid, and where x̂ = 0/0."""
    batch, features, rows, cols = shown.inputs.batch, shown.inputs.features, shown.rows, shown.cols
    window = (rows.stop - rows.start, cols.stop - cols.start)
    if VIEWS[kind].shows_outputs and window != (batch, features):
        what = "heatmaps" if kind == "charts" else "tables"
        st.info(
            f"The grid is {batch} × {features}; the {what} show the {window[0]} × {window[1]} window of exact "
            f"values around the chosen cell (samples {rows.start}–{rows.stop - 1}, features {cols.start}–"
            f"{cols.stop - 1}). Every μ and σ is over the full grid. Pick another cell to move the window.",
            icon=":material/zoom_in:",
        )
    bad = explorer.degenerate(shown.result)
    if bad:
        where = []
        if bad.ln_rows:
            where.append(f"{explorer.listed('sample', bad.ln_rows)} (LN)")
        if bad.bn_cols:
            where.append(f"{explorer.listed('feature', bad.bn_cols)} (BN)")
        st.warning(
            f"ε = 0 and σ = 0 for {' and '.join(where)}: every value there equals its mean, so "
            "x̂ = (x − μ)/√(σ² + ε) = 0/0, which is undefined (NaN). Those cells are left blank. "
            "This is what ε is for: any ε > 0 makes x̂ = 0 there, so y = β.",
            icon=":material/warning:",
        )


def _pick_from_chart() -> None:
    """A cell clicked on the charts view's heatmap of x: the same pick as a click on the stage."""
    points = st.session_state["grid_chart"].selection.points
    cells = [p for p in points if p.get("curve_number") == 1]  # fig_grid's cell picker
    if cells:
        live.pick(cells[0]["y"], cells[0]["x"])


def charts(shown: Shown) -> None:
    """The input with each norm's statistics, and the two outputs."""
    batch, features, output = shown.inputs.batch, shown.inputs.features, shown.output
    st.subheader("The input x, with each norm's statistics")
    page.say(
        "Right: LN's μ and σ, one per sample (row). Below: BN's μ and σ, one per feature (column). "
        "Click a cell to choose it: the solid outline is the row LN uses, the dotted one the column BN uses."
    )
    page.chart(
        figures.fig_grid(shown.result, shown.rows, shown.cols, shown.cell),
        key="grid_chart",
        alt=f"Heatmap of x ({batch} × {features}) with LN's μ and σ per row and BN's per column.",
        on_select=_pick_from_chart,
        selection_mode="points",
    )
    st.subheader("The outputs: LN normalizes each row, BN each column")
    page.chart(
        figures.fig_outputs(shown.result, shown.rows, shown.cols, shown.cell, output),
        key="outputs_chart",
        alt=f"Heatmaps of LN's and BN's {output}, side by side: LN's rows and BN's columns each normalized.",
    )


def numbers(shown: Shown) -> None:
    """The same grid as tables: x, and each norm's output."""
    result, output = shown.result, shown.output
    st.subheader("The numbers")
    tables = {
        "x": result.x,
        "LN " + output: getattr(result.ln, output),
        "BN " + output: None if result.bn is None else getattr(result.bn, output),
    }
    for name, tab in zip(tables, st.tabs(list(tables)), strict=True):
        with tab:
            if tables[name] is None:
                st.info(explorer.BN_SINGLE_SAMPLE)
            else:
                st.dataframe(explorer.table(tables[name], shown.rows, shown.cols), width="stretch")


def distributions(shown: Shown) -> None:
    """The chosen cell's row (what LN pools) against its column (what BN pools), before and after each norm."""
    (i, j), result = shown.cell, shown.result
    st.subheader(f"Row {i} against column {j}, before and after")
    bn = (
        f"BatchNorm over column {j}, its {shown.inputs.batch} samples (right)"
        if result.bn is not None
        else f"BatchNorm would take them over column {j}, a single value (right)"
    )
    page.say(
        f"LayerNorm takes its μ and σ over row {i}, its {shown.inputs.features} features (left); {bn}. Top: those "
        "values of x, with the μ each norm subtracts (dashed). Bottom: the same cells after the norm. The row and "
        "the column share each value axis."
    )
    column = "" if result.bn is None else f", and of column {j}'s before and after BatchNorm"
    page.chart(
        figures.fig_distributions(explorer.distributions(result, shown.cell)),
        key="hist_chart",
        alt=f"Histograms of row {i}'s values before and after LayerNorm{column}.",
    )


def cell(shown: Shown) -> None:
    """The chosen cell, step by step: each norm's formula with torch's numbers, and the line of PyTorch."""
    (i, j), result = shown.cell, shown.result
    batch, features = shown.inputs.batch, shown.inputs.features
    st.subheader(f"Cell (sample {i}, feature {j}), step by step")
    ln_col, bn_col = st.columns(2)
    with ln_col:
        st.markdown(f":blue[**LayerNorm**]: statistics of row {i}, over its {features} features")
        st.latex(explain.latex(result.ln, i, j, "LN"))
        st.code(explain.pytorch_line("LN", i, j, features, shown.norm.eps), language="python", wrap_lines=True)
    with bn_col:
        st.markdown(
            f":orange[**BatchNorm**]: statistics of column {j}, over the {batch} sample{'' if batch == 1 else 's'}"
        )
        if result.bn is None:
            st.info(explorer.BN_SINGLE_SAMPLE)
            return
        st.latex(explain.latex(result.bn, i, j, "BN"))
        st.code(explain.pytorch_line("BN", i, j, features, shown.norm.eps), language="python", wrap_lines=True)
        if shown.norm.eps == 0:
            st.caption(explorer.BN_ZERO_EPS)


def downloads(shown: Shown) -> None:
    """x and the outputs as CSV and .npy, and a script that reproduces the view.

    Built only while this view is shown: the highlighted script alone cost the
    browser about 200 ms of work on every γ or β move. The files are built when
    clicked.
    """
    result, inputs, norm = shown.result, shown.inputs, shown.norm
    st.subheader("Take it with you")
    arrays = {"x": result.x, "ln_y": result.ln.y} | ({} if result.bn is None else {"bn_y": result.bn.y})
    formats = (  # (extension, writer, mime type, icon)
        ("csv", export.to_csv, "text/csv", ":material/table:"),
        ("npy", export.to_npy, "application/octet-stream", ":material/data_array:"),
    )
    for name, values in arrays.items():
        for column, (ext, write, mime, icon) in zip(st.columns(len(formats)), formats, strict=True):
            column.download_button(
                f"{name}.{ext}",
                # Built only when clicked (a full-size CSV takes seconds), under the server's limit on heavy work.
                data=heavy.deferred(f"{name}.{ext}", lambda v=values, w=write: w(v)),
                file_name=f"{name}.{ext}",
                mime=mime,
                on_click="ignore",
                key=f"dl_{name}_{ext}",
                icon=icon,
            )
    if inputs.own is not None:
        st.caption("The script reproduces generated views; your own data is in the downloads above.")
        return
    script = export.script(
        inputs.dist,
        inputs.batch,
        inputs.features,
        inputs.seed,
        norm.gain,
        norm.bias,
        norm.affine,
        norm.eps,
        inputs.draw,
    )
    st.code(script, language="python")
    st.download_button(
        "lnviz_view.py",
        data=script,
        file_name="lnviz_view.py",
        mime="text/x-python",
        on_click="ignore",
        key="dl_script",
        icon=":material/code:",
    )


@dataclass(frozen=True)
class Detail:
    """One view of the details: how it is drawn, and whether it draws the outputs (as y or as x̂)."""

    draw: Callable[[Shown], None]
    shows_outputs: bool = False


# The views of the details, by the value of the view control (lnviz.views.state.VIEW): one is computed, sent and drawn.
VIEWS: dict[str, Detail] = {
    "cell": Detail(cell),
    "charts": Detail(charts, shows_outputs=True),
    "distributions": Detail(distributions),
    "numbers": Detail(numbers, shows_outputs=True),
    "downloads": Detail(downloads),
}


def pickers(inputs: Inputs) -> tuple[str, tuple[int, int], str | None]:
    """Which view of the details, the chosen cell (kept inside the grid), and the outputs shown (y or x̂) where
    the view draws them."""
    kind = page.control("view", where=st)
    pick_i, pick_j, pick_output = st.columns(3)
    i = page.index("sample", inputs.batch, where=pick_i)
    j = page.index("feature", inputs.features, where=pick_j)
    output = page.control("output", where=pick_output, horizontal=True) if VIEWS[kind].shows_outputs else None
    return kind, (i, j), output


def below(inputs: Inputs, norm_box: Any) -> None:
    """Everything below the input: γ, β, ε, the stage, the chosen cell and the view of the details.

    A fragment, so moving one of its controls reruns only this part: the title,
    the introduction and the input section stay as they are, in the server and
    in the browser. A change of the input reruns the whole page, this included.
    """
    norm = normalization_controls(page.control, where=norm_box)
    base, _ = page.on_device(lambda d: compute(inputs, d, norm.eps), inputs.device)
    g, b = data.random_affine(inputs.features, inputs.seed, inputs.draw) if norm.affine else (None, None)  # (H,) each
    result = explorer.with_affine(base, norm.gain, norm.bias, g, b)
    stage_box = st.container()  # first on the page; drawn once the chosen cell is known
    badges(inputs, result)
    st.subheader("The details")
    kind, chosen, output = pickers(inputs)
    rows, cols = explorer.window(inputs.batch, inputs.features, *chosen)
    shown = Shown(inputs, result, norm, chosen, output, rows, cols)
    with stage_box:
        the_stage(shown)
    warnings(shown, kind)
    if result.bn is None and kind not in ("cell", "numbers"):  # those two say it in BN's own place
        st.info(explorer.BN_SINGLE_SAMPLE, icon=":material/info:")
    elif result.bn is not None and norm.eps == 0 and kind != "cell":  # the cell view says it beside BN's formula
        st.caption(explorer.BN_ZERO_EPS)
    VIEWS[kind].draw(shown)
    page.finish(caveat=None if inputs.own is None else own_data.caveat(inputs.own))


st.fragment(below)(*input_section())
