"""Colours: colour-blind-safe everywhere.

Categorical colours are Okabe and Ito's palette (distinguishable under the
common colour-vision deficiencies). Signed values use ColorBrewer's RdBu,
diverging and centred at 0, which stays readable for deuteranopes and
protanopes; magnitudes use a sequential scale (viridis).
"""

# Okabe-Ito
BLUE = "#0072B2"
VERMILLION = "#D55E00"
ORANGE = "#E69F00"
SKY = "#56B4E9"
GREEN = "#009E73"
YELLOW = "#F0E442"
PURPLE = "#CC79A7"
BLACK = "#000000"
GREY = "#999999"

# One colour per norm, the same on every page.
NORM_COLORS = {
    "none": GREY,
    "input": GREY,
    "LN": BLUE,
    "BN": VERMILLION,
    "RMSNorm": GREEN,
    "InstanceNorm": PURPLE,
    "GroupNorm": ORANGE,
    "WN": SKY,
}

# ColorBrewer's RdBu, reversed: negative blue, positive red, white at 0. Spelled
# out, because plotly.js has no "RdBu_r" (plotly's Python validation expands the
# name, and the explorer's figures skip that validation for speed).
DIVERGING = [
    [0.0, "rgb(5,48,97)"],
    [0.1, "rgb(33,102,172)"],
    [0.2, "rgb(67,147,195)"],
    [0.3, "rgb(146,197,222)"],
    [0.4, "rgb(209,229,240)"],
    [0.5, "rgb(247,247,247)"],
    [0.6, "rgb(253,219,199)"],
    [0.7, "rgb(244,165,130)"],
    [0.8, "rgb(214,96,77)"],
    [0.9, "rgb(178,24,43)"],
    [1.0, "rgb(103,0,31)"],
]
SEQUENTIAL = "Viridis"
