"""Import and export human labels made outside the annotate app (CSV or JSONL).

A label file has one label per line or row: ``item_id``, ``annotator``,
``label`` and optionally ``note``, ``dataset``, ``flagged``, ``blind``,
``seconds``, ``source`` (everything :func:`export_labels` writes, so an export
imports back unchanged: a row without a label is a skip, note or flag, and
``source = "adjudicate"`` marks an adjudicated label). Labels match the scale
ignoring case. The whole file is checked before anything is stored: every
malformed line, unknown item id and label outside the rubric's scale is
reported as ``file:line: problem`` (up to :data:`~judgekit.io.records.MAX_REPORTED_ERRORS`), and a
file with any error imports nothing. Importing the same file twice adds
nothing the second time (a label equal to the annotator's current one is not
appended again).

Records are read by :mod:`judgekit.io.records` (JSONL, CSV, TSV, parquet) and
their fields coerced by :mod:`judgekit.io.fields`, as for judge verdicts.
"""

from __future__ import annotations

import csv
import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from judgekit.errors import InputError
from judgekit.io.fields import bool_field, item_dataset_index, resolve_dataset, text_field
from judgekit.io.file_checks import no_records
from judgekit.io.records import ErrorList, Record, iter_records
from judgekit.io.streaming import batched, write_checked
from judgekit.progress import advance, phase
from judgekit.store import Store
from judgekit.store.imports import ImportSession, LabelRow, LabelState
from judgekit.store.rows import LABEL_COLUMNS
from judgekit.text_limits import too_long
from judgekit.textsafe import spreadsheet_cell
from judgekit.types import ADJUDICATED_SOURCE, Label, Rubric

LABEL_FIELDS = (
    "dataset", "item_id", "annotator", "label", "note", "flagged", "blind", "seconds",
    "created_at", "source",
)
_REQUIRED = ("item_id", "annotator")
#: Labels validated and written at a time.
BATCH = 5000
#: A label's fields in :class:`Label` order (the tuple the import path carries).
_fields = operator.attrgetter(*LABEL_COLUMNS)

ExportFormat = Literal["jsonl", "csv"]


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
    records = iter_records(path, LABEL_FIELDS, on_error=errors.add)
    return labels_from_records(records, errors, rubric, store, dataset=dataset)


def labels_from_records(
    records: Iterable[Record], errors: ErrorList, rubric: Rubric, store: Store,
    *, dataset: str | None = None, index: Mapping[str, list[str]] | None = None,
) -> list[Label]:
    """Validated labels of shaped records; every problem is added to ``errors``, then raised.

    ``index`` is :func:`~judgekit.io.fields.item_dataset_index` of ``store`` and
    ``dataset`` when the caller keeps one (the server caches it between requests).
    """
    checker = LabelChecker(errors, rubric, store, dataset=dataset, index=index)
    labels = [label for label in map(checker.check, records) if label is not None]
    checker.finish()
    return labels


class LabelChecker:
    """Validates labels one record at a time, so a file can be checked as it streams.

    Only what spans records is kept: the line of each (dataset, item, annotator)
    seen, as one string (a second label names the first one's line).
    """

    def __init__(self, errors: ErrorList, rubric: Rubric, store: Store, *,
                 dataset: str | None = None,
                 index: Mapping[str, list[str]] | None = None) -> None:
        self.errors, self.rubric, self.dataset = errors, rubric, dataset
        self.index = item_dataset_index(store, dataset) if index is None else index
        self.first_line: dict[str, int] = {}
        self.records = 0

    def check(self, record: Record) -> Label | None:
        """The label of one ``(line, record)``, or None (its problem is in ``errors``)."""
        row = self.check_row(record)
        return None if row is None else Label(*row)

    def check_row(self, record: Record) -> LabelRow | None:
        """:meth:`check` as the label's fields (what :class:`LabelWriter` stores)."""
        number, fields = record
        self.records += 1
        try:
            row = _label_row(fields, self.rubric, self.index, self.dataset)
        except ValueError as exc:
            self.errors.add(number, str(exc))
            return None
        first = self.first_line.setdefault(f"{row[0]}\x00{row[1]}\x00{row[3]}", number)
        if first != number:
            self.errors.add(
                number, f"second label for item {row[1]!r} by {row[3]!r} (first on line {first})")
            return None
        return row

    def finish(self) -> None:
        """Add the empty-file problem, then raise every problem found (if any)."""
        if not self.records and not self.errors.errors:
            self.errors.add(None, f"no labels ({no_records(self.errors.path)})")
        self.errors.raise_if_any()


def _label_row(
    record: Mapping[str, Any], rubric: Rubric, index: Mapping[str, list[str]], dataset: str | None
) -> LabelRow:
    """A record's label as its fields in :class:`Label` order (no object per label)."""
    for name in _REQUIRED:
        if record.get(name) is None:
            raise ValueError(f"missing field {name!r}")
    if (problem := too_long(record)) is not None:  # the limits `judgekit serve` applies too
        raise ValueError(problem)
    item_id = text_field(record, "item_id")
    annotator = text_field(record, "annotator")
    assert item_id is not None and annotator is not None
    value = scale_label(rubric, text_field(record, "label"))
    note = text_field(record, "note")
    flagged = bool_field(record, "flagged", False)
    row_dataset = text_field(record, "dataset")
    if dataset is not None and row_dataset is not None and row_dataset != dataset:
        raise ValueError(f"dataset {row_dataset!r} differs from --dataset {dataset!r}")
    seconds = record.get("seconds")
    try:
        seconds_value = None if seconds is None else float(seconds)
    except (TypeError, ValueError):
        raise ValueError(f"'seconds' must be a number, got {seconds!r}") from None
    if value is None and note is None and not flagged and seconds_value is None:
        raise ValueError("missing field 'label' (only a skip, note or flag may have none)")
    return (
        resolve_dataset(item_id, row_dataset or dataset, index), item_id, rubric.sha256,
        annotator, value, note, flagged, bool_field(record, "blind", True), seconds_value,
        text_field(record, "created_at") or "",
        ADJUDICATED_SOURCE if record.get("source") == ADJUDICATED_SOURCE else "import",
    )


def scale_label(rubric: Rubric, value: str | None) -> str | None:
    """The scale's spelling of ``value``, matched ignoring case (``a`` is ``A``, as its key is)."""
    if value is None or rubric.scale.is_valid(value):
        return value
    wanted = value.strip().casefold()
    for label in rubric.scale.labels:
        if label.casefold() == wanted:
            return label
    raise ValueError(
        f"label {value!r} is not on the {rubric.name!r} scale "
        f"(allowed: {', '.join(rubric.scale.labels)})"
    )


def import_labels(
    store: Store, path: str | Path, rubric: Rubric, *, dataset: str | None = None
) -> LabelImportResult:
    """Validate the file and append its new labels, all in one transaction (all or nothing).

    The file is read and written a batch at a time (memory stays flat); once a
    problem is found nothing more is written, the rest is still checked, and every
    problem is raised together, which rolls back what was written.
    """
    errors = ErrorList(str(path))
    checker = LabelChecker(errors, rubric, store, dataset=dataset)
    records = iter_records(path, LABEL_FIELDS, on_error=errors.add)
    with store.importing() as session:
        writer = LabelWriter(session, rubric)
        write_checked(records, checker.check_row, writer.add, errors, BATCH)
        checker.finish()
        return writer.result()


def store_labels(store: Store, labels: Sequence[Label], rubric: Rubric) -> LabelImportResult:
    """Append the validated ``labels`` that change something, in one transaction."""
    with store.importing() as session:
        writer = LabelWriter(session, rubric)
        for batch in batched(labels, BATCH):
            writer.add([_fields(lb) for lb in batch])
        return writer.result()


class LabelWriter:
    """Appends the labels that change something, batch by batch, in an import session.

    A label equal (label, note, flag) to the annotator's current one before the
    import, or an adjudication equal to the item's current adjudication, is
    counted as unchanged and not appended.
    """

    def __init__(self, session: ImportSession, rubric: Rubric) -> None:
        self.session, self.rubric = session, rubric
        session.save_rubric(rubric)
        self.added = self.unchanged = 0
        self.annotators: set[str] = set()
        self.datasets: set[str] = set()

    def add(self, rows: Sequence[LabelRow]) -> None:
        """Append the rows (labels' fields, :class:`Label` order) that change something."""
        current: dict[str, dict[tuple[str, str], LabelState]] = {}
        for name in {row[0] for row in rows}:
            group = [row for row in rows if row[0] == name]
            ids = [row[1] for row in group]
            state = current[name] = self.session.current_labels(
                self.rubric.sha256, name, ids, adjudicated=False)
            if any(row[10] == ADJUDICATED_SOURCE for row in group):
                state.update(self.session.current_labels(self.rubric.sha256, name, ids,
                                                         adjudicated=True))
        fresh: list[LabelRow] = []
        for row in rows:  # in the file's order
            who = "" if row[10] == ADJUDICATED_SOURCE else row[3]
            if current[row[0]].get((row[1], who)) == (row[4], row[5], row[6]):
                self.unchanged += 1
            else:
                fresh.append(row)
        self.datasets.update(current)
        self.annotators.update(row[3] for row in rows)
        self.session.add_label_rows(fresh)
        self.added += len(fresh)

    def result(self) -> LabelImportResult:
        return LabelImportResult(
            added=self.added,
            unchanged=self.unchanged,
            annotators=tuple(sorted(self.annotators)),
            datasets=tuple(sorted(self.datasets)),
        )


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
    labeled_only: bool = False,
) -> int:
    """Write each annotator's current row per item, and each adjudication; returns the count.

    Skipped items and notes or flags on unlabeled items are written too (``label``
    empty), so nothing an annotator said is lost; ``labeled_only`` leaves them out.
    Rows are read and written a page at a time, all from one snapshot of the store.
    """
    from judgekit.store.exports import adjudicated_label_pages, latest_label_pages, snapshot

    if fmt not in ("jsonl", "csv"):
        raise InputError(f"unknown format {fmt!r} (use jsonl or csv)")
    wanted = None if annotators is None else set(annotators)
    write = _jsonl_writer(out) if fmt == "jsonl" else _csv_writer(out)
    count = 0
    writing = False
    with snapshot(store):
        phase("reading labels")
        for read in (latest_label_pages, adjudicated_label_pages):
            with closing(read(store, rubric_hash, LABEL_FIELDS, dataset=dataset,
                              include_skips=not labeled_only)) as pages:
                for rows in pages:
                    if not writing:
                        phase("writing")
                        writing = True
                    records = [_label_export_record(row) for row in rows
                               if wanted is None or row[2] in wanted]
                    write(records)
                    count += len(records)
                    advance(len(rows))
        if not writing:
            phase("writing")
    return count


def _label_export_record(row: Sequence[Any]) -> dict[str, Any]:
    """:func:`label_record` of a stored row (:data:`LABEL_FIELDS` columns, flags 0/1)."""
    record = dict(zip(LABEL_FIELDS, row, strict=True))
    record["flagged"] = bool(record["flagged"])
    record["blind"] = bool(record["blind"])
    return record


def _jsonl_writer(out: TextIO) -> Callable[[list[dict[str, Any]]], None]:
    encode = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(r, ensure_ascii=False)

    def write(records: list[dict[str, Any]]) -> None:
        out.write("".join([encode(r) + "\n" for r in records]))

    return write


def _csv_writer(out: TextIO) -> Callable[[list[dict[str, Any]]], None]:
    writer = csv.DictWriter(out, fieldnames=list(LABEL_FIELDS), lineterminator="\n")
    writer.writeheader()

    def write(records: list[dict[str, Any]]) -> None:  # a note may hold "=HYPERLINK(...)"
        writer.writerows([{k: ("" if v is None else spreadsheet_cell(v) if isinstance(v, str)
                               else v) for k, v in r.items()} for r in records])

    return write
