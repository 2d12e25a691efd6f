"""A QR code for a join link, drawn here (segno), never by an outside service.

Dark modules on a white ground with a quiet zone of 4 modules, as scanners
expect whatever the page's theme; error correction level M (15%), which a
projected code at a distance still reads. Each text's code is drawn once
and kept (a few of them: a server holds a few live rooms' projectors).
"""

from __future__ import annotations

import functools
import io

import segno


@functools.lru_cache(maxsize=16)  # the projector redraws its room's one code on every full run: drawn once
def qr_svg(text: str, title: str = "QR code of the join link") -> str:
    """The QR code of ``text`` as an SVG document (a string), sized by its ``viewBox`` to fill its container."""
    code = segno.make(text, error="m", micro=False)
    out = io.BytesIO()
    code.save(out, kind="svg", scale=10, border=4, dark="#000000", light="#ffffff", xmldecl=False, title=title)
    return out.getvalue().decode("utf-8")
