"""Reading an uploaded or pasted activation matrix x of shape (B, H), safely, in memory only.

A file (``.csv``, ``.txt`` or ``.npy``) or pasted text becomes a float64 CPU
tensor of shape (B, H): B samples (rows) by H features (columns), with
1 ≤ B ≤ :data:`MAX_ROWS`, 2 ≤ H ≤ :data:`MAX_COLS` (LayerNorm reduces each row
over its H features, which needs at least two) and finite values only.
Anything else raises :class:`UploadError`, a ``ValueError`` whose message says
in plain words what is wrong and what is accepted, ready to show as it is.

Nothing is written to disk: bytes are read through ``io.BytesIO``. Sizes are
checked before parsing, and a ``.npy`` file's shape and dtype are read from its
header before its data; ``np.load`` always runs with ``allow_pickle=False``.
"""

from __future__ import annotations

import io
import math
from pathlib import PurePath

import numpy as np
import torch
from torch import Tensor

MAX_ROWS = 1024  # B: samples
MAX_COLS = 1024  # H: features
# The largest file or text, in bytes: the app's largest grid (1024 × 1024) in
# full float64 precision is about 20 MB as CSV and 8 MiB as .npy, so every
# download of the app's own fits.
MAX_BYTES = 32 * 2**20

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
    "The data stays in this session's memory and is never saved."
)

_SEPARATORS = (",", ";", "\t")  # tried in this order; else any whitespace


class UploadError(ValueError):
    """An upload that cannot be used: the message names what is wrong and what is accepted."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"{problem} {ACCEPTED}")
        self.problem = problem  # the first sentence alone, without the list of what is accepted


def _show(cell: str) -> str:
    """A cell for a message: quoted, control characters escaped, cut to 20 characters."""
    return repr(cell if len(cell) <= 20 else cell[:17] + "...")


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
            f"The matrix has {cols} column{'s' if cols != 1 else ''}: LayerNorm normalizes each row over its "
            "features, which needs at least 2 columns."
        )
    if rows > MAX_ROWS or cols > MAX_COLS:
        raise UploadError(f"The matrix is {rows} × {cols}, over the {MAX_ROWS} × {MAX_COLS} limit.")


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


def parse_text(text: str) -> Tensor:
    """x of shape (B, H), float64 on the CPU, from a matrix written as text.

    One line per sample (row). Values are separated by commas, or else
    semicolons, or else tabs (the first of these found in the text), or else
    any whitespace; blank lines are ignored, and a first line whose cells are
    all non-numbers (column names) is skipped. Rows in messages are the
    text's line numbers (1-based), so they match an editor's. Raises
    :class:`UploadError` for empty text, a cell that is not a number, rows of
    different lengths, NaN or ±inf, a single column, or a size over the caps.
    """
    if not isinstance(text, str):
        raise UploadError(f"Expected text, got {type(text).__name__}.")
    _size(len(text), "text")
    if "\x00" in text:
        raise UploadError("The text holds NUL characters, so it looks like binary data, not numbers.")
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise UploadError("There are no numbers: the text is empty.")
    sep = next((s for s in _SEPARATORS if s in text), None)

    def cells(line: str) -> list[str]:
        return line.split(sep) if sep else line.split()

    first = cells(lines[0][1])
    if all(_number(c) is None for c in first):
        lines = lines[1:]  # a header row of column names
        if not lines:
            raise UploadError("There are no numbers: the text holds only a header row of names.")
    _check_shape(len(lines), len(cells(lines[0][1])))
    width, first_row = len(cells(lines[0][1])), lines[0][0]
    values = []
    for n, line in lines:
        row = cells(line)
        if len(row) != width:
            raise UploadError(
                f"Row {n} has {len(row)} value{'s' if len(row) != 1 else ''} but row {first_row} has {width}: "
                "every row needs the same number of values."
            )
        try:
            values.append(list(map(float, row)))  # the common case, fast
        except ValueError:
            values.append(_row_numbers(row, n))  # quoted numbers, or name the bad cell
    x = torch.tensor(values, dtype=torch.float64)  # (B, H)
    return _check_finite(x, [n for n, _ in lines])


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
        kind = "complex numbers" if dtype.kind == "c" else f"values of type {dtype}"
        raise UploadError(f"{_show(name)} holds {kind}, not real numbers.")
    if len(shape) != 2:
        raise UploadError(f"{_show(name)} holds a {len(shape)}-D array of shape {tuple(shape)}, not a 2-D matrix.")
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
            f"{_show(str(name))} has the extension {suffix or '(none)'!r}; only .csv, .txt and .npy are read."
        )
    if not data:
        raise UploadError(f"The file {_show(str(name))} is empty.")
    _size(len(data), "file")
    if suffix in NPY_SUFFIXES:
        return _read_npy(bytes(data), str(name))
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError(
            f"{_show(str(name))} is not text (it is not valid UTF-8), so it looks like binary data."
        ) from None
    return parse_text(text)
