"""The one percentile every benchmark reports, so that a p95 means the same on every table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) by linear interpolation; NaN for no values."""
    return float(np.percentile(values, q)) if values else float("nan")
