"""Preload links in every page's HTML: the browser fetches the first screen's modules while the frontend loads.

Without them a new visitor's browser asks for the stage's files only once the stage's element has arrived and
React has mounted it, and then one module after another as each import is read (issue 32); and each of the
first screen's widgets waits for its chunk and then for the chunks that one imports, fetched only then (a second
wave of some 40 small files, measured: 0.9 s on a busy machine). With the links the browser fetches them all in
parallel with Streamlit's own bundle, from the HTML on:

- ``rel=modulepreload`` for the installed frontend's chunks of the elements on the explorer's first screen
  (:data:`FIRST_SCREEN`, found by name) and every chunk they import, transitively (Chromium fetches a preloaded
  module alone, not what it imports), but those Streamlit's HTML preloads itself; and for each of the stage's
  ES modules (lnviz/web/stage/);
- ``rel=preload; as=style`` for ``stage.css``.

They go into the HTML, before ``</head>``, after Streamlit's own: some 65 links, too many for a ``Link`` header
(past 4 KB of headers, an nginx in front with its default buffer refuses the response). Each is a file the server
itself serves, relative to the page as Streamlit's own links are, so it holds under ``server.baseUrlPath``:
nothing comes from elsewhere. :func:`middleware` is the ``st.App`` middleware (``app.py``).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

STAGE_DIR = Path(__file__).resolve().parents[1] / "lnviz" / "web" / "stage"
COMPONENT = "lnviz.stage"  # its name in pyproject.toml's [tool.streamlit.component]
# The frontend's chunks of the elements on the stage's first screen: the component and the sidebar's widgets.
# Not the code highlighter's nor KaTeX's: the first screen leaves st.code and st.latex out until the stage is
# drawn (ui.stage.waiting), so they load after it.
FIRST_SCREEN = (
    "BidiComponent", "Slider", "Selectbox", "NumberInput", "Radio", "Checkbox", "ButtonGroup", "FileUploader",
    "TextArea",
)  # fmt: skip
# A chunk's static imports, as the frontend's bundler writes them: import{...}from"./x.js" and import"./x.js".
IMPORT = re.compile(rb'(?:from|import)\s*"\./([\w.-]+\.js)"')
# What the HTML already names under static/js (its entry and the modules it preloads).
NAMED = re.compile(rb'"\./static/js/([\w.-]+\.js)"')


def stage_modules(root: Path = STAGE_DIR) -> list[str]:
    """The stage's JS modules, relative to its folder: the entry first, then the rest sorted. The vendored KaTeX
    (``katex.mjs``, which only the walkthrough's formula imports) is not one of them."""
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.js"))
    return sorted(files, key=lambda f: f != "index.js")


def streamlit_chunks(static_js: Path, prefixes: tuple[str, ...] = FIRST_SCREEN) -> list[str]:
    """The installed frontend's chunks named by ``prefixes``, then every chunk they import, transitively, as file
    names in ``static_js``. A prefix this Streamlit has no chunk for is skipped: a preload is a hint, and without
    it the page works as before."""
    found = [hits[0].name for p in prefixes if (hits := sorted(static_js.glob(f"{p}.*.js")))]
    seen, todo = set(found), list(found)
    while todo:
        for name in IMPORT.findall((static_js / todo.pop()).read_bytes()):
            if (dep := name.decode()) not in seen and (static_js / dep).is_file():
                seen.add(dep)
                todo.append(dep)
    return found + sorted(seen - set(found))


def _static_js() -> Path:
    from streamlit import file_util

    return Path(file_util.get_static_dir()) / "static" / "js"


def links(chunks: list[str], modules: list[str]) -> str:
    """The ``<link>`` elements for ``chunks`` (of the frontend's static/js) and the stage's ``modules``."""
    stage = f"./_stcore/bidi-components/{COMPONENT}"
    tags = [f'<link rel="preload" href="{stage}/stage.css" as="style">']
    tags += [f'<link rel="modulepreload" crossorigin href="./static/js/{name}">' for name in chunks]
    tags += [f'<link rel="modulepreload" crossorigin href="{stage}/{name}">' for name in modules]
    return "\n".join(tags) + "\n"


@functools.lru_cache(maxsize=4)
def with_preloads(html: bytes) -> bytes:
    """``html`` with :func:`links` before its ``</head>``, leaving out the chunks it names itself; as it was
    without one. Streamlit serves the same page for every path, so this runs once per process."""
    at = html.rfind(b"</head>")
    if at < 0:
        return html
    named = {n.decode() for n in NAMED.findall(html)}
    chunks = [c for c in streamlit_chunks(_static_js()) if c not in named]
    return html[:at] + links(chunks, stage_modules()).encode() + html[at:]


def _html(start: dict) -> bool:
    """A page's HTML, whole and as it is (not a 304, not compressed)."""
    headers = {k.lower(): v for k, v in start.get("headers", [])}
    html = headers.get(b"content-type", b"").startswith(b"text/html")
    return start.get("status") == 200 and html and b"content-encoding" not in headers


class PreloadMiddleware:
    """ASGI middleware: puts :func:`links` into each page's HTML (a GET's 200; never a file, another answer or
    the WebSocket), with its ``Content-Length`` counted again."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        start: dict | None = None
        body: list[bytes] = []

        async def send_with_links(message: dict) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and _html(message):
                start = message  # held until the whole body is in
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            html = with_preloads(b"".join(body))
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(html)).encode())]})
            await send({"type": "http.response.body", "body": html})

        await self.app(scope, receive, send_with_links)


def middleware() -> Any:
    """The ``st.App`` middleware entry for :class:`PreloadMiddleware`."""
    from starlette.middleware import Middleware

    return Middleware(PreloadMiddleware)
