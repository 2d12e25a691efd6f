"""A file PUT to a running server as Streamlit's uploader does it, with the XSRF cookie the server hands out.

Used by tests/test_server_limits.py, tests/test_upload_share_server.py and
``make load LOAD_ARGS="--mode attack"``: the upload quota answers these PUTs
as it answers a browser's.
"""

from __future__ import annotations

import urllib.error
import urllib.request
import uuid


def xsrf_cookie(base: str) -> str:
    """The value of the XSRF cookie the server at ``base`` sets (a PUT must send it as cookie and header)."""
    with urllib.request.urlopen(base + "/_stcore/health", timeout=30) as r:
        for header in r.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            if name == "_streamlit_xsrf":
                return rest.split(";", 1)[0]
    raise RuntimeError("the server set no XSRF cookie")


def put_file(
    base: str, session_id: str, xsrf: str, data: bytes, name: str = "x.csv", file_id: str = "", timeout: float = 120
) -> int:
    """PUT ``data`` as the file ``name`` for ``session_id`` (under ``file_id``, else a new one); the HTTP status."""
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    )
    request = urllib.request.Request(
        f"{base}/_stcore/upload_file/{session_id}/{file_id or uuid.uuid4()}",
        data=head.encode() + data + f"\r\n--{boundary}--\r\n".encode(),
        method="PUT",
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-Xsrftoken": xsrf,
            "Cookie": f"_streamlit_xsrf={xsrf}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
