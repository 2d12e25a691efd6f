"""The scales of the state table's controls: the stops a slider over sizes, ε or learning rates moves through.

:mod:`lnviz.views.state` gives them to its controls as their options; a page's range keeps the stops
inside it (:class:`~lnviz.views.param.Param`).
"""

from __future__ import annotations


def eps_options() -> tuple[float, ...]:
    """ε choices: exactly 0, then 1, 2, 5 per decade from 1e-12 to 1 (log scale)."""
    values = [0.0]
    for exponent in range(-12, 0):
        for mantissa in (1, 2, 5):
            values.append(float(f"{mantissa}e{exponent}"))
    values.append(1.0)
    return tuple(values)


def lr_options() -> tuple[float, ...]:
    """Learning rates: 1, 2, 5 per decade from 1e-4 to 1 (log scale)."""
    values = [float(f"{m}e{e}") for e in range(-4, 0) for m in (1, 2, 5)]
    return (*values, 1.0)


def size_options() -> tuple[int, ...]:
    """The stops of a size slider: every size from 1 to 16, where each one teaches, then about 1.25× apart to 1024.

    On a linear slider from 1 to 1024 a 6 px drag moved B from 8 to 35; over these 35 stops a mouse or a
    finger reaches B = 2, 3 and 4. A page's range keeps the stops inside it (:class:`Param`).
    """
    return (*range(1, 17), 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024)
