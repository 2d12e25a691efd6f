"""Checks every figure builder's output must pass: the figure kit skips plotly's validation for speed."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from lnviz.figures import plot


def assert_plotly_valid(fig: go.Figure) -> None:
    """What the browser gets is what plotly's validation would have sent.

    No misspelt property, and no value (such as a named colour scale) left for
    the validator to expand: plotly's own validation raises on the first, and
    the JSON differs on the second. The lecture version of the figure must
    pass too.
    """
    for version in (fig, plot.lecture(fig)):
        assert json.loads(version.to_json()) == json.loads(go.Figure(version.to_dict()).to_json())
