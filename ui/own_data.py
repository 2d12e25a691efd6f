"""Your own activations on the main page: upload a .csv/.npy, paste a matrix, or receive one from a page.

The matrix lives in this session's memory only (``st.session_state``), never
on disk and never in the link. A file or text that can't be used gets a plain
message naming what is wrong and what is accepted, and the data shown before
stays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from lnviz import upload

# Where a matrix waits for the explorer: {"x": 2-D float64 numpy array, "source": text}.
# The training page writes it too ("send these activations to the explorer").
KEY = "explorer_activations"
_SEEN_FILE = "_lnviz_upload_seen"


@dataclass(frozen=True)
class OwnData:
    """A matrix from the user: x (B, H), float64 on the CPU, and where it came from."""

    x: torch.Tensor
    source: str


def _store(x: torch.Tensor, source: str) -> None:
    st.session_state[KEY] = {"x": x.numpy(), "source": source}


def _use_pasted() -> None:
    text = st.session_state.get("paste", "")
    try:
        _store(upload.parse_text(text), "pasted text")
    except upload.UploadError as e:
        st.session_state["_lnviz_upload_error"] = str(e)


def _back_to_generated() -> None:
    st.session_state.pop(KEY, None)


def panel() -> OwnData | None:
    """Draw the "Your own data" expander in the sidebar; return the matrix in use, if any."""
    with st.sidebar.expander("Your own data", icon=":material/upload_file:", expanded=KEY in st.session_state):
        st.caption(upload.LIMITS + " It stays in this browser session only: never saved, never in the link.")
        file = st.file_uploader(
            "Upload x (.csv or .npy)",
            type=["csv", "txt", "npy"],
            key="upload",
            max_upload_size=max(1, upload.MAX_BYTES // 2**20),
        )
        if file is not None and st.session_state.get(_SEEN_FILE) != file.file_id:
            st.session_state[_SEEN_FILE] = file.file_id
            try:
                _store(upload.parse_bytes(file.name, file.getvalue()), file.name)
            except upload.UploadError as e:
                st.session_state["_lnviz_upload_error"] = str(e)
        st.text_area("…or paste a matrix", key="paste", height=90, placeholder="1, 2, 3\n4, 5, 6")
        st.button("Use the pasted matrix", key="use_paste", on_click=_use_pasted, icon=":material/content_paste:")
    error = st.session_state.pop("_lnviz_upload_error", None)
    if error:
        kept = "your previous data" if KEY in st.session_state else "the generated data"
        st.warning(f"{error} Still showing {kept}.", icon=":material/error:")
    held = st.session_state.get(KEY)
    if held is None:
        return None
    x = torch.from_numpy(np.asarray(held["x"], dtype=np.float64))  # (B, H)
    return OwnData(x=x, source=str(held.get("source", "your data")))


def back_button() -> None:
    """Return to the generated presets."""
    st.button("Back to generated data", key="own_data_off", on_click=_back_to_generated, icon=":material/undo:")
