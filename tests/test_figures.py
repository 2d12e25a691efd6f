"""The explorer's figures, checked on their data, not by eye."""

import numpy as np
import plotly.colors
import pytest
import torch.nn.functional as F
from figcheck import assert_plotly_valid

from lnviz.figures import plot, theme
from lnviz.labs import explorer
from lnviz.labs.explorer import figures
from lnviz.maths import data


def _result(b=6, h=9, preset="heterogeneous features"):
    return explorer.with_affine(explorer.normalize(data.make_activations(preset, b, h, seed=1), 1e-5), 1.0, 0.0)


def test_grid_shows_x_and_both_norms_statistics():
    r = _result()
    rows, cols = explorer.window(6, 9, 2, 4)
    fig = figures.fig_grid(r, rows, cols, (2, 4))
    heat = [t for t in fig.data if t.type == "heatmap"][0]
    np.testing.assert_allclose(np.asarray(heat.z), r.x.float().numpy(), rtol=1e-6)
    by_name = {t.name: t for t in fig.data}
    np.testing.assert_allclose(by_name["LN μ"].x, r.x.mean(1).float().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(by_name["BN σ"].y, r.x.std(0, unbiased=False).float().numpy(), rtol=1e-5)
    assert len(by_name["LN σ"].y) == 6 and len(by_name["BN μ"].x) == 9


def test_grid_outlines_the_chosen_row_and_column():
    r = _result()
    rows, cols = explorer.window(6, 9, 2, 4)
    shapes = figures.fig_grid(r, rows, cols, (2, 4)).layout.shapes
    row_box = [s for s in shapes if s.name == "LN row"][0]
    col_box = [s for s in shapes if s.name == "BN column"][0]
    assert row_box.y0 < 2 < row_box.y1 and row_box.x0 < 0 and row_box.x1 > 8
    assert col_box.x0 < 4 < col_box.x1 and col_box.y0 < 0 and col_box.y1 > 5


def test_outputs_share_one_colour_scale_and_put_ln_left_and_bn_right_as_the_stage_does():
    r = _result()
    rows, cols = explorer.window(6, 9, 0, 0)
    fig = figures.fig_outputs(r, rows, cols, (0, 0), "x_hat")
    heats = [t for t in fig.data if t.type == "heatmap"]
    assert [t.coloraxis for t in heats] == ["coloraxis", "coloraxis"]
    assert [t.name for t in heats] == ["LN x̂", "BN x̂"]
    x = r.x
    np.testing.assert_allclose(np.asarray(heats[0].z), F.layer_norm(x, (9,)).float().numpy(), rtol=1e-5, atol=1e-6)
    bn = F.batch_norm(x, None, None, training=True).float().numpy()
    np.testing.assert_allclose(np.asarray(heats[1].z), bn, rtol=1e-5, atol=1e-6)
    # LN's heatmap is the left half, under the LayerNorm title; BN's the right one.
    ln_x, bn_x = (fig.layout[plot.layout_key(t.xaxis)].domain for t in heats)
    assert ln_x[1] < bn_x[0]
    titles = {a.text: a.x for a in fig.layout.annotations}
    assert ln_x[0] < titles["LayerNorm"] < ln_x[1] and bn_x[0] < titles["BatchNorm"] < bn_x[1]
    # The chosen row is outlined on LN, the chosen column on BN.
    outlined = {(s.name, s.xref) for s in fig.layout.shapes if "casing" not in s.name}
    assert outlined == {("LN row", heats[0].xaxis), ("BN column", heats[1].xaxis)}
    assert fig.layout.coloraxis.cmid == 0
    lim = max(abs(np.asarray(h.z)).max() for h in heats)
    assert abs(fig.layout.coloraxis.cmax - lim) < 1e-5


def test_outputs_without_bn_say_why_in_bns_right_half():
    r = _result(b=1, preset="standard normal")
    fig = figures.fig_outputs(r, slice(0, 1), slice(0, 9), (0, 0))
    (heat,) = [t for t in fig.data if t.type == "heatmap"]
    assert heat.name == "LN y" and heat.xaxis == "x" and fig.layout.yaxis.visible is not False
    (note,) = [a for a in fig.layout.annotations if "B = 1" in a.text]
    assert note.x > fig.layout.xaxis.domain[1] and fig.layout.xaxis2.visible is False


def test_windowed_grid_stays_small():
    r = explorer.normalize(data.make_activations("standard normal", 1024, 1024, seed=0))
    rows, cols = explorer.window(1024, 1024, 500, 700)
    for fig in (figures.fig_grid(r, rows, cols, (500, 700)), figures.fig_outputs(r, rows, cols, (500, 700))):
        assert len(fig.to_json()) < 120_000
        for t in fig.data:
            if t.type == "heatmap":
                assert np.asarray(t.z).shape == (explorer.WINDOW, explorer.WINDOW)


def test_distributions_put_the_chosen_row_left_and_the_column_right_before_and_after_in_each_norms_colour():
    r = _result()
    i, j = 2, 7
    dists = explorer.distributions(r, (i, j))
    fig = figures.fig_distributions(dists)
    bars = [t for t in fig.data if t.type == "bar"]
    assert [t.name for t in bars] == [f"row {i}: x", f"row {i}: LN y", f"column {j}: x", f"column {j}: BN y"]
    want = {  # torch's values of the row LN pools and the column BN pools, before and after
        f"row {i}: x": r.x[i],
        f"row {i}: LN y": F.layer_norm(r.x, (9,))[i],
        f"column {j}: x": r.x[:, j],
        f"column {j}: BN y": F.batch_norm(r.x, None, None, training=True)[:, j],
    }
    for t in bars:
        norm = "LN" if t.name.startswith("row") else "BN"
        assert np.asarray(t.y).sum() == want[t.name].numel()  # every value counted once
        centres, counts = np.asarray(t.x, dtype=np.float64), np.asarray(t.y)
        width = centres[1] - centres[0]
        inside = [(abs(v - centres) <= width / 2 * (1 + 1e-4)).argmax() for v in want[t.name].tolist()]
        np.testing.assert_array_equal(counts, np.bincount(inside, minlength=len(counts)))
        assert t.marker.color == theme.ROLES[norm] and t.opacity in (None, 1)
    # LN's panels left of BN's; before above after; the row and the column share each value axis.
    axis = {t.name: (fig.layout[plot.layout_key(t.xaxis)], fig.layout[plot.layout_key(t.yaxis)]) for t in bars}
    ln_x, ln_y, bn_x, bn_y = (axis[t.name] for t in bars)
    assert ln_x[0].domain[1] < bn_x[0].domain[0] and ln_y[0].domain == ln_x[0].domain
    assert ln_y[1].domain[1] < ln_x[1].domain[0] and bn_y[1].domain == ln_y[1].domain
    assert bn_x[0].matches == bars[0].xaxis and bn_y[0].matches == bars[1].xaxis
    # The μ each norm subtracts, on its before panel: torch's mean of that row and of that column.
    mus = {t.name: t for t in fig.data if t.name.startswith("μ")}
    assert set(mus) == {f"μ of row {i}", f"μ of column {j}"}
    assert mus[f"μ of row {i}"].x[0] == pytest.approx(float(r.x[i].mean()), rel=1e-6)
    assert mus[f"μ of column {j}"].x[0] == pytest.approx(float(r.x[:, j].mean()), rel=1e-6)
    assert (mus[f"μ of row {i}"].xaxis, mus[f"μ of column {j}"].xaxis) == (bars[0].xaxis, bars[2].xaxis)
    titles = [(a.text, a.font.color) for a in fig.layout.annotations]
    assert titles == [
        (f"<b>LayerNorm</b> · row {i}", theme.ROLES["LN"]),
        (f"<b>BatchNorm</b> · column {j}", theme.ROLES["BN"]),
    ]


def test_distributions_without_bn_say_why_in_its_column():
    r = _result(b=1, preset="standard normal")
    fig = figures.fig_distributions(explorer.distributions(r, (0, 3)))
    assert [t.name for t in fig.data if t.type == "bar"] == ["row 0: x", "row 0: LN y"]
    assert any("B = 1" in a.text and a.x > 0.5 for a in fig.layout.annotations)


def test_grid_has_a_clickable_marker_on_every_cell():
    r = _result()
    rows, cols = explorer.window(6, 9, 0, 0)
    fig = figures.fig_grid(r, rows, cols, (0, 0))
    assert fig.data[1].name == figures.PICKER  # the page reads curve_number 1
    picker = fig.data[1]
    assert len(picker.x) == 6 * 9
    k = 2 * 9 + 7  # row 2, feature 7
    assert (picker.y[k], picker.x[k]) == (2, 7)
    assert abs(picker.customdata[k] - float(r.x[2, 7])) < 1e-5


@pytest.mark.parametrize("b, h, cell", [(6, 9, (2, 4)), (1, 9, (0, 3)), (200, 300, (150, 20))])
def test_every_explorer_figure_passes_plotly_validation(b, h, cell):
    r = explorer.with_affine(
        explorer.normalize(data.make_activations("heterogeneous features", b, h, seed=3), 1e-5), 1.5, -0.5
    )
    rows, cols = explorer.window(b, h, *cell)
    built = [
        figures.fig_grid(r, rows, cols, cell),
        figures.fig_outputs(r, rows, cols, cell, "y"),
        figures.fig_outputs(r, rows, cols, cell, "x_hat"),
        figures.fig_distributions(explorer.distributions(r, cell)),
    ]
    for fig in built:
        assert_plotly_valid(fig)


@pytest.mark.parametrize("ours, name", [(theme.DIVERGING, "PRGn"), (theme.SEQUENTIAL, "Greens")])
def test_the_value_scales_are_colorbrewers(ours, name):
    theirs = plotly.colors.get_colorscale(name)
    assert [c for _, c in ours] == [c for _, c in theirs]
    np.testing.assert_allclose([p for p, _ in ours], [p for p, _ in theirs], atol=1e-12)


def test_lecture_scales_every_font_once_even_when_builders_share_a_font_dict():
    shared = {"size": 10}
    fig = plot.figure(
        [dict(type="scatter", x=[0, 1], y=[0, 1], textfont=shared)],
        dict(xaxis=dict(title=dict(text="a", font=shared)), yaxis=dict(title=dict(text="b", font=shared))),
        margin=dict(l=10, r=10, t=10, b=10),
    )
    big = plot.lecture(fig, 2.0).to_dict()
    assert big["layout"]["xaxis"]["title"]["font"]["size"] == 20
    assert big["layout"]["yaxis"]["title"]["font"]["size"] == 20
    assert big["data"][0]["textfont"]["size"] == 20
    assert big["layout"]["xaxis"]["tickfont"]["size"] == 2 * theme.FONT_SIZE  # the kit sets every size
    assert big["layout"]["font"]["size"] == 2 * theme.FONT_SIZE and big["layout"]["margin"]["l"] == 20
    again = plot.lecture(plot.lecture(fig, 2.0)).to_dict()  # a builder's lecture copy, placed by the page kit
    assert again["layout"]["font"]["size"] == 2 * theme.FONT_SIZE and again["layout"]["margin"]["l"] == 20


# (height, bottom, legend rows, gap, head) as the race, the sequence lab and the kernel sweep place theirs.
@pytest.mark.parametrize(
    "height, bottom, rows, gap, head", [(420, 75, 2, 26, 8), (600, 50, 2, 26, 56), (600, 80, 5, 28, 8)]
)
def test_a_legend_in_the_top_margin_sits_gap_px_over_the_plot_area_with_room_for_its_rows(
    height, bottom, rows, gap, head
):
    top, legend = plot.legend_in_margin(height, bottom, rows, gap, head)
    assert (legend["orientation"], legend["yanchor"]) == ("h", "bottom")
    area = height - top - bottom  # px of the plot area; paper y = 1 is its top edge, `top` px below the figure's
    legend_bottom = top - (legend["y"] - 1) * area  # px below the figure's top
    assert legend_bottom == pytest.approx(top - gap)
    assert legend_bottom - head == pytest.approx(rows * plot.LEGEND_ROW)  # the rows fit under the head
