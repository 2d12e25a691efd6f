"""The benchmark's figures: each variant's GB/s against the copy's, on one case and over a sweep.

Built with the figure kit (:mod:`lnviz.figures.plot`). A variant is drawn in its
norm's colour (:data:`lnviz.figures.theme.ROLES`; BN in both modes shares BN's), the
copy ceiling in black and dashed. Bars and legends name a variant briefly
("LN fused"); the hover gives its full label.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from lnviz.figures import plot, theme
from lnviz.labs.bench.kernels import VARIANTS, Variant
from lnviz.labs.bench.results import percent_of_copy
from lnviz.labs.bench.timing import Measurement

COPY_NAME = "copy ceiling"
COPY_COLOR = theme.SERIES[0]  # black: the copy is no norm
_COLOR = {"copy": COPY_COLOR, "LN": theme.ROLES["LN"], "RMSNorm": theme.ROLES["RMSNorm"]}
_DASH = {
    "ln_naive": "dot",
    "ln_fused": "solid",
    "ln_compiled": "dash",
    "ln_triton": "dashdot",
    "rms_naive": "dot",
    "rms_fused": "solid",
    "bn_train": "solid",
    "bn_eval": "dot",
}
# (norm, kernel): a bar's two-line label and a legend entry, short enough for a phone.
_SHORT = {
    "ln_naive": ("LN", "eager"),
    "ln_fused": ("LN", "fused"),
    "ln_compiled": ("LN", "compiled"),
    "ln_triton": ("LN", "Triton"),
    "rms_naive": ("RMS", "eager"),
    "rms_fused": ("RMS", "fused"),
    "bn_train": ("BN", "train"),
    "bn_eval": ("BN", "eval"),
}
_HEADING = 30  # px at the top for the figure's title


def variant_color(m: Measurement | Variant) -> str:
    """The norm's colour from :mod:`lnviz.figures.theme` (BN in both modes shares BN's)."""
    return _COLOR.get(m.norm, theme.ROLES["BN"])


def _short_name(name: str, sep: str = " ") -> str:
    """Variant ``name``'s brief label, its norm and kernel joined by ``sep`` ("LN fused", or "LN<br>fused")."""
    if name == "copy":
        return COPY_NAME
    return sep.join(_SHORT[name]) if name in _SHORT else VARIANTS[name].label


def fig_quick(measurements: Sequence[Measurement]) -> go.Figure:
    """Bars of GB/s per variant on one case, x of shape (B, H), and the copy's GB/s as a dashed line.

    One bar per variant that ran (the copy aside), labelled with its share of
    the copy's bandwidth on the same case (:func:`~lnviz.labs.bench.results.percent_of_copy`).
    """
    pairs = [
        (m, pct)
        for m, pct in zip(measurements, percent_of_copy(measurements), strict=True)
        if m.available and m.variant != "copy"
    ]
    labels = [m.label for m, _ in pairs]
    bars = plot.bars(
        labels,
        [m.gbps for m, _ in pairs],
        "GB/s",
        [variant_color(m) for m, _ in pairs],
        text=[f"{pct:.0f}% of copy" for _, pct in pairs],
        customdata=[pct for _, pct in pairs],
        texttemplate="%{customdata:.0f}%",  # "of copy" is on the copy's line: bars stay narrow on a phone
        textposition="outside",
        cliponaxis=False,
        showlegend=False,
        hovertemplate="%{x}<br>%{y:.1f} GB/s<extra></extra>",
    )
    traces, annotations = [bars], []
    copy = next((m for m in measurements if m.variant == "copy" and m.available), None)
    top = max([m.gbps for m, _ in pairs] + ([copy.gbps] if copy else []), default=1.0)
    if copy is not None and labels:
        hover = f"copy: {copy.gbps:.1f} GB/s<extra></extra>"
        traces.append(
            plot.line([labels[0], labels[-1]], [copy.gbps, copy.gbps], COPY_NAME, COPY_COLOR, dash="dash")
            | dict(showlegend=False, hovertemplate=hover)
        )
        text = f"copy {copy.gbps:.1f} GB/s = 100%"
        annotations.append(
            plot.note(text, 0, copy.gbps, xanchor="left", yanchor="bottom", yref="y", bgcolor="rgba(255,255,255,0.8)")
        )
    first = measurements[0] if measurements else None
    title = f"x of shape ({first.batch}, {first.features}), {first.dtype}, {first.device}" if first else ""
    layout = dict(
        title=plot.heading(title),
        xaxis=dict(tickvals=labels, ticktext=[_short_name(m.variant, "<br>") for m, _ in pairs], tickangle=0),
        yaxis=dict(title=dict(text="effective GB/s (ideal bytes)"), range=[0, 1.2 * top]),
        showlegend=False,
    ) | (dict(annotations=annotations) if annotations else {})
    return plot.figure(traces, layout, margin=dict(l=70, r=20, t=_HEADING + 20, b=50), height=420)


def _sweep_traces(measurements: Sequence[Measurement], dtype: str, axes: plot.Axes, legend: bool) -> list[dict]:
    """One line of GB/s against H per variant measured in ``dtype``, on the panel ``axes``."""
    traces = []
    for name, variant in VARIANTS.items():
        points = sorted(
            (m for m in measurements if m.dtype == dtype and m.variant == name and m.available),
            key=lambda m: m.features,
        )
        if not points:
            continue
        is_copy = name == "copy"
        line = plot.line(
            [str(m.features) for m in points],
            [m.gbps for m in points],
            _short_name(name),
            variant_color(variant),
            axes,
            dash="dash" if is_copy else _DASH.get(name, "solid"),
            width=3 if is_copy else 2,
            markers=None if is_copy else dict(size=6),
        )
        traces.append(
            line
            | dict(
                legendgroup=name,
                customdata=[[m.batch, m.seconds * 1e6] for m in points],
                hovertemplate=f"{variant.label}<br>H=%{{x}}, B=%{{customdata[0]}}<br>"
                "%{y:.1f} GB/s, %{customdata[1]:.0f} µs<extra></extra>",
            )
            | ({} if legend else dict(showlegend=False))
        )
    return traces


def fig_sweep(measurements: Sequence[Measurement]) -> go.Figure:
    """GB/s against H, one panel per dtype, one line per variant; the copy ceiling is the black dashed line.

    Each point is one case, x of shape (B, H) with B samples filling the working
    set. H is a category axis in increasing order, so 1023 and 1024 stand side
    by side. The panels share their GB/s axis, from 0.
    """
    dtypes = list(dict.fromkeys(m.dtype for m in measurements))
    features = [str(h) for h in sorted({m.features for m in measurements})]
    domains = plot.columns(max(1, len(dtypes)), gap=0.03)
    traces, annotations, layout = [], [], {}
    for k, (dtype, domain) in enumerate(zip(dtypes, domains, strict=False), start=1):
        axes = plot.axis_names(k)
        traces += _sweep_traces(measurements, dtype, axes, legend=k == 1)
        annotations.append(plot.title(dtype, sum(domain) / 2))
        layout[plot.layout_key(axes[0])] = dict(
            domain=domain,
            anchor=axes[1],
            type="category",
            categoryorder="array",
            categoryarray=features,
            title=dict(text="H"),
        )
        layout[plot.layout_key(axes[1])] = dict(anchor=axes[0], rangemode="tozero") | (
            dict(title=dict(text="effective GB/s")) if k == 1 else dict(matches="y", showticklabels=False)
        )
    height, bottom = 600, 80
    # Five legend rows at a phone's width, one at a desk's; above the panel titles.
    top, legend = plot.legend_in_margin(height, bottom, rows=5, gap=28)
    layout |= dict(annotations=annotations, legend=legend)
    return plot.figure(traces, layout, margin=dict(l=70, r=20, t=top, b=bottom), height=height)
