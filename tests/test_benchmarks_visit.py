"""``make bench``'s new-visitor section (benchmarks/visit.py, issue 32): each request's kind, the target's
verdict and the breakdown, from visits made up here. The run itself is a benchmark (minutes of Chromium)."""

from __future__ import annotations

import math

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks import visit
from harness.wire import Frame


def _visit(drawn_ms: float, stage: bool = True) -> visit.Visit:
    spans = {"Streamlit's JS and CSS": (100, 50.0, 900.0), "fonts": (3, 60.0, 1200.0)}
    if stage:
        spans |= {"KaTeX": (4, 700.0, 1500.0), "the stage's files": (14, 80.0, 400.0)}
    return visit.Visit(drawn_ms, drawn_ms - 300, 600.0, 250.0, 140 if stage else 77, spans)


def test_each_request_is_put_with_what_it_is_for():
    base = "http://127.0.0.1:9/"
    assert visit.kind(base + "_stcore/bidi-components/lnviz.stage/view/paint.js") == "the stage's files"
    assert visit.kind(base + "static/media/KaTeX_Main-Regular.B22Nviop.woff2") == "KaTeX"
    assert visit.kind(base + "static/js/rehype-katex.YTWa9hPp.js") == "KaTeX"
    assert visit.kind(base + "static/media/SourceCodeVF-Upright.ttf.BjWn63N-.woff2") == "fonts"
    assert visit.kind(base + "static/js/index.DormvYxC.js") == "Streamlit's JS and CSS"
    assert visit.kind(base + "_stcore/health") == "other"


def test_the_target_is_the_ratio_of_the_medians_of_the_stage_drawn_to_the_bare_first_paint():
    v = visit.Visits([_visit(ms) for ms in (2000, 2900, 9000)], [_visit(ms, False) for ms in (1500, 2000, 100)])
    assert v.ratio == 2900 / 1500
    assert "**1.93×**" in visit.target_row(v) and "**MISS**" in visit.target_row(v)
    fast = visit.Visits([_visit(2000)] * 3, [_visit(1500, False)] * 3, apart=True)
    row = visit.target_row(fast)
    assert "**1.33×**" in row and "**PASS**" in row and "core 0" in row


def test_the_breakdown_has_each_part_beside_the_bare_page():
    text = visit.markdown(visit.Visits([_visit(2000)] * 3, [_visit(1500, False)] * 3))
    assert "| requests for the stage's files (how many: first start–last end) | 14: 80–400 ms | – |" in text
    assert "| **the stage drawn** (the bare page: its first paint) | **2000** | **1500** |" in text
    assert "| the server's first run for the new session (request out to `script_finished` in) | 250 | 250 |" in text


def test_the_server_time_is_the_first_runs_not_the_rerun_the_stage_asks_for_once_drawn():
    ok = ForwardMsg.FINISHED_SUCCESSFULLY
    frames = [
        Frame(1.0, True, "rerun_script", None, 10),
        Frame(1.1, False, "delta", None, 100),
        Frame(1.25, False, "script_finished", ok, 4),
        Frame(1.5, True, "rerun_script", None, 10),  # the stage's report that it is drawn
        Frame(1.6, False, "script_finished", ok, 4),
    ]
    assert visit.first_run_ms(frames) == 250.0
    assert math.isnan(visit.first_run_ms(frames[:2]))
