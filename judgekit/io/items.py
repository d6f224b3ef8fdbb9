"""Read dataset items from JSONL, CSV, TSV or parquet, stopping at the first problem with
``file:line``.

A dataset is read completely and validated before anything is stored, so a bad
line leaves the database untouched. A large file is streamed rather than held:
:func:`import_item_file` validates and stores it a batch at a time in one
transaction (for a new store, :func:`check_item_file` validates it first, so a
bad file never creates one). The format is documented in ``docs/datasets.md``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.families import model_field_problem
from judgekit.io.caps import DEFAULT_MAX_TEXT_BYTES, max_text_bytes, text_too_long
from judgekit.io.file_checks import no_records
from judgekit.io.records import Record, iter_records
from judgekit.io.records import type_name as _type_name
from judgekit.io.streaming import batched
from judgekit.progress import advance, phase
from judgekit.types import Item

#: Every field an item may have (any other field or column is kept under ``meta``).
FIELDS = (
    "id", "input", "response", "response_a", "response_b", "reference", "slice", "cluster", "meta"
)
_OPTIONAL_TEXT = ("reference", "slice", "cluster")


def dataset_name_for(path: str | Path) -> str:
    """The default dataset name of a file: its stem (``data/facts.jsonl`` -> ``facts``)."""
    return Path(path).stem


#: Items per batch when a file is streamed into the store.
BATCH = 2000


def load_items(path: str | Path) -> list[Item]:
    """All items of a ``.jsonl``, ``.csv``, ``.tsv`` or ``.parquet`` file, or an
    :class:`InputError` at ``file:line``."""
    items = list(_file_items(Path(path)))
    if not items:
        raise InputError(f"{path}: no items ({no_records(path)})")
    return items


def check_item_file(path: str | Path) -> int:
    """Validate every item of the file, keeping none; their number, or an :class:`InputError`."""
    phase("checking items")
    count = 0
    for batch in batched(_file_items(Path(path)), BATCH):
        count += len(batch)
        advance(len(batch))
    if not count:
        raise InputError(f"{path}: no items ({no_records(path)})")
    return count


def item_file_batches(path: str | Path, size: int = BATCH) -> Iterator[list[Item]]:
    """The file's validated items, ``size`` at a time (for ``store.import_item_batches``)."""
    return batched(_file_items(Path(path)), size)


@dataclass(frozen=True)
class ItemImportResult:
    """What ``judgekit import`` did: items in the file, new or changed, now in the dataset."""

    items: int
    changed: int
    total: int


def import_item_file(
    db_path: Path, path: str | Path, dataset: str, *, replace: bool = False
) -> ItemImportResult:
    """Validate the file and store its items in one transaction (all or nothing).

    Into an existing store the file is checked and written in one pass, a batch at
    a time, and any problem rolls the transaction back (an older store's schema
    upgrade included: it runs in the same transaction). A new store is created only
    for a valid file: the file is checked in a first pass, before the store exists.
    """
    from judgekit.store import open_store

    path = Path(path)
    if not db_path.exists():
        check_item_file(path)
    count = 0

    def counted() -> Iterator[list[Item]]:
        nonlocal count
        phase("checking and writing items")
        for batch in item_file_batches(path):
            count += len(batch)
            yield batch
            advance(len(batch))

    with open_store(db_path, defer_migrations=True) as store:  # upgraded only by the write
        changed = store.import_item_batches(dataset, counted(), replace=replace)
        total = store.count_items(dataset)
    if not count:
        raise InputError(f"{path}: no items ({no_records(path)})")
    return ItemImportResult(items=count, changed=changed, total=total)


def _file_items(path: Path) -> Iterator[Item]:
    rows = iter_records(path, FIELDS, extras="meta", blank_cells="keep",
                        check_header=_header_problem)
    return iter_items(rows, str(path))


def _header_problem(header: Sequence[str]) -> str | None:
    names = set(header)
    if "response" in names and ({"response_a", "response_b"} & names):
        return ("the header has both 'response' and 'response_a'/'response_b'; "
                "a dataset is either pointwise or pairwise")
    return None


def _text(row: Mapping[str, Any], field: str, where: str, *, required: bool,
          limit: int = DEFAULT_MAX_TEXT_BYTES) -> str | None:
    value = row.get(field)
    if type(value) is str and (field not in _OPTIONAL_TEXT or value.strip()):
        if len(value) * 4 > limit and (problem := text_too_long(value, limit)):
            raise InputError(f"{where}: field {field!r}: {problem}")
        return value  # the common case, first
    if field in _OPTIONAL_TEXT and isinstance(value, str) and not value.strip():
        value = None  # an empty slice/cluster/reference cell means "none"
    if value is None:
        if required:
            raise InputError(f"{where}: missing field {field!r}")
        return None
    if field in ("id", "cluster") and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(f"{where}: field {field!r} must be a string, got {_type_name(value)}")
    if (problem := text_too_long(value, limit)) is not None:
        raise InputError(f"{where}: field {field!r}: {problem}")
    return value


def _typo_hint(row: Mapping[str, Any], where: str) -> str:
    """`` (did you mean ...?)`` when an extra field kept in meta looks like a misspelt field."""
    meta = row.get("meta")
    if not isinstance(meta, dict):
        return ""
    for key in meta:
        close = difflib.get_close_matches(str(key), FIELDS, n=1, cutoff=0.8)
        if close and close[0] not in row:
            return f" ({key!r} was kept under 'meta': did you mean {close[0]!r}?)"
    return ""


def _item(row: Mapping[str, Any], where: str, limit: int = DEFAULT_MAX_TEXT_BYTES) -> Item:
    try:
        return _checked_item(row, where, limit)
    except InputError as exc:
        if "missing field" not in str(exc):
            raise
        raise InputError(f"{exc}{_typo_hint(row, where)}") from None


def _checked_item(row: Mapping[str, Any], where: str, limit: int) -> Item:
    item_id = _text(row, "id", where, required=True, limit=limit)
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
    if meta and (problem := model_field_problem(meta)) is not None:
        raise InputError(f"{where}: {problem}")
    return Item(
        id=item_id,
        input=_text(row, "input", where, required=True, limit=limit) or "",
        response=_text(row, "response", where, required=not pairwise, limit=limit),
        response_a=_text(row, "response_a", where, required=pairwise, limit=limit),
        response_b=_text(row, "response_b", where, required=pairwise, limit=limit),
        reference=_text(row, "reference", where, required=False, limit=limit),
        slice=_text(row, "slice", where, required=False, limit=limit),
        cluster=_text(row, "cluster", where, required=False, limit=limit),
        meta=dict(meta or {}),
    )


def items_from_records(rows: Iterable[Record], source: str) -> list[Item]:
    """Validated items of shaped records (:func:`~judgekit.io.records.iter_records`).

    ``source`` names the file (or frame) in messages: ``source:line: problem``.
    """
    return list(iter_items(rows, source))


def iter_items(rows: Iterable[Record], source: str) -> Iterator[Item]:
    """:func:`items_from_records` one item at a time (only the ids seen are kept)."""
    first_line: dict[str, int] = {}
    mode: tuple[bool, int] | None = None  # (pairwise?, line that set it)
    limit = max_text_bytes()  # stored text per field (docs/import.md)
    for number, row in rows:
        where = f"{source}:{number}"
        item = _item(row, where, limit)
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
        yield item
