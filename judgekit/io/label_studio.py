"""Label Studio: a labeling queue out as tasks (blind, or with the judge's prediction), labels in.

Tasks follow Label Studio's documented JSON task format: ``{"data": {...},
"predictions": [{"model_version", "score", "result": [...]}]}``. ``data`` holds
``item_id``, ``dataset``, ``input``, the response(s) and ``reference``; a
prediction's ``result`` is one ``choices`` region (``from_name="label"``,
``to_name="response"``) naming the judge's label. :func:`labeling_config` is the
matching ``<View>``.

An export of the annotated project (``Export -> JSON``) is a list of tasks with
``annotations``; each annotation that is not cancelled gives one label: its
annotator is ``completed_by`` (an id, or an object with ``email``), its label the
first ``choices`` value, its note the first ``textarea`` text, its time
``lead_time`` seconds. A label made on a task that showed a prediction (the
annotation has a ``parent_prediction``, or the task has predictions) is stored
as not blind: the annotator saw the judge's verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from judgekit.errors import InputError
from judgekit.io.labels import LABEL_FIELDS
from judgekit.io.records import load_json
from judgekit.types import Item, Judgment, Rubric

FROM_NAME = "label"
TO_NAME = "response"


def labeling_config(rubric: Rubric, *, pairwise: bool, reference: bool = False) -> str:
    """The Label Studio labeling config (XML) for ``rubric``'s scale; with ``reference``
    (some task has one) the expected answer is shown too, under its own header, as a
    rubric such as correctness asks the annotator to compare against it."""
    texts = ('  <Text name="input" value="$input"/>\n'
             + ('  <Text name="response" value="$response_a"/>\n'
                '  <Text name="response_b" value="$response_b"/>\n' if pairwise else
                '  <Text name="response" value="$response"/>\n'))
    if reference:
        texts += ('  <Header value="Reference (expected answer)"/>\n'
                  '  <Text name="reference" value="$reference"/>\n')
    choices = "\n".join(f"    <Choice value={quoteattr(label)}/>" for label in rubric.scale.labels)
    return (f"<View>\n{texts}  <Choices name=\"{FROM_NAME}\" toName=\"{TO_NAME}\" "
            f"choice=\"single\" showInline=\"true\">\n{choices}\n  </Choices>\n"
            f"  <TextArea name=\"note\" toName=\"{TO_NAME}\" placeholder=\"note\"/>\n</View>\n")


def task(item: Item, dataset: str, judgment: Judgment | None,
         extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One Label Studio task; the judge's ok verdict (if any) as its prediction."""
    data: dict[str, Any] = {"item_id": item.id, "dataset": dataset, "input": item.input}
    if item.is_pairwise:
        data.update(response_a=item.response_a, response_b=item.response_b)
    else:
        data["response"] = item.response
    if item.reference is not None:
        data["reference"] = item.reference
    out: dict[str, Any] = {"data": data}
    if extra:
        out["meta"] = dict(extra)
    if judgment is not None and judgment.status == "ok" and judgment.label is not None:
        prediction: dict[str, Any] = {
            "model_version": judgment.model_requested,
            "result": [{"from_name": FROM_NAME, "to_name": TO_NAME, "type": "choices",
                        "value": {"choices": [judgment.label]}}],
        }
        if judgment.confidence is not None:
            prediction["score"] = judgment.confidence
        out["predictions"] = [prediction]
    return out


def _annotator(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("email") or value.get("username") or value.get("id")
    if value is None or isinstance(value, bool):
        return None
    return str(value)


def _first(result: Sequence[Any], kind: str, key: str) -> Any:
    for region in result:
        if isinstance(region, dict) and region.get("type") == kind:
            value = region.get("value")
            values = value.get(key) if isinstance(value, dict) else None
            if isinstance(values, list) and values:
                return values[0]
    return None


def label_rows(path: Path) -> list[dict[str, Any]]:
    """Label records (:data:`~judgekit.io.labels.LABEL_FIELDS`) of a Label Studio JSON export."""
    tasks = load_json(path)
    if not isinstance(tasks, list):
        raise InputError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    rows: list[dict[str, Any]] = []
    for index, entry in enumerate(tasks):
        where = f"{path}: task {index}"
        if not isinstance(entry, dict) or not isinstance(entry.get("data"), dict):
            raise InputError(f"{where}: not a task (no 'data' object)")
        data = entry["data"]
        item_id = data.get("item_id", data.get("id"))
        if item_id is None:
            raise InputError(f"{where}: 'data' has no item_id (export tasks with "
                             "judgekit labels export-tasks, or add an item_id column)")
        shown_prediction = bool(entry.get("predictions"))
        annotations = entry.get("annotations") or []
        if not isinstance(annotations, list):
            raise InputError(f"{where}: 'annotations' must be a list")
        for number, annotation in enumerate(annotations):
            if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
                continue
            result = annotation.get("result") or []
            if not isinstance(result, list):
                raise InputError(f"{where}: annotations[{number}].result must be a list")
            row: dict[str, Any] = {
                "item_id": item_id, "annotator": _annotator(annotation.get("completed_by")),
                "label": _first(result, "choices", "choices"),
                "note": _first(result, "textarea", "text"),
                "blind": not (shown_prediction or annotation.get("parent_prediction")),
                "seconds": annotation.get("lead_time"),
                "created_at": annotation.get("created_at"),
            }
            if data.get("dataset") is not None:
                row["dataset"] = data["dataset"]
            rows.append({k: v for k, v in row.items() if k in LABEL_FIELDS and v is not None})
    return rows
