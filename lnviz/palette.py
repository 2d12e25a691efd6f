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

DIVERGING = "RdBu_r"  # negative blue, positive red, white at 0
SEQUENTIAL = "Viridis"
