"""Uploads: every bad file gets a plain message naming the problem and what is accepted; good ones read exactly."""

import builtins
import io
import os
import re
import tracemalloc

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as hs
from hypothesis.extra import numpy as hnp

from lnviz.labs.explorer import export, upload
from lnviz.labs.explorer.upload import UploadError, parse_bytes, parse_text
from lnviz.maths import data
from lnviz.views.state import DIST


def npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def npy_header(shape: tuple, descr: str = "<f8") -> bytes:
    """A .npy file's header alone: it claims ``shape`` but carries no data."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def refused(fn, *args, match: str) -> str:
    """The problem ``fn(*args)`` is refused for; the message must also say what is accepted."""
    with pytest.raises(UploadError, match=match) as info:
        fn(*args)
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert message.startswith(info.value.problem) and "Accepted:" in message and ".csv" in message and ".npy" in message
    return info.value.problem


# Each validation case: its message names what is wrong.


def test_non_numeric_cell_names_its_row_and_column():
    problem = refused(parse_bytes, "x.csv", b"1,2,3\n4,five,6\n", match="not a number")
    assert "Row 2, column 2" in problem and "`five`" in problem


def test_non_numeric_cell_counts_rows_as_the_files_lines_header_and_blank_lines_included():
    problem = refused(parse_text, "a,b\n1,2\n\n3,x\n", match="not a number")
    assert "Row 4, column 2" in problem and "`x`" in problem


def test_empty_cell_is_named():
    assert "Row 1, column 2 is empty" in refused(parse_text, "1,,3\n4,5,6", match="empty")


def test_ragged_rows():
    problem = refused(parse_bytes, "x.csv", b"1,2,3,4,5\n1,2,3,4,5\n1,2,3,4\n", match="same number of values")
    assert "Row 3 has 4 values but row 1 has 5" in problem


@pytest.mark.parametrize(("cell", "word"), [("nan", "NaN"), ("inf", "inf"), ("-inf", "-inf"), ("1e999", "inf")])
def test_nan_and_infinities_in_csv_are_refused(cell, word):
    problem = refused(parse_bytes, "x.csv", f"1,2\n3,{cell}\n".encode(), match="finite")
    assert f"Row 2, column 2 is {word} " in problem


@pytest.mark.parametrize(("value", "word"), [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_nan_and_infinities_in_npy_are_refused(value, word):
    m = np.zeros((3, 4))
    m[2, 1] = value
    m[2, 3] = value
    problem = refused(parse_bytes, "x.npy", npy(m), match="finite")
    assert f"Row 3, column 2 is {word} (2 values in all" in problem


def test_one_dimensional_npy():
    assert "1-D array of shape (5,)" in refused(parse_bytes, "x.npy", npy(np.arange(5.0)), match="not a 2-D matrix")


def test_three_dimensional_npy():
    problem = refused(parse_bytes, "x.npy", npy(np.zeros((2, 3, 4))), match="not a 2-D matrix")
    assert "3-D array of shape (2, 3, 4)" in problem


def test_zero_dimensional_npy():
    refused(parse_bytes, "x.npy", npy(np.float64(3.0)), match="0-D")


@pytest.mark.parametrize("name", ["x.csv", "x.txt", "x.npy"])
def test_empty_file(name):
    assert "empty" in refused(parse_bytes, name, b"", match="empty")


@pytest.mark.parametrize("text", ["", "   ", "\n\n \t\n"])
def test_empty_text(text):
    refused(parse_text, text, match="no numbers")


def test_header_alone_has_no_numbers():
    refused(parse_text, "f0,f1,f2\n", match="no numbers")


GARBAGE = bytes(range(256)) * 3 + b"\x00\xff\xfe" * 50


def test_binary_garbage_as_csv():
    refused(parse_bytes, "x.csv", GARBAGE, match="not text")


def test_binary_garbage_that_is_valid_utf8_as_csv():
    refused(parse_bytes, "x.csv", b"1,2\x00\x01\x02,3\n", match="binary")


def test_binary_garbage_as_npy():
    refused(parse_bytes, "x.npy", GARBAGE, match="not a NumPy .npy file")


def test_damaged_npy_header():
    blob = npy(np.zeros((2, 3)))
    refused(parse_bytes, "x.npy", blob[:10] + b"{'descr': 'nonsense'" + blob[30:], match="damaged")


def test_pickled_object_array_is_never_unpickled(monkeypatch):
    blob = npy(np.array([[1, "a"], [None, 2.5]], dtype=object), allow_pickle=True)
    import pickle

    def boom(*args, **kwargs):
        raise AssertionError("unpickled")

    monkeypatch.setattr(pickle, "load", boom)
    monkeypatch.setattr(pickle, "loads", boom)
    refused(parse_bytes, "x.npy", blob, match="pickled object array")


@pytest.mark.parametrize(
    ("array", "word"),
    [
        (np.zeros((2, 3), dtype=np.complex128), "complex"),
        (np.array([["a", "b"], ["c", "d"]]), "<U1"),
        (np.zeros((2, 3), dtype=[("a", "<f8"), ("b", "<i4")]), "type"),
        (np.zeros((2, 3), dtype="datetime64[s]"), "datetime64"),
    ],
)
def test_non_numeric_npy_dtypes(array, word):
    assert word in refused(parse_bytes, "x.npy", npy(array), match="not real numbers")


def test_over_size_by_bytes_is_refused_before_parsing():
    blob = b"1,2\n" * (upload.MAX_BYTES // 4 + 1)  # valid numbers, but too many bytes
    assert "MiB" in refused(parse_bytes, "x.csv", blob, match="limit")
    refused(parse_text, "7 " * (upload.MAX_BYTES // 2 + 1), match="limit")
    refused(parse_bytes, "x.npy", npy_header((2, 2)) + bytes(upload.MAX_BYTES), match="MiB")


@pytest.mark.parametrize("shape", [(upload.MAX_ROWS + 1, 2), (2, upload.MAX_COLS + 1)])
def test_over_size_by_shape_npy_is_refused_from_its_header_before_its_data(shape):
    # The header claims the shape and no data follows: the shape is checked first.
    assert f"{shape[0]} × {shape[1]}" in refused(parse_bytes, "x.npy", npy_header(shape), match="limit")


def test_over_size_by_shape_text():
    refused(parse_text, "1,2\n" * (upload.MAX_ROWS + 1), match=f"{upload.MAX_ROWS + 1} × 2, over")
    refused(parse_text, ",".join(["1"] * (upload.MAX_COLS + 1)), match="over the 1024 × 1024 limit")


def test_npy_cut_short():
    refused(parse_bytes, "x.npy", npy(np.zeros((4, 5)))[:-8], match="cut short")


@pytest.mark.parametrize("name", ["x.xlsx", "x.json", "x", "x.npz", "x.csv.gz"])
def test_unknown_extension(name):
    refused(parse_bytes, name, b"1,2\n3,4\n", match="only .csv, .txt and .npy")


@pytest.mark.parametrize(
    ("fn", "args"),
    [(parse_text, ("1\n2\n3\n",)), (parse_bytes, ("x.npy", npy(np.ones((4, 1))))), (parse_text, ("a\n1\n",))],
)
def test_single_column_cannot_be_layer_normalized(fn, args):
    refused(fn, *args, match="at least 2 columns")


def test_npy_without_rows():
    refused(parse_bytes, "x.npy", npy(np.zeros((0, 3))), match="no rows")


# Good files: read exactly, as float64 (B, H) on the CPU.

M = torch.tensor([[1.5, -2.0, 3.25], [0.0, 1e-300, -7.0]], dtype=torch.float64)


def check(x: torch.Tensor, want: torch.Tensor = M) -> None:
    assert x.dtype == torch.float64 and x.device.type == "cpu"
    assert torch.equal(x, want)


@pytest.mark.parametrize(
    "text",
    [
        "1.5,-2,3.25\n0,1e-300,-7\n",
        "f0,f1,f2\n1.5,-2,3.25\n0,1e-300,-7\n",
        '"a","b","c"\r\n"1.5","-2","3.25"\r\n0,1e-300,-7\r\n',
        "\ufeff1.5, -2, 3.25\n\n0, 1e-300, -7\n\n",
        "1.5;-2;3.25\n0;1e-300;-7",
        "a;b;c\n1.5;-2;3.25\n0;1e-300;-7",
        "1.5\t-2\t3.25\n0\t1e-300\t-7\n",
        "1.5  -2 3.25\n   0 1e-300    -7\n",
        "x y z\n1.5 -2 3.25\n0 1e-300 -7",
    ],
)
def test_csv_and_txt_with_or_without_header_and_any_separator(text):
    check(parse_bytes("x.csv", text.encode()))
    check(parse_bytes("X.TXT", text.encode()))
    check(parse_text(text))


def test_one_sample_is_fine():
    check(parse_text("1,2,3"), torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.uint16, np.float16, ">f8"])
def test_npy_numeric_dtypes_become_float64(dtype):
    m = (np.arange(12).reshape(3, 4) - 5).astype(np.float64)
    if np.dtype(dtype).kind == "u":
        m = np.abs(m)
    x = parse_bytes("x.npy", npy(m.astype(dtype)))
    check(x, torch.from_numpy(m))


def test_npy_bool_and_fortran_order():
    b = np.array([[True, False, True], [False, False, True]])
    check(parse_bytes("x.npy", npy(b)), torch.from_numpy(b.astype(np.float64)))
    m = np.asfortranarray(np.arange(15, dtype=np.float64).reshape(3, 5))
    assert np.lib.format.header_data_from_array_1_0(m)["fortran_order"]
    check(parse_bytes("x.npy", npy(m)), torch.arange(15, dtype=torch.float64).reshape(3, 5))


def test_round_trip_of_the_apps_own_downloads_is_exact():
    for dist in DIST.options:
        x = data.make_activations(dist, 9, 17, seed=5)
        check(parse_bytes("x.csv", export.to_csv(x)), x)
        check(parse_bytes("x.npy", export.to_npy(x)), x)
    x32 = data.make_activations("standard normal", 4, 3, seed=1, dtype=torch.float32)
    check(parse_bytes("x.csv", export.to_csv(x32)), x32.double())


def test_the_largest_grid_fits_as_npy_and_the_caps_match_the_apps_controls():
    from lnviz.views import state

    assert (upload.MAX_ROWS, upload.MAX_COLS) == (state.BATCH.hi, state.FEATURES.hi)
    assert state.FEATURES.lo == 2  # the same floor as here: LN needs two features
    x = torch.zeros(upload.MAX_ROWS, upload.MAX_COLS, dtype=torch.float64)
    assert len(export.to_npy(x)) <= upload.MAX_BYTES
    check(parse_bytes("x.npy", export.to_npy(x)), x)
    # The CSV of a full-precision grid is about 24 bytes a value at worst ("-1.2345678901234567e-05,").
    assert upload.MAX_ROWS * upload.MAX_COLS * 24 + 6 * upload.MAX_COLS <= upload.MAX_BYTES
    # ... and so is each of its lines, which the text parser measures before reading.
    assert upload.MAX_COLS * 24 <= upload.MAX_LINE_CHARS
    assert upload.MAX_ROWS + 2 <= upload.MAX_LINES


# Big texts: measured before they are split, so refusing one costs about nothing.

BIG = 25_000_000  # characters: the size of the pastes that grew the server by 1.3 GB each


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("1\n" * (BIG // 2), "lines"),  # one number per line: 12.5 million lines
        ("\n" * BIG + "1,2", "lines"),  # blank lines
        ("1,2\r\n" * (BIG // 5), "lines"),
        ("1," * (BIG // 2), "values"),  # one endless row
        ("1 " * (BIG // 2), "characters long"),  # one endless row, whitespace-separated
    ],
    ids=["one-per-line", "blank-lines", "crlf-rows", "one-comma-line", "one-space-line"],
)
def test_a_big_text_is_refused_before_it_is_split(text, word):
    tracemalloc.start()
    try:
        problem = refused(parse_text, text, match=word)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The old parser split first: a list of millions of strings, over 50 bytes each.
    assert peak < 2**20, f"refusing {len(text):,} characters took {peak:,} bytes"
    assert len(problem) < 200


def test_a_big_good_text_is_read_with_little_more_than_its_own_size():
    x = data.make_activations("standard normal", 128, upload.MAX_COLS, seed=3)
    text = export.to_csv(x).decode()  # about 2.6 MB
    tracemalloc.start()
    try:
        got = parse_text(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    check(got, x)
    # The matrix itself (1 MiB of float64) and one line at a time: not a second copy of the text.
    assert peak < 0.6 * len(text), f"reading {len(text):,} characters took {peak:,} bytes"


def test_a_line_too_long_is_refused_by_its_length():
    problem = refused(parse_text, "1\n" + "2 " * (upload.MAX_LINE_CHARS // 2 + 1), match="characters long")
    assert problem.startswith(f"Line 2 is {upload.MAX_LINE_CHARS + 2} characters long")


def test_too_many_lines_even_if_most_are_blank():
    refused(parse_text, "\n" * upload.MAX_LINES + "1,2", match=f"over the {upload.MAX_LINES:,} read")
    check(parse_text("\n" * 100 + "1.5,-2,3.25\n\n\n0,1e-300,-7\n" + "\n" * 100))


def test_a_paste_that_reached_the_box_limit_is_refused_as_cut_off():
    full = "1,2\n" * (upload.MAX_PASTE_CHARS // 4)
    assert len(full) == upload.MAX_PASTE_CHARS
    refused(upload.parse_pasted, full, match="cut off")
    refused(upload.parse_pasted, full + "3,4\n", match="cut off")
    check(upload.parse_pasted("1.5,-2,3.25\n0,1e-300,-7\n"))


@pytest.mark.parametrize(
    ("shape", "shown"),
    [
        ((10**4000, 2), "100… (4001 digits) × 2"),
        ((3, -(7 * 10**20)), "has -700… (21 digits) columns"),
    ],
)
def test_long_numbers_in_a_npy_header_are_shortened(shape, shown):
    header = npy_header(shape)
    problem = refused(parse_bytes, "x.npy", header, match="limit|rows|column")
    assert shown in problem and len(problem) < 200, problem


def test_long_shapes_of_other_dimensions_are_shortened():
    problem = refused(parse_bytes, "x.npy", npy_header((10**4000, 1, 2)), match="not a 2-D matrix")
    assert "(100… (4001 digits), 1, 2)" in problem and len(problem) < 200, problem
    problem = refused(parse_bytes, "x.npy", npy_header((2,) * 30), match="not a 2-D matrix")
    assert "30-D array of shape (2, 2, 2, … 26 more …, 2)" in problem, problem


FINITE = hnp.arrays(
    np.float64,
    hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6).filter(lambda s: s[1] >= 2),
    elements=hs.floats(allow_nan=False, allow_infinity=False, width=64),
)


@settings(max_examples=100, deadline=None)
@given(FINITE, hs.sampled_from([",", ";", "\t", " ", "  "]), hs.booleans())
def test_any_finite_matrix_reads_back_exactly_whatever_the_separator(m, sep, header):
    lines = [sep.join(f"c{k}" for k in range(m.shape[1]))] if header else []
    lines += [sep.join(map(repr, row)) for row in m.tolist()]
    text = "\n".join(lines)
    x = parse_text(text)
    assert x.dtype == torch.float64 and torch.equal(x, torch.from_numpy(m))
    assert torch.equal(parse_bytes("m.csv", export.to_csv(torch.from_numpy(m))), x)
    assert torch.equal(parse_bytes("m.npy", export.to_npy(torch.from_numpy(m))), x)


def test_nothing_touches_the_disk(monkeypatch):
    def no_disk(*args, **kwargs):
        raise AssertionError(f"opened a file: {args!r}")

    monkeypatch.setattr(builtins, "open", no_disk)
    monkeypatch.setattr(io, "open", no_disk)
    monkeypatch.setattr(os, "open", no_disk)
    check(parse_bytes("x.csv", b"1.5,-2,3.25\n0,1e-300,-7\n"))
    check(parse_bytes("x.npy", npy(M.numpy())))
    check(parse_text("1.5 -2 3.25\n0 1e-300 -7"))


# Fuzz: whatever comes in, the only error is an UploadError.

NUMBERISH = hs.text(alphabet="0123456789.,;\t \n-+eEnaifNI\"'x\r", max_size=200)


def only_upload_errors(fn, *args):
    try:
        x = fn(*args)
    except UploadError as e:
        assert str(e).strip()
        return
    assert x.dim() == 2 and x.dtype == torch.float64 and torch.isfinite(x).all()
    assert 1 <= x.shape[0] <= upload.MAX_ROWS and 2 <= x.shape[1] <= upload.MAX_COLS


@settings(max_examples=300, deadline=None)
@given(hs.binary(max_size=400), hs.sampled_from(["f.csv", "f.txt", "f.npy", "f.bin", "f"]))
def test_fuzz_random_bytes(blob, name):
    only_upload_errors(parse_bytes, name, blob)


@settings(max_examples=300, deadline=None)
@given(hs.one_of(hs.text(max_size=200), NUMBERISH))
def test_fuzz_random_text(text):
    only_upload_errors(parse_text, text)
    only_upload_errors(parse_bytes, "f.csv", text.encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(hs.binary(max_size=300), hs.sampled_from([b"\x01\x00", b"\x02\x00", b"\x03\x00", b"\x09\x00"]))
def test_fuzz_npy_headers(rest, version):
    only_upload_errors(parse_bytes, "f.npy", b"\x93NUMPY" + version + rest)


def test_the_servers_limits_are_what_the_app_accepts():
    import tomllib
    from pathlib import Path

    server = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())["server"]
    # An upload: exactly the parser's cap (Streamlit counts this one in MiB).
    assert server["maxUploadSize"] * 2**20 == upload.MAX_BYTES
    # A rerun's widget states (in MB): room for a full paste box in 4-byte characters, and not much more.
    full_box = 4 * upload.MAX_PASTE_CHARS
    assert full_box + 100_000 <= server["maxWidgetStateSize"] * 10**6 <= 2 * full_box
    # Any message (in MB): at least the widget states, far below Streamlit's default of 200.
    assert server["maxWidgetStateSize"] <= server["maxMessageSize"] <= 16


# Text from the uploader (a file's name, a cell) is shown in Markdown: it must stay text.
HOSTILE = (
    "[log in](http://host/login)",
    "![x](http://host/px.gif)",
    "$\\huge{pwned}$",
    "<img src=x onerror=alert(1)>",
    ":red[alarm] **bold**",
    "`` ` ``",
)


def outside_code_spans(markdown: str) -> str:
    """``markdown`` with every code span (any fence length) cut out: what Markdown would interpret."""
    return re.sub(r"(`+)(?:.|\n)*?\1", "", markdown)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_file_names_and_cells_are_echoed_as_code_spans(hostile):
    for problem in (
        refused(parse_bytes, hostile + ".exe", b"1,2\n", match="extension"),
        refused(parse_bytes, hostile + ".csv", b"", match="empty"),
        refused(parse_bytes, hostile + ".npy", b"not npy", match="signature"),
        refused(parse_text, f"1,2\n3,{hostile}\n", match="Row 2"),
    ):
        rest = outside_code_spans(problem)
        for mark in ("](", "![", "$", "<img", ":red[", "**"):
            assert mark not in rest, (hostile, problem)
