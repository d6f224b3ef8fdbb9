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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from judgekit.errors import InputError
from judgekit.io.fields import bool_field, item_dataset_index, resolve_dataset, text_field
from judgekit.io.records import ErrorList, Record, iter_records
from judgekit.store import Store
from judgekit.types import ADJUDICATED_SOURCE, Label, Rubric

LABEL_FIELDS = (
    "dataset", "item_id", "annotator", "label", "note", "flagged", "blind", "seconds",
    "created_at", "source",
)
_REQUIRED = ("item_id", "annotator")

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
    records = list(iter_records(path, LABEL_FIELDS, on_error=errors.add))
    return labels_from_records(records, errors, rubric, store, dataset=dataset)


def labels_from_records(
    records: Iterable[Record], errors: ErrorList, rubric: Rubric, store: Store,
    *, dataset: str | None = None,
) -> list[Label]:
    """Validated labels of shaped records; every problem is added to ``errors``, then raised."""
    records = list(records)
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
    return Label(
        dataset=resolve_dataset(item_id, row_dataset or dataset, index),
        item_id=item_id,
        rubric_hash=rubric.sha256,
        annotator=annotator,
        label=value,
        note=note,
        flagged=flagged,
        blind=bool_field(record, "blind", True),
        seconds=seconds_value,
        created_at=text_field(record, "created_at") or "",
        source=ADJUDICATED_SOURCE if record.get("source") == ADJUDICATED_SOURCE else "import",
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
    """Validate the whole file, then append its new labels in one transaction."""
    return store_labels(store, parse_label_file(path, rubric, store, dataset=dataset), rubric)


def store_labels(store: Store, labels: Sequence[Label], rubric: Rubric) -> LabelImportResult:
    """Append the validated ``labels`` that change something, in one transaction."""
    current = {
        (lb.dataset, lb.item_id, lb.annotator): lb
        for lb in store.latest_labels(rubric.sha256, include_skips=True)
    }
    adjudicated = {
        (lb.dataset, lb.item_id): lb
        for lb in store.adjudicated_labels(rubric.sha256, include_skips=True)
    }

    def now(lb: Label) -> Label | None:
        if lb.source == ADJUDICATED_SOURCE:
            return adjudicated.get((lb.dataset, lb.item_id))
        return current.get((lb.dataset, lb.item_id, lb.annotator))

    fresh = [lb for lb in labels if not _same(now(lb), lb)]
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
    labeled_only: bool = False,
) -> int:
    """Write each annotator's current row per item, and each adjudication; returns the count.

    Skipped items and notes or flags on unlabeled items are written too (``label``
    empty), so nothing an annotator said is lost; ``labeled_only`` leaves them out.
    """
    labels = [
        *store.latest_labels(rubric_hash, dataset=dataset, include_skips=not labeled_only),
        *store.adjudicated_labels(rubric_hash, dataset=dataset, include_skips=not labeled_only),
    ]
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
