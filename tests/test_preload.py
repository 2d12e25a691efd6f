"""server/preload.py: the ``Link`` header that lets a new visitor's browser fetch the stage's modules while the
frontend loads (issue 32). The timing itself is ``make bench``'s (benchmarks/visit.py); here, what the header
names and where it goes."""

from __future__ import annotations

import re

from harness import aio
from server import preload


def _serve(content_type: bytes, method: str = "GET", kind: str = "http") -> list[dict]:
    """What :class:`server.preload.PreloadMiddleware` sends for one request to an app answering ``content_type``."""

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type)]})
        await send({"type": "http.response.body", "body": b"x"})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    scope = {"type": kind, "method": method, "path": "/"}
    aio.run(preload.PreloadMiddleware(app)(scope, receive, send))
    return sent


def _link(sent: list[dict]) -> str | None:
    links = [v.decode() for k, v in sent[0]["headers"] if k == b"link"]
    assert len(links) <= 1
    return links[0] if links else None


def test_a_page_carries_the_stage_modules_and_css_and_the_component_chunk():
    link = _link(_serve(b"text/html; charset=utf-8"))
    assert link is not None
    for module in preload.stage_modules():
        assert f"</_stcore/bidi-components/lnviz.stage/{module}>; rel=modulepreload" in link
    assert "</_stcore/bidi-components/lnviz.stage/stage.css>; rel=preload; as=style" in link
    assert "/static/js/BidiComponent." in link


def test_files_and_heads_of_other_kinds_get_no_header():
    assert _link(_serve(b"text/javascript")) is None
    assert _link(_serve(b"text/html", method="POST")) is None


def test_every_module_named_exists_and_the_entry_comes_first_without_katex():
    modules = preload.stage_modules()
    assert modules[0] == "index.js" and "model.js" in modules and "view/paint.js" in modules
    assert all((preload.STAGE_DIR / m).is_file() for m in modules)
    assert not [m for m in modules if "katex" in m.lower()]


def test_the_chunks_are_the_components_and_what_it_imports_but_not_katex_nor_the_highlighter():
    static_js = preload._static_js()
    chunks = preload.streamlit_chunks(static_js)
    assert chunks[0].startswith("BidiComponent.") and all((static_js / c).is_file() for c in chunks)
    # Chromium fetches a preloaded module alone: what the component's chunk imports must be named too, but
    # what Streamlit's page already preloads.
    page = (static_js.parents[1] / "index.html").read_text()
    imported = set(re.findall(r'(?:from|import)\s*"\./([\w.-]+\.js)"', (static_js / chunks[0]).read_text()))
    assert imported - set(chunks) and all(f"./static/js/{c}" in page for c in imported - set(chunks))
    assert imported & set(chunks) and not [c for c in chunks if f"./static/js/{c}" in page]
    # The first screen leaves st.code and st.latex out until the stage is drawn (ui.stage.stage.waiting).
    assert not [c for c in chunks if c.startswith(("StreamlitSyntaxHighlighter.", "rehype-katex."))]
    assert [c for c in chunks if c.startswith("Html.")]  # lnviz's stylesheet, before the stage is painted
    assert preload.streamlit_chunks(static_js, ("NoSuchChunk",)) == []


def test_the_header_sits_under_the_base_path_and_fits_an_nginx_buffer():
    header = preload.link_header("/lnviz", preload.streamlit_chunks(preload._static_js()), preload.stage_modules())
    assert all(part.strip().startswith("</lnviz/") for part in header.split(","))
    assert len(header) < 2500  # nginx's default proxy_buffer_size is 4 KB for all of a response's headers
