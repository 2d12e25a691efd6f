"""Download buttons for a page's arrays, part of the page kit: each array as CSV and .npy, built only when
clicked (a full-size CSV takes seconds) under the heavy-work gate, and a script that reproduces the view."""

from __future__ import annotations

from typing import Any

import streamlit as st

from server import heavy


def buttons(arrays: dict[str, Any], script: str | None = None) -> None:
    """Each of ``arrays`` (name: tensor) as CSV and .npy; then ``script``, shown and as ``lnviz_view.py``."""
    from lnviz.labs.explorer import export

    formats = (  # (extension, writer, mime type, icon)
        ("csv", export.to_csv, "text/csv", ":material/table:"),
        ("npy", export.to_npy, "application/octet-stream", ":material/data_array:"),
    )
    for name, values in arrays.items():
        for column, (ext, write, mime, icon) in zip(st.columns(len(formats)), formats, strict=True):
            file = f"{name}.{ext}"
            built = heavy.deferred(file, lambda v=values, w=write: w(v))
            column.download_button(
                file, data=built, file_name=file, mime=mime, on_click="ignore", key=f"dl_{name}_{ext}", icon=icon
            )
    if script is not None:
        st.code(script, language="python")
        st.download_button(
            "lnviz_view.py",
            data=script,
            file_name="lnviz_view.py",
            mime="text/x-python",
            on_click="ignore",
            key="dl_script",
            icon=":material/code:",
        )
