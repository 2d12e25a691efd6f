"""A ``Link`` header on every page the app serves: the browser fetches the stage's modules while the frontend
loads.

Without it a new visitor's browser asks for the stage's files only once the stage's element has arrived and
React has mounted it, and then one module after another as each import is read (issue 32); and the component's
own chunk (Streamlit's ``BidiComponent``), once asked for, waits for the chunks it imports, fetched only then.
With it, the browser fetches them in parallel with Streamlit's own bundle, from the HTML's response on:

- ``rel=modulepreload`` for the installed frontend's chunks of :data:`FIRST_SCREEN` and every chunk they import,
  transitively (Chromium fetches a preloaded module alone, not what it imports), and for each of the stage's ES
  modules (lnviz/web/stage/);
- ``rel=preload; as=style`` for ``stage.css``.

Only the stage's, and the stylesheet's: the sidebar's widgets load as the first run asks for them. Preloading theirs too (50 chunks, in
the HTML, past what a header may carry through an nginx) did not pay, measured: a new visitor's stage at 1.67×
the bare page's first paint with them, 1.29× without, in one run (docs/benchmarks.md). The code highlighter and
KaTeX come after the stage (:func:`ui.stage.stage.waiting`).

Each is a file the server itself serves, under ``server.baseUrlPath``: nothing comes from elsewhere.
:func:`middleware` is the ``st.App`` middleware (``app.py``).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

STAGE_DIR = Path(__file__).resolve().parents[1] / "lnviz" / "web" / "stage"
COMPONENT = "lnviz.stage"  # its name in pyproject.toml's [tool.streamlit.component]
# The frontend's chunks the stage's first paint waits for: its component's; and the one that puts lnviz's
# stylesheet on the page (st.html, ui.kit.mode.apply_style), else the stage is painted before the page's spacing and
# lecture mode's large type apply, and moves when they do.
FIRST_SCREEN = ("BidiComponent", "Html")
# A chunk's static imports, as the frontend's bundler writes them: import{...}from"./x.js" and import"./x.js".
IMPORT = re.compile(rb'(?:from|import)\s*"\./([\w.-]+\.js)"')
# What the frontend's page names under static/js itself: its entry and the modules it preloads.
NAMED = re.compile(rb'"\./static/js/([\w.-]+\.js)"')


def stage_modules(root: Path = STAGE_DIR) -> list[str]:
    """The stage's JS modules, relative to its folder: the entry first, then the rest sorted. The vendored KaTeX
    (``katex.mjs``, which only the walkthrough's formula imports) is not one of them."""
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.js"))
    return sorted(files, key=lambda f: f != "index.js")


def streamlit_chunks(static_js: Path, prefixes: tuple[str, ...] = FIRST_SCREEN) -> list[str]:
    """The installed frontend's chunks named by ``prefixes``, then every chunk they import, transitively, as file
    names in ``static_js``; but those its page (``index.html``, beside ``static/``) names itself, its entry and
    what that imports. A prefix this Streamlit has no chunk for is skipped: a preload is a hint, and without it
    the page works as before."""
    page = static_js.parents[1] / "index.html"
    named = {n.decode() for n in NAMED.findall(page.read_bytes())} if page.is_file() else set()
    found = [hits[0].name for p in prefixes if (hits := sorted(static_js.glob(f"{p}.*.js")))]
    seen, todo = set(found), list(found)
    while todo:
        for name in IMPORT.findall((static_js / todo.pop()).read_bytes()):
            if (dep := name.decode()) not in seen | named and (static_js / dep).is_file():
                seen.add(dep)
                todo.append(dep)
    return found + sorted(seen - set(found))


def _static_js() -> Path:
    """The frontend's build, which the server serves from the installed package's static/ folder."""
    import streamlit

    return Path(streamlit.__file__).parent / "static" / "static" / "js"


def link_header(base: str, chunks: list[str], modules: list[str]) -> str:
    """The ``Link`` header's value for a page under ``base`` (``server.baseUrlPath``, "" or "/lnviz")."""
    stage = f"{base}/_stcore/bidi-components/{COMPONENT}"
    links = [f"<{stage}/stage.css>; rel=preload; as=style"]
    links += [f"<{base}/static/js/{name}>; rel=modulepreload" for name in chunks]
    links += [f"<{stage}/{name}>; rel=modulepreload" for name in modules]
    return ", ".join(links)


@functools.cache
def _header() -> bytes:
    """This server's header, built on its first page (Streamlit's config is read by then)."""
    from server.base_path import prefix

    return link_header(prefix(), streamlit_chunks(_static_js()), stage_modules()).encode()


class PreloadMiddleware:
    """ASGI middleware: adds :func:`link_header` to each HTML response (the pages; never a file or the
    WebSocket)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return

        async def send_with_link(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                html = any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)
                if html:
                    message = {**message, "headers": [*headers, (b"link", _header())]}
            await send(message)

        await self.app(scope, receive, send_with_link)


def middleware() -> Any:
    """The ``st.App`` middleware entry for :class:`PreloadMiddleware`."""
    from starlette.middleware import Middleware

    return Middleware(PreloadMiddleware)
