"""DataFrames in and out: pandas or polars, neither required by judgekit itself.

:func:`from_frame` reads a DataFrame's rows through the same shaping and
validation as a file (:mod:`judgekit.io.records`), so a frame and the JSONL it
came from give the same items, labels or verdicts, and the same errors, named
``DataFrame:ROW`` (1-based). Missing values (``None``, NaN, ``pd.NA``, ``NaT``)
are left out, as an empty cell is, so a ``dtype="string"`` column with NA works.
:func:`to_frame` returns what the store holds for a rubric as a pandas (or
polars) DataFrame.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from judgekit.errors import InputError
from judgekit.io.items import FIELDS as ITEM_FIELDS
from judgekit.io.items import items_from_records
from judgekit.io.judgments import JUDGMENT_FIELDS, Orientation, ParsedVerdict, verdicts_from_records
from judgekit.io.labels import LABEL_FIELDS, label_record, labels_from_records
from judgekit.io.records import ErrorList, iter_mappings
from judgekit.store import Store
from judgekit.types import Item, Judgment, Label, Rubric

FrameKind = Literal["items", "labels", "judgments"]
FrameContent = Literal["judgments", "labels", "joined"]
SOURCE = "DataFrame"


def frame_rows(frame: Any) -> Iterator[dict[str, Any]]:
    """The rows of a pandas or polars DataFrame as dicts of plain Python values."""
    if hasattr(frame, "to_dicts"):  # polars
        yield from frame.to_dicts()
        return
    if not hasattr(frame, "to_dict") or not hasattr(frame, "columns"):
        raise InputError(f"expected a pandas or polars DataFrame, got {type(frame).__name__}")
    for row in frame.to_dict(orient="records"):
        yield {str(key): _plain(value) for key, value in row.items()}


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (an int64 id is an integer id)."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def _renamed(rows: Iterator[dict[str, Any]], columns: Mapping[str, str] | None,
             allowed: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """Rows with ``columns`` (judgekit field -> frame column) applied."""
    if not columns:
        yield from rows
        return
    unknown = [name for name in columns if name not in allowed]
    if unknown:
        raise InputError(f"columns: {unknown[0]!r} is not a field (fields: {', '.join(allowed)})")
    back = {column: name for name, column in columns.items()}
    for row in rows:
        yield {back.get(key, key): value for key, value in row.items()}


def from_frame(
    frame: Any,
    kind: FrameKind = "items",
    columns: Mapping[str, str] | None = None,
    *,
    store: Store | None = None,
    rubric: Rubric | None = None,
    dataset: str | None = None,
    judge: str | None = None,
    orientation: Orientation = "presented",
) -> list[Item] | list[Label] | list[ParsedVerdict]:
    """Items, labels or verdicts from a DataFrame, validated like a file of that kind.

    ``columns`` maps judgekit field names to the frame's columns
    (``{"id": "question_id", "response": "answer"}``). Labels and verdicts name
    stored items, so they need ``store`` and ``rubric``. Store the results with
    ``store.import_items(name, items)``, ``store.add_labels(labels)`` or
    ``judgekit.io.verdict_store.import_verdicts(store, verdicts, rubric, source=...)``.
    """
    if kind == "items":
        rows = _renamed(frame_rows(frame), columns, ITEM_FIELDS)
        items = items_from_records(iter_mappings(rows, ITEM_FIELDS, extras="meta", name=SOURCE),
                                   SOURCE)
        if not items:
            raise InputError(f"{SOURCE}: no items (the frame is empty)")
        return items
    if kind not in ("labels", "judgments"):
        raise InputError(f"kind must be 'items', 'labels' or 'judgments', got {kind!r}")
    if store is None or rubric is None:
        raise InputError(f"from_frame(kind={kind!r}) needs store= and rubric= (labels and "
                         "verdicts name items in the store and labels on the rubric's scale)")
    errors = ErrorList(SOURCE)
    fields = LABEL_FIELDS if kind == "labels" else JUDGMENT_FIELDS
    records = list(iter_mappings(_renamed(frame_rows(frame), columns, fields), fields,
                                 on_error=errors.add, name=SOURCE))
    if kind == "labels":
        return labels_from_records(records, errors, rubric, store, dataset=dataset)
    return verdicts_from_records(records, errors, rubric, store, dataset=dataset, judge=judge,
                                 orientation=orientation)


#: The columns of each ``to_frame`` content, so an empty selection still has them.
JOINED_COLUMNS = ("dataset", "item_id", "judge", "endpoint", "run_id", "sample_index", "status",
                  "judge_label", "annotator", "human_label")


def records_frame(records: list[dict[str, Any]], backend: str = "pandas",
                  columns: tuple[str, ...] | None = None) -> Any:
    """A DataFrame of plain records, in pandas (default) or polars.

    ``columns`` names the columns of a frame with no records (zero rows, the
    documented columns, rather than a frame with none).
    """
    if backend == "polars":
        try:
            import polars as pl
        except ImportError:
            raise InputError("backend='polars' needs polars: pip install polars") from None
        if not records and columns:
            return pl.DataFrame(schema=list(columns))
        return pl.DataFrame(records, infer_schema_length=None)
    if backend != "pandas":
        raise InputError(f"backend must be 'pandas' or 'polars', got {backend!r}")
    try:
        import pandas as pd
    except ImportError:
        raise InputError("to_frame needs pandas: pip install pandas") from None
    if not records and columns:
        return pd.DataFrame(columns=list(columns))
    return pd.DataFrame.from_records(records)


def to_frame(
    store: Store,
    rubric: Rubric,
    what: FrameContent = "judgments",
    *,
    dataset: str | None = None,
    backend: str = "pandas",
) -> Any:
    """The store's judgments, labels, or both joined per item, for ``rubric``, as a DataFrame.

    ``judgments``: the latest judgment per call with its full provenance (the
    columns of ``judgekit export``). ``labels``: each annotator's current label.
    ``joined``: one row per plain judgment (as written, no probe variant) and
    annotator label of the same item: ``dataset, item_id, judge, sample_index,
    status, judge_label, annotator, human_label`` (an item nobody labeled has
    one row with no annotator).
    """
    if what not in ("judgments", "labels", "joined"):
        raise InputError(f"what must be 'judgments', 'labels' or 'joined', got {what!r}")
    labels = store.latest_labels(rubric.sha256, dataset=dataset)
    if what == "labels":
        return records_frame([label_record(lb) for lb in labels], backend, LABEL_FIELDS)
    judgments = store.judgments(rubric_hash=rubric.sha256, dataset=dataset)
    if what == "judgments":
        rows = []
        for judgment in judgments:
            row = dataclasses.asdict(judgment)
            row["sampling"] = dict(judgment.sampling)
            rows.append(row)
        return records_frame(rows, backend,
                             tuple(f.name for f in dataclasses.fields(Judgment)))
    by_item: dict[tuple[str, str], list[Label]] = {}
    for label in labels:
        by_item.setdefault((label.dataset, label.item_id), []).append(label)
    joined: list[dict[str, Any]] = []
    for judgment in judgments:
        if judgment.variant:
            continue
        base = {"dataset": judgment.dataset, "item_id": judgment.item_id,
                "judge": judgment.model_requested, "endpoint": judgment.base_url,
                "run_id": judgment.run_id, "sample_index": judgment.sample_index,
                "status": judgment.status, "judge_label": judgment.label}
        humans: list[Label | None] = list(by_item.get((judgment.dataset, judgment.item_id), []))
        for human in humans or [None]:
            joined.append({**base, "annotator": human.annotator if human else None,
                           "human_label": human.label if human else None})
    return records_frame(joined, backend, JOINED_COLUMNS)
