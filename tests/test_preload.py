"""ui/preload.py: the preload links in a page's HTML that let a new visitor's browser fetch the first screen's
modules while the frontend loads (issue 32). The timing itself is ``make bench``'s (benchmarks/visit.py); here,
what the links name and where they go."""

from __future__ import annotations

import re

from harness import aio
from ui import preload

PAGE = b'<html><head><script type="module" src="./static/js/%s"></script></head><body></body></html>'


def _serve(content_type: bytes, body: list[bytes], method: str = "GET", status: int = 200, **headers) -> list[dict]:
    """What :class:`ui.preload.PreloadMiddleware` sends for one request to an app answering ``body`` in parts."""

    async def app(scope, receive, send):
        sent_headers = [(b"content-type", content_type), (b"content-length", str(sum(map(len, body))).encode())]
        sent_headers += [(k.replace("_", "-").encode(), v) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": sent_headers})
        for i, part in enumerate(body):
            await send({"type": "http.response.body", "body": part, "more_body": i < len(body) - 1})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    scope = {"type": "http", "method": method, "path": "/"}
    aio.run(preload.PreloadMiddleware(app)(scope, receive, send))
    return sent


def _page(sent: list[dict]) -> tuple[str, int]:
    """The body the browser gets, and the length its header says."""
    length = int(dict(sent[0]["headers"])[b"content-length"])
    return b"".join(m.get("body", b"") for m in sent[1:]).decode(), length


def _hrefs(html: str, rel: str) -> list[str]:
    return re.findall(rf'<link rel="{rel}"(?: crossorigin)? href="([^"]+)"', html)


def test_a_page_carries_the_stage_modules_and_css_and_the_first_screens_chunks_before_its_head_ends():
    html, length = _page(_serve(b"text/html; charset=utf-8", [PAGE[:30], PAGE[30:] % b"index.X.js"]))
    assert length == len(html.encode())
    head, _, _ = html.partition("</head>")
    assert head.index('src="./static/js/index.X.js"') < head.index("<link")  # after Streamlit's own
    modules = _hrefs(head, "modulepreload")
    for module in preload.stage_modules():
        assert f"./_stcore/bidi-components/lnviz.stage/{module}" in modules
    assert _hrefs(head, "preload") == ["./_stcore/bidi-components/lnviz.stage/stage.css"]
    assert any(m.startswith("./static/js/BidiComponent.") for m in modules)
    assert len(modules) == len(set(modules))


def test_a_chunk_the_page_names_itself_is_not_named_again():
    chunks = preload.streamlit_chunks(preload._static_js())
    html, _ = _page(_serve(b"text/html", [PAGE % chunks[0].encode()]))
    assert f"./static/js/{chunks[0]}" not in _hrefs(html, "modulepreload")
    assert f"./static/js/{chunks[1]}" in _hrefs(html, "modulepreload")


def test_files_other_answers_and_other_methods_pass_as_they_are():
    for sent in (
        _serve(b"text/javascript", [b"<head></head>"]),
        _serve(b"text/html", [b"<head></head>"], method="POST"),
        _serve(b"text/html", [b"<head></head>"], method="HEAD"),
        _serve(b"text/html", [b""], status=304),
        _serve(b"text/html", [b"<head></head>"], content_encoding=b"gzip"),
    ):
        assert b"".join(m.get("body", b"") for m in sent[1:]) in (b"<head></head>", b"")
    html, _ = _page(_serve(b"text/html", [b"no head here"]))
    assert html == "no head here"


def test_every_module_named_exists_and_the_entry_comes_first_without_katex():
    modules = preload.stage_modules()
    assert modules[0] == "index.js" and "model.js" in modules and "view/paint.js" in modules
    assert all((preload.STAGE_DIR / m).is_file() for m in modules)
    assert not [m for m in modules if "katex" in m.lower()]


def test_the_chunks_are_the_first_screens_widgets_and_what_they_import_but_not_katex_nor_the_highlighter():
    static_js = preload._static_js()
    chunks = preload.streamlit_chunks(static_js)
    assert chunks[0].startswith("BidiComponent.") and all((static_js / c).is_file() for c in chunks)
    # Chromium fetches a preloaded module alone: what the slider imports must be named too.
    slider = next(c for c in chunks if c.startswith("Slider."))
    imported = set(re.findall(r'(?:from|import)\s*"\./([\w.-]+\.js)"', (static_js / slider).read_text()))
    assert imported and imported <= set(chunks)
    # The first screen leaves st.code and st.latex out until the stage is drawn (ui.stage.waiting).
    assert not [c for c in chunks if c.startswith(("StreamlitSyntaxHighlighter.", "rehype-katex."))]
    assert preload.streamlit_chunks(static_js, ("NoSuchChunk",)) == []
