"""reader.table: the data of a figure as one long table, checked on real builders' figures."""

from __future__ import annotations

import numpy as np
import pytest

from lnviz.figures import plot, reader
from lnviz.labs import explorer, family, invariance
from lnviz.labs.explorer import figures
from lnviz.maths import data


def _explored(b=6, h=9, dist="heterogeneous features", eps=1e-5):
    return explorer.with_affine(explorer.normalize(data.make_activations(dist, b, h, seed=2), eps), 1.5, -0.5)


def assert_table_is_the_data(fig) -> None:
    """Every drawn trace's every number is in the table, in order, and nothing else is."""
    table = reader.table(fig)
    drawn = [t for t in fig.data if t.name != figures.PICKER]
    assert list(table["trace"].unique()) == [t.name for t in drawn]
    for trace in drawn:
        rows = table[table["trace"] == trace.name]
        if trace.type == "heatmap":
            z = np.asarray(trace.z, dtype=np.float64)
            np.testing.assert_array_equal(rows["value"].to_numpy(np.float64).reshape(z.shape), z)  # NaN == NaN
            x = np.arange(z.shape[1]) if trace.x is None else np.asarray(trace.x)
            y = np.arange(z.shape[0]) if trace.y is None else np.asarray(trace.y)
            assert list(rows["x"]) == list(np.tile(x, z.shape[0]))
            assert list(rows["y"]) == list(np.repeat(y, z.shape[1]))
        else:
            for axis in ("x", "y", "z"):
                if getattr(trace, axis, None) is not None:
                    np.testing.assert_array_equal(rows[axis].to_numpy(), np.asarray(getattr(trace, axis)))


@pytest.mark.parametrize("b", [6, 1])
def test_explorer_figures(b):
    r = _explored(b=b)
    rows, cols = explorer.window(b, 9, 0, 3)
    built = [
        figures.fig_grid(r, rows, cols, (0, 3)),
        figures.fig_outputs(r, rows, cols, (0, 3), "y"),
        figures.fig_outputs(r, rows, cols, (0, 3), "x_hat"),
        figures.fig_distributions(explorer.distributions(r, (0, 3))),
    ]
    for fig in built:
        assert_table_is_the_data(fig)


def test_a_heatmap_is_flattened_row_by_row_with_its_row_and_column():
    r = _explored()
    fig = figures.fig_outputs(r, slice(0, 6), slice(0, 9), (0, 0), "y")
    table = reader.table(fig)
    assert list(table.columns) == ["trace", "x", "y", "value"] and len(table) == 2 * 6 * 9
    ln = table[table["trace"] == "LN y"]
    cell = ln[(ln["y"] == 4) & (ln["x"] == 7)]  # sample 4, feature 7
    assert cell["value"].item() == pytest.approx(float(r.ln.y[4, 7]), rel=1e-6)


def test_nan_stays_nan():
    r = _explored(dist="constant row", eps=0.0)  # row 0: σ = 0 and ε = 0, so x̂ = 0/0
    table = reader.table(figures.fig_outputs(r, slice(0, 6), slice(0, 9), (0, 0), "x_hat"))
    ln = table[table["trace"] == "LN x̂"]
    row = ln[ln["y"] == 0]["value"]
    assert len(row) == 9 and row.isna().all() and ln[ln["y"] != 0]["value"].notna().all()


def test_invisible_click_targets_are_left_out():
    r = _explored()
    fig = figures.fig_grid(r, slice(0, 6), slice(0, 9), (0, 0))
    assert figures.PICKER in [t.name for t in fig.data]
    assert figures.PICKER not in set(reader.table(fig)["trace"])


def test_text_on_the_cells_is_kept_without_markup():
    fig = invariance.fig_table(invariance.invariance_table(1.0, 0))
    assert_table_is_the_data(fig)
    text = reader.table(fig)["text"]
    assert text.str.startswith(("✓", "✗")).all() and not text.str.contains("<").any()


def test_three_d_points_keep_their_three_coordinates():
    x = family.make_tensor(3, 4, 5, 1)
    pick = (2, 1, 4)
    fig = family.fig_cube(x, family.pooled_mask(tuple(x.shape), "LN", pick, groups=2), pick, "LN")
    assert_table_is_the_data(fig)
    table = reader.table(fig)
    assert list(table.columns) == ["trace", "x", "y", "z"] and len(table) == x.numel()


def test_the_kit_lecture_version_has_the_same_table():
    r = _explored()
    fig = figures.fig_distributions(explorer.distributions(r, (0, 3)))
    assert reader.table(plot.lecture(fig)).equals(reader.table(fig))
