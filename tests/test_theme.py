"""The theme's colours as readers with each common colour-vision deficiency see them.

Each colour is simulated for protanopia, deuteranopia and tritanopia (full
dichromacy) and compared in CIELAB with CIEDE2000. Everything is written out
here with numpy, so the test depends on no colour library:

- sRGB to linear RGB and to XYZ (D65): IEC 61966-2-1:1999, the sRGB standard.
- XYZ to CIELAB (D65 white): CIE 15:2004, section 8.2.1.
- Simulation: Machado, Oliveira and Fernandes (2009), "A Physiologically-based
  Model for Simulation of Color Vision Deficiency", IEEE TVCG 15(6). Their
  matrices at severity 1.0, applied to linear RGB, the result clipped to the
  display's gamut.
- Colour difference: CIEDE2000, as written out by Sharma, Wu and Dalal (2005),
  "The CIEDE2000 Color-Difference Formula: Implementation Notes, Supplementary
  Test Data, and Mathematical Observations", Color Res. Appl. 30(1); checked
  here against their test data.

Thresholds, in CIEDE2000 units (ΔE00 ≈ 1 is a just-noticeable difference
between two large patches side by side):

- LN against BN: ≥ 20. They are the contrast the whole app teaches, drawn on
  every page as thin lines, small markers and outlines, often without a label
  next to them. The difference needed to tell colours apart grows several-fold
  as marks shrink (Stone, Szafir and Setlur 2014, "An Engineering Model for
  Color Difference as a Function of Size"), and a reader must *identify* the
  norm, not merely see two colours differ. Okabe-Ito's blue and vermillion
  keep ≥ 49 under every simulation.
- Any other two norms that share a chart (the training race, the family's
  panels, the benchmark): ≥ 10. Those charts name each norm in a legend or a
  panel title as well, so colour is a second cue there; 10 still keeps thin
  lines apart at a glance.
- The value scale's two ends: ≥ 20, for the same reason as LN against BN: the
  sign of a value is the scale's message.
- A norm's colour against every colour of the value scale: ≥ 10, so that a
  cell is not read as "this is LN" and an outline in LN's colour does not
  vanish on the cells it surrounds.

The value scale is sampled as plotly.js draws it: linear in sRGB between stops.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lnviz.figures import theme

# Machado, Oliveira and Fernandes (2009), severity 1.0 (their supplementary table), on linear RGB.
MACHADO = {
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "tritanopia": np.array(
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
    ),
}
VISIONS = ("normal", *MACHADO)

# IEC 61966-2-1: linear sRGB to CIE XYZ, D65.
SRGB_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
)
D65 = np.array([0.95047, 1.0, 1.08883])

LN_BN_MIN = 20.0
PAIR_MIN = 10.0
ENDS_MIN = 20.0
ROLE_SCALE_MIN = 10.0
# The norms that share a chart (the race: none, BN, LN, RMSNorm; the family: the five norms).
CHART_ROLES = ("LN", "BN", "RMSNorm", "InstanceNorm", "GroupNorm", "none")


def srgb(color: str) -> np.ndarray:
    """'#RRGGBB' or 'rgb(r, g, b)' as gamma-encoded sRGB in [0, 1], shape (3,)."""
    color = color.strip()
    if color.startswith("#"):
        return np.array([int(color[k : k + 2], 16) for k in (1, 3, 5)]) / 255
    inner = color[color.index("(") + 1 : color.rindex(")")]
    return np.array([float(v) for v in inner.split(",")[:3]]) / 255


def to_linear(rgb: np.ndarray) -> np.ndarray:
    """IEC 61966-2-1's decoding: c / 12.92 up to 0.04045, else ((c + 0.055) / 1.055)^2.4."""
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def simulate(rgb: np.ndarray, vision: str) -> np.ndarray:
    """Linear RGB (..., 3) as seen with ``vision``: Machado's matrix, clipped to the gamut."""
    if vision == "normal":
        return rgb
    return np.clip(rgb @ MACHADO[vision].T, 0.0, 1.0)


def lab(linear: np.ndarray) -> np.ndarray:
    """Linear sRGB (..., 3) to CIELAB (..., 3), D65 white (CIE 15:2004).

    f(t) = t^(1/3) above (6/29)^3, else t / (3 (6/29)^2) + 4/29;
    L* = 116 f(Y/Yn) − 16, a* = 500 (f(X/Xn) − f(Y/Yn)), b* = 200 (f(Y/Yn) − f(Z/Zn)).
    """
    t = (linear @ SRGB_TO_XYZ.T) / D65
    d = 6 / 29
    f = np.where(t > d**3, np.cbrt(t), t / (3 * d**2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def seen(colors: str | list[str] | np.ndarray, vision: str) -> np.ndarray:
    """CIELAB of colours (names, or gamma-encoded sRGB rows) as seen with ``vision``."""
    if isinstance(colors, str):
        colors = [colors]
    rgb = np.array([srgb(c) for c in colors]) if isinstance(colors, list) else np.asarray(colors)
    return lab(simulate(to_linear(rgb), vision))


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 ΔE between CIELAB colours (..., 3), kL = kC = kH = 1 (Sharma, Wu and Dalal 2005, eqs. 1-22)."""
    L1, a1, b1 = np.moveaxis(np.asarray(lab1, dtype=float), -1, 0)
    L2, a2, b2 = np.moveaxis(np.asarray(lab2, dtype=float), -1, 0)
    # (2-5): a* stretched by G, which depends on the mean chroma.
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    # (7): hue angles in degrees, 0 for an achromatic colour.
    h1p = np.where(c1p == 0, 0.0, np.degrees(np.arctan2(b1, a1p)) % 360)
    h2p = np.where(c2p == 0, 0.0, np.degrees(np.arctan2(b2, a2p)) % 360)
    # (8-10): differences; the hue difference takes the short way round.
    dlp, dcp = L2 - L1, c2p - c1p
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(c1p * c2p == 0, 0.0, dh)
    dhp = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    # (12-14): means; the mean hue also takes the short way round.
    l_bar, c_bar_p = (L1 + L2) / 2, (c1p + c2p) / 2
    h_sum = h1p + h2p
    h_bar = np.where(np.abs(h1p - h2p) <= 180, h_sum / 2, np.where(h_sum < 360, (h_sum + 360) / 2, (h_sum - 360) / 2))
    h_bar = np.where(c1p * c2p == 0, h_sum, h_bar)
    # (15-21): weighting functions and the rotation term for blues.
    t = (
        1
        - 0.17 * np.cos(np.radians(h_bar - 30))
        + 0.24 * np.cos(np.radians(2 * h_bar))
        + 0.32 * np.cos(np.radians(3 * h_bar + 6))
        - 0.20 * np.cos(np.radians(4 * h_bar - 63))
    )
    d_theta = 30 * np.exp(-(((h_bar - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(c_bar_p**7 / (c_bar_p**7 + 25.0**7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c = 1 + 0.045 * c_bar_p
    s_h = 1 + 0.015 * c_bar_p * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    # (22)
    return np.sqrt((dlp / s_l) ** 2 + (dcp / s_c) ** 2 + (dhp / s_h) ** 2 + r_t * (dcp / s_c) * (dhp / s_h))


def scale_samples(scale: list[list], n: int = 201) -> np.ndarray:
    """``n`` colours along a plotly colour scale, gamma-encoded sRGB (n, 3), interpolated as plotly.js does."""
    stops = np.array([float(p) for p, _ in scale])
    colors = np.array([srgb(c) for _, c in scale])
    t = np.linspace(0.0, 1.0, n)
    return np.stack([np.interp(t, stops, colors[:, k]) for k in range(3)], axis=-1)


# Sharma, Wu and Dalal (2005), Table 1: pairs 1, 4, 7, 10-17, 19, 25 and 34 (hue wrap-around, achromatic, blue).
SHARMA = [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, -1.3802, -84.2814), (50.0, 0.0, -82.7485), 1.0000),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0010), 7.1792),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0011), 7.2195),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0012), 7.2195),
    ((50.0, -0.001, 2.49), (50.0, 0.0009, -2.49), 4.8045),
    ((50.0, -0.001, 2.49), (50.0, 0.0010, -2.49), 4.8045),
    ((50.0, -0.001, 2.49), (50.0, 0.0011, -2.49), 4.7461),
    ((50.0, 2.5, 0.0), (50.0, 0.0, -2.5), 4.3065),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((50.0, 2.5, 0.0), (56.0, -27.0, -3.0), 31.9030),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((90.8027, -2.0831, 1.4410), (91.1528, -1.6435, 0.0447), 1.4441),
]


def test_ciede2000_matches_sharma_test_data():
    lab1, lab2, expected = (np.array(v) for v in zip(*SHARMA, strict=True))
    np.testing.assert_allclose(ciede2000(lab1, lab2), expected, atol=1e-4)
    np.testing.assert_allclose(ciede2000(lab2, lab1), expected, atol=1e-4)  # symmetric


def test_lab_matches_reference_values():
    # White is L* = 100; sRGB's primaries as every CIELAB calculator gives them (D65).
    got = seen(["#FFFFFF", "#FF0000", "#00FF00", "#0000FF"], "normal")
    expected = [[100, 0, 0], [53.24, 80.09, 67.20], [87.73, -86.18, 83.18], [32.30, 79.19, -107.86]]
    np.testing.assert_allclose(got, expected, atol=0.02)


@pytest.mark.parametrize("vision", list(MACHADO))
def test_simulation_keeps_greys_and_merges_the_confused_pair(vision):
    greys = np.linspace(0, 1, 5)[:, None].repeat(3, axis=1)
    np.testing.assert_allclose(simulate(greys, vision), greys, atol=2e-3)  # each matrix's rows sum to 1
    # The textbook confusion: red against green for protan and deutan, blue against green for tritan.
    pair = ("#0000FF", "#00A000") if vision == "tritanopia" else ("#C80000", "#6E6E00")
    normal = ciede2000(*seen(list(pair), "normal"))
    assert ciede2000(*seen(list(pair), vision)) < normal / 2


@pytest.mark.parametrize("vision", VISIONS)
def test_ln_and_bn_stay_distinguishable(vision):
    ln, bn = seen([theme.ROLES["LN"], theme.ROLES["BN"]], vision)
    assert ciede2000(ln, bn) >= LN_BN_MIN


@pytest.mark.parametrize("vision", VISIONS)
def test_norms_that_share_a_chart_stay_distinguishable(vision):
    labs = dict(zip(CHART_ROLES, seen([theme.ROLES[r] for r in CHART_ROLES], vision), strict=True))
    close = {
        (a, b): round(float(ciede2000(labs[a], labs[b])), 1)
        for a, b in itertools.combinations(CHART_ROLES, 2)
        if ciede2000(labs[a], labs[b]) < PAIR_MIN
    }
    assert not close, f"{vision}: ΔE00 below {PAIR_MIN}: {close}"


@pytest.mark.parametrize("vision", VISIONS)
def test_value_scale_lightness_rises_to_the_white_centre(vision):
    lightness = seen(scale_samples(theme.DIVERGING), vision)[:, 0]
    centre = len(lightness) // 2
    assert np.all(np.diff(lightness[: centre + 1]) > 0), f"{vision}: L* not rising from the negative end"
    assert np.all(np.diff(lightness[centre:]) < 0), f"{vision}: L* not falling to the positive end"
    assert lightness[centre] > 95  # the centre, 0, reads as white


@pytest.mark.parametrize("vision", VISIONS)
def test_value_scale_ends_stay_distinguishable(vision):
    low, high = seen([theme.DIVERGING[0][1], theme.DIVERGING[-1][1]], vision)
    assert ciede2000(low, high) >= ENDS_MIN


# Under each dichromacy only lightness and one hue axis are left (blue-yellow for protan and
# deutan, cyan-red for tritan), and LN's blue and BN's vermillion sit at that axis's two ends.
# Any diverging scale whose arms carry hue passes close to both at mid lightness. Measured
# (ΔE00, nearest point of PRGn): LN 2.8 protan, 5.7 deutan, 8.6 tritan; BN 6.3 protan. Tried:
# every ColorBrewer, CARTO and cmocean diverging scale in plotly (none above 6 under all three),
# and PRGn desaturated at mid lightness (above 10 only at a third of its chroma, which greys out
# the sign). The fix belongs in the figures: never rely on a norm's hue alone over the value
# scale (an outline gets a dark casing; /work/notes/review.md). Strict, so a fix shows up here.
_SCALE_CVD = pytest.mark.xfail(strict=True, reason="a hued diverging scale meets LN's or BN's colour (see comment)")
SCALE_MISSES = {("protanopia", "LN"), ("deuteranopia", "LN"), ("tritanopia", "LN"), ("protanopia", "BN")}
SCALE_CASES = [
    pytest.param(vision, role, marks=_SCALE_CVD if (vision, role) in SCALE_MISSES else (), id=f"{vision}-{role}")
    for vision in VISIONS
    for role in ("LN", "BN")
]


@pytest.mark.parametrize(("vision", "role"), SCALE_CASES)
def test_norm_colours_stay_out_of_the_value_scale(vision, role):
    scale = seen(scale_samples(theme.DIVERGING), vision)
    distances = ciede2000(seen(theme.ROLES[role], vision), scale)
    nearest = int(np.argmin(distances))
    assert distances[nearest] >= ROLE_SCALE_MIN, (
        f"{vision}: {role}'s colour is ΔE00 {distances[nearest]:.1f} from the scale at {nearest / (len(scale) - 1):.2f}"
    )


# Colours of roles that are not norms -----------------------------------------------------------------------------
# Each must not be read as a norm: ΔE00 ≥ LN_BN_MIN from LN and BN, ≥ PAIR_MIN from the other norms, under every
# vision; and with normal vision not LN's or BN's hue (sky blue is ΔE00 20.0 from LN's blue, yet it is "blue").
# Degrees of CIELAB hue from LN's and BN's, for a colour with chroma above ACHROMATIC. Okabe-Ito's sky blue
# is 15° from LN's blue, its orange 22° from BN's vermillion; the gold of a broken check is 34° from BN's.
HUE_MIN = 30.0
ACHROMATIC = 8.0
STATUS = {"HOLDS": theme.HOLDS, "BREAKS": theme.BREAKS}
NON_NORM = {f"SERIES[{k}]": c for k, c in enumerate(theme.SERIES)} | STATUS | {"ACCENT": theme.ACCENT}


def hue_and_chroma(color: str) -> tuple[float, float]:
    """CIELAB hue angle (degrees) and chroma of ``color`` with normal vision."""
    _, a, b = seen(color, "normal")[0]
    return float(np.degrees(np.arctan2(b, a)) % 360), float(np.hypot(a, b))


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("role", list(NON_NORM))
def test_other_roles_are_not_read_as_a_norm(role, vision):
    color = NON_NORM[role]
    for norm in CHART_ROLES:
        need = LN_BN_MIN if norm in ("LN", "BN") else PAIR_MIN
        distance = float(ciede2000(*seen([color, theme.ROLES[norm]], vision)))
        assert distance >= need, f"{vision}: {role} {color} is ΔE00 {distance:.1f} from {norm}'s colour"


@pytest.mark.parametrize("role", list(NON_NORM))
def test_other_roles_have_neither_lns_nor_bns_hue(role):
    hue, chroma = hue_and_chroma(NON_NORM[role])
    if chroma <= ACHROMATIC:
        return
    for norm in ("LN", "BN"):
        norm_hue, _ = hue_and_chroma(theme.ROLES[norm])
        apart = abs((hue - norm_hue + 180) % 360 - 180)
        assert apart >= HUE_MIN, f"{role} is {apart:.0f}° of hue from {norm}'s colour"


@pytest.mark.parametrize("vision", VISIONS)
def test_series_stay_apart_from_each_other(vision):
    labs = seen(list(theme.SERIES), vision)
    close = [(a, b) for a, b in itertools.combinations(range(len(labs)), 2) if ciede2000(labs[a], labs[b]) < PAIR_MIN]
    assert not close, f"{vision}: SERIES pairs below ΔE00 {PAIR_MIN}: {close}"


def relative_luminance(color: str) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""
    return float(to_linear(srgb(color)) @ SRGB_TO_XYZ[1])


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio between two colours."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_series_lines_and_the_accent_stand_out_on_white():
    assert all(contrast(c, "#FFFFFF") >= 3.0 for c in theme.SERIES)  # WCAG 1.4.11, non-text contrast
    assert contrast(theme.ACCENT, "#FFFFFF") >= 4.5  # a primary button's white label
    assert all(contrast(c, theme.BLACK) >= 7.0 for c in STATUS.values())  # the ✓ and ✗ drawn on them


@pytest.mark.parametrize("vision", VISIONS)
def test_a_check_reads_apart_and_away_from_the_value_scales(vision):
    holds, breaks = seen([theme.HOLDS, theme.BREAKS], vision)
    assert ciede2000(holds, breaks) >= ENDS_MIN
    # ✗ is no value: it stays off both scales (✓ is the page's white, where the scales' 0 is white too).
    for scale in (theme.DIVERGING, theme.SEQUENTIAL):
        nearest = float(np.min(ciede2000(breaks, seen(scale_samples(scale), vision))))
        assert nearest >= ROLE_SCALE_MIN, f"{vision}: BREAKS is ΔE00 {nearest:.1f} from a value scale"


def test_the_accent_is_the_apps_and_the_stages():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    config = tomllib.loads((root / ".streamlit" / "config.toml").read_text())
    assert config["theme"]["primaryColor"].upper() == theme.ACCENT.upper()  # Streamlit's default red is none
    css = (root / "lnviz" / "web" / "stage" / "stage.css").read_text()
    assert "accent-color: var(--accent)" in css  # the stage's --accent is the payload's, from the theme
    from lnviz.labs.explorer import stage

    assert stage.colors()["accent"] == theme.ACCENT
