"""The /transformer page's costs: loading the model, its forward for 1 and 8 sentences, and a typed sentence
reaching the drawn page on a warm server (target: 300 ms).

    python -m benchmarks.run --only transformer           # writes this section of docs/benchmarks.md alone
    python -m benchmarks.transformer                      # prints it

``make bench`` runs it with the rest (:mod:`benchmarks.run`). Load and forward are measured in this process, which
imports transformers for the first time here; the typed sentence in headless Chromium against a server
started for it, after one sentence has loaded the model.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import page

TARGET_MS = 300.0
ONE = "The cat sat on the mat because it was tired."
EIGHT = "\n".join(f"Sentence number {i} says something about the weather on day {i}." for i in range(8))
WORDS = ("apple", "river", "music", "garden", "winter", "forest", "window", "letter", "doctor")  # whole tokens


def measure_model(repeats: int) -> dict[str, float]:
    """Seconds: the weights' hash check, the load (transformers' import included), and median forwards."""
    import torch

    from lnviz.labs import transformer
    from lnviz.labs.transformer import files, model
    from server import cpus

    cpus.configure_threads()
    t0 = time.perf_counter()
    checked = files.check()
    t1 = time.perf_counter()
    loaded = model.load(checked)
    t2 = time.perf_counter()
    cpu = torch.device("cpu")
    out = {"check_s": t1 - t0, "load_s": t2 - t1}
    for name, text in (("one_s", ONE), ("eight_s", EIGHT)):
        transformer.run(loaded, text, cpu)  # warm-up
        out[name] = statistics.median(transformer.run(loaded, text, cpu).seconds for _ in range(repeats))
    return out


def measure_typed(repeats: int) -> list[float]:
    """Milliseconds from Ctrl+Enter in the box to the new sentence's token drawn as a row label, per try."""
    from playwright.sync_api import sync_playwright

    from harness.chromium import LAPTOP, launch, local_context
    from harness.server import serving
    from harness.settle import wait_settled

    times = []
    with tempfile.TemporaryDirectory() as tmp, serving(Path(tmp) / "app.log") as app, sync_playwright() as p:
        browser = launch(p)
        try:
            page = local_context(browser, viewport=LAPTOP).new_page()
            page.goto(f"{app.url}/transformer", wait_until="domcontentloaded")
            wait_settled(page, timeout=180)
            box = page.get_by_role("textbox", name="Sentences")
            for word in WORDS[: repeats + 1]:
                box.fill(f"The {word} is here.")
                start = time.perf_counter()
                box.press("Control+Enter")
                page.wait_for_function(
                    "(w) => Array.from(document.querySelectorAll('.js-plotly-plot .ytick text'))"
                    ".some((t) => t.textContent === w)",
                    arg=word,
                    timeout=60_000,
                    polling="raf",
                )
                times.append((time.perf_counter() - start) * 1000)
                wait_settled(page, timeout=60)
        finally:
            browser.close()
    return times[1:]  # the first new sentence warms the page's code paths


def markdown(model_s: dict[str, float], typed_ms: list[float], machine: str) -> str:
    """The page's transformer section; ``machine`` is :func:`benchmarks.page.machine_line`'s."""
    median = statistics.median(typed_ms)
    verdict = "PASS" if median <= TARGET_MS else "MISS"
    about = page.wrap(
        f"all-MiniLM-L6-v2 on the CPU in float32; {machine} (shared: the times are upper bounds for a quiet machine)."
    )
    return f"""## The transformer page (`make bench`, or `python -m benchmarks.run --only transformer`)

{about}

| what | time |
|---|---|
| the weights' SHA-256 check (90 MB) | {model_s["check_s"] * 1000:.0f} ms |
| the load: transformers imported, weights and tokenizer read | {model_s["load_s"]:.2f} s |
| forward of 1 sentence, hooks on its 13 LayerNorms | {model_s["one_s"] * 1000:.0f} ms (median) |
| forward of 8 sentences | {model_s["eight_s"] * 1000:.0f} ms (median) |
| a typed sentence to its tokens drawn, warm server, Chromium | {median:.0f} ms median of {len(typed_ms)} \
(worst {max(typed_ms):.0f} ms): **{verdict}** against {TARGET_MS:.0f} ms |
"""


def measure(quick: bool = False) -> str:
    """The section's markdown, measured now."""
    load_start = page.load_average()
    model_s, typed_ms = measure_model(3 if quick else 7), measure_typed(3 if quick else 7)
    return markdown(model_s, typed_ms, page.machine_line(page.machine(), load_start, page.load_average()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.transformer", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(measure(args.quick))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
