"""What every import checks of a whole file before its records are read, and the error list.

A file is accepted by its suffix (:func:`check_suffix`), must be UTF-8 (checked block
by block, :func:`check_utf8`, or read whole, :func:`read_text`), or is one JSON
document (:func:`load_json`: another tool's export). Problems found across a file
are collected in an :class:`ErrorList` and raised together at ``file:line``. The
record reader (:mod:`judgekit.io.records`) and the tools' readers share these.
"""

from __future__ import annotations

import codecs
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.jsonline import loads_document

#: How many ``file:line`` problems an import error lists before summarising the rest.
MAX_REPORTED_ERRORS = 20
JSONL_SUFFIXES = (".jsonl", ".ndjson")
DELIMITED = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
PARQUET_SUFFIXES = (".parquet", ".pq")
SUFFIXES = (*JSONL_SUFFIXES, *DELIMITED, *PARQUET_SUFFIXES)
#: Bytes read at a time when checking a file's encoding.
_BLOCK = 1 << 20


@dataclass
class ErrorList:
    """``file:line`` problems collected across a whole file, raised together."""

    path: str
    errors: list[str] = field(default_factory=list)
    _lines: list[int] = field(default_factory=list, repr=False)

    def add(self, line: int | None, message: str) -> None:
        where = f"{self.path}:{line}" if line is not None else self.path
        self.errors.append(f"{where}: {message}")
        self._lines.append(line if line is not None else 0)

    def raise_if_any(self) -> None:
        """Raise one InputError listing the problems in file order (checks run in passes)."""
        if not self.errors:
            return
        order = sorted(range(len(self.errors)), key=lambda i: self._lines[i])
        self.errors = [self.errors[i] for i in order]
        self._lines = [self._lines[i] for i in order]
        shown = self.errors[:MAX_REPORTED_ERRORS]
        more = len(self.errors) - len(shown)
        count = f"{len(self.errors)} error{'s' if len(self.errors) != 1 else ''}"
        lines = [f"{self.path}: {count}; nothing was imported", *shown]
        if more:
            lines.append(f"... and {more} more")
        raise InputError("\n".join(lines))


def type_name(value: Any) -> str:
    """How a JSON value's type reads in a message (``got a number``)."""
    if value is None:
        return "null"
    if isinstance(value, bytes | bytearray | memoryview):
        return "binary data (a parquet binary column, not a string column)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


def no_records(path: str | Path) -> str:
    """Why a file gave no records, in words that are true of it: a file of blank lines
    or a header alone is not "empty"."""
    try:
        size = Path(path).stat().st_size
    except (OSError, ValueError):
        return "no records"
    if size == 0:
        return "the file is empty"
    return f"the file ({size:,} bytes) holds no records: only blank lines, or a header alone"


def is_missing(value: Any) -> bool:
    """None, a float NaN, or pandas' ``NA``/``NaT``: a cell with no value."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NAType", "NaTType")


def check_suffix(path: Path) -> str:
    """The lower-case suffix of a readable file, or an InputError naming the choices."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(
            f"{path}: unsupported file type {suffix or '(none)'!r}; "
            "use .jsonl, .csv, .tsv or .parquet"
        )
    return suffix


def read_text(path: Path) -> str:
    """The file as text (UTF-8, a leading BOM dropped), or an InputError at ``file:line``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column})"
        ) from None
    return text.removeprefix("\ufeff")


def check_utf8(path: Path) -> None:
    """Raise :func:`read_text`'s error if the file is unreadable or not UTF-8, holding little.

    The file is decoded block by block and the text dropped, so a reader can then
    stream it line by line and still report a bad byte before any other problem
    (as reading it whole did). Only a file with a bad byte is read whole, for the
    exact ``file:line`` and column.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        with path.open("rb") as handle:
            while block := handle.read(_BLOCK):
                decoder.decode(block)
            decoder.decode(b"", final=True)
        return
    except UnicodeDecodeError:
        pass
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    read_text(path)  # raises the InputError naming the line and column


def load_json(path: Path) -> Any:
    """A whole-file JSON document (a tool's export), or an InputError at ``file:line``."""
    try:
        return loads_document(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
