"""Lesson links: named scenarios that set several controls at once and tell a story.

A teacher shares ``?preset=small-batch``; the page applies the lesson's values
to every control the link does not set itself, and shows the story.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Lesson:
    """A named view of one page: the page's name in the registry, its control values and the point it makes.

    Every key of ``values`` is one of that page's controls (``tests/test_lessons.py`` checks).
    """

    page: str
    title: str
    story: str
    values: dict[str, Any] = field(default_factory=dict)


LESSONS: dict[str, Lesson] = {
    "small-batch": Lesson(
        "explorer",
        "Small batch: BN's statistics rest on 4 samples",
        "With 4 samples, each feature's BN mean and σ are estimated from 4 numbers, so a sample's BN output "
        "depends on which 3 samples share its batch. A new seed does not show this: it redraws every sample, "
        "so LN's output changes about as much as BN's. The [Batch coupling page](/coupling?batch=4&v=4) does: "
        "its chart *One sample, many batches* keeps one sample fixed among different batch-mates, and only "
        "its BN output moves. LN's statistics come from each sample's own 32 features, whatever the batch.",
        {"batch": 4, "features": 32, "dist": "heterogeneous features", "seed": 0},
    ),
    "outlier-feature": Lesson(
        "explorer",
        "One outlier feature",
        "Feature 1 is 25·(1 + |z|), at least 25, while the others are standard normal. With seed 0, in every "
        "sample it is more than 9 times the largest of the other 15. LN's μ and σ for every sample are "
        "dominated by it, so the other 15 features of each sample are squashed together: their x̂ all lie within "
        "0.4 of −1/√15 ≈ −0.26, the value they would all take if they were exactly 0. BN normalizes that "
        "feature in a column of its own, so the other columns never see it.",
        {"dist": "outlier feature", "batch": 16, "features": 16, "feature": 1, "seed": 0},
    ),
    "heterogeneous-samples": Lesson(
        "explorer",
        "Samples on different scales",
        "Each sample has its own offset and scale. BN normalizes each column across samples, so the "
        "samples' differences survive. LN removes each sample's own scale and offset: every row of x̂ comes "
        "out with mean 0 and variance σ²/(σ² + ε), within 0.4% of 1 with seed 0 and ε = 1e-5.",
        {"dist": "heterogeneous samples", "batch": 16, "features": 32, "seed": 0, "eps": 1e-5},
    ),
    "eps-matters": Lesson(
        "explorer",
        "When ε matters",
        "Sample 0 is almost constant: with seed 0 its σ² is 1.9e-6, smaller than ε = 1e-5. Inside √(σ² + ε), "
        "ε wins: LN's x̂ for that row has variance σ²/(σ² + ε) = 0.16, not 1. Move ε to 0: the tiny noise is "
        "blown up to unit variance. With an exactly constant row and ε = 0 it is 0/0.",
        {"dist": "near-constant row", "batch": 8, "features": 16, "seed": 0, "eps": 1e-5, "sample": 0},
    ),
}


def slug(name: str) -> str:
    """The URL form of a lesson's name: "ε matters" and "eps matters" become "eps-matters"."""
    return "-".join(name.strip().lower().replace("ε", "eps").replace("_", " ").split())


def find(name: str | None) -> Lesson | None:
    """The lesson a link names, or None."""
    return None if not name else LESSONS.get(slug(name))
