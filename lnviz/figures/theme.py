"""The look of every figure: colour roles, value scales, type sizes and the lecture scale.

Colour roles. Each norm has one colour, the same on every page, in every chart
and in the prose (:data:`ROLES`; the prose's Streamlit colour names are
:data:`PROSE`). The categorical colours are Okabe and Ito's palette, which stays
distinguishable under the common colour-vision deficiencies. Series that are
not norms (features 0 to 3, Pre-LN and Post-LN, variance algorithms) take
:data:`SERIES`: dark colours that no reader takes for a norm's, LN's and BN's
least of all (neither's hue, ΔE00 ≥ 20 from both under every common
colour-vision deficiency, ≥ 10 from the other norms: tests/test_theme.py).
Okabe and Ito's palette has no such colour left: its sky blue reads as LN's,
its orange as BN's.

Other roles, each defined once here: :data:`HOLDS` and :data:`BREAKS` fill a
check's cells (the invariance table's ✓ and ✗), outside both value scales;
:data:`ACCENT` is the app's own colour for sliders, toggles and primary
buttons (``.streamlit/config.toml``'s primaryColor, the stage's sliders), a
dark neutral, where Streamlit's default red sat next to BN's vermillion.

Values. Signed data use :data:`DIVERGING`, ColorBrewer's PRGn (purple, white at
0, green): its order and sign stay readable under every common colour-vision
deficiency, and with normal vision it is free of LN's blue and BN's vermillion.
Under protanopia, though, its purple arm turns LN's blue and its green arm BN's
olive (so do those of every hued diverging scale: tests/test_theme.py), so a
norm's colour drawn over the scale (an outline) needs a second cue.
Magnitudes use :data:`SEQUENTIAL`, ColorBrewer's Greens, from white.
"""

# Okabe and Ito
BLUE = "#0072B2"
VERMILLION = "#D55E00"
ORANGE = "#E69F00"
GREEN = "#009E73"
PURPLE = "#CC79A7"
BLACK = "#000000"
GREY = "#999999"
# "none" (no norm): darker than Okabe-Ito's grey, which a deuteranope cannot tell from
# InstanceNorm's reddish purple (same lightness; ΔE00 6.2, tests/test_theme.py). Also 5.3:1 on white.
DARK_GREY = "#6C6C6C"
# Ink for marks on the value scale (hatching of NaN cells, outlines of a pick).
INK = "#333333"

# One colour per norm, on every page.
ROLES = {
    "LN": BLUE,
    "BN": VERMILLION,
    "RMSNorm": GREEN,
    "InstanceNorm": PURPLE,
    "GroupNorm": ORANGE,
    "WN": BLACK,
    "none": DARK_GREY,
    "input": GREY,
}
# The same roles in Streamlit's Markdown (`:blue[LayerNorm]`): the closest of its named colours.
PROSE = {"LN": "blue", "BN": "orange", "RMSNorm": "green", "InstanceNorm": "violet", "GroupNorm": "orange"}

# Categories that are not norms, in order of use: black, wine, forest and brown. Dark, so a thin line
# stays 3:1 or more on white (WCAG's non-text contrast). Searched among the colours ≥ 20 from LN and BN
# and ≥ 10 from the other norms (ΔE00, under every simulated vision), far from LN's and BN's hue, for
# the largest ΔE00 between them: ≥ 10 under every vision, ≥ 18 with normal vision. The next best
# fourth colours were navy blues, which read as LN's.
WINE = "#871E5A"
FOREST = "#0F3C00"
BROWN = "#694B4B"
SERIES = (BLACK, WINE, FOREST, BROWN)

# A check's cells: white where it holds (nothing to flag), gold where it breaks. Black text is 14:1 on the
# gold; the two stay ≥ 20 apart under every simulated vision, and the gold is no colour of the value scales.
HOLDS = "#FFFFFF"
BREAKS = "#FFD200"

# Streamlit's primaryColor (sliders, toggles, primary buttons; white text on it is 9.7:1), and the stage's
# sliders: a dark neutral grey, neither LN's nor BN's colour. Must equal .streamlit/config.toml's.
ACCENT = "#444444"

# ColorBrewer's PRGn: negative purple, 0 white, positive green. Spelled out, because
# plotly.js knows only a few scale names and the figures skip plotly's validation,
# which would expand them.
DIVERGING = [
    [0.0, "rgb(64,0,75)"],
    [0.1, "rgb(118,42,131)"],
    [0.2, "rgb(153,112,171)"],
    [0.3, "rgb(194,165,207)"],
    [0.4, "rgb(231,212,232)"],
    [0.5, "rgb(247,247,247)"],
    [0.6, "rgb(217,240,211)"],
    [0.7, "rgb(166,219,160)"],
    [0.8, "rgb(90,174,97)"],
    [0.9, "rgb(27,120,55)"],
    [1.0, "rgb(0,68,27)"],
]
SEQUENTIAL = [
    [0.0, "rgb(247,252,245)"],
    [0.125, "rgb(229,245,224)"],
    [0.25, "rgb(199,233,192)"],
    [0.375, "rgb(161,217,155)"],
    [0.5, "rgb(116,196,118)"],
    [0.625, "rgb(65,171,93)"],
    [0.75, "rgb(35,139,69)"],
    [0.875, "rgb(0,109,44)"],
    [1.0, "rgb(0,68,27)"],
]

# Type, in CSS pixels. Every chart text inherits FONT_SIZE unless it is a title.
FONT_FAMILY = '"Source Sans Pro", "Source Sans 3", sans-serif'
FONT_SIZE = 13
TITLE_SIZE = 16
# In lecture mode every chart's text grows by this factor, as the page's prose does (20 px against 13).
LECTURE_SCALE = 1.55
