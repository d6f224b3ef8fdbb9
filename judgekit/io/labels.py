"""Import and export human labels made outside the annotate app (CSV or JSONL).

A label file has one label per line or row: ``item_id``, ``annotator``,
``label`` and optionally ``note``, ``dataset``, ``flagged``, ``blind``,
``seconds`` (everything :func:`export_labels` writes, so an export imports back
unchanged). The whole file is checked before anything is stored: every
malformed line, unknown item id and label outside the rubric's scale is
reported as ``file:line: problem`` (up to :data:`MAX_REPORTED_ERRORS`), and a
file with any error imports nothing. Importing the same file twice adds
nothing the second time (a label equal to the annotator's current one is not
appended again).

The generic pieces (:func:`read_records`, :class:`ErrorList`, field coercion)
are shared with :mod:`judgekit.io.judgments`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from judgekit.errors import InputError
from judgekit.store import Store
from judgekit.types import Label, Rubric

#: How many ``file:line`` problems an import error lists before summarising the rest.
MAX_REPORTED_ERRORS = 20

LABEL_FIELDS = (
    "dataset", "item_id", "annotator", "label", "note", "flagged", "blind", "seconds",
    "created_at", "source",
)
_REQUIRED = ("item_id", "annotator", "label")

ExportFormat = Literal["jsonl", "csv"]


# -- generic record reading (shared with io.judgments) ---------------------------


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


def read_records(
    path: str | Path, allowed: Sequence[str], errors: ErrorList
) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` pairs of a ``.jsonl``/``.ndjson`` or ``.csv`` file.

    Problems (bad JSON, a non-object line, unknown fields, ragged CSV rows)
    are added to ``errors``; the offending line is left out. An unreadable
    file raises :class:`InputError` at once.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".ndjson", ".csv"):
        raise InputError(
            f"{path}: unsupported file type {suffix or '(none)'!r}; use .jsonl or .csv"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x})") from None
    if suffix == ".csv":
        return _csv_records(text, allowed, errors)
    return _jsonl_records(text, allowed, errors)


def _jsonl_records(
    text: str, allowed: Sequence[str], errors: ErrorList
) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.add(number, f"invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        if not isinstance(record, dict):
            errors.add(number, f"expected a JSON object, got {type(record).__name__}")
            continue
        unknown = sorted(set(record) - set(allowed))
        if unknown:
            errors.add(number, f"unknown field {unknown[0]!r} (allowed: {', '.join(allowed)})")
            continue
        records.append((number, record))
    return records


def _csv_records(
    text: str, allowed: Sequence[str], errors: ErrorList
) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[tuple[int, dict[str, Any]]] = []
    try:
        header = next(reader, None)
        if header is None:
            return records
        header = [name.strip() for name in header]
        unknown = [name for name in header if name not in allowed]
        if unknown:
            errors.add(1, f"unknown column {unknown[0]!r} (allowed: {', '.join(allowed)})")
            return records
        start = reader.line_num + 1
        for cells in reader:
            number, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                errors.add(number, f"{len(cells)} fields, but the header has {len(header)}")
                continue
            # An empty CSV cell means "not given", like an absent JSON field.
            record = {name: cell for name, cell in zip(header, cells, strict=True) if cell != ""}
            records.append((number, record))
    except csv.Error as exc:
        errors.add(reader.line_num, f"malformed CSV: {exc}")
    return records


def text_field(record: Mapping[str, Any], name: str) -> str | None:
    """A string field; integers are accepted as their decimal text (ids, ordinal labels).

    Raises ``ValueError`` with a message for a wrong type or a blank value.
    """
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ValueError(f"{name!r} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name!r} must not be blank")
    return value


def bool_field(record: Mapping[str, Any], name: str, default: bool) -> bool:
    """A JSON boolean, or CSV text true/false/1/0/yes/no."""
    value = record.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"{name!r} must be true or false, got {value!r}")


def item_dataset_index(store: Store, dataset: str | None) -> dict[str, list[str]]:
    """item id -> datasets holding it (only ``dataset`` when given)."""
    index: dict[str, list[str]] = {}
    for name in [dataset] if dataset is not None else store.datasets():
        for item_id in store.item_ids(name):
            index.setdefault(item_id, []).append(name)
    return index


def resolve_dataset(
    item_id: str,
    given: str | None,
    index: Mapping[str, list[str]],
) -> str:
    """The dataset of ``item_id``: the one named, else the only one holding that id."""
    holders = index.get(item_id, [])
    if given is not None:
        if given not in holders:
            raise ValueError(f"unknown item id {item_id!r} in dataset {given!r}")
        return given
    if not holders:
        raise ValueError(f"unknown item id {item_id!r} (import the dataset first)")
    if len(holders) > 1:
        raise ValueError(
            f"item id {item_id!r} is in several datasets ({', '.join(holders)}); "
            "name one with --dataset or a 'dataset' field"
        )
    return holders[0]


# -- labels -------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelImportResult:
    """What an import did: labels appended, labels already current (not appended)."""

    added: int
    unchanged: int
    annotators: tuple[str, ...]
    datasets: tuple[str, ...]


def parse_label_file(
    path: str | Path, rubric: Rubric, store: Store, *, dataset: str | None = None
) -> list[Label]:
    """Every label of the file, validated, or an :class:`InputError` listing all problems."""
    errors = ErrorList(str(path))
    records = read_records(path, LABEL_FIELDS, errors)
    index = item_dataset_index(store, dataset)
    labels: list[Label] = []
    first_line: dict[tuple[str, str, str], int] = {}
    for number, record in records:
        try:
            label = _label_from(record, rubric, index, dataset)
        except ValueError as exc:
            errors.add(number, str(exc))
            continue
        key = (label.dataset, label.item_id, label.annotator)
        if key in first_line:
            errors.add(
                number,
                f"second label for item {label.item_id!r} by {label.annotator!r} "
                f"(first on line {first_line[key]})",
            )
            continue
        first_line[key] = number
        labels.append(label)
    if not records and not errors.errors:
        errors.add(None, "no labels (the file is empty)")
    errors.raise_if_any()
    return labels


def _label_from(
    record: Mapping[str, Any], rubric: Rubric, index: Mapping[str, list[str]], dataset: str | None
) -> Label:
    for name in _REQUIRED:
        if record.get(name) is None:
            raise ValueError(f"missing field {name!r}")
    item_id = text_field(record, "item_id")
    annotator = text_field(record, "annotator")
    value = text_field(record, "label")
    assert item_id is not None and annotator is not None and value is not None
    if not rubric.scale.is_valid(value):
        raise ValueError(
            f"label {value!r} is not on the {rubric.name!r} scale "
            f"(allowed: {', '.join(rubric.scale.labels)})"
        )
    row_dataset = text_field(record, "dataset")
    if dataset is not None and row_dataset is not None and row_dataset != dataset:
        raise ValueError(f"dataset {row_dataset!r} differs from --dataset {dataset!r}")
    seconds = record.get("seconds")
    try:
        seconds_value = None if seconds is None else float(seconds)
    except (TypeError, ValueError):
        raise ValueError(f"'seconds' must be a number, got {seconds!r}") from None
    return Label(
        dataset=resolve_dataset(item_id, row_dataset or dataset, index),
        item_id=item_id,
        rubric_hash=rubric.sha256,
        annotator=annotator,
        label=value,
        note=text_field(record, "note"),
        flagged=bool_field(record, "flagged", False),
        blind=bool_field(record, "blind", True),
        seconds=seconds_value,
        created_at=text_field(record, "created_at") or "",
        source="import",
    )


def import_labels(
    store: Store, path: str | Path, rubric: Rubric, *, dataset: str | None = None
) -> LabelImportResult:
    """Validate the whole file, then append its new labels in one transaction."""
    labels = parse_label_file(path, rubric, store, dataset=dataset)
    current = {
        (lb.dataset, lb.item_id, lb.annotator): lb
        for lb in store.latest_labels(rubric.sha256, include_skips=True)
    }
    fresh = [
        lb for lb in labels if not _same(current.get((lb.dataset, lb.item_id, lb.annotator)), lb)
    ]
    store.save_rubric(rubric)
    store.add_labels(fresh)
    return LabelImportResult(
        added=len(fresh),
        unchanged=len(labels) - len(fresh),
        annotators=tuple(sorted({lb.annotator for lb in labels})),
        datasets=tuple(sorted({lb.dataset for lb in labels})),
    )


def _same(old: Label | None, new: Label) -> bool:
    """Whether appending ``new`` would change nothing the store reports."""
    return old is not None and (old.label, old.note, old.flagged) == (
        new.label, new.note, new.flagged)


def label_record(label: Label) -> dict[str, Any]:
    """The export form of a label (the fields :data:`LABEL_FIELDS` names)."""
    return {
        "dataset": label.dataset,
        "item_id": label.item_id,
        "annotator": label.annotator,
        "label": label.label,
        "note": label.note,
        "flagged": label.flagged,
        "blind": label.blind,
        "seconds": label.seconds,
        "created_at": label.created_at,
        "source": label.source,
    }


def export_labels(
    store: Store,
    rubric_hash: str,
    out: TextIO,
    *,
    fmt: ExportFormat = "jsonl",
    dataset: str | None = None,
    annotators: Iterable[str] | None = None,
) -> int:
    """Write each annotator's current label per item (skips left out); returns the count."""
    labels = store.latest_labels(rubric_hash, dataset=dataset)
    if annotators is not None:
        wanted = set(annotators)
        labels = [lb for lb in labels if lb.annotator in wanted]
    records = [label_record(lb) for lb in labels]
    if fmt == "jsonl":
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=list(LABEL_FIELDS), lineterminator="\n")
        writer.writeheader()
        for record in records:
            writer.writerow({k: ("" if v is None else v) for k, v in record.items()})
    else:
        raise InputError(f"unknown format {fmt!r} (use jsonl or csv)")
    return len(records)
