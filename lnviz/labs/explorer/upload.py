"""Reading an uploaded or pasted activation matrix x of shape (B, H), safely, in memory only: the reverse of
the explorer's downloads (:mod:`lnviz.labs.explorer.export`), and the explorer's data when it is someone's own.

A file (``.csv``, ``.txt`` or ``.npy``) or pasted text becomes a float64 CPU
tensor of shape (B, H): B samples (rows) by H features (columns), with
1 ≤ B ≤ :data:`MAX_ROWS`, 2 ≤ H ≤ :data:`MAX_COLS` (LayerNorm reduces each row
over its H features, which needs at least two) and finite values only.
Anything else raises :class:`UploadError`, a ``ValueError`` whose message says
in plain words what is wrong and what is accepted, ready to show as it is.

Nothing is written to disk: bytes are read through ``io.BytesIO``. Sizes are
checked before parsing, and a ``.npy`` file's shape and dtype are read from its
header before its data; ``np.load`` always runs with ``allow_pickle=False``.

Text is measured before it is split: its length, then its line breaks and
separators are counted (``str.count``, which allocates nothing), then each
line's length; only then is one line at a time cut out and split. So a text of
millions of short lines, or one endless line, is refused at a cost near its own
size, instead of growing into millions of Python strings (a 23.5 MB paste of one
number per line used to take 1.3 GB). Numbers echoed in a message are shortened
(:func:`_show_int`), so a .npy header claiming a 4000-digit shape is not echoed
in full; text echoed in a message (a cell, a file name) is a short code span
(:func:`_show`), since messages are shown as Markdown.
"""

from __future__ import annotations

import codecs
import io
import math
import re
from collections.abc import Sequence
from pathlib import PurePath

import numpy as np
import torch
from torch import Tensor

from lnviz.text import quote as text_quote
from lnviz.views.state import BATCH, FEATURES

MAX_ROWS = BATCH.hi  # B: samples, as many as the explorer shows (1024)
MAX_COLS = FEATURES.hi  # H: features (1024)
# The largest file or text, in bytes: the app's largest grid (1024 × 1024) in
# full float64 precision is about 20 MB as CSV and 8 MiB as .npy, so every
# download of the app's own fits.
MAX_BYTES = 32 * 2**20
# The longest line of text: 32 characters a value. The app's own CSV needs at most 24
# ("-1.2345678901234567e-05,"), so a full-width row of its downloads always fits.
MAX_LINE_CHARS = 32 * MAX_COLS
# A file up to this size is read at once; a larger one (up to MAX_BYTES) takes seconds of CPU and tens of MiB
# while it is read, so a shared server reads it under its heavy-work gate (ui.labs.own_data).
LIGHT_BYTES = 4 * 2**20
# Lines of text counted before any is read: the rows, a header row, and room for blank lines.
MAX_LINES = 4 * MAX_ROWS
# The paste box: a typed or pasted matrix up to about 65,000 numbers; larger ones come as a file.
# Every rerun sends the box's text back to the server, so it stays small.
MAX_PASTE_CHARS = 2**20

TEXT_SUFFIXES = (".csv", ".txt")
NPY_SUFFIXES = (".npy",)
SUFFIXES = TEXT_SUFFIXES + NPY_SUFFIXES

ACCEPTED = (
    f"Accepted: a 2-D matrix of finite numbers, samples by features, 1 to {MAX_ROWS} rows and 2 to "
    f"{MAX_COLS} columns, as .csv or .txt (numbers separated by commas, semicolons, tabs or spaces, "
    "optional header row) or .npy (a numeric array, no pickles)."
)

# What the page states up front, next to the uploader.
LIMITS = (
    f"A 2-D matrix x, one row per sample and one column per feature: 1 to {MAX_ROWS} rows, "
    f"2 to {MAX_COLS} columns, finite numbers only, at most {MAX_BYTES // 2**20} MiB. "
    ".csv / .txt: numbers separated by commas, semicolons, tabs or spaces; an optional first row of "
    "column names is skipped. .npy: a numeric array (float, int or bool), no pickled objects. "
    f"A paste holds at most {MAX_PASTE_CHARS // 2**10:,} thousand characters; larger matrices come as a file. "
    "The data is read in memory, never written to a file."
)

_SEPARATORS = (",", ";", "\t")  # tried in this order; else any whitespace
_BREAK = re.compile(r"\r\n|\r|\n")  # a line break, as an editor counts lines
_INK = re.compile(r"\S")  # a line with any of these is not blank


class UploadError(ValueError):
    """An upload that cannot be used: the message names what is wrong and what is accepted."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"{problem} {ACCEPTED}")
        self.problem = problem  # the first sentence alone, without the list of what is accepted


def _show(cell: str) -> str:
    """A cell or a file name for a message, which is shown as Markdown: a code span, one line, at most 20
    characters (:func:`lnviz.text.quote`), so a name such as ``![x](http://host/px.gif).csv`` stays text."""
    return text_quote(str(cell), 20)


def _show_int(n: int) -> str:
    """An integer for a message: in full up to 12 digits, else its first digits and how many there are."""
    m = abs(n)
    if m < 10**12:
        return str(n)
    digits = int(m.bit_length() * math.log10(2))  # no str(m): Python refuses that past 4300 digits
    while 10**digits <= m:
        digits += 1
    lead = m // 10 ** (digits - 3)
    return f"{'-' if n < 0 else ''}{lead}… ({digits} digits)"


def _show_shape(shape: Sequence[int]) -> str:
    """A shape for a message, such as "(2, 3, 4)": long numbers shortened, at most 4 dimensions listed."""
    dims = [_show_int(int(n)) for n in shape]
    if len(dims) > 4:
        dims = [*dims[:3], f"… {len(dims) - 4} more …", dims[-1]]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _size(n: int, what: str) -> None:
    if n > MAX_BYTES:
        raise UploadError(f"The {what} is {n / 2**20:.1f} MiB, over the {MAX_BYTES // 2**20} MiB limit.")


def _number(cell: str) -> float | None:
    try:
        return float(cell.strip().strip("\"'"))
    except ValueError:
        return None


def _row_numbers(row: list[str], n: int) -> list[float]:
    """The numbers of row ``n``, cell by cell, naming the first cell that is not a number."""
    numbers = []
    for j, cell in enumerate(row, start=1):
        value = _number(cell)
        if value is None:
            shown = "empty" if not cell.strip() else f"{_show(cell.strip())}, which is not a number"
            raise UploadError(f"Row {n}, column {j} is {shown}.")
        numbers.append(value)
    return numbers


def _check_shape(rows: int, cols: int) -> None:
    if rows < 1:
        raise UploadError("The matrix has no rows.")
    if cols < 2:
        raise UploadError(
            f"The matrix has {_show_int(cols)} column{'s' if cols != 1 else ''}: LayerNorm normalizes each row over its "
            "features, which needs at least 2 columns."
        )
    if rows > MAX_ROWS or cols > MAX_COLS:
        raise UploadError(
            f"The matrix is {_show_int(rows)} × {_show_int(cols)}, over the {MAX_ROWS} × {MAX_COLS} limit."
        )


def _check_finite(x: Tensor, row_names: list[int] | None = None) -> Tensor:
    """x unchanged if every value is finite; else name the first bad cell (row i, column j, 1-based)."""
    bad = (~torch.isfinite(x)).nonzero()  # (n, 2): indices of NaN and ±inf
    if bad.numel():
        i, j = int(bad[0, 0]), int(bad[0, 1])
        value = float(x[i, j])
        row = row_names[i] if row_names else i + 1
        what = "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        count = bad.shape[0]
        raise UploadError(
            f"Row {row}, column {j + 1} is {what} ({count} value{'s' if count != 1 else ''} in all "
            f"{'are' if count != 1 else 'is'} NaN or ±inf): only finite numbers can be normalized."
        )
    return x


def _line_spans(text: str, start: int) -> list[tuple[int, int, int]]:
    """(line number, start, end) of each line of ``text`` with something on it, without copying any.

    Call only after the line breaks have been counted: this keeps one small
    tuple per line. A line longer than :data:`MAX_LINE_CHARS` is refused here,
    before it is ever cut out of the text.
    """
    spans = []
    n = 0
    for n, match in enumerate(_BREAK.finditer(text, start), start=1):
        spans.append((n, start, match.start()))
        start = match.end()
    spans.append((n + 1, start, len(text)))
    for n, s, e in spans:
        if e - s > MAX_LINE_CHARS:
            raise UploadError(
                f"Line {n} is {_show_int(e - s)} characters long, over the {MAX_LINE_CHARS:,} a row may have "
                f"({MAX_LINE_CHARS // MAX_COLS} a value)."
            )
    return [(n, s, e) for n, s, e in spans if _INK.search(text, s, e)]


def _counted(text: str) -> tuple[int, str | None]:
    """Refuse, by counting alone, text too big to read; (where the numbers start, the separator)."""
    if not isinstance(text, str):
        raise UploadError(f"Expected text, got {type(text).__name__}.")
    _size(len(text), "text")
    if "\x00" in text:
        raise UploadError("The text holds NUL characters, so it looks like binary data, not numbers.")
    start = 1 if text.startswith("\ufeff") else 0  # a byte-order mark some editors write; no copy to drop it
    lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    if lines > MAX_LINES:
        raise UploadError(
            f"The text has {lines:,} lines, over the {MAX_LINES:,} read: at most {MAX_ROWS} rows, "
            "a header row and blank lines."
        )
    sep = next((s for s in _SEPARATORS if s in text), None)
    if sep is not None and text.count(sep) >= (MAX_ROWS + 1) * MAX_COLS:
        raise UploadError(
            f"The text has {text.count(sep) + 1:,} or more values, over the {MAX_ROWS} × {MAX_COLS} limit."
        )
    return start, sep


def parse_text(text: str) -> Tensor:
    """x of shape (B, H), float64 on the CPU, from a matrix written as text.

    One line per sample (row). Values are separated by commas, or else
    semicolons, or else tabs (the first of these found in the text), or else
    any whitespace; blank lines are ignored, and a first line whose cells are
    all non-numbers (column names) is skipped. Rows in messages are the
    text's line numbers (1-based, a line ending at ``\n``, ``\r\n`` or
    ``\r``), so they match an editor's. Raises :class:`UploadError` for empty
    text, a cell that is not a number, rows of different lengths, NaN or ±inf,
    a single column, or a size over the caps.

    Everything is counted before anything is split: the length, the lines
    (at most :data:`MAX_LINES`), the values (separators), each line's length
    (at most :data:`MAX_LINE_CHARS`). Peak memory stays near the text's own size
    whatever the text holds.
    """
    start, sep = _counted(text)
    spans = _line_spans(text, start)
    if not spans:
        raise UploadError("There are no numbers: the text is empty.")

    def cells(n: int, s: int, e: int) -> list[str]:
        line = text[s:e]  # at most MAX_LINE_CHARS
        row = line.split(sep, MAX_COLS) if sep else line.split(None, MAX_COLS)
        if len(row) > MAX_COLS:
            raise UploadError(f"Row {n} has more than {MAX_COLS} values, over the {MAX_ROWS} × {MAX_COLS} limit.")
        return row

    if all(_number(c) is None for c in cells(*spans[0])):
        spans = spans[1:]  # a header row of column names
        if not spans:
            raise UploadError("There are no numbers: the text holds only a header row of names.")
    first = cells(*spans[0])
    _check_shape(len(spans), len(first))
    width, first_row = len(first), spans[0][0]
    values = np.empty((len(spans), width), dtype=np.float64)  # (B, H)
    for i, (n, s, e) in enumerate(spans):
        row = cells(n, s, e)
        if len(row) != width:
            raise UploadError(
                f"Row {n} has {len(row)} value{'s' if len(row) != 1 else ''} but row {first_row} has {width}: "
                "every row needs the same number of values."
            )
        try:
            values[i] = list(map(float, row))  # the common case, fast
        except ValueError:
            values[i] = _row_numbers(row, n)  # quoted numbers, or name the bad cell
    return _check_finite(torch.from_numpy(values), [n for n, _, _ in spans])


def parse_pasted(text: str) -> Tensor:
    """:func:`parse_text` for the paste box, which holds fewer than :data:`MAX_PASTE_CHARS` characters.

    A text that reaches the limit is refused whole: a browser cuts a longer
    paste at the box's limit, so its last row is likely cut in the middle.
    """
    if isinstance(text, str) and len(text) >= MAX_PASTE_CHARS:
        raise UploadError(
            f"The pasted text reached the box's limit of {MAX_PASTE_CHARS:,} characters, so its end was probably "
            "cut off. Upload a matrix this large as a .csv or .npy file instead."
        )
    return parse_text(text)


def _read_npy(data: bytes, name: str) -> Tensor:
    buf = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buf)
    except ValueError:
        raise UploadError(
            f"{_show(name)} is not a NumPy .npy file (its first bytes are not the .npy signature)."
        ) from None
    try:
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(buf)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(buf)
        else:
            raise UploadError(f"{_show(name)} is a .npy file of format version {version}, which is not read here.")
    except UploadError:
        raise
    except (ValueError, TypeError, SyntaxError, OverflowError, RecursionError):
        raise UploadError(f"{_show(name)} has a damaged .npy header, so its shape and type cannot be read.") from None
    if dtype.hasobject:
        raise UploadError(
            f"{_show(name)} holds Python objects (a pickled object array), which are never loaded: "
            "unpickling can run arbitrary code."
        )
    if dtype.names is not None or dtype.subdtype is not None or dtype.kind not in "fiub":
        kind = "complex numbers" if dtype.kind == "c" else f"values of type {_show(str(dtype))}"
        raise UploadError(f"{_show(name)} holds {kind}, not real numbers.")
    if len(shape) != 2:
        raise UploadError(
            f"{_show(name)} holds a {len(shape)}-D array of shape {_show_shape(shape)}, not a 2-D matrix."
        )
    _check_shape(*shape)
    expected = shape[0] * shape[1] * dtype.itemsize
    if len(data) - buf.tell() < expected:
        raise UploadError(f"{_show(name)} is cut short: its header promises {expected} bytes of data.")
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError):
        raise UploadError(f"{_show(name)} could not be read as a .npy array.") from None
    x = torch.from_numpy(np.ascontiguousarray(array, dtype=np.float64))  # (B, H), native byte order
    return _check_finite(x)


def parse_bytes(name: str, data: bytes) -> Tensor:
    """x of shape (B, H), float64 on the CPU, from the bytes of a file called ``name``.

    The extension decides how it is read: ``.csv`` and ``.txt`` as UTF-8 text
    by :func:`parse_text`; ``.npy`` as a NumPy array, its header (shape,
    dtype) checked before any data is loaded, never unpickling. Integer and
    bool arrays become float64; complex, text, structured and object arrays
    are refused. Raises :class:`UploadError` for an unknown extension, an
    empty file, a file over :data:`MAX_BYTES`, binary data where text is
    expected, and every case :func:`parse_text` refuses.
    """
    suffix = PurePath(str(name)).suffix.lower()
    if suffix not in SUFFIXES:
        raise UploadError(
            f"{_show(str(name))} has the extension {_show(suffix) if suffix else '(none)'}; only .csv, .txt and .npy are read."
        )
    if not data:
        raise UploadError(f"The file {_show(str(name))} is empty.")
    _size(len(data), "file")
    if suffix in NPY_SUFFIXES:
        return _read_npy(bytes(data), str(name))
    try:
        text = codecs.decode(data, "utf-8")  # bytes or a memoryview, without another copy of the bytes
    except UnicodeDecodeError:
        raise UploadError(
            f"{_show(str(name))} is not text (it is not valid UTF-8), so it looks like binary data."
        ) from None
    return parse_text(text)
