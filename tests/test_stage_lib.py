"""The stage's payload (lnviz.labs.explorer.stage) against torch.nn.functional, in float64."""

import json
import math
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from lnviz import text
from lnviz.labs import explorer
from lnviz.labs.explorer import stage
from lnviz.maths import data
from lnviz.views import state

ASSETS = Path(__file__).resolve().parents[1] / "lnviz" / "web" / "stage"


def _values(numbers: list) -> torch.Tensor:
    """The payload's numbers back as float64 ("NaN", "Infinity" included)."""
    return torch.tensor([float(v) for v in numbers], dtype=torch.float64)


def _strict(payload: dict) -> dict:
    """The payload through strict JSON, as the browser's JSON.parse reads it (no bare NaN)."""
    return json.loads(json.dumps(payload, allow_nan=False))


def _case(seed: int) -> dict:
    """A random grid, window, ε, γ and β, drawn from a generator of its own."""
    g = torch.Generator().manual_seed(seed)
    batch, features = (int(n) for n in torch.randint(2, 40, (2,), generator=g))
    row, col = int(torch.randint(0, batch, (1,), generator=g)), int(torch.randint(0, features, (1,), generator=g))
    options = state.EPS.options
    return dict(
        x=torch.randn(batch, features, generator=g, dtype=torch.float64) * 3 + 1,
        eps=options[int(torch.randint(1, len(options), (1,), generator=g))],
        gain=round(float(torch.empty(1).uniform_(-5, 5, generator=g)), 2),
        bias=round(float(torch.empty(1).uniform_(-5, 5, generator=g)), 2),
        per_feature=bool(seed % 2),
        window=stage.window(batch, features, row, col),
        seed=seed,
    )


def _payload(case: dict) -> dict:
    x, features = case["x"], case["x"].shape[1]
    g, b = data.random_affine(features, case["seed"]) if case["per_feature"] else (None, None)  # (H,) each
    result = explorer.with_affine(explorer.normalize(x, case["eps"]), case["gain"], case["bias"], g, b)
    return _strict(stage.payload(result, *case["window"]))


def _gamma_beta(features: int, seed: int, gain: float, bias: float, per_feature: bool) -> tuple:
    """γ and β (H,) each, float64, as the explorer makes them from these controls (its Affine)."""
    g, b = data.random_affine(features, seed) if per_feature else (None, None)  # (H,) each
    affine = explorer.Affine(gain, bias, g, b)
    return tuple(torch.as_tensor(v, dtype=torch.float64).expand(features) for v in (affine.gamma, affine.beta))


def _controls(p: dict) -> dict:
    """The payload's controls by name."""
    return {c["name"]: c for c in p["controls"]}


@pytest.mark.parametrize("seed", range(8))
def test_payload_is_torchs_numbers(seed):
    case = _case(seed)
    x, eps = case["x"], case["eps"]
    batch, features = x.shape
    rows, cols = case["window"]
    p = _payload(case)
    gamma, beta = _gamma_beta(features, seed, case["gain"], case["bias"], case["per_feature"])  # (H,) each

    assert (p["B"], p["H"], p["r0"], p["c0"]) == (batch, features, rows.start, cols.start)
    assert (p["R"], p["C"]) == (rows.stop - rows.start, cols.stop - cols.start)
    values = {name: c["value"] for name, c in _controls(p).items()}
    assert values == {"gain": case["gain"], "bias": case["bias"], "eps": eps}
    torch.testing.assert_close(_values(p["x"]), x[rows, cols].reshape(-1), rtol=0, atol=0)

    ln_var, ln_mean = torch.var_mean(x, dim=1, unbiased=False)  # (B,): over each row's H features
    bn_var, bn_mean = torch.var_mean(x, dim=0, unbiased=False)  # (H,): over each column's B samples
    oracle = {
        "ln": (ln_mean[rows], ln_var[rows], F.layer_norm(x, (features,), eps=eps),
               F.layer_norm(x, (features,), gamma, beta, eps)),
        "bn": (bn_mean[cols], bn_var[cols], F.batch_norm(x, None, None, training=True, eps=eps),
               F.batch_norm(x, None, None, gamma, beta, training=True, eps=eps)),
    }  # fmt: skip
    for name, (mean, var, x_hat, y) in oracle.items():
        got = p[name]
        torch.testing.assert_close(_values(got["mean"]), mean, rtol=0, atol=1e-12)
        torch.testing.assert_close(_values(got["var"]), var, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(_values(got["x_hat"]), x_hat[rows, cols].reshape(-1), rtol=0, atol=1e-10)
        torch.testing.assert_close(_values(got["y"]), y[rows, cols].reshape(-1), rtol=0, atol=1e-10)
    assert p["ln"]["count"] == features and p["bn"]["count"] == batch
    torch.testing.assert_close(_values(p["gamma"]), gamma[cols], rtol=0, atol=1e-12)
    torch.testing.assert_close(_values(p["beta"]), beta[cols], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_the_browser_can_redo_the_elementwise_steps_for_other_controls(seed):
    """What the stage (model.js) does while a control is dragged, from the payload alone, is torch's output there."""
    case = _case(seed)
    p = _payload(case)
    gain, bias, eps = -1.35, 2.4, 0.2
    x, (rows, cols), features = case["x"], case["window"], case["x"].shape[1]
    gamma, beta = _gamma_beta(features, seed, gain, bias, case["per_feature"])  # (H,) each
    truth = {  # torch's own, float64
        "ln": F.layer_norm(x, (features,), gamma, beta, eps),
        "bn": F.batch_norm(x, None, None, gamma, beta, training=True, eps=eps),
    }
    x_w = _values(p["x"]).reshape(p["R"], p["C"])  # (R, C)
    g, b = _values(p["g"]), _values(p["b"])  # (C,), (C,)
    for name, axis in (("ln", 1), ("bn", 0)):
        mean, var = _values(p[name]["mean"]), _values(p[name]["var"])
        mean, var = (mean[:, None], var[:, None]) if axis == 1 else (mean[None, :], var[None, :])
        x_hat = (x_w - mean) / torch.sqrt(var + eps)  # (R, C)
        y = gain * g * x_hat + (bias + b)  # (R, C)
        torch.testing.assert_close(y, truth[name][rows, cols], rtol=0, atol=1e-10)


def test_single_sample_has_no_batchnorm_and_says_why():
    x = data.make_activations("standard normal", 1, 20, seed=3)  # (1, H)
    rows, cols = stage.window(1, 20, 0, 15)
    p = _strict(stage.payload(explorer.with_affine(explorer.normalize(x, 1e-5), 1.5, 0.5), rows, cols))
    assert p["bn"] is None and p["bn_error"] == explorer.BN_SINGLE_SAMPLE
    assert (p["R"], p["C"], p["c0"]) == (1, stage.COLS, 8)
    want = F.layer_norm(
        x, (20,), torch.full((20,), 1.5, dtype=torch.float64), torch.full((20,), 0.5, dtype=torch.float64)
    )
    torch.testing.assert_close(_values(p["ln"]["y"]), want[0, 8:20], rtol=0, atol=1e-10)


def test_zero_eps_with_a_constant_row_marks_its_cells_undefined():
    x = data.make_activations("constant row", 6, 10, seed=0)  # row 0 is constant
    result = explorer.normalize(x, 0.0)
    p = _strict(stage.payload(result, slice(0, 6), slice(0, 10)))
    assert p["undefined"] == {"ln_rows": [0], "bn_cols": []}
    ln_y = _values(p["ln"]["y"]).reshape(6, 10)
    ln_x_hat = _values(p["ln"]["x_hat"]).reshape(6, 10)
    assert all(v == "NaN" for v in p["ln"]["y"][:10]) and all(v == "NaN" for v in p["ln"]["x_hat"][:10])
    assert torch.isfinite(ln_y[1:]).all() and torch.isfinite(ln_x_hat[1:]).all()
    assert p["ln"]["var"][0] == 0.0 and torch.isfinite(_values(p["bn"]["y"])).all()
    torch.testing.assert_close(ln_y[1:], F.layer_norm(x, (10,), eps=0.0)[1:], rtol=0, atol=1e-10)
    # A window without the constant row has nothing undefined.
    assert _strict(stage.payload(result, slice(1, 6), slice(0, 10)))["undefined"]["ln_rows"] == []


def test_at_zero_eps_the_badge_says_bns_numbers_are_the_formulas():
    """torch refuses BN at ε = 0 in training, so the stage may not call those numbers torch's without saying so."""
    x = data.make_activations("standard normal", 5, 7, seed=1)
    with pytest.raises(ValueError, match="eps must be positive"):
        F.batch_norm(x, None, None, training=True, eps=0.0)
    p = _strict(stage.payload(explorer.normalize(x, 0.0), slice(0, 5), slice(0, 7)))
    assert p["caveat"] == explorer.BN_ZERO_EPS_BADGE and "ε = 0" in p["caveat"]
    assert p["caveat_note"] == explorer.BN_ZERO_EPS and "refuses ε = 0" in p["caveat_note"]
    # What the note says: the formula's numbers are the limit of torch's as ε → 0 (σ > 0 here).
    formula = (x - x.mean(0)) / x.var(0, unbiased=False).sqrt()  # (B, H)
    torch.testing.assert_close(_values(p["bn"]["x_hat"]).reshape(5, 7), formula, rtol=0, atol=1e-12)
    near = F.batch_norm(x, None, None, training=True, eps=1e-12)
    torch.testing.assert_close(near, formula, rtol=0, atol=1e-9)
    # LN at ε = 0 is torch's own, and with ε > 0 or without a BN there is nothing to add.
    torch.testing.assert_close(_values(p["ln"]["x_hat"]).reshape(5, 7), F.layer_norm(x, (7,), eps=0.0))
    for result in (explorer.normalize(x, 1e-5), explorer.normalize(x[:1], 0.0)):
        p = _strict(stage.payload(result, slice(0, result.x.shape[0]), slice(0, 7)))
        assert p["caveat"] == p["caveat_note"] == ""
    # The stage shows the caveat beside torch's label, and its note as the badge's title.
    js = "".join(f.read_text() for f in sorted(ASSETS.rglob("*.js")))
    assert js.count("torchLabel(") == 4 and "s.badge.title = d.caveat_note" in js


def test_payload_refuses_a_window_outside_the_grid():
    result = explorer.with_affine(explorer.normalize(data.make_activations("standard normal", 4, 6, seed=0)), 2.0, 0.5)
    with pytest.raises(ValueError, match="window"):
        stage.payload(result, slice(0, 5), slice(0, 6))


def test_the_payload_reads_gamma_and_beta_and_what_made_them_from_the_result():
    """γ = gain·g and β = bias + b are made once, by with_affine; the payload sends what the result carries."""
    x = data.make_activations("standard normal", 5, 9, seed=2)
    g, b = data.random_affine(9, seed=2)  # (H,) each
    result = explorer.with_affine(explorer.normalize(x, 1e-3), -1.5, 0.75, g, b)
    assert result.affine == explorer.Affine(-1.5, 0.75, g, b)
    torch.testing.assert_close(result.ln.y, F.layer_norm(x, (9,), -1.5 * g, 0.75 + b, 1e-3), rtol=0, atol=1e-12)
    p = _strict(stage.payload(result, slice(1, 4), slice(2, 8)))
    assert (_controls(p)["gain"]["value"], _controls(p)["bias"]["value"]) == (-1.5, 0.75)
    torch.testing.assert_close(_values(p["g"]), g[2:8], rtol=0, atol=0)
    torch.testing.assert_close(_values(p["b"]), b[2:8], rtol=0, atol=0)
    torch.testing.assert_close(_values(p["gamma"]), -1.5 * g[2:8], rtol=0, atol=1e-15)
    # Scalars: g = 1 and b = 0; per-feature g, b with the controls at 1 and 0 are γ and β themselves.
    p = _strict(stage.payload(explorer.with_affine(explorer.normalize(x), 2.0, -1.0), slice(0, 5), slice(0, 9)))
    assert p["g"] == [1.0] * 9 and p["b"] == [0.0] * 9 and _controls(p)["gain"]["value"] == 2.0
    p = _strict(stage.payload(explorer.with_affine(explorer.normalize(x), 1.0, 0.0, g, b), slice(0, 5), slice(0, 9)))
    assert _controls(p)["gain"]["value"] == 1.0 and _controls(p)["bias"]["value"] == 0.0
    torch.testing.assert_close(_values(p["g"]), g, rtol=0, atol=0)


def test_the_payloads_controls_are_the_state_tables(monkeypatch):
    """Each scrubbed control's range, step or options come from lnviz.views.state, and a link's hide locks it."""
    x = data.make_activations("standard normal", 4, 6, seed=0)
    p = _strict(
        stage.payload(
            explorer.with_affine(explorer.normalize(x, 1e-3), 1.5, 0.5),
            slice(0, 4),
            slice(0, 6),
            locked={"eps", "seed"},
        )
    )
    assert [c["name"] for c in p["controls"]] == [param.key for param in stage.SCRUBBED] == ["gain", "bias", "eps"]
    for param in stage.SCRUBBED:
        c = _controls(p)[param.key]
        assert c["label"] == param.label and param.label.endswith(c["symbol"])
        assert c["locked"] == (param.key == "eps")
        if param.kind == "choice":
            assert c["options"] == list(param.options) and "step" not in c
        else:
            assert (c["min"], c["max"], c["step"]) == (param.lo, param.hi, param.step) and "options" not in c
    assert _controls(p)["eps"]["options"] == list(state.EPS.options)
    # Another range in the state table is another range on the stage: nothing else to edit.
    wider = state.GAIN.but(lo=-2.0, hi=8.0, step=0.5)
    monkeypatch.setattr(stage, "SCRUBBED", (wider, state.BIAS, state.EPS))
    p = _strict(stage.payload(explorer.with_affine(explorer.normalize(x, 1e-3), 1.5, 0.5), slice(0, 4), slice(0, 6)))
    assert {k: _controls(p)["gain"][k] for k in ("min", "max", "step")} == {"min": -2.0, "max": 8.0, "step": 0.5}
    # Nothing else writes a range or a step: not the stage's JavaScript (its comments aside), nor its HTML.
    code = re.sub(r"//.*", "", "".join(f.read_text() for f in sorted(ASSETS.rglob("*.js"))))
    assert not re.search(r"\b0\.05\b", code) and "eps_options" not in code
    assert 'step="' not in code and 'max="' not in code


def test_the_stages_colours_are_the_themes():
    """LN's, BN's and the accent colour, and the value scale, come from lnviz.figures.theme with the payload."""
    from lnviz.figures import theme

    x = data.make_activations("standard normal", 4, 6, seed=0)
    p = _strict(stage.payload(explorer.normalize(x), slice(0, 4), slice(0, 6)))
    assert p["colors"] == {
        "ln": theme.ROLES["LN"],
        "bn": theme.ROLES["BN"],
        "accent": theme.ACCENT,
        "scale": [color for _, color in theme.DIVERGING],
    }
    # The scale's stops are equally spaced, as the stage interpolates them (view/colour.js).
    stops = [at for at, _ in theme.DIVERGING]
    assert stops == pytest.approx([k / (len(stops) - 1) for k in range(len(stops))])
    # The CSS uses them as variables and repeats none of them.
    css = (ASSETS / "stage.css").read_text()
    js = "".join(f.read_text() for f in sorted(ASSETS.rglob("*.js")))
    for color in [theme.ROLES["LN"], theme.ROLES["BN"], theme.ACCENT, "#40004b", "#00441b"]:
        assert color.lower() not in css.lower() and color.lower() not in js.lower(), color
    assert "var(--ln)" in css and "var(--bn)" in css and "var(--accent)" in css and "var(--scale)" in css


@pytest.mark.parametrize("dist", state.DIST.options)
def test_xs_colour_scale_is_the_same_at_every_b_and_every_h_of_the_state_table(dist):
    """A change of B alone or of H alone keeps x's colour scale (issue 46), so a cell whose x it keeps keeps its
    colour: every stop of B at the default H, and of H at the default B. The stable draw's grid at a stop is the
    first rows (columns) of the largest one (lnviz.maths.data), drawn once here."""
    batch, features = state.BATCH.default, state.FEATURES.default
    tall = data.make_activations(dist, max(state.BATCH.options), features, seed=3)  # (1024, 12)
    wide = data.make_activations(dist, batch, max(state.FEATURES.options), seed=3)  # (8, 1024)
    grids = [tall[:b] for b in state.BATCH.options] + [wide[:, :h] for h in state.FEATURES.options]
    scales = {tuple(stage.x_range(x, dist).values()) for x in grids}
    assert len(scales) == 1, scales
    ((r, says),) = scales
    assert f"±{text.format_number(r)}" in says and "whatever B and H" in says
    # The payload carries it, whichever window it shows.
    result = explorer.normalize(tall[:batch])
    for i, j in ((0, 0), (batch - 1, features - 1)):
        assert _strict(stage.payload(result, *stage.window(batch, features, i, j), dist=dist))["x_range"]["r"] == r


@pytest.mark.parametrize("dist", state.DIST.options)
def test_xs_colour_scale_holds_at_least_99_values_in_100_of_its_input(dist):
    """The scale is the input kind's, not the grid's, and honest about it: over a 256 × 256 grid of the kind, at
    most 1 value in 100 lies beyond it (those take the end colours), and the kind's largest values are not all
    inside it by a factor of ten or more (a scale so wide would paint the grid white)."""
    x = data.make_activations(dist, 256, 256, seed=1)  # (B, H)
    r = stage.x_range(x, dist)["r"]
    assert float((x.abs() > r).double().mean()) <= 0.01
    assert float(x.abs().max()) > r / 10


def test_your_own_datas_colour_scale_is_its_largest_finite_value_over_the_whole_grid():
    """Your data keeps its B and H; its scale is its own largest |x| over every cell (NaN and ∞ have no colour),
    so that a window away from that cell, around another chosen cell, keeps the colours too."""
    x = torch.randn(40, 30, generator=torch.Generator().manual_seed(5), dtype=torch.float64)  # (B, H)
    x[39, 29] = -70.5
    x[0, 0], x[0, 1] = math.nan, math.inf
    result = explorer.normalize(x)
    scales = [_strict(stage.payload(result, *stage.window(40, 30, i, j)))["x_range"] for i, j in ((0, 0), (39, 29))]
    assert scales[0] == scales[1] and scales[0]["r"] == 70.5 and "your data" in scales[0]["says"]


@pytest.mark.parametrize("n, at", [(3, 2), (8, 7), (12, 0), (100, 50), (1024, 1023)])
@pytest.mark.parametrize("size", [(stage.ROWS, stage.COLS), (6, 10)])
def test_window_holds_the_cell_and_is_at_most_rows_by_cols(n, at, size):
    rows, cols = stage.window(n, n, at, at, *size)
    assert rows.start <= at < rows.stop and cols.start <= at < cols.stop
    assert (rows.stop - rows.start, cols.stop - cols.start) == (min(n, size[0]), min(n, size[1]))
    assert rows.stop <= n and cols.stop <= n


def test_a_rerun_is_small_even_for_the_largest_grid():
    x = data.make_activations("heterogeneous features", 1024, 1024, seed=0)
    g, b = data.random_affine(1024, seed=0)
    result = explorer.with_affine(explorer.normalize(x, 1e-5), 1.25, -0.5, g, b)
    p = stage.payload(result, *stage.window(1024, 1024, 600, 700))
    data_bytes = len(json.dumps(p, allow_nan=False).encode())
    assert data_bytes <= 20_000, data_bytes  # 8 × 12 cells: a few thousand numbers at most
    assert math.isclose(p["gamma"][0], 1.25 * float(g[p["c0"]]), rel_tol=1e-12)


def test_the_element_names_its_files_and_carries_none_of_them():
    """The JS and CSS are files the browser fetches once and caches (the asset_dir of pyproject.toml), not text
    sent with the element on every rerun: the element holds their paths."""
    from harness.apptest import DEFAULT_PAGE, run_page

    at = run_page(DEFAULT_PAGE)
    (element,) = at.get("bidi_component")
    assert element.proto.component_name == "lnviz.stage"
    assert (element.proto.js_source_path, element.proto.css_source_path) == ("index.js", "stage.css")
    assert not element.proto.js_content and not element.proto.css_content
    for name in ("index.js", "stage.css"):
        assert (ASSETS / name).is_file(), name


def test_no_number_text_is_a_negative_zero_and_each_reads_back_near_its_value():
    """A negative that rounds to zero is written "0.0", not "−0.0" (lnviz.text; model.js is tested against the
    same texts in tests/js/): a student reads "−0.0" as a number below zero."""
    g = torch.Generator().manual_seed(27)
    values = [-0.0, -5e-324, *(-(10.0 ** torch.empty(400, dtype=torch.float64).uniform_(-12, 0, generator=g))).tolist()]
    zero = re.compile(r"[-\u2212][0.]+(e[-+]\d+)?")
    for v in values:
        texts = {
            "short": text.short(v),
            "short1": text.short(v, 1),
            "exact": text.exact(v),
            "control": text.control_text(v, 0.05),
            "format_number": text.format_number(v),
        }
        assert not any(zero.fullmatch(t) for t in texts.values()), (v, texts)
        assert abs(float(texts["short1"].replace("\u2212", "-")) - v) <= 0.05 + 1e-12, (v, texts)
        assert float(texts["format_number"]) == v
    assert (text.short(-0.04, 1), text.short(-0.05, 1), text.control_text(-0.001, 0.05)) == ("0.0", "\u22120.1", "0.00")
