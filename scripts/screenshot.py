"""The README's picture: a page of the app in headless Chromium, saved as a PNG.

    .venv/bin/python -m scripts.screenshot                      # the explorer at 1440 × 900: assets/explorer.png
    .venv/bin/python -m scripts.screenshot --path /family --no-stage --size 1366x768 --out /tmp/family.png

It serves the working tree's app on a free port (:func:`harness.server.serving`, as the tests do), opens the page
in Debian's Chromium (:func:`harness.chromium.launch`) at that window size, waits until the page has settled and
(unless ``--no-stage``) its stage has drawn its cells, and saves what the window shows: what a visitor sees first.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from harness.chromium import launch, local_context
from harness.server import ROOT, serving
from harness.tab import AppPage

PICTURE = ROOT / "assets" / "explorer.png"
SIZE = "1440x900"  # a laptop's window (harness.chromium.LAPTOP)
STAGE_MS = 30_000  # how long the stage may take to draw its cells on a busy machine


def take(path: str, width: int, height: int, out: Path, stage: bool = True) -> Path:
    """Serve the app, open ``path`` at ``width`` × ``height``, and save the window to ``out``; ``stage``: wait for
    the stage's cells first."""
    with tempfile.TemporaryDirectory(prefix="lnviz-shot-") as logs, serving(Path(logs) / "app.log") as app:
        with sync_playwright() as p:
            browser = launch(p)
            try:
                context = local_context(browser, viewport={"width": width, "height": height}, reduced_motion="reduce")
                tab = AppPage(context.new_page()).goto(app.url + path)
                if stage:  # the page may settle before the stage, which draws in a shadow root, has drawn its cells
                    tab.page.wait_for_function("() => window.__bench.stageDrawn !== undefined", timeout=STAGE_MS)
                    tab.settle()
                out.parent.mkdir(parents=True, exist_ok=True)
                tab.page.screenshot(path=str(out))
            finally:
                browser.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default="/", help="the page and its link, after the server's address (default /)")
    parser.add_argument("--size", default=SIZE, help=f"the window, WIDTHxHEIGHT (default {SIZE})")
    parser.add_argument("--no-stage", action="store_true", help="a page without the stage: don't wait for its cells")
    parser.add_argument("--out", type=Path, default=PICTURE, help=f"the PNG (default {PICTURE.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    width, height = (int(n) for n in args.size.lower().split("x"))
    print(take(args.path, width, height, args.out, stage=not args.no_stage))


if __name__ == "__main__":
    main()
