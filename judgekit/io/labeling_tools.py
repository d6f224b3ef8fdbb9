"""Labeling tools in and out: a queue as Label Studio tasks; Label Studio and Argilla exports
as labels.

The formats are in :mod:`judgekit.io.label_studio`; this module ties them to
the store: the queue's items (and, on request, the primary judge's verdicts) go out, the
annotations come back through the same validation as ``labels import``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judgekit.errors import InputError
from judgekit.io import argilla, label_studio
from judgekit.io.labels import LABEL_FIELDS, LabelImportResult, labels_from_records, store_labels
from judgekit.io.records import ErrorList, iter_mappings
from judgekit.store import QueueEntry, Store
from judgekit.store.exports import ok_verdict_counts
from judgekit.types import Judgment, Rubric, primary_model


@dataclass(frozen=True)
class WrittenTasks:
    """The tasks file's text, the labeling config, and what went in."""

    queue: str
    tasks_json: str
    config: str
    count: int
    predicted: int


def primary_verdicts(judgments: Sequence[Judgment]) -> dict[tuple[str, str], Judgment]:
    """Per (dataset, item): the primary judge's plain first-sample verdict."""
    ok = [j for j in judgments if j.status == "ok" and not j.variant and j.sample_index == 0]
    if not ok:
        return {}
    primary = primary_model(Counter(j.model_requested for j in ok))
    return {(j.dataset, j.item_id): j for j in ok if j.model_requested == primary}


def _primary_verdicts_of(
    store: Store, rubric: Rubric, dataset: str, item_ids: Sequence[str]
) -> dict[tuple[str, str], Judgment]:
    """:func:`primary_verdicts` of the dataset, for these items only.

    The primary judge is chosen over the whole dataset (counted in SQLite), but
    only the tasks' items' judgments are read: 100 tasks read 100 items' rows.
    """
    counts = ok_verdict_counts(store, rubric.sha256, dataset)
    if not counts:
        return {}
    primary = primary_model(counts)
    found: dict[tuple[str, str], Judgment] = {}
    for rows in store.judgments_for_items(rubric.sha256, dataset, item_ids).values():
        for j in rows:  # in insertion order: the latest row wins, as in primary_verdicts
            if (j.status == "ok" and not j.variant and j.sample_index == 0
                    and j.model_requested == primary):
                found[(j.dataset, j.item_id)] = j
    return found


def export_tasks(
    store: Store, rubric: Rubric, queue: str, entries: Sequence[QueueEntry], *,
    predictions: bool = False,
) -> WrittenTasks:
    """Label Studio tasks for the queue's items, in queue order.

    Blind by default: the judge's verdict is a task's prediction only with
    ``predictions=True`` (Label Studio shows it to the annotator).
    """
    tasks = []
    predicted = 0
    pairwise = False
    for dataset in sorted({e.dataset for e in entries}):
        wanted = [e for e in entries if e.dataset == dataset]
        ids = [e.item_id for e in wanted]
        items = store.items_by_ids(dataset, ids)
        verdicts = _primary_verdicts_of(store, rubric, dataset, ids) if predictions else {}
        for entry in wanted:
            item = items[entry.item_id]
            pairwise = pairwise or item.is_pairwise
            judgment = verdicts.get((dataset, entry.item_id))
            task = label_studio.task(item, dataset, judgment, {
                "queue": queue, "position": entry.position,
                "inclusion_prob": entry.inclusion_prob, "stratum": entry.stratum})
            predicted += "predictions" in task
            tasks.append((entry.position, task))
    ordered = [task for _, task in sorted(tasks, key=lambda pair: pair[0])]
    return WrittenTasks(queue, json.dumps(ordered, ensure_ascii=False, indent=1) + "\n",
                        label_studio.labeling_config(
                            rubric, pairwise=pairwise,
                            reference=any("reference" in t["data"] for t in ordered)),
                        len(ordered),
                        predicted)


def import_tool_labels(
    store: Store, path: str | Path, rubric: Rubric, *, dataset: str | None = None,
    tool: str = "label-studio",
) -> LabelImportResult:
    """Labels from a Label Studio or Argilla export, validated like a label file, then stored."""
    path = Path(path)
    if tool == "label-studio":
        rows = label_studio.label_rows(path)
    elif tool == "argilla":
        rows = argilla.label_rows(path)
    else:
        raise InputError(f"--from: unknown labeling tool {tool!r} (label-studio, argilla)")
    source = f"{path} annotation"
    errors = ErrorList(source)
    records = list(iter_mappings(rows, LABEL_FIELDS, on_error=errors.add, name=source))
    if not records:
        errors.add(None, "no annotations")
    labels = labels_from_records(records, errors, rubric, store, dataset=dataset)
    return store_labels(store, labels, rubric)
