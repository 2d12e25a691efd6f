"""Where a press's time goes in the browser: the page's main-thread work, and plotly.js alone.

Two measurements that explain the key-press latencies of
:mod:`benchmarks.browser_latency`:

- :func:`main_thread_ms`: for a press on an open tab, the time the renderer's
  main thread was busy (the sum of its top-level tasks in a Chromium trace)
  from the key press until the page settled. Everything the page does for a
  rerun is there: applying Streamlit's messages, React, KaTeX, plotly.js,
  style, layout and paint.
- :func:`plotly_redraw_ms`: ``Plotly.react`` of the explorer's own figures,
  built by :mod:`lnviz.labs.explorer.figures` at the default size, for a gain move (γ 1.00
  and 1.05 in turn), alone in a blank page with the plotly.js that the plotly
  Python package ships. No server, no Streamlit, no other tab: a floor for
  what the browser must spend to redraw those charts.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import plotly
from playwright.sync_api import Browser

from benchmarks.tabs import GAIN
from harness.chromium import local_context
from harness.tab import AppPage

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
RENDERER_MAIN = "CrRendererMain"


def _busy_ms(trace: bytes) -> float:
    """The summed duration of top-level tasks on every renderer main thread in a Chromium trace."""
    events = json.loads(trace)["traceEvents"]
    mains = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("name") == "thread_name" and e.get("args", {}).get("name") == RENDERER_MAIN
    }
    return (
        sum(
            e["dur"]
            for e in events
            if e.get("name") == "RunTask" and e.get("ph") == "X" and (e["pid"], e["tid"]) in mains
        )
        / 1000
    )


def main_thread_ms(browser: Browser, tab: AppPage, key: str) -> float:
    """Press ``key`` on ``tab``'s gain slider under a trace, until settled; the renderer's busy milliseconds."""
    # RunTask, the scheduler's top-level task, is only in the disabled-by-default category.
    browser.start_tracing(page=tab.page, categories=["devtools.timeline", "disabled-by-default-devtools.timeline"])
    try:
        tab.press(key, GAIN)
    finally:
        trace = browser.stop_tracing()
    return _busy_ms(trace)


_REACT_JS = """
async ([figures, repeats]) => {
    const gd = document.getElementById('chart');
    const out = [];
    for (const [a, b] of figures) {
        await Plotly.newPlot(gd, a.data, a.layout);
        const times = [];
        for (let k = 0; k < repeats; k++) {
            const f = k % 2 ? a : b;
            const data = JSON.parse(JSON.stringify(f.data)), layout = JSON.parse(JSON.stringify(f.layout));
            const t = performance.now();
            await Plotly.react(gd, data, layout);
            times.push(performance.now() - t);
        }
        out.push(times);
    }
    return out;
}
"""


def plotly_redraw_ms(browser: Browser, repeats: int = 12) -> tuple[str, dict[str, float]]:
    """plotly.js's version, and the median ``Plotly.react`` milliseconds of each figure a gain move changes."""
    from lnviz.labs import explorer
    from lnviz.labs.explorer import figures
    from lnviz.maths import data

    def views(gain: float) -> dict[str, str]:
        x = data.make_activations("heterogeneous features", 16, 32, seed=0)  # the explorer's default view
        r = explorer.with_affine(explorer.normalize(x, 1e-5), gain, 0.0)
        rows, cols = explorer.window(16, 32, 0, 0)
        return {
            "the outputs (two heatmaps)": figures.fig_outputs(r, rows, cols, (0, 0)).to_json(),
            "the distributions (four histograms)": figures.fig_distributions(
                explorer.distributions(r, (0, 0))
            ).to_json(),
        }

    before, after = views(1.0), views(1.05)
    pairs = [[json.loads(before[name]), json.loads(after[name])] for name in before]
    context = local_context(browser, viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        page.set_content("<html><body><div id='chart' style='width:1100px;height:460px'></div></body></html>")
        page.add_script_tag(path=str(PLOTLY_JS))
        times = page.evaluate(_REACT_JS, [pairs, repeats])
        version = page.evaluate("Plotly.version")
    finally:
        context.close()
    return version, {name: statistics.median(t[1:]) for name, t in zip(before, times, strict=True)}  # t[0] warms up
