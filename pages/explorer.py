"""The main explorer: one grid x (B, H), LayerNorm by rows against BatchNorm by columns."""

import streamlit as st

from ui.kit.page import Page

page = Page.start()

# The rest needs torch, whose first import on a fresh server takes seconds on a small CPU:
# the title is on the viewer's screen meanwhile.
from typing import Any  # noqa: E402

import torch  # noqa: E402

from lnviz.labs import explorer  # noqa: E402
from lnviz.labs.explorer import Exploration, stage, text  # noqa: E402
from lnviz.maths import data, device  # noqa: E402
from ui.kit.controls import Normalization, normalization_controls  # noqa: E402
from ui.labs import details, own_data  # noqa: E402
from ui.labs.details import Inputs, Shown  # noqa: E402
from ui.stage import stage as live  # noqa: E402
from ui.stage import stage_at  # noqa: E402


def input_section() -> tuple[Inputs, Any]:
    """The sidebar's input and compute sections, and the place between them where :func:`below` draws γ, β, ε."""
    own = own_data.panel()
    with page.sidebar("Input"):
        if own is None:
            dist = page.control("dist")
            st.caption(page.table["dist"].meaning(dist))
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


def compute(inputs: Inputs, dev: torch.device, eps: float) -> Exploration:
    """Both norms of the inputs' x on ``dev``, before γ and β."""
    if inputs.own is None:
        args = (inputs.dist, inputs.batch, inputs.features, inputs.seed, dev.type, eps, inputs.draw)
        return page.compute(explorer.generated, *args, shared=True)  # shared with the walkthrough
    return page.compute(own_data.normalized, inputs.own.id, dev.type, eps, shared=True)


def outputs(inputs: Inputs, norm: Normalization) -> tuple[Exploration, Exploration, Any, Any]:
    """Both norms before γ and β, then with them; and the per-feature parts of γ and β ((H,) each, or None)."""
    base, _ = page.on_device(lambda d: compute(inputs, d, norm.eps), inputs.device)
    g, b = data.random_affine(inputs.features, inputs.seed, inputs.draw) if norm.affine else (None, None)
    return base, explorer.with_affine(base, norm.gain, norm.bias, g, b), g, b


def the_stage(shown: Shown, base: Exploration, g: Any, b: Any) -> None:
    """x and both outputs, live: a window of the grid around the chosen cell, and what a change of B or H kept;
    the stage may ask for torch's numbers at the sidebar's next γ and β, from ``base`` (before them)."""
    inputs = shown.inputs
    batch, features = inputs.batch, inputs.features
    rows, cols = stage.window(batch, features, *shown.cell)
    same = ("explorer", inputs.dist, inputs.seed, inputs.draw, inputs.own and inputs.own.id, shown.norm)
    note = live.resized(same, shown.result)
    values = (shown.norm.gain, shown.norm.bias)
    offered = stage_at.offer(base, g, b, values, rows, cols, page.hidden)
    sizes = live.steppers(page.table, page.hidden, batch, features, own=inputs.own is not None)
    payload = stage.payload(shown.result, rows, cols, locked=page.hidden, resized=note, dist=inputs.dist)
    live.draw(payload, shown.cell, offered=offered, sizes=sizes)
    if not page.presenting:  # what the stage is, under it; the guide ("What am I looking at?") says the rest
        st.caption(text.FIRST_LINE.format(ln=page.prose_color("LN"), bn=page.prose_color("BN")))
    if (rows.stop - rows.start, cols.stop - cols.start) != (batch, features):
        st.caption(text.stage_window(batch, features, rows, cols))


def badges(inputs: Inputs, result: Exploration) -> None:
    """Where torch ran, how long it took, and what it ran on; whose data this is; what the stage shows."""
    dtype = str(result.x.dtype).removeprefix("torch.")
    st.markdown(
        f":violet-badge[:material/memory: {device.label(result.device)}] "
        f":gray-badge[torch {result.seconds * 1e3:.2f} ms for both norms] "
        f":gray-badge[x: {inputs.batch} × {inputs.features}, {dtype}]"
    )
    if inputs.own is not None:
        what = f"Showing **your data** ({inputs.own.source}), {inputs.batch} × {inputs.features}."
        st.info(what, icon=":material/upload_file:")
    if not page.presenting:
        with st.expander("What am I looking at?", icon=":material/help:"):
            st.markdown(text.GUIDE)


def pickers(inputs: Inputs) -> tuple[str, tuple[int, int], str | None]:
    """Which view of the details, the chosen cell (kept inside the grid), and the outputs shown (y or x̂)."""
    kind = page.control("view", where=st)
    pick_i, pick_j, pick_output = st.columns(3)
    i = page.index("sample", inputs.batch, where=pick_i)
    j = page.index("feature", inputs.features, where=pick_j)
    output = page.control("output", where=pick_output, horizontal=True) if kind in details.SHOWS_OUTPUTS else None
    return kind, (i, j), output


def below(inputs: Inputs, norm_box: Any) -> None:
    """Everything below the input: γ, β, ε, the stage, the chosen cell and the view of the details.

    A fragment, so moving one of its controls reruns only this part: the title and the input section stay as
    they are, in the server and in the browser. A change of the input reruns the whole page, this included; so
    does B or H moved on the stage, whose run of the fragment alone would compute the grid before it.
    """
    if live.sized():
        st.rerun()
    norm = normalization_controls(page.control, where=norm_box)
    base, result, g, b = outputs(inputs, norm)
    stage_box = st.container()  # first on the page; drawn once the chosen cell is known
    badges(inputs, result)
    st.subheader("The details")
    kind, chosen, output = pickers(inputs)
    shown = Shown(inputs, result, norm, chosen, output, *explorer.window(inputs.batch, inputs.features, *chosen))
    with stage_box:
        the_stage(shown, base, g, b)
    details.warnings(shown, kind)
    details.VIEWS[kind](page, shown)
    page.finish(caveat=None if inputs.own is None else own_data.caveat(inputs.own), rerun_follows=live.waiting())


def stage_first() -> bool:
    """A new visitor's first run draws the stage alone, at the link's values (:func:`ui.stage.stage.first_values`), where
    :func:`below` draws it; the stage's report that it is drawn reruns the page whole. False: the page, whole, now."""
    v = None if "own" in st.query_params else live.first_values(page, FIRST)
    if v is None or v["sample"] >= v["batch"] or v["feature"] >= v["features"]:  # the widgets lower it, with a note
        return False
    picked = device.pick(v["device"])
    if device.unavailable(v["device"], picked):  # the page says so, above the stage
        return False
    inputs = Inputs(v["dist"], v["batch"], v["features"], v["seed"], None, picked, v["draw"])
    norm = Normalization(v["gain"], v["bias"], v["affine"], v["eps"])
    base, result, g, b = outputs(inputs, norm)
    cell = (v["sample"], v["feature"])
    shown = Shown(inputs, result, norm, cell, None, *explorer.window(v["batch"], v["features"], *cell))
    with st.container(), st.container():  # where below() puts it (its fragment's box, then the stage's)
        the_stage(shown, base, g, b)
    return True


FIRST = ("dist", "batch", "features", "seed", "draw", "device", "gain", "bias", "affine", "eps", "sample", "feature")
if not stage_first():
    st.fragment(below)(*input_section())
