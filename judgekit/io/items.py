"""Read dataset items from JSONL or CSV, stopping at the first problem with ``file:line``.

A dataset is read completely and validated before anything is stored, so a bad
line leaves the database untouched. The format is documented in ``docs/datasets.md``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.types import Item

#: Every field an item may have (JSONL rejects others; CSV moves them into ``meta``).
FIELDS = (
    "id", "input", "response", "response_a", "response_b", "reference", "slice", "cluster", "meta"
)
_OPTIONAL_TEXT = ("reference", "slice", "cluster")
_JSONL_SUFFIXES = (".jsonl", ".ndjson")


def dataset_name_for(path: str | Path) -> str:
    """The default dataset name of a file: its stem (``data/facts.jsonl`` -> ``facts``)."""
    return Path(path).stem


def load_items(path: str | Path) -> list[Item]:
    """All items of a ``.jsonl`` or ``.csv`` file, or an :class:`InputError` at ``file:line``."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (*_JSONL_SUFFIXES, ".csv"):
        raise InputError(
            f"{path}: unsupported file type {suffix or '(none)'!r}; use .jsonl or .csv"
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    text = _decode(data, path)
    rows = _csv_rows(text, path) if suffix == ".csv" else _jsonl_rows(text, path)
    items = _validate(rows, path)
    if not items:
        raise InputError(f"{path}: no items (the file is empty)")
    return items


def _decode(data: bytes, path: Path) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column})"
        ) from None
    return text.removeprefix("\ufeff")


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "a string"


def _jsonl_rows(text: str, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}:{number}: invalid JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(row, dict):
            raise InputError(f"{path}:{number}: expected a JSON object, got {_type_name(row)}")
        unknown = [key for key in row if key not in FIELDS]
        if unknown:
            raise InputError(
                f"{path}:{number}: unknown field {unknown[0]!r} (allowed: {', '.join(FIELDS)}; "
                "put anything else under 'meta')"
            )
        yield number, row


def _csv_rows(text: str, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        header = [name.strip() for name in header]
        _check_header(header, path)
        start = reader.line_num + 1
        for cells in reader:
            number, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                raise InputError(
                    f"{path}:{number}: {len(cells)} fields, but the header has {len(header)}"
                )
            yield number, _csv_row(dict(zip(header, cells, strict=True)), path, number)
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: malformed CSV: {exc}") from None


def _check_header(header: list[str], path: Path) -> None:
    seen: set[str] = set()
    for name in header:
        if not name:
            raise InputError(f"{path}:1: empty column name in the header")
        if name in seen:
            raise InputError(f"{path}:1: column {name!r} appears twice in the header")
        seen.add(name)
    if "response" in seen and ({"response_a", "response_b"} & seen):
        raise InputError(
            f"{path}:1: the header has both 'response' and 'response_a'/'response_b'; "
            "a dataset is either pointwise or pairwise"
        )


def _csv_row(cells: dict[str, str], path: Path, number: int) -> dict[str, Any]:
    """A CSV record as a JSON-like row: empty optional cells are absent, extra columns -> meta."""
    row: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    if cells.get("meta", "").strip():
        try:
            meta = json.loads(cells["meta"])
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}:{number}: field 'meta' is not valid JSON: {exc.msg}"
            ) from None
        if not isinstance(meta, dict):
            raise InputError(f"{path}:{number}: field 'meta' must be a JSON object")
    for name, value in cells.items():
        if name == "meta":
            continue
        if name not in FIELDS:
            if name in meta:
                raise InputError(f"{path}:{number}: column {name!r} repeats meta key {name!r}")
            meta[name] = value
        elif name in _OPTIONAL_TEXT and not value.strip():
            continue
        else:
            row[name] = value
    if meta:
        row["meta"] = meta
    return row


def _text(row: Mapping[str, Any], field: str, where: str, *, required: bool) -> str | None:
    value = row.get(field)
    if value is None:
        if required:
            raise InputError(f"{where}: missing field {field!r}")
        return None
    if field in ("id", "cluster") and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(f"{where}: field {field!r} must be a string, got {_type_name(value)}")
    return value


def _item(row: Mapping[str, Any], where: str) -> Item:
    item_id = _text(row, "id", where, required=True)
    if not item_id or not item_id.strip():
        raise InputError(f"{where}: field 'id' must not be empty")
    pairwise = row.get("response_a") is not None or row.get("response_b") is not None
    if pairwise and row.get("response") is not None:
        raise InputError(f"{where}: has both 'response' and 'response_a'/'response_b'")
    if not pairwise and row.get("response") is None:
        raise InputError(f"{where}: missing field 'response' (or 'response_a' and 'response_b')")
    meta = row.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise InputError(f"{where}: field 'meta' must be an object, got {_type_name(meta)}")
    return Item(
        id=item_id,
        input=_text(row, "input", where, required=True) or "",
        response=_text(row, "response", where, required=not pairwise),
        response_a=_text(row, "response_a", where, required=pairwise),
        response_b=_text(row, "response_b", where, required=pairwise),
        reference=_text(row, "reference", where, required=False),
        slice=_text(row, "slice", where, required=False),
        cluster=_text(row, "cluster", where, required=False),
        meta=dict(meta or {}),
    )


def _validate(rows: Iterator[tuple[int, dict[str, Any]]], path: Path) -> list[Item]:
    items: list[Item] = []
    first_line: dict[str, int] = {}
    mode: tuple[bool, int] | None = None  # (pairwise?, line that set it)
    for number, row in rows:
        where = f"{path}:{number}"
        item = _item(row, where)
        if item.id in first_line:
            raise InputError(
                f"{where}: duplicate id {item.id!r} (first on line {first_line[item.id]})"
            )
        first_line[item.id] = number
        if mode is None:
            mode = (item.is_pairwise, number)
        elif mode[0] != item.is_pairwise:
            this = "pairwise" if item.is_pairwise else "pointwise"
            that = "pairwise" if mode[0] else "pointwise"
            raise InputError(
                f"{where}: {this} item in a {that} dataset (line {mode[1]} is {that}); "
                "a dataset is either pointwise ('response') or pairwise ('response_a'/'response_b')"
            )
        items.append(item)
    return items
