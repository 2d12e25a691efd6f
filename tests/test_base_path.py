"""The stage served under a path (``server.baseUrlPath``) behind docs/deploy.md's nginx block, as the document
says to adapt it: the same prefix before each ``location`` (:func:`harness.nginx.under_path`).

Chromium opens the main page through nginx at ``/lnviz/``: the stage's files come under the path, gzipped;
the stage draws torch's numbers; a release of its γ comes back from torch (the badge shows "torch: max |Δ|")
and reaches the URL. Nothing the page asks for leaves the path, and the metrics stay hidden under it too.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest
import torch
from playwright.sync_api import Browser

from harness import nginx
from harness.chromium import LAPTOP, local_context
from harness.server import ROOT, AppProcess, free_port, start_app, stop, wait_app, wait_healthy
from harness.settle import STAGE_ROOT_JS, wait_settled
from harness.wsclient import proof_cookie
from lnviz.maths import data
from lnviz.views import links

pytest_plugins = ("browser",)
pytestmark = [pytest.mark.browser, pytest.mark.replicas]

PATH = "/lnviz"
BATCH, FEATURES, SEED, DIST = 8, 12, 7, "heterogeneous samples"
LINK = f"/?batch={BATCH}&features={FEATURES}&seed={SEED}&dist={DIST.replace(' ', '+')}&gain=1.5&v={links.LINK_VERSION}"
STAGE = ".st-key-live_stage"
STAGE_FILES = f"{PATH}/_stcore/bidi-components/lnviz.stage/"
ASSETS = ROOT / "lnviz" / "web" / "stage"  # what Streamlit serves under STAGE_FILES


@dataclass
class Proxied:
    url: str  # nginx's, the path included: http://127.0.0.1:PORT/lnviz
    proxy: nginx.Nginx
    app: AppProcess


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    """The app under PATH, and nginx in front of it with the documented block moved under PATH."""
    # A server of its own: it is configured with server.baseUrlPath, unlike the session's default one.
    if not nginx.executable().is_file():
        pytest.fail("nginx is missing: `make system-deps` installs Debian's nginx")
    port, listen = free_port(), free_port()
    app = start_app(port, tmp_path_factory.mktemp("base_path") / "app.log", base_path=PATH.strip("/"))
    proxy = None
    try:
        wait_app(app)
        proxy = nginx.start(nginx.under_path(nginx.balancer([port], listen), PATH))
        url = f"http://127.0.0.1:{listen}{PATH}"
        wait_healthy(url, timeout=20, alive=proxy.alive)
        yield Proxied(url, proxy, app)
    finally:
        if proxy is not None:
            proxy.stop()
        stop(app.proc)


def test_the_moved_block_puts_the_path_before_every_location_and_nothing_else():
    block = nginx.balancer([1111], 2222)
    moved = nginx.under_path(block, PATH)
    assert re.findall(r"location\s+(?:=\s+)?(\S+)", moved) == [
        f"{PATH}/_stcore/metrics",
        f"{PATH}/static/",
        f"{PATH}/_stcore/bidi-components/",
        f"{PATH}/api/",
        f"{PATH}/",
    ]
    assert re.sub(rf"(location\s+(?:=\s+)?){PATH}/", r"\1/", moved) == block


def _ln_means(app_page) -> list[float]:
    """LN's μ per row as the stage shows them (the minus sign read as "-")."""
    texts = app_page.evaluate(f"() => Array.from({STAGE_ROOT_JS}.querySelectorAll('.stat.ln'), (c) => c.textContent)")
    return [float(t.replace("\u2212", "-")) for t in texts[:BATCH]]


def test_the_stage_draws_and_a_release_brings_torchs_numbers_through_nginx_under_a_path(proxied, browser: Browser):
    context = local_context(browser, viewport=LAPTOP)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        files: list[tuple[str, int, str]] = []  # the stage's files: (path, status, Content-Encoding)
        scripts: list[str] = []  # Streamlit's own scripts: Content-Encoding

        def on_response(r) -> None:
            path = urlsplit(r.url).path
            if STAGE_FILES in path:
                files.append((path, r.status, r.headers.get("content-encoding", "")))
            elif path.startswith(f"{PATH}/static/js/"):
                scripts.append(r.headers.get("content-encoding", ""))

        page.on("response", on_response)
        page.goto(proxied.url + LINK, wait_until="commit")
        page.wait_for_function(
            f"() => {STAGE_ROOT_JS}?.querySelector('.stage.numbers .cell.out') && "
            f"{STAGE_ROOT_JS}.querySelector('.badge').textContent.startsWith('torch')",
            timeout=90_000,
        )
        # Streamlit sends /static/ uncompressed: nginx's location for it, under the path, gzipped them.
        assert len(scripts) > 20 and scripts.count("gzip") > len(scripts) / 2, scripts
        # The stage's JS and CSS came under the path, gzipped (by that location, or Streamlit, which gzips them
        # itself).
        paths = {path for path, _, _ in files}
        assert {f"{STAGE_FILES}index.js", f"{STAGE_FILES}stage.css"} <= paths, files
        assert all(status == 200 for _, status, _ in files), files
        # gzip_min_length 1024: a smaller file (view/dom.js) comes as it is.
        big = [enc for path, _, enc in files if (ASSETS / path.removeprefix(STAGE_FILES)).stat().st_size >= 1024]
        assert len(big) >= 8 and set(big) == {"gzip"}, files

        # torch's numbers on the stage: LN's μ of each row, as torch computes them.
        x = data.make_activations(DIST, BATCH, FEATURES, SEED)  # (B, H)
        mu = torch.mean(x, dim=1)  # (B,): one mean per sample
        assert _ln_means(page) == pytest.approx(mu.tolist(), abs=0.006)

        # A release on the stage's γ (a key press on its range is an input and a change): torch answers. First
        # the page settles: a new visitor's page reruns once its stage is drawn (its report), and a key pressed
        # before that rerun's answer sees the badge rewritten by it (harness/settle.py, SETTLED_JS).
        wait_settled(page)
        page.locator(f"{STAGE} input[name=gain]").focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            f"() => {STAGE_ROOT_JS}.querySelector('.badge').textContent.includes('max')", timeout=60_000
        )
        badge = page.locator(f"{STAGE} .badge").inner_text()
        assert re.fullmatch(r"torch: max \|Δ\| \S+", badge), badge
        page.wait_for_function("() => location.search.includes('gain=1.55')", timeout=30_000)
        assert float(parse_qs(urlsplit(page.url).query)["gain"][-1]) == pytest.approx(1.55)
        assert urlsplit(page.url).path.startswith(f"{PATH}/"), page.url
        assert not errors, errors
    finally:
        context.close()

    # Every request the page made went under the path (nginx logs its websocket when it closes).
    port = int(urlsplit(proxied.url).port)
    deadline = time.monotonic() + 20
    while True:
        requests = [r for r in proxied.proxy.log() if r.port == port]
        if any(r.websocket for r in requests):
            break
        assert time.monotonic() < deadline, f"no websocket logged (nginx logs one when it closes): {requests}"
        time.sleep(0.2)  # nginx writes its log as requests end: real time
    assert all(r.request.split()[1].startswith(f"{PATH}/") for r in requests), requests
    # The routing cookie (Path=/) covers the path: from the page on, every request kept the page's route.
    first = next(k for k, r in enumerate(requests) if r.request.startswith(f"GET {PATH}/?"))
    assert len({r.route for r in requests[first:]}) == 1, requests[first:]
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(proxied.url + "/_stcore/metrics", timeout=30)
    assert refused.value.code == 404


def test_the_class_stream_comes_under_the_path_through_nginx_unbuffered(proxied, contexts):
    """The stream's route carries the path (Streamlit does not prefix our routes: ui/poll/routes.py does): through
    the moved block, a stream of a room opened on the projector shows it at once, then its reveal and torch's answer
    while the stream stays open; an unknown room is `gone`; the route is not served outside the path."""
    from test_browser_classroom import PROJECTOR, open_in, press, start_room
    from test_class_stream import Follower, Stream

    cookie = proof_cookie(proxied.url)  # a stream needs a proved browser: its proof of work, earned under the path
    gone = Stream(proxied.url, "ABCDEFGH", cookie)
    assert gone.response.status == 200 and [e["event"] for e in gone.events()] == ["gone"]
    with pytest.raises(urllib.error.HTTPError) as outside:
        urllib.request.urlopen(proxied.url.removesuffix(PATH) + "/api/class/ABCDEFGH/events", timeout=30)
    assert outside.value.code == 404
    presenter = open_in(contexts(PROJECTOR), f"{proxied.url}/class?present=1")
    code = start_room(presenter)
    phone = Follower(proxied.url, code, cookie)
    assert phone.stream.response.getheader("content-type").startswith("text/event-stream")
    assert phone.until(lambda s: True)["phase"] == "ask"
    press(presenter, "reveal")
    shown = phone.until(lambda s: s["phase"] == "reveal", timeout=15)
    assert shown["code"] == code and len(shown["rounds"]) == 1 and shown["answer"] is None  # torch's comes later
    press(presenter, "answer")
    assert phone.until(lambda s: s["phase"] == "answer", timeout=15)["answer"] is not None
    phone.stream.close()
