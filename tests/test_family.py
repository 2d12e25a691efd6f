"""The norm family page (lnviz.labs.family): who pools with whom, on one (N, C, H·W) tensor, against torch."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from conftest import assert_no_exception, figures, run_page
from figcheck import assert_plotly_valid
from hypothesis import given
from hypothesis import strategies as st
from test_norms import FAMILY, FAMILY_EPS, FAMILY_TOL, draw

from lnviz.figures import theme
from lnviz.labs import family as fam
from lnviz.maths.data import generator

PAGE = "pages/family.py"
EPS, TOL, HYP = FAMILY_EPS, FAMILY_TOL, FAMILY  # the family's oracle tests' settings, in test_norms


TORCH = {
    "BN": lambda x, groups: F.batch_norm(x, None, None, training=True, eps=EPS),
    "LN": lambda x, groups: F.layer_norm(x, x.shape[1:], eps=EPS),
    "InstanceNorm": lambda x, groups: F.instance_norm(x, eps=EPS),
    "GroupNorm": lambda x, groups: F.group_norm(x, groups, eps=EPS),
    "RMSNorm": lambda x, groups: F.rms_norm(x, x.shape[1:], eps=EPS),
}


def random_case(seed: int) -> tuple[torch.Tensor, int, fam.Pick]:
    g = generator(seed)
    n, c, p = draw(g, 1, 5), draw(g, 1, 9), draw(g, 2, 7)
    divisors = [d for d in range(1, c + 1) if c % d == 0]
    groups = divisors[draw(g, 0, len(divisors) - 1)]
    pick = (draw(g, 0, n - 1), draw(g, 0, c - 1), draw(g, 0, p - 1))
    return fam.make_tensor(n, c, p, seed), groups, pick


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_normalize_is_torch_for_every_norm(seed):
    x, groups, _ = random_case(seed)
    for norm in fam.NORMS:
        torch.testing.assert_close(fam.normalize(x, norm, groups, eps=EPS).y, TORCH[norm](x, groups), **TOL)


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_pooled_mask_is_exactly_what_torch_reads(seed):
    """The highlight: the elements whose change moves the picked output, found by torch's autograd."""
    x, groups, pick = random_case(seed)
    for norm in fam.NORMS:
        mask = fam.pooled_mask(tuple(x.shape), norm, pick, groups)
        assert mask.shape == x.shape and mask.dtype == torch.bool
        assert mask[pick]
        assert int(mask.sum()) == fam.normalize(x, norm, groups).count
        leaf = x.clone().requires_grad_(True)
        TORCH[norm](leaf, groups)[pick].backward()
        assert torch.equal(mask, leaf.grad != 0), norm


@HYP
@given(seed=st.integers(0, 2**31 - 1))
def test_cell_stats_are_the_pooled_sets_statistics(seed):
    x, groups, pick = random_case(seed)
    for norm in fam.NORMS:
        pooled = x[fam.pooled_mask(tuple(x.shape), norm, pick, groups)]
        stats = fam.cell_stats(norm, fam.normalize(x, norm, groups, eps=EPS), pick)
        mean = 0.0 if norm == "RMSNorm" else pooled.mean().item()
        var = pooled.square().mean().item() if norm == "RMSNorm" else pooled.var(unbiased=False).item()
        assert stats.norm == norm and stats.count == pooled.numel()
        assert stats.x == x[pick].item()
        assert stats.mean == pytest.approx(mean, rel=1e-10, abs=1e-12)
        assert stats.var == pytest.approx(var, rel=1e-10, abs=1e-12)
        assert stats.x_hat == pytest.approx(TORCH[norm](x, groups)[pick].item(), rel=1e-10, abs=1e-12)


def test_groups_that_do_not_divide_c_are_refused_in_words():
    assert fam.divisors(12) == (1, 2, 3, 4, 6, 12)
    assert fam.divisors(7) == (1, 7)
    x = fam.make_tensor(2, 6, 4, 0)
    for groups in (0, 4, 5, 7):
        with pytest.raises(ValueError, match="choose one of 1, 2, 3, 6"):
            fam.check_groups(6, groups)
        with pytest.raises(ValueError, match="must divide 6"):
            fam.normalize(x, "GroupNorm", groups)
        with pytest.raises(ValueError, match="must divide 6"):
            fam.pooled_mask((2, 6, 4), "GroupNorm", (0, 0, 0), groups)
    for groups in (1, 2, 3, 6):
        fam.check_groups(6, groups)


def test_picks_outside_the_tensor_are_refused():
    with pytest.raises(ValueError, match="channel = 6"):
        fam.pooled_mask((2, 6, 4), "BN", (0, 6, 0))
    with pytest.raises(ValueError, match="unknown norm"):
        fam.pooled_mask((2, 6, 4), "WN", (0, 0, 0))
    with pytest.raises(ValueError, match="unknown norm"):
        fam.normalize(fam.make_tensor(2, 6, 4, 0), "WN")


def test_make_tensor_is_seeded():
    a = fam.make_tensor(3, 4, 5, 9)
    assert a.shape == (3, 4, 5) and a.dtype == torch.float64
    assert torch.equal(a, fam.make_tensor(3, 4, 5, 9))
    assert not torch.equal(a, fam.make_tensor(3, 4, 5, 10))
    with pytest.raises(ValueError):
        fam.make_tensor(3, 4, 1, 0)


def test_cube_draws_every_element_once_with_the_pooled_set_highlighted():
    x = fam.make_tensor(3, 4, 5, 1)
    pick = (2, 1, 4)
    for norm in fam.NORMS:
        mask = fam.pooled_mask(tuple(x.shape), norm, pick, groups=2)
        other, pooled, picked = fam.fig_cube(x, mask, pick, norm).data
        assert len(other.x) + len(pooled.x) + len(picked.x) == x.numel()
        # the traces hold (c, n, pos) as (x, y, z)
        shown = {(n, c, p) for c, n, p in zip(pooled.x, pooled.y, pooled.z, strict=True)}
        expected = {tuple(i) for i in mask.nonzero().tolist()} - {pick}
        assert shown == expected
        assert (picked.y[0], picked.x[0], picked.z[0]) == pick
        assert pooled.marker.color == theme.ROLES[norm]
        assert picked.customdata[0] == pytest.approx(x[pick].item(), rel=1e-6)
        assert_plotly_valid(fam.fig_cube(x, mask, pick, norm))


def test_the_cube_says_what_the_pooled_set_shares_and_rmsnorm_shares_no_mean():
    """RMSNorm divides by √(E[x²] + ε) over its set and subtracts nothing, so its title names no μ; torch agrees."""
    x = fam.make_tensor(3, 4, 5, 1)
    pick = (2, 1, 4)
    for norm in fam.NORMS:
        mask = fam.pooled_mask(tuple(x.shape), norm, pick, groups=2)
        note = fam.fig_cube(x, mask, pick, norm).layout.title.subtitle.text
        assert ("share its μ and σ²" in note) == (norm != "RMSNorm")
    assert "share its E[x²] (no μ)" in fam.fig_cube(x, mask, pick, "RMSNorm").layout.title.subtitle.text
    y = F.rms_norm(x, (4, 5), eps=1e-5)  # (N, C, H·W): sample n's C·H·W elements share one mean square
    n = pick[0]
    torch.testing.assert_close(y[n], x[n] / (x[n].square().mean() + 1e-5).sqrt(), rtol=1e-12, atol=1e-12)
    assert abs(float(x[n].mean())) > 1e-3  # a μ that RMSNorm leaves in: y[n] is not centred
    assert abs(float(y[n].mean())) > 1e-3


def test_a_wide_cube_gives_the_height_to_the_cube_not_to_its_title():
    """Lecture mode's cube beside the controls: shorter, no legend (the page says it), the block drawn larger."""
    x = fam.make_tensor(4, 6, 8, 0)
    pick = (1, 2, 3)
    mask = fam.pooled_mask(tuple(x.shape), "GroupNorm", pick, groups=2)
    desk, wide = fam.fig_cube(x, mask, pick, "GroupNorm"), fam.fig_cube(x, mask, pick, "GroupNorm", wide=True)
    assert json.loads(wide.to_json())["data"] == json.loads(desk.to_json())["data"]  # the same cube
    assert wide.layout.height < desk.layout.height and wide.layout.margin.t < desk.layout.margin.t
    # The share of the figure left for the scene grows: the title and legend take less of it.
    scene = lambda f: (f.layout.height - f.layout.margin.t) / f.layout.height  # noqa: E731
    assert scene(wide) > scene(desk)
    assert wide.layout.showlegend is False and desk.layout.showlegend is not False
    assert wide.layout.scene.aspectratio.z > desk.layout.scene.aspectratio.z  # a larger block in the scene
    assert_plotly_valid(wide)


def test_small_multiples_show_each_norms_set_and_say_why_one_is_missing():
    shape, pick = (3, 4, 5), (1, 3, 0)
    masks = {norm: fam.pooled_mask(shape, norm, pick, groups=2) for norm in fam.NORMS}
    fig = fam.fig_family(masks, pick, "LN")
    heatmaps = [tr for tr in fig.data if tr.type == "heatmap"]
    assert [h.name for h in heatmaps] == list(fam.NORMS)
    for h in heatmaps:
        assert [list(row) for row in h.z] == masks[h.name].float().mean(dim=2).tolist()
    assert fig.layout.annotations[1].text == "<b>LN</b>"
    masks["GroupNorm"] = None
    fig = fam.fig_family(masks, pick, "GroupNorm", note="G = 3 does not divide C = 4")
    assert [tr.name for tr in fig.data if tr.type == "heatmap"] == ["BN", "LN", "InstanceNorm", "RMSNorm"]
    assert "G = 3 does not divide C = 4" in [a.text for a in fig.layout.annotations]
    assert_plotly_valid(fig)
    assert_plotly_valid(fam.fig_family(masks | {"GroupNorm": fam.pooled_mask(shape, "GroupNorm", pick, 2)}, pick, "LN"))


def _pooled(at):
    return figures(at)[0].data[1]


def _picked(at):
    cube = figures(at)[0].data[2]
    return cube.y[0], cube.x[0], cube.z[0]


def test_page_runs_and_every_control_acts():
    at = run_page(PAGE)
    assert_no_exception(at)
    assert len(figures(at)) == 2
    assert len(at.dataframe[0].value) == 5
    assert len(_pooled(at).x) == 6 // 2 * 8 - 1  # GroupNorm, G = 2: 3 channels × 8 positions, less the pick

    for norm, size in (("BN", 4 * 8), ("LN", 6 * 8), ("InstanceNorm", 8), ("RMSNorm", 6 * 8)):
        at.radio(key="norm").set_value(norm).run()
        assert_no_exception(at)
        assert len(_pooled(at).x) == size - 1, norm
        assert figures(at)[0].data[1].marker.color == theme.ROLES[norm]

    at.radio(key="norm").set_value("GroupNorm").run()
    at.slider(key="groups").set_value(3).run()
    assert len(_pooled(at).x) == 2 * 8 - 1

    at.number_input(key="sample").set_value(3).run()
    at.number_input(key="channel").set_value(5).run()
    at.number_input(key="position").set_value(7).run()
    assert _picked(at) == (3, 5, 7)
    table = at.dataframe[0].value
    x_before = table["x"].tolist()

    at.number_input(key="seed").set_value(5).run()
    assert at.dataframe[0].value["x"].tolist() != x_before

    at.slider(key="channels").set_value(12).run()
    at.slider(key="positions").set_value(4).run()
    at.select_slider(key="batch").set_value(2).run()
    assert_no_exception(at)
    cube = figures(at)[0]
    assert sum(len(tr.x) for tr in cube.data) == 2 * 12 * 4
    assert _picked(at) == (1, 5, 3)  # the sample and the position moved inside the smaller tensor
    assert len(_pooled(at).x) == 12 // 3 * 4 - 1

    at.slider(key="groups").set_value(5).run()
    assert_no_exception(at)
    assert any("G = 5 does not" in w.value for w in at.warning)
    assert len(figures(at)) == 1  # no cube for GroupNorm; the panels remain
    assert "GroupNorm" not in at.dataframe[0].value["norm"].tolist()
    at.radio(key="norm").set_value("BN").run()
    assert len(figures(at)) == 2 and len(_pooled(at).x) == 2 * 4 - 1


def test_page_reads_the_link():
    at = run_page(PAGE, {"norm": "InstanceNorm", "sample": "2", "channel": "4", "position": "6", "groups": "abc"})
    assert_no_exception(at)
    assert _picked(at) == (2, 4, 6)
    assert len(_pooled(at).x) == 8 - 1
    assert any("Groups G" in i.value for i in at.info)


def test_a_links_pick_past_the_tensor_is_moved_inside_it_with_a_note_for_each_index_moved():
    at = run_page(PAGE, {"batch": "2", "positions": "4", "sample": "7", "channel": "2", "position": "9"})
    assert_no_exception(at)
    assert _picked(at) == (1, 2, 3)
    notes = " ".join(i.value for i in at.info)
    assert notes.count("past the last") == 2 and "Sample n: 7 is past the last of 2; using 1." in notes
    assert "Position: 9 is past the last of 4; using 3." in notes


def test_lecture_mode_puts_the_controls_beside_the_cube():
    """On a projector (1280 × 720) the cube stood under the title, the norms and the pickers, below the fold."""
    at = run_page(PAGE, {"present": "1"})
    assert_no_exception(at)
    controls, picture = at.columns[0], at.columns[1]
    assert [r.key for r in controls.radio] == ["norm"]
    assert {n.key for n in controls.number_input} == {"sample", "channel", "position"}
    (cube,) = picture.get("plotly_chart")
    assert cube.proto.spec and "scatter3d" in cube.proto.spec
    assert figures(at)[0].layout.showlegend is False  # the wide cube, whose marks the page names beside it
    assert any("Squares: pooled" in m.value for m in picture.markdown)
    desk = run_page(PAGE)
    assert figures(desk)[0].layout.showlegend is not False
    assert not any(c.radio for c in desk.columns)  # at a desk the norms run across the page, above the cube


def test_the_page_cites_each_norm_and_says_what_ln_pools_here_and_in_a_transformer():
    """LN pools one sample's C channels at all H·W positions here, as Wu and He's CNN figure does; a transformer's
    LN pools one token's C features (torch: F.layer_norm over the last dim of x with positions as tokens)."""
    at = run_page(PAGE, {"channels": "5", "positions": "7"})
    assert_no_exception(at)
    prose = " ".join(m.value for m in at.markdown)
    for cited in ("Ioffe and Szegedy 2015", "Ba, Kiros and Hinton 2016", "Ulyanov, Vedaldi and Lempitsky 2016"):
        assert cited in prose, cited
    x = fam.make_tensor(2, 5, 7, 0)  # (N, C, H·W)
    per_sample = F.layer_norm(x, x.shape[1:])  # (N, C, H·W): one μ, σ² per sample
    per_token = F.layer_norm(x.transpose(1, 2), x.shape[1:2]).transpose(1, 2)  # one per (sample, position)
    assert not torch.allclose(per_sample, per_token)
    pooled = fam.normalize(x, "LN", 1).count
    assert pooled == x.shape[1] * x.shape[2] == 35
    assert f"one sample's {x.shape[1]} channels at all its {x.shape[2]} positions: {pooled} values" in prose
    assert f"each would get its own μ and σ², from its {x.shape[1]} channels" in prose
    caption = " ".join(c.value for c in at.caption)
    mean_square = x.square().mean(dim=(1, 2), keepdim=True)  # (N, 1, 1)
    torch.testing.assert_close(F.rms_norm(x, x.shape[1:], eps=0.5), x / (mean_square + 0.5).sqrt())
    assert "x / √(E[x²] + ε): ε inside the root, as `F.rms_norm` puts it" in caption
