"""Argilla 2.x records (``dataset.records.to_json(...)``, ``Record.to_dict()``) as labels.

A record is ``{"id", "fields", "metadata", "responses": {QUESTION: [{"value",
"user_id"}]}, "suggestions", "status"}``. Each response to the label question
(the question named ``label``, else the only one answered) is one label: the
item is ``metadata.item_id``, else the record ``id``; the dataset
``metadata.dataset`` when given; the annotator the response's ``user_id``. A
record that showed a suggestion (``suggestions`` for that question) gives labels
marked not blind: the annotator could see the suggested answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.records import load_json


def _question(responses: dict[str, Any], where: str) -> str | None:
    answered = [name for name, given in responses.items() if given]
    if not answered:
        return None
    if "label" in answered:
        return "label"
    if len(answered) > 1:
        raise InputError(f"{where}: responses to several questions ({', '.join(answered)}); "
                         "name the label question 'label'")
    return answered[0]


def label_rows(path: Path) -> list[dict[str, Any]]:
    """Label records (:data:`~judgekit.io.labels.LABEL_FIELDS`) of an Argilla records export."""
    records = load_json(path)
    if not isinstance(records, list):
        raise InputError(f"{path}: not an Argilla records export (expected a list of records)")
    rows: list[dict[str, Any]] = []
    for index, record in enumerate(records):
        where = f"{path}: record {index}"
        if not isinstance(record, dict) or not isinstance(record.get("responses"), dict):
            raise InputError(f"{where}: not an Argilla record (no 'responses' object)")
        given = record.get("metadata")
        metadata: dict[str, Any] = given if isinstance(given, dict) else {}
        item_id = metadata.get("item_id", record.get("id"))
        question = _question(record["responses"], where)
        if question is None:
            continue
        suggestions = record.get("suggestions")
        shown = bool(suggestions.get(question)) if isinstance(suggestions, dict) else bool(
            suggestions)
        responses = record["responses"][question]
        if not isinstance(responses, list):
            raise InputError(f"{where}: responses.{question} must be a list")
        for response in responses:
            if not isinstance(response, dict):
                continue
            row = {"item_id": item_id, "annotator": response.get("user_id"),
                   "label": response.get("value"), "blind": not shown,
                   "dataset": metadata.get("dataset")}
            rows.append({k: v for k, v in row.items() if v is not None})
    return rows
