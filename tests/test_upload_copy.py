"""An uploaded file is drawn without copying its bytes (issue 30, attack 8).

Streamlit deep-copies a widget's value each time the widget is drawn, so every full run of a page whose uploader
held a 31 MiB file copied the 31 MiB while holding the interpreter (30 to 170 ms, every other session waiting).
server.streamlit_private.share_uploaded_bytes_on_copy makes that copy share the immutable bytes.
"""

import copy

import pytest
from streamlit.proto.Common_pb2 import FileURLs
from streamlit.runtime.uploaded_file_manager import UploadedFileRec
from streamlit.typing import UploadedFile

from server import heavy, streamlit_private


@pytest.fixture
def shared(monkeypatch):
    """UploadedFile as the server has it once server.heavy.install ran; as it was after the test."""
    monkeypatch.setattr(UploadedFile, "__deepcopy__", getattr(UploadedFile, "__deepcopy__", None), raising=False)
    heavy.install()


def uploaded(data: bytes) -> UploadedFile:
    return UploadedFile(UploadedFileRec("f1", "x.csv", "text/csv", data), FileURLs(file_id="f1", upload_url="/u/f1"))


def test_the_copy_streamlit_makes_of_a_drawn_file_shares_its_bytes(shared):
    data = b"1,2\n" * 2**18  # 1 MiB
    file = uploaded(data)
    twin = copy.deepcopy(file)
    assert twin.getvalue() is data  # not a copy of the megabyte
    assert type(twin) is UploadedFile and twin == file
    assert (twin.file_id, twin.name, twin.type, twin.size) == ("f1", "x.csv", "text/csv", len(data))
    assert twin._file_urls == file._file_urls and twin._file_urls is not file._file_urls


def test_the_copy_is_as_independent_as_a_full_one(shared):
    data = b"0123456789"
    file = uploaded(data)
    file.seek(4)
    twin = copy.deepcopy(file)
    assert twin.tell() == 4 and twin.read(2) == b"45"
    assert file.tell() == 4  # each has its own position
    twin.seek(0)
    twin.write(b"ab")
    twin.name = "y.csv"
    assert twin.getvalue() == b"ab23456789"
    assert file.getvalue() == data and data == b"0123456789" and file.name == "x.csv"


def test_installing_puts_it_in_place(shared):
    assert UploadedFile.__deepcopy__ is streamlit_private._shared_copy
