"""lm-evaluation-harness per-sample logs (``--log_samples``'s ``samples_<task>_*.jsonl``).

Each line is one document: ``doc_id``, ``doc`` (the dataset row), ``target``,
``arguments.gen_args_0.arg_0`` (the rendered prompt; a JSON list of chat
messages with ``--apply_chat_template``), ``filtered_resps`` (the answer after
the task's filters) and one value per metric named in ``metrics``. The metric
(the first one, or ``metric=``) is the "judge" being calibrated: a value of 1
or true is the binary rubric's first label, 0 or false its second, anything
else a ``parse_error``. Item ids are ``doc.id`` when the dataset has one, else
``doc<doc_id>``. The ``results_*.json`` beside the file, when there is one,
gives the harness version and the model under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.records import iter_records
from judgekit.io.tools import ToolRun, binary_label
from judgekit.types import Item, Rubric

_FIELDS = ("doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
           "metrics", "doc_hash", "prompt_hash", "target_hash")


def _prompt(arguments: Any) -> str:
    first = (arguments or {}).get("gen_args_0", {}).get("arg_0") if isinstance(
        arguments, dict) else None
    if isinstance(first, list):
        first = first[0] if first else ""
    if not isinstance(first, str):
        return ""
    try:
        messages = json.loads(first)
    except json.JSONDecodeError:
        return first
    if isinstance(messages, list):
        return "\n\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    return first


def _results(path: Path) -> dict[str, Any]:
    """The run's results file beside the samples file (same timestamp suffix), if any."""
    stamp = path.stem.rsplit("_", 1)[-1]
    for candidate in (path.with_name(f"results_{stamp}.json"), path.with_name("results.json")):
        if candidate.is_file():
            try:
                data = json.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def read(path: Path, rubric: Rubric, metric: str | None = None) -> ToolRun:
    """Items (one per document) and one verdict per document from the chosen metric."""
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        raise InputError(f"{path}: expected lm-eval's samples_<task>_<time>.jsonl "
                         "(written with --log_samples)")
    items: list[Item] = []
    verdicts: list[dict[str, Any]] = []
    chosen = metric
    for number, record in iter_records(path, _FIELDS, extras="meta"):
        names = record.get("metrics") or []
        chosen = chosen or (names[0] if names else None)
        if chosen is None:
            raise InputError(f"{path}:{number}: the sample names no metric")
        given = record.get("doc")
        doc: dict[str, Any] = given if isinstance(given, dict) else {}
        item_id = str(doc["id"]) if doc.get("id") is not None else f"doc{record.get('doc_id')}"
        answers = record.get("filtered_resps") or [""]
        items.append(Item(
            id=item_id, input=_prompt(record.get("arguments")),
            response=str(answers[0] if not isinstance(answers[0], list) else answers[0][0]),
            reference=None if record.get("target") is None else str(record["target"]),
            meta={"lm_eval": {"doc_id": record.get("doc_id"), "doc": doc}},
        ))
        value = (record.get("meta") or {}).get(chosen)
        row: dict[str, Any] = {"item_id": item_id, "judge": f"lm-eval:{chosen}",
                               "raw": json.dumps({chosen: value})}
        if isinstance(value, bool | int | float) and float(value) in (0.0, 1.0):
            row["label"] = binary_label(float(value) == 1.0, rubric.scale, "lm-eval")
        else:
            row["status"] = "parse_error"
            row["reasoning"] = f"{chosen} = {value!r} is not 0 or 1"
        verdicts.append(row)
    results = _results(path)
    provenance = {"tool_version": results.get("lm_eval_version"),
                  "model_under_test": results.get("model_name"), "metric": chosen,
                  "grader_model": f"lm-eval:{chosen}",
                  "task": next(iter(results.get("results") or {}), None)}
    return ToolRun("lm-eval", items, verdicts, provenance)
