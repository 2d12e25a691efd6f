"""The main page through the router: every control changes what it should."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, figures, run_page, share_link, stage_data

from lnviz.labs import explorer
from lnviz.maths import data
from ui.kit.page import SHARE_LABEL
from ui.labs import own_data
from ui.stage import stage as live

PAGE = "pages/explorer.py"
CHARTS = {"view": "charts"}  # the details' charts: x with each norm's statistics, and the outputs


def pytorch_lines(at) -> list[str]:
    """The cell view's lines of PyTorch, as the page writes them: inline code, one a markdown element."""
    return [m.value.strip("`") for m in at.markdown if m.value.startswith("`") and "weight" in m.value]


def show(at, view: str):
    """Switch the details to ``view``, as a click on its button does: a rerun."""
    at.segmented_control(key="view").set_value(view).run()
    return at


def outputs(at):
    """(LN heatmap z, BN heatmap z) of the outputs chart (the charts view), as float64 arrays, in the chart's order."""
    fig = figures(at)[1]
    heats = [np.asarray(t.z, dtype=np.float64) for t in fig.data if t.type == "heatmap"]
    return heats if len(heats) == 2 else (heats[0], None)


def badges(at) -> str:
    """The line of badges under the stage: where torch ran, how long, on what."""
    return next(m.value for m in at.markdown if "violet-badge" in m.value)


def grid_x(at):
    return np.asarray([t for t in figures(at)[0].data if t.type == "heatmap"][0].z, dtype=np.float64)


def x_for(dist="heterogeneous features", batch=8, features=12, seed=0):
    return data.make_activations(dist, batch, features, seed)


@pytest.fixture(scope="module")
def charts_page():
    return run_page(PAGE, CHARTS)


def test_the_details_show_the_chosen_cell_alone_by_default():
    at = run_page(PAGE)
    assert_no_exception(at)
    assert at.segmented_control(key="view").value == "cell"
    assert len(at.latex) == 2 and not at.get("plotly_chart") and not at.dataframe and not at.get("download_button")
    assert "output" not in {r.key for r in at.radio}  # y or x̂ is a choice only where the outputs are drawn


def test_a_new_visitors_browser_gets_the_stage_alone_then_the_whole_page_once_it_has_drawn_it(monkeypatch):
    # Issue 32: the widgets' chunks, KaTeX and the code highlighter would make the browser load and run them
    # before it painted the stage.
    monkeypatch.setattr(live, "_browser", lambda: True)  # a browser on the other end, as AppTest is not
    at = run_page(PAGE, {"gain": "1.5", "sample": "3"})
    assert_no_exception(at)
    assert stage_data(at)["waiting"] and stage_data(at)["cell"] == [3, 0]
    assert not at.sidebar.slider and not at.sidebar.select_slider and not at.number_input and not at.latex
    assert [t.value for t in at.title] and not at.markdown  # the title, the stage; nothing below it yet
    at.session_state[live._DRAWN] = True  # what the stage's report sets (ui.stage.stage._on_drawn)
    at.run()
    assert not stage_data(at)["waiting"] and len(at.latex) == 2 and at.slider(key="gain").value == 1.5
    assert [line for line in pytorch_lines(at) if "layer_norm" in line] and "gain=1.5" in share_link(at)
    # A report that never comes holds nothing back past the first run.
    unreported = run_page(PAGE)
    assert stage_data(unreported)["waiting"] and not unreported.sidebar.slider
    unreported.run()
    assert not stage_data(unreported)["waiting"] and len(unreported.latex) == 2 and "v=" in share_link(unreported)


def test_one_line_under_the_stage_says_rows_are_samples_and_columns_features(monkeypatch):
    """What the stage is, on a first-time visitor's first screen: the guide ("What am I looking at?") is further
    down, out of sight at 1366 × 768. One caption line right under the stage, in the stage-first run too (above it,
    it pushed BN's output below a phone's first screen); none in lecture mode, where the lecturer says it."""
    monkeypatch.setattr(live, "_browser", lambda: True)  # the stage-first run of a new visitor
    for at in (run_page(PAGE), run_page(PAGE).run()):
        assert_no_exception(at)
        assert type(at.main.children[0]).__name__ == "Title"
        box = at.main.children[2].children[0]  # the fragment's box, then the stage's
        stage, first = box.children[0], box.children[1]
        assert stage.type == "bidi_component"  # the stage, then the line
        assert first.type == "caption" and first.value.startswith("Rows are samples, columns are features: ")
        assert ":blue[**LayerNorm**] normalizes each row, :orange[**BatchNorm**] each column." in first.value
    presenting = run_page(PAGE, {"present": "1"})
    assert not [c for c in presenting.caption if c.value.startswith("Rows are samples")]


def test_a_new_visitors_note_about_the_link_is_said_once(monkeypatch):
    """The stage-first run keeps its notes for the run its stage's report starts, which reads the same link again:
    ?preset=bogus said 'not a lesson' twice in one box."""
    monkeypatch.setattr(live, "_browser", lambda: True)
    at = run_page(PAGE, {"preset": "bogus", "batch": "5000"})
    at.session_state[live._DRAWN] = True
    at.run()
    assert_no_exception(at)
    (box,) = [i.value for i in at.info if "adjusted" in i.value]
    assert box.count("is not a lesson") == 1 and box.count("Batch size B") == 1, box


def test_a_page_the_stage_cant_come_first_for_gets_its_widgets_at_once_but_the_formulas_and_code_after(monkeypatch):
    monkeypatch.setattr(live, "_browser", lambda: True)
    at = run_page(PAGE, {"device": "mps"})  # a device this machine lacks: the page says so, above the stage
    assert_no_exception(at)
    assert stage_data(at)["waiting"] and not at.latex and not pytorch_lines(at)
    assert at.selectbox(key="device").value == "mps"
    assert [e for e in at.sidebar.expander if e.label == SHARE_LABEL]  # the box, its link to come
    assert any("statistics of row" in m.value for m in at.markdown)  # the cell view's words are there already
    at.session_state[live._DRAWN] = True
    at.run()
    assert not stage_data(at)["waiting"] and len(at.latex) == len(pytorch_lines(at)) == 2 and "v=" in share_link(at)


def test_a_link_the_door_changed_draws_the_stage_first_and_its_note_with_the_widgets(monkeypatch):
    # Before the door, such a link drew its widgets at once, for their notes: now its values are checked already.
    monkeypatch.setattr(live, "_browser", lambda: True)
    at = run_page(PAGE, {"gain": "99"})  # out of range: the door drops it for the default, with a note
    assert_no_exception(at)
    assert stage_data(at)["waiting"] and not at.slider and not at.info  # the stage alone, at γ = 1
    assert stage_data(at)["gamma"][0] == 1.0  # γ_j = gain · 1
    at.session_state[live._DRAWN] = True
    at.run()
    assert at.slider(key="gain").value == 1.0 and any("Gain γ" in i.value for i in at.info)
    assert not stage_data(at)["waiting"] and len(at.latex) == 2 and "v=" in share_link(at)


def test_an_empty_view_in_a_link_opens_the_default_view():
    # Found by the link fuzz: Streamlit 1.67 reads ?view= as no choice, although the control is required.
    at = run_page(PAGE, {"view": ""})
    assert_no_exception(at)
    assert at.segmented_control(key="view").value == "cell" and len(at.latex) == 2
    assert not at.get("download_button")
    assert any("Details" in i.value for i in at.info)  # the note says what the link's value became


@pytest.mark.parametrize(
    "view, charts, tables, formulas",
    [("charts", 2, 0, 0), ("distributions", 1, 0, 0), ("numbers", 0, 3, 0), ("downloads", 0, 0, 0)],
)
def test_each_view_of_the_details_draws_only_itself(view, charts, tables, formulas):
    at = show(run_page(PAGE), view)
    assert_no_exception(at)
    assert (len(at.get("plotly_chart")), len(at.dataframe), len(at.latex)) == (charts, tables, formulas)
    assert (view == "downloads") == bool(at.get("download_button"))


def test_charts_view_matches_torch(charts_page):
    at = charts_page
    assert_no_exception(at)
    x = x_for()
    np.testing.assert_allclose(grid_x(at), x.numpy(), rtol=1e-6, atol=1e-6)
    ln, bn = outputs(at)  # LN left, BN right, as on the stage
    np.testing.assert_allclose(ln, F.layer_norm(x, (12,), eps=1e-5).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn, F.batch_norm(x, None, None, training=True, eps=1e-5).numpy(), rtol=1e-5, atol=1e-5)
    assert "CPU" in badges(at)


def test_distributions_show_the_chosen_row_against_the_chosen_column():
    x = x_for()
    i, j = 3, 5
    before = {"row": x[i], "column": x[:, j]}  # the H values LN pools, the B values BN pools
    after = {"row": F.layer_norm(x, (12,), eps=1e-5)[i], "column": F.batch_norm(x, None, None, training=True)[:, j]}
    at = run_page(PAGE, {"view": "distributions", "sample": str(i), "feature": str(j)})
    assert_no_exception(at)
    assert f"Row {i} against column {j}" in " ".join(h.value for h in at.subheader)
    (fig,) = figures(at)
    bars = {t.name: np.asarray(t.y) for t in fig.data if t.type == "bar"}
    assert list(bars) == [f"row {i}: x", f"row {i}: LN y", f"column {j}: x", f"column {j}: BN y"]
    for stage, values in (("x", before), ("y", after)):
        lo = float(min(v.min() for v in values.values()))  # one value axis for the row and the column
        hi = float(max(v.max() for v in values.values()))
        for line, v in values.items():
            name = f"{line} {i if line == 'row' else j}: " + (
                stage if stage == "x" else ("LN y" if line == "row" else "BN y")
            )
            want = torch.histc(v, bins=8, min=lo, max=hi)  # Rice's rule: 12 and 8 values get the fewest, 8 bins
            np.testing.assert_array_equal(bars[name], want.numpy())


@pytest.mark.parametrize(
    "key, value, kwargs",
    [
        ("batch", 8, dict(batch=8)),
        ("features", 12, dict(features=12)),
        ("seed", 123, dict(seed=123)),
        ("dist", "heterogeneous samples", dict(dist="heterogeneous samples")),
    ],
)
def test_input_controls_regenerate_x(key, value, kwargs):
    at = run_page(PAGE, CHARTS)
    widget = (
        at.selectbox(key=key)
        if key == "dist"
        else at.number_input(key=key)
        if key == "seed"
        else at.select_slider(key=key)
    )
    widget.set_value(value).run()
    assert_no_exception(at)
    x = x_for(**kwargs)
    np.testing.assert_allclose(grid_x(at), x.numpy(), rtol=1e-6, atol=1e-6)
    ln, _ = outputs(at)
    np.testing.assert_allclose(ln, F.layer_norm(x, (x.shape[1],), eps=1e-5).numpy(), rtol=1e-5, atol=1e-5)


def test_gain_bias_and_eps_move_every_output():
    at = run_page(PAGE, CHARTS)
    at.slider(key="gain").set_value(2.0).run()
    at.slider(key="bias").set_value(-0.5).run()
    at.select_slider(key="eps").set_value(0.1).run()
    assert_no_exception(at)
    x = x_for()
    w, b = torch.full((12,), 2.0, dtype=x.dtype), torch.full((12,), -0.5, dtype=x.dtype)
    ln, bn = outputs(at)
    np.testing.assert_allclose(ln, F.layer_norm(x, (12,), w, b, 0.1).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn, F.batch_norm(x, None, None, w, b, True, 0.1, 0.1).numpy(), rtol=1e-5, atol=1e-5)
    assert "0.1" in show(at, "cell").latex[0].value


def test_affine_uses_per_feature_vectors_and_leaves_x_alone():
    at = run_page(PAGE, {"gain": "1.5", "bias": "0.25", **CHARTS})
    at.toggle(key="affine").set_value(True).run()
    assert_no_exception(at)
    x = x_for()
    np.testing.assert_allclose(grid_x(at), x.numpy(), rtol=1e-6, atol=1e-6)  # γ, β have a generator of their own
    g, b = data.random_affine(12, seed=0)
    ln, _ = outputs(at)
    np.testing.assert_allclose(ln, F.layer_norm(x, (12,), 1.5 * g, 0.25 + b, 1e-5).numpy(), rtol=1e-5, atol=1e-5)


def test_stage_x_hat_ignores_gain():
    at = run_page(PAGE, {"gain": "3", **CHARTS})
    at.radio(key="output").set_value("x_hat").run()
    ln, _ = outputs(at)
    np.testing.assert_allclose(ln, F.layer_norm(x_for(), (12,), eps=1e-5).numpy(), rtol=1e-5, atol=1e-5)


def test_choosing_a_cell_moves_the_outlines_and_the_formulas():
    at = run_page(PAGE, CHARTS)
    at.number_input(key="sample").set_value(5).run()
    at.number_input(key="feature").set_value(7).run()
    assert_no_exception(at)
    shapes = figures(at)[0].layout.shapes
    row_box = [s for s in shapes if s.name == "LN row"][0]
    col_box = [s for s in shapes if s.name == "BN column"][0]
    assert row_box.y0 < 5 < row_box.y1 and col_box.x0 < 7 < col_box.x1
    show(at, "cell")
    x = x_for()
    # LN's μ is row 5's, BN's is column 7's, each named so (at (0, 0) both once read μ₀).
    assert r"\mu_{\text{row}\,5} &= " in at.latex[0].value and f"{float(x[5].mean()):.4g}" in at.latex[0].value
    assert r"\mu_{\text{column}\,7} &= " in at.latex[1].value
    assert f"{float(x[:, 7].mean()):.4g}" in at.latex[1].value
    assert "sample 5, feature 7" in " ".join(h.value for h in at.subheader)


def test_cell_is_clamped_when_the_grid_shrinks():
    at = run_page(PAGE, {"sample": "15", "feature": "31"})
    at.select_slider(key="batch").set_value(4).run()
    at.select_slider(key="features").set_value(3).run()
    assert_no_exception(at)
    assert at.number_input(key="sample").value == 3 and at.number_input(key="feature").value == 2


def test_numbers_view_shows_tables():
    at = show(run_page(PAGE), "numbers")
    assert_no_exception(at)
    frames = at.dataframe
    assert len(frames) == 3
    x = x_for()
    np.testing.assert_allclose(frames[0].value.to_numpy(), x.numpy())
    # x, then LN's output, then BN's: the stage's order.
    assert [t.label for t in at.tabs] == ["x", "LN y", "BN y"]
    np.testing.assert_allclose(frames[1].value.to_numpy(), F.layer_norm(x, (12,)).numpy(), rtol=1e-10, atol=1e-10)
    bn = F.batch_norm(x, None, None, training=True)
    np.testing.assert_allclose(frames[2].value.to_numpy(), bn.numpy(), rtol=1e-10, atol=1e-10)


def test_single_sample_explains_bn_in_words():
    at = run_page(PAGE, {"batch": "1"})
    assert_no_exception(at)
    assert any(explorer.BN_SINGLE_SAMPLE in i.value for i in at.info)
    assert any("over the 1 sample" in m.value and "samples" not in m.value for m in at.markdown)
    ln, bn = outputs(show(at, "charts"))
    assert bn is None and ln.shape == (1, 12)
    bars = [t.name for t in figures(show(at, "distributions"))[0].data if t.type == "bar"]
    assert bars == ["row 0: x", "row 0: LN y"]


VIEWS_WITH_BN = ("cell", "charts", "distributions", "numbers", "downloads")


def test_zero_eps_and_constant_row_is_explained_not_nan():
    at = run_page(PAGE, {"dist": "constant row", "eps": "0"})
    assert_no_exception(at)
    assert any("0/0" in w.value and "for sample 0 (LN)" in w.value for w in at.warning)
    assert r"\text{NaN}" in at.latex[0].value


def test_every_view_that_draws_bn_at_zero_eps_says_whose_numbers_they_are():
    """torch refuses ε = 0 for BN in training mode, so there BN's numbers are lnviz's formula: each view says so."""
    for view in VIEWS_WITH_BN:
        at = run_page(PAGE, {"eps": "0", "view": view})
        assert_no_exception(at)
        said = [c.value for c in at.caption if c.value == explorer.BN_ZERO_EPS]
        assert len(said) == 1, view
    at = run_page(PAGE, {"eps": "1e-05", "view": "charts"})
    assert explorer.BN_ZERO_EPS not in [c.value for c in at.caption]


def test_the_cell_views_lines_of_pytorch_run_at_zero_eps_and_give_torchs_values():
    """At ε = 0 F.batch_norm raises in training mode, so the line the cell view offers for BN must not be it."""
    at = run_page(PAGE, {"eps": "0", "sample": "2", "feature": "5"})
    assert_no_exception(at)
    lines = pytorch_lines(at)
    assert len(lines) == 2 and "F.batch_norm" not in lines[1]
    i, j = 2, 5
    x = x_for()
    weight, bias = torch.ones(12, dtype=x.dtype), torch.zeros(12, dtype=x.dtype)
    with pytest.raises(ValueError, match="eps must be positive"):
        F.batch_norm(x, None, None, weight, bias, training=True, eps=0.0)
    # torch's values at ε = 0: LN as it is; BN in eval mode, given the batch's own μ and biased σ², which it takes.
    own = x.mean(dim=0), x.var(dim=0, unbiased=False)  # (H,) each
    expected = F.layer_norm(x, (12,), weight, bias, eps=0.0), F.batch_norm(x, *own, weight, bias, eps=0.0)
    for line, y in zip(lines, expected, strict=True):
        value = eval(line, {"F": F, "x": x, "weight": weight, "bias": bias, "eps": 0.0})
        assert float(value) == pytest.approx(float(y[i, j]), abs=1e-12), line


def test_device_from_the_link_and_badge():
    # The device control lives in the router's sidebar (shared by every page); AppTest
    # does not list router widgets, so it is driven through the link here.
    at = run_page(PAGE, {"device": "cpu"})
    assert_no_exception(at)
    assert "CPU" in badges(at)
    at = run_page(PAGE, {"device": "cuda"})
    assert_no_exception(at)
    if not torch.cuda.is_available():
        assert any("not available" in i.value for i in at.info)
        assert "CPU" in badges(at)


def test_large_grid_is_windowed():
    at = run_page(PAGE, {"batch": "1024", "features": "1024", "sample": "700", "feature": "10", **CHARTS})
    assert_no_exception(at)
    assert grid_x(at).shape == (64, 64)
    assert any("window" in i.value for i in at.info)
    x = x_for(batch=1024, features=1024)
    np.testing.assert_allclose(grid_x(at)[0], x[668, :64].numpy(), rtol=1e-6, atol=1e-6)


def test_junk_link_values_are_noted():
    at = run_page(PAGE, {"batch": "lots", "eps": "-1", "dist": "uniform"})
    assert_no_exception(at)
    note = " ".join(i.value for i in at.info)
    assert "Batch size" in note and "Epsilon" in note and "Input" in note
    assert at.select_slider(key="batch").value == 8 and at.select_slider(key="eps").value == 1e-5


def test_lesson_preset_sets_controls_and_tells_its_story():
    at = run_page(PAGE, {"preset": "small-batch"})
    assert_no_exception(at)
    assert at.select_slider(key="batch").value == 4
    assert any("Small batch" in i.value for i in at.info)
    # A value the link sets itself wins over the lesson's.
    at = run_page(PAGE, {"preset": "small-batch", "batch": "6"})
    assert at.select_slider(key="batch").value == 6


def test_unknown_preset_is_noted():
    at = run_page(PAGE, {"preset": "nonsense"})
    assert_no_exception(at)
    assert any("not a lesson" in i.value for i in at.info)


def test_hidden_controls_are_not_drawn_but_keep_the_links_value():
    at = run_page(PAGE, {"hide": "eps,seed", "eps": "0.1", "seed": "9", **CHARTS})
    assert_no_exception(at)
    keys = {w.key for w in [*at.slider, *at.number_input, *at.select_slider]}
    assert "eps" not in keys and "seed" not in keys and "batch" in keys
    x = x_for(seed=9)
    np.testing.assert_allclose(grid_x(at), x.numpy(), rtol=1e-6, atol=1e-6)
    assert "0.1" in show(at, "cell").latex[0].value


def test_share_link_reproduces_the_view():
    at = run_page(PAGE, {"batch": "6", **CHARTS})
    at.slider(key="gain").set_value(2.0).run()
    link = share_link(at)
    assert "batch=6" in link and "gain=2" in link and "view=charts" in link and "seed" not in link
    query = dict(part.split("=") for part in link.split("?")[1].split("&"))
    again = run_page(PAGE, query)
    np.testing.assert_array_equal(outputs(again)[0], outputs(at)[0])


def test_lecture_mode_drops_prose():
    normal, present = run_page(PAGE), run_page(PAGE, {"present": "1"})
    assert_no_exception(present)
    words = lambda at: sum(len(m.value.split()) for m in at.markdown)  # noqa: E731
    assert words(present) < words(normal) - 50


def test_pasted_matrix_replaces_x_and_bad_paste_keeps_it():
    at = run_page(PAGE, CHARTS)
    at.text_area(key="paste").input("1, 2, 3, 4\n2, 4, 6, 9\n0, 0, 1, 0").run()
    at.button(key="use_paste").click().run()
    assert_no_exception(at)
    x = torch.tensor([[1, 2, 3, 4], [2, 4, 6, 9], [0, 0, 1, 0]], dtype=torch.float64)
    np.testing.assert_allclose(grid_x(at), x.numpy())
    ln, bn = outputs(at)
    np.testing.assert_allclose(ln, F.layer_norm(x, (4,), eps=1e-5).numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(bn, F.batch_norm(x, None, None, training=True, eps=1e-5).numpy(), rtol=1e-6, atol=1e-6)
    assert "batch" not in {s.key for s in at.select_slider}  # the generated-data controls are gone, not dead
    at.text_area(key="paste").input("1, 2\n3, oops").run()
    at.button(key="use_paste").click().run()
    assert any("oops" in w.value and "previous data" in w.value for w in at.warning)
    np.testing.assert_allclose(grid_x(at), x.numpy())
    at.button(key="own_data_off").click().run()
    np.testing.assert_allclose(grid_x(at), x_for().numpy(), rtol=1e-6, atol=1e-6)


def test_activations_handed_over_by_another_page_are_explored():
    at = run_page(PAGE, CHARTS)
    real = torch.linspace(-3, 5, 6 * 10, dtype=torch.float64).reshape(6, 10) ** 2
    at.session_state["explorer_activations"] = own_data.hold(real, "LN layer 1 (trained)", "a visitor")
    at.run()
    assert_no_exception(at)
    np.testing.assert_allclose(grid_x(at), real.numpy(), rtol=1e-6)
    assert any("LN layer 1" in i.value for i in at.info)


def test_export_script_matches_the_view():
    from lnviz.labs.explorer import export

    at = run_page(PAGE, {"batch": "5", "features": "7", "seed": "3", "gain": "1.5"})
    # Not shown, the downloads are not even built (the script cost the browser work on every move).
    assert not [c for c in at.code if "import torch" in c.value] and not at.get("download_button")
    show(at, "downloads")
    scripts = [c.value for c in at.code if "import torch" in c.value]
    assert scripts == [export.script("heterogeneous features", 5, 7, 3, 1.5, 0.0, False, 1e-5).rstrip()]
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"x.csv", "x.npy", "ln_y.csv", "bn_y.npy", "lnviz_view.py"} <= labels


def test_infinite_whole_numbers_in_a_link_do_not_crash_number_inputs():
    # Streamlit 1.67's integer number_input raises OverflowError on int(inf) when seeding from a link.
    at = run_page(PAGE, {"seed": "inf", "sample": "-inf", "feature": "1e999"})
    assert_no_exception(at)
    assert at.number_input(key="seed").value == 0 and at.number_input(key="sample").value == 0
    assert "Seed" in " ".join(i.value for i in at.info)


def test_a_link_naming_a_cell_beyond_the_grid_uses_the_last_one():
    # Found by the link fuzz: ?row=16 with B = 16 indexed past the grid.
    at = run_page(PAGE, {"sample": "16", "feature": "40"})
    assert_no_exception(at)
    assert "sample 7, feature 11" in " ".join(h.value for h in at.subheader)
    # The widgets and the link say the cell used, so a reload or a copied URL opens it: not 16 and 40.
    assert (at.number_input(key="sample").value, at.number_input(key="feature").value) == (7, 11)
    assert (at.query_params["sample"], at.query_params["feature"]) == ("7", "11")
    assert "Sample i: 16 is past the last of 8; using 7." in " ".join(i.value for i in at.info)


@pytest.mark.parametrize(
    "query, check",
    [
        ({"batch": "1"}, lambda d: d["B"] == 1 and d["bn"] is None and "B = 1" in d["bn_error"]),
        ({"dist": "constant row", "eps": "0"}, lambda d: d["undefined"]["ln_rows"] == [0] and d["ln"]["y"][0] == "NaN"),
        (
            {"batch": "1024", "features": "1024", "sample": "700"},
            lambda d: (d["B"], d["H"], d["R"], d["C"]) == (1024, 1024, 8, 12) and d["r0"] <= 700 < d["r0"] + 8,
        ),
    ],
    ids=["B=1", "eps0-constant-row", "1024x1024"],
)
def test_the_stage_is_drawn_first_in_every_edge_case(query, check):
    at = run_page(PAGE, query)
    assert_no_exception(at)
    kinds = [type(e).__name__ for e in at.main]
    assert kinds.index("UnknownElement") < kinds.index("Subheader")  # the stage comes before every section
    assert check(stage_data(at))
