"""One record reader for every file judgekit imports: JSONL, CSV, TSV and parquet.

Items, labels, judge verdicts and ``agree`` ratings all start as *records*:
``(line, mapping)`` pairs. Reading them in one place keeps the formats
interchangeable and every error at ``file:line`` (for parquet the number is the
1-based row). The reader is a generator of rows that are only *shaped* here
(valid UTF-8, one JSON object per line, a rectangular table, known columns);
what the values mean is checked by the caller (:mod:`judgekit.io.items`,
:mod:`judgekit.io.labels`, :mod:`judgekit.io.judgments`).

- JSONL records are split on ``\\n`` only (``\\r\\n`` is accepted): U+2028,
  U+2029 and U+0085 are ordinary characters inside a JSON string, and
  ``str.splitlines()`` would cut a valid record in two at them.
- Fields the caller does not know are either kept under ``meta`` (items: in
  JSONL, CSV, TSV and parquet alike) or reported as unknown (labels, verdicts,
  where a misspelt column must not be ignored).
- A CSV/TSV ``meta`` column holds a JSON object; other extra columns join it.
- Parquet needs the optional ``parquet`` extra (``pip install 'judgekit[parquet]'``).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TextIO

from judgekit.errors import InputError
from judgekit.io.caps import PARQUET_FLOOR_BYTES, max_uncompressed_bytes, refuse_expansion
from judgekit.io.file_checks import (
    DELIMITED,
    JSONL_SUFFIXES,
    MAX_REPORTED_ERRORS,
    PARQUET_SUFFIXES,
    ErrorList,
    check_suffix,
    check_utf8,
    is_missing,
    load_json,
    type_name,
)
from judgekit.io.jsonline import loads_line

Extras = Literal["meta", "reject"]
Record = tuple[int, dict[str, Any]]
#: Called with (line or None, problem) instead of raising, to collect every problem.
OnError = Callable[[int | None, str], None]


def iter_records(
    path: str | Path,
    fields: Sequence[str],
    *,
    extras: Extras = "reject",
    blank_cells: Literal["keep", "absent"] = "absent",
    on_error: OnError | None = None,
    check_header: Callable[[Sequence[str]], str | None] | None = None,
) -> Iterator[Record]:
    """``(line, record)`` for every non-blank record of a JSONL, CSV, TSV or parquet file.

    ``fields`` are the names the caller knows. With ``extras="meta"`` any other
    field is moved under ``meta`` (which must then be an object); with
    ``"reject"`` it is a problem. ``blank_cells`` says whether an empty CSV/TSV
    cell is an empty string (``keep``) or not given (``absent``, like a missing
    JSON field). Problems go to ``on_error`` and the record is skipped; without
    it the first problem raises :class:`InputError`. An unreadable file always
    raises. ``check_header`` may reject a CSV/TSV/parquet column list (line 1).
    """
    path = Path(path)
    suffix = check_suffix(path)
    report = on_error or _raiser(path)
    table = suffix not in JSONL_SUFFIXES
    shape = _Shaper(tuple(fields), extras, report, "column" if table else "field")
    if suffix in PARQUET_SUFFIXES:
        rows: Iterable[Record] = _parquet_rows(path, shape, check_header)
    else:
        check_utf8(path)
        if suffix in DELIMITED:
            rows = _delimited_rows(path, DELIMITED[suffix], shape, blank_cells, check_header)
        else:
            rows = _jsonl_rows(path, report)
    for number, row in rows:
        shaped = shape(number, row)
        if shaped is not None:
            yield number, shaped


def iter_mappings(
    rows: Iterable[Mapping[str, Any]],
    fields: Sequence[str],
    *,
    extras: Extras = "reject",
    on_error: OnError | None = None,
    name: str = "rows",
) -> Iterator[Record]:
    """The records of in-memory rows (a DataFrame's), numbered from 1, shaped like a file's.

    Missing values (None, NaN, ``pd.NA``) are left out, as an empty cell is.
    """
    report = on_error or _raiser(Path(name))
    shape = _Shaper(tuple(fields), extras, report)
    for number, row in enumerate(rows, start=1):
        present = {str(k): v for k, v in row.items() if not is_missing(v)}
        shaped = shape(number, present)
        if shaped is not None:
            yield number, shaped


def _raiser(path: Path) -> OnError:
    def raise_now(line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        raise InputError(f"{where}: {message}")

    return raise_now


class _Shaper:
    """Known fields stay; the others move under ``meta`` or are reported."""

    def __init__(self, fields: tuple[str, ...], extras: Extras, report: OnError,
                 noun: str = "field") -> None:
        self.fields = fields
        self.known = frozenset(fields)
        self.extras = extras
        self.report = report
        self.noun = noun  # "column" in a table

    def __call__(self, number: int, row: dict[str, Any]) -> dict[str, Any] | None:
        if self.known.issuperset(row):
            return row  # the common case: only known fields
        unknown = [key for key in row if key not in self.known]
        if self.extras == "reject":
            self.report(number, f"unknown field {sorted(unknown)[0]!r} "
                                f"(allowed: {', '.join(self.fields)})")
            return None
        meta = row.get("meta")
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            self.report(number, f"field 'meta' must be an object, got {type_name(meta)}")
            return None
        shaped = {key: value for key, value in row.items() if key in self.fields}
        merged = dict(meta)
        for key in unknown:
            if key in merged:
                self.report(number, f"{self.noun} {key!r} repeats meta key {key!r}")
                return None
            merged[key] = row[key]
        shaped["meta"] = merged
        return shaped


def _jsonl_rows(path: Path, report: OnError) -> Iterator[Record]:
    """Records of a UTF-8 file checked by :func:`check_utf8`, split on ``\\n`` only.

    A line is parsed with its ``\\n`` (JSON ignores it), and parsed again without
    it only to word an error, so a column is counted as in the line as written.
    """
    with path.open(encoding="utf-8-sig", newline="\n") as handle:
        for number, line in enumerate(handle, start=1):
            if not line or line.isspace():
                continue
            try:
                try:
                    row = loads_line(line)  # also refuses lone surrogates, 5,000-digit numbers
                except json.JSONDecodeError:
                    row = loads_line(line.removesuffix("\n"))  # raises, with the right column
            except json.JSONDecodeError as exc:
                report(number, f"invalid JSON: {exc.msg} (column {exc.colno})")
                continue
            except RecursionError:
                report(number, "invalid JSON: nested too deeply")
                continue
            if not isinstance(row, dict):
                report(number, f"expected a JSON object, got {type_name(row)}")
                continue
            yield number, row


def _header_problem(
    header: Sequence[str], check: Callable[[Sequence[str]], str | None] | None
) -> str | None:
    seen: set[str] = set()
    for name in header:
        if not name:
            return "empty column name in the header"
        if name in seen:
            return f"column {name!r} appears twice in the header"
        seen.add(name)
    return check(header) if check is not None else None


def _delimited_rows(
    path: Path,
    delimiter: str,
    shape: _Shaper,
    blank_cells: Literal["keep", "absent"],
    check_header: Callable[[Sequence[str]], str | None] | None,
) -> Iterator[Record]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        yield from _table_rows(handle, delimiter, shape, blank_cells, check_header)


def _table_rows(
    handle: TextIO,
    delimiter: str,
    shape: _Shaper,
    blank_cells: Literal["keep", "absent"],
    check_header: Callable[[Sequence[str]], str | None] | None,
) -> Iterator[Record]:
    reader = csv.reader(handle, delimiter=delimiter, strict=True)
    report = shape.report
    kind = "CSV" if delimiter == "," else "TSV"
    try:
        header = next(reader, None)
        if header is None:
            return
        header = [name.strip() for name in header]
        problem = _header_problem(header, check_header)
        if problem is None and shape.extras == "reject":
            unknown = [name for name in header if name not in shape.fields]
            if unknown:
                problem = (f"unknown column {unknown[0]!r} "
                           f"(allowed: {', '.join(shape.fields)})")
        if problem is not None:
            report(1, problem)
            return
        start = reader.line_num + 1
        for cells in reader:
            number, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                report(number, f"{len(cells)} fields, but the header has {len(header)}")
                continue
            row = _cell_row(dict(zip(header, cells, strict=True)), shape, blank_cells, number)
            if row is not None:
                yield number, row
    except csv.Error as exc:
        report(reader.line_num, f"malformed {kind}: {exc}")


def _cell_row(
    cells: dict[str, str], shape: _Shaper, blank_cells: Literal["keep", "absent"], number: int
) -> dict[str, Any] | None:
    """A table row as a JSON-like record: the ``meta`` cell parsed, blank cells per policy."""
    row: dict[str, Any] = {}
    for name, value in cells.items():
        if name == "meta" and shape.extras == "meta":
            if not value.strip():
                continue
            try:
                meta = loads_line(value)
            except (json.JSONDecodeError, RecursionError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
                shape.report(number, f"field 'meta' is not valid JSON: {reason}")
                return None
            if not isinstance(meta, dict):
                shape.report(number, "field 'meta' must be a JSON object")
                return None
            row["meta"] = meta
        elif value == "" and blank_cells == "absent":
            continue
        else:
            row[name] = value
    return row


def _parquet_rows(
    path: Path, shape: _Shaper, check_header: Callable[[Sequence[str]], str | None] | None
) -> Iterator[Record]:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise InputError(
            f"{path}: reading parquet needs pyarrow: pip install 'judgekit[parquet]'"
        ) from None
    try:
        parquet = pq.ParquetFile(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except Exception as exc:  # pyarrow raises its own error types for a damaged file
        raise InputError(f"{path}: not a readable parquet file ({exc})") from None
    limit = max_uncompressed_bytes(path.stat().st_size, floor=PARQUET_FLOOR_BYTES)
    meta = parquet.metadata
    declared = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if declared > limit:
        refuse_expansion(str(path), declared, limit, declared=True)
    header = list(parquet.schema_arrow.names)
    problem = _header_problem(header, check_header)
    if problem is None and shape.extras == "reject":
        unknown = [name for name in header if name not in shape.fields]
        if unknown:
            problem = f"unknown column {unknown[0]!r} (allowed: {', '.join(shape.fields)})"
    if problem is not None:
        shape.report(None, problem)  # a parquet file has no header line
        return
    number = used = 0
    for batch in parquet.iter_batches(batch_size=4096):
        used += batch.nbytes  # what the file declared may be less than what it holds
        if used > limit:
            refuse_expansion(str(path), used, limit, declared=False)
        for row in batch.to_pylist():
            number += 1
            yield number, {k: v for k, v in row.items() if not is_missing(v)}


#: The importers' names: the record reader, and the file checks they use with it.
__all__ = [
    "MAX_REPORTED_ERRORS", "ErrorList", "Extras", "OnError", "Record", "is_missing",
    "iter_mappings", "iter_records", "load_json", "type_name",
]
