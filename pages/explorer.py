"""The main explorer: one grid x (B, H), LayerNorm by rows against BatchNorm by columns."""

import streamlit as st

from ui import mode

mode.apply_lesson()
st.title("LayerNorm vs BatchNorm")
mode.show_lesson()
mode.say(
    "Each row of the grid **x** is one sample, each column one feature.\n\n"
    ":blue[**LayerNorm**] takes one mean μ and one standard deviation σ per **row**: "
    "each sample is normalized over its own H features.\n\n"
    ":orange[**BatchNorm**] takes one μ and σ per **column**: each feature is normalized "
    "over the B samples of the batch, so every output depends on the whole batch.\n\n"
    "Both then compute y = γ (x − μ) / √(σ² + ε) + β, with the biased variance, as PyTorch does."
)

# The rest needs torch, whose first import on a fresh server takes seconds on a small CPU:
# the title and the introduction above are on the viewer's screen meanwhile.
import torch  # noqa: E402

from lnviz import data, device, explain, explorer, export, figures, state  # noqa: E402
from ui import own_data  # noqa: E402
from ui.controls import control, device_picker, normalization_controls, share_box, show_notes  # noqa: E402

own = own_data.panel()
with st.sidebar:
    st.header("Input")
    if own is None:
        dist = control(state.DIST, "select")
        st.caption(data.PRESETS[dist])
        batch = control(state.BATCH)
        features = control(state.FEATURES)
    else:
        dist, (batch, features) = None, own.x.shape
        st.caption(f"Your data: {own.source}, {batch} × {features}.")
        own_data.back_button()
    seed = control(state.SEED, "number", help="Same seed, same numbers. With your own data: the per-feature γ, β.")
    norm_box = st.container()  # γ, β, ε: drawn by view() below, which reruns alone when they move
    st.header("Compute")
    picked = device_picker()
notes_box = st.container()  # what a link's values became, once every control is drawn
pref = st.session_state.get(state.DEVICE.key, state.DEVICE.default)


@st.cache_resource(max_entries=8, show_spinner=False)
def normalized(dist: str, batch: int, features: int, seed: int, device_type: str, eps: float) -> explorer.Exploration:
    """x and both norms before γ and β, recomputed only when the data or ε change.

    Shared between sessions and never mutated: moving γ or β redoes only the
    elementwise affine step on top of it.
    """
    dev = torch.device(device_type)
    x = data.make_activations(dist, batch, features, seed, device=dev, dtype=device.compute_dtype(dev))  # (B, H)
    return explorer.normalize(x, eps)


def compute(dev: torch.device, eps: float) -> explorer.Exploration:
    if own is None:
        return normalized(dist, batch, features, seed, dev.type, eps)
    return explorer.normalize(own.x.to(dev, device.compute_dtype(dev)), eps)


def _pick_from_click() -> None:
    points = st.session_state["grid_chart"].selection.points
    cells = [p for p in points if p.get("curve_number") == 1]  # fig_grid's cell picker
    if cells:
        st.session_state["row"] = int(min(max(cells[0]["y"], 0), batch - 1))
        st.session_state["col"] = int(min(max(cells[0]["x"], 0), features - 1))


@st.fragment
def view() -> None:
    """Everything below the input: γ, β, ε, the chosen cell and the view.

    A fragment, so moving one of its controls reruns only this part: the title,
    the introduction and the input section stay as they are, in the server and
    in the browser. A change of the input reruns the whole page, this included.
    """
    norm = normalization_controls(where=norm_box)
    gain, bias, affine, eps = norm.gain, norm.bias, norm.affine, norm.eps
    base, dev, fallback = device.with_fallback(lambda d: compute(d, eps), picked)
    if fallback:
        st.warning(fallback, icon=":material/memory:")
    dtype = device.compute_dtype(dev)
    result = explorer.with_affine(base, *data.affine(features, seed, gain, bias, affine))

    st.markdown(
        f":violet-badge[:material/memory: {device.label(dev)}] "
        f":gray-badge[torch {result.seconds * 1e3:.2f} ms for both norms] "
        f":gray-badge[x: {batch} × {features}, {str(dtype).removeprefix('torch.')}]"
    )
    if pref not in ("auto", dev.type):
        st.caption(f"{pref.upper()} is not available here, so torch runs on the CPU.")
    share_box(
        state.EXPLORER,
        caveat=None
        if own is None
        else "Your own data stays in this session and cannot travel in a link: this link opens the same controls "
        "on the generated data.",
    )
    if own is not None:
        st.info(f"Showing **your data** ({own.source}), {batch} × {features}.", icon=":material/upload_file:")

    # The chosen cell: clamp to the grid before the pickers are drawn, so a smaller
    # B or H (or a link) never leaves it outside.
    for key, limit in (("row", batch - 1), ("col", features - 1)):
        if st.session_state.get(key, 0) > limit:
            st.session_state[key] = limit

    pick_i, pick_j, pick_stage, pick_view = st.columns(4)
    i = control(state.ROW, "number", where=pick_i)
    j = control(state.COL, "number", where=pick_j)
    # A link read on the first run can still name a cell beyond this grid (?row=16 with B = 16).
    i, j = min(i, batch - 1), min(j, features - 1)
    stage = control(state.STAGE, "radio", where=pick_stage, horizontal=True)
    view = control(state.VIEW, "radio", where=pick_view, horizontal=True)
    rows, cols = explorer.window(batch, features, i, j)
    if (rows.stop - rows.start, cols.stop - cols.start) != (batch, features):
        st.info(
            f"The grid is {batch} × {features}; the heatmaps show the {rows.stop - rows.start} × "
            f"{cols.stop - cols.start} window of exact values around the chosen cell "
            f"(samples {rows.start}–{rows.stop - 1}, features {cols.start}–{cols.stop - 1}). "
            "Every statistic and histogram is over the full grid. Pick another cell to move the window.",
            icon=":material/zoom_in:",
        )

    bad = explorer.degenerate(result)
    if bad:
        where = []
        if bad.ln_rows:
            where.append(f"sample(s) {', '.join(map(str, bad.ln_rows[:8]))} (LN)")
        if bad.bn_cols:
            where.append(f"feature(s) {', '.join(map(str, bad.bn_cols[:8]))} (BN)")
        st.warning(
            f"ε = 0 and σ = 0 for {' and '.join(where)}: every value there equals its mean, so "
            "x̂ = (x − μ)/√(σ² + ε) = 0/0, which is undefined (NaN). Those cells are left blank. "
            "This is what ε is for: any ε > 0 makes the output 0 instead.",
            icon=":material/warning:",
        )

    if view == "charts":
        st.subheader("The input x, with each norm's statistics")
        mode.say(
            "Right: LN's μ and σ, one per sample (row). Below: BN's μ and σ, one per feature (column). "
            "Click a cell to choose it: the solid outline is the row LN uses, the dotted one the column BN uses."
        )
        st.plotly_chart(
            figures.fig_grid(result, rows, cols, (i, j)),
            key="grid_chart",
            on_select=_pick_from_click,
            selection_mode="points",
            width="stretch",
        )
        st.subheader("The outputs, on one colour scale")
        st.plotly_chart(figures.fig_outputs(result, rows, cols, (i, j), stage), key="outputs_chart", width="stretch")
    else:
        st.subheader("The numbers")
        tables = {
            "x": result.x,
            "BN " + stage: None if result.bn is None else getattr(result.bn, stage),
            "LN " + stage: getattr(result.ln, stage),
        }
        for name, tab in zip(tables, st.tabs(list(tables)), strict=True):
            with tab:
                if tables[name] is None:
                    st.info(explorer.BN_SINGLE_SAMPLE)
                else:
                    st.dataframe(explorer.table(tables[name], rows, cols), width="stretch")

    if result.bn is None:
        st.info(explorer.BN_SINGLE_SAMPLE, icon=":material/info:")

    st.subheader("Distributions before and after")
    named = {"input": result.x, "BN": None if result.bn is None else result.bn.y, "LN": result.ln.y}
    samples = {name: explorer.sample(values) for name, values in named.items() if values is not None}
    lo, hi = explorer.finite_range(*samples.values())
    hists = {name: explorer.histogram(values, lo, hi) for name, values in samples.items()}
    if result.x.numel() > explorer.SAMPLE:
        st.caption(
            f"Counted over an evenly spread sample of {len(samples['input']):,} of the {result.x.numel():,} values "
            "(every feature and every sample is represented)."
        )
    st.plotly_chart(figures.fig_distributions(hists), key="hist_chart", width="stretch")

    st.subheader(f"Cell (sample {i}, feature {j}), step by step")
    ln_col, bn_col = st.columns(2)
    with ln_col:
        st.markdown(f":blue[**LayerNorm**]: statistics of row {i}, over its {features} features")
        st.latex(explain.latex(result.ln, i, j, "LN"))
        st.code(explain.pytorch_line("LN", i, j, features), language="python")
    with bn_col:
        st.markdown(f":orange[**BatchNorm**]: statistics of column {j}, over the {batch} samples")
        if result.bn is None:
            st.info(explorer.BN_SINGLE_SAMPLE)
        else:
            st.latex(explain.latex(result.bn, i, j, "BN"))
            st.code(explain.pytorch_line("BN", i, j, features), language="python")
            if eps == 0:
                st.caption(
                    'With ε = 0, `F.batch_norm` refuses to run in training mode ("eps must be positive"). '
                    "The numbers above are the formula itself: the value `F.batch_norm` approaches as ε → 0."
                )

    st.subheader("Take it with you")
    # Filled only while open (a rerun opens it): the highlighted script alone cost the browser
    # about 200 ms of work on every γ or β move.
    downloads = st.expander(
        "Download x, the outputs, and a PyTorch script that reproduces this view",
        icon=":material/download:",
        key="downloads",
        on_change="rerun",
    )
    if downloads.open:
        with downloads:
            arrays = {"x": result.x, "ln_y": result.ln.y}
            if result.bn is not None:
                arrays["bn_y"] = result.bn.y
            formats = (  # (extension, writer, mime type, icon)
                ("csv", export.to_csv, "text/csv", ":material/table:"),
                ("npy", export.to_npy, "application/octet-stream", ":material/data_array:"),
            )
            for name, values in arrays.items():
                for column, (ext, write, mime, icon) in zip(st.columns(len(formats)), formats, strict=True):
                    column.download_button(
                        f"{name}.{ext}",
                        data=lambda v=values, w=write: w(v),  # built only when clicked: a full-size CSV takes seconds
                        file_name=f"{name}.{ext}",
                        mime=mime,
                        on_click="ignore",
                        key=f"dl_{name}_{ext}",
                        icon=icon,
                    )
            if own is None:
                script = export.script(dist, batch, features, seed, gain, bias, affine, eps)
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
            else:
                st.caption("The script reproduces generated views; your own data is in the downloads above.")


view()
show_notes(where=notes_box)
