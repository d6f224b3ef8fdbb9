"""lm-evaluation-harness per-sample logs (``--log_samples``'s ``samples_<task>_<time>.jsonl``).

Each line is one document: ``doc_id``, ``doc`` (the dataset row), ``target``,
``arguments.gen_args_0.arg_0`` (the rendered prompt; a JSON list of chat
messages with ``--apply_chat_template``), ``filtered_resps`` (the answer after
the task's filter ``filter``) and one value per metric named in ``metrics``. A
line without these fields (or without its metric's value) is refused: lm-eval
writes all of them. Each metric (with a filter other than ``none``:
``metric,filter``, as lm-eval's results name it) is a "judge" being calibrated
(``metric=`` picks one): a value of 1 or true is the binary rubric's first label,
0 or false its second, anything else a ``parse_error``. Item ids are ``doc.id``
when the dataset has one, else ``doc<doc_id>``; a document's item is its first
line's (a task with several filters logs each document once per filter).

The task is the file name's (``samples_<task>_<time>.jsonl``); the
``results_<time>.json`` beside the file, when there is one, gives the harness
version and the model under test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.caps import check_text
from judgekit.io.jsonline import loads_document
from judgekit.io.records import iter_records
from judgekit.io.tool_shape import At
from judgekit.io.tools import Grader, ToolRun, binary_label, pick_graders
from judgekit.types import Item, Rubric

_FIELDS = ("doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
           "metrics", "doc_hash", "prompt_hash", "target_hash")
_REQUIRED = ("doc_id", "target", "arguments", "filtered_resps", "metrics")
_STAMP = re.compile(r"_\d{4}-\d{2}-\d{2}T[0-9T:.\-]+$")


def _prompt(at: At, arguments: Any) -> str:
    if not isinstance(arguments, dict):
        at.fail("expected an object")
    first = at.obj(arguments, "gen_args_0").get("arg_0")
    if isinstance(first, list):
        first = first[0] if first else ""
    if not isinstance(first, str):
        at.key("gen_args_0").key("arg_0").fail("expected the prompt as a string")
    try:
        messages = loads_document(first)
    except json.JSONDecodeError:
        return at.text(first)
    if isinstance(messages, list):
        return at.text("\n\n".join(m["content"] if isinstance(m.get("content"), str)
                                   else json.dumps(m.get("content"))
                                   for m in messages if isinstance(m, dict)))
    return at.text(first)


def task_of(path: Path) -> str | None:
    """The task a samples file names: ``samples_<task>_<time>.jsonl`` -> ``<task>``."""
    stem = path.stem
    if not stem.startswith("samples_"):
        return None
    return _STAMP.sub("", stem.removeprefix("samples_")) or None


def _results(path: Path) -> dict[str, Any]:
    """The run's results file beside the samples file (same timestamp suffix), if any."""
    stamp = _STAMP.search(path.stem)
    names = ([f"results{stamp.group(0)}.json"] if stamp else []) + ["results.json"]
    for candidate in (path.with_name(name) for name in names):
        if candidate.is_file():
            try:
                data = loads_document(candidate.read_bytes())
            except (OSError, json.JSONDecodeError):
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def read(path: Path, rubric: Rubric, metric: str | None = None) -> ToolRun:
    """Items (one per document) and one verdict per document and metric."""
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        raise InputError(f"{path}: expected lm-eval's samples_<task>_<time>.jsonl "
                         "(written with --log_samples)")
    items: dict[str, Item] = {}
    rows: list[tuple[str, dict[str, Any]]] = []
    for number, record in iter_records(path, _FIELDS, extras="meta"):
        at = At(f"{path}:{number}")
        missing = [name for name in _REQUIRED if record.get(name) is None]
        if missing:
            at.fail(f"missing field {missing[0]!r} (lm-eval writes it on every line)")
        doc_id = record["doc_id"]
        if not isinstance(doc_id, int) or isinstance(doc_id, bool):
            at.key("doc_id").fail("expected an integer")
        doc = at.obj(record, "doc")
        doc_key = doc.get("id")
        item_id = (str(doc_key) if isinstance(doc_key, str | int) and not isinstance(
            doc_key, bool) and str(doc_key).strip() else f"doc{doc_id}")
        answers = at.items(record, "filtered_resps")
        if not answers:
            at.key("filtered_resps").fail("expected at least one answer")
        answer = answers[0][0] if isinstance(answers[0], list) and answers[0] else answers[0]
        target = record["target"]
        items.setdefault(item_id, Item(
            id=item_id, input=_prompt(at.key("arguments"), record["arguments"]),
            response=at.key("filtered_resps").text(answer),
            reference=at.text(target, "target"),
            meta={"lm_eval": {"doc_id": doc_id, "doc": doc}},
        ))
        names = at.items(record, "metrics")
        meta = record.get("meta") or {}
        filter_name = record.get("filter") if isinstance(record.get("filter"), str) else "none"
        for name in names:
            if not isinstance(name, str) or not name:
                at.key("metrics").fail("expected metric names (strings)")
            if name not in meta:
                at.fail(f"missing the value of metric {name!r} named in 'metrics'")
            value = meta[name]
            grader = name if filter_name == "none" else f"{name},{filter_name}"
            row: dict[str, Any] = {"item_id": item_id, "raw": json.dumps({name: value})}
            if isinstance(value, bool | int | float) and float(value) in (0.0, 1.0):
                row["label"] = binary_label(float(value) == 1.0, rubric.scale, "lm-eval")
            else:
                row["status"] = "parse_error"
                row["reasoning"] = check_text(f"{name} = {value!r} is not 0 or 1", str(at.file))
            rows.append((grader, row))
    names = list(dict.fromkeys(grader for grader, _ in rows))
    chosen = set(pick_graders(names, metric, path, "metric"))
    verdicts = [{**row, "judge": f"lm-eval:{grader}"} for grader, row in rows
                if grader in chosen]
    graders = [Grader("metric", name, f"lm-eval:{name}",
                      {"metric": name, "grader_model": f"lm-eval:{name}"})
               for name in names if name in chosen]
    results = _results(path)
    task = task_of(path)
    configs = results.get("configs")
    if task is None and isinstance(configs, dict) and len(configs) == 1:
        task = next(iter(configs))
    version, model = results.get("lm_eval_version"), results.get("model_name")
    provenance = {"tool_version": version if isinstance(version, str) else None,
                  "model_under_test": model if isinstance(model, str) else None, "task": task}
    return ToolRun("lm-eval", list(items.values()), verdicts, provenance, graders=graders)
