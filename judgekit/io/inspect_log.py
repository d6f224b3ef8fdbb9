"""Inspect AI eval logs (``.eval``; also the older ``.json``): model-graded scores as a judge run.

An ``.eval`` file is a ZIP archive whose members are zstd-compressed JSON:
``header.json`` (``eval.task``, ``eval.model``, ``eval.packages.inspect_ai``,
``eval.scorers[].options.model``) and ``samples/<id>_epoch_<n>.json``
(``id``, ``epoch``, ``input``, ``target``, ``output.choices[0].message.content``,
``scores.<scorer>.value/explanation/metadata.grading``). Python reads zstd ZIP
members from 3.14 on; before that the ``inspect`` extra's ``backports.zstd``
supplies the same ``zipfile``.

Each sample is an item (input, the model's answer, the target as reference);
the chosen scorer's value is the verdict: ``C``/``I`` (or true/false, 1/0) on a
binary rubric's first/second label, a value that is itself a label as it is,
anything else a ``parse_error``. Epoch N is sample N-1. The grader model is the
scorer's ``model`` option; its explanation is both reasoning and raw output,
and the hash of its first grading message (the filled-in template) is recorded
when all samples share one template.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.tools import ToolRun, binary_label, sha256_text
from judgekit.types import Item, Rubric, Scale

_PASS = {"C": True, "I": False, "true": True, "false": False, "1": True, "0": False}


def _zipfile() -> Any:
    if sys.version_info >= (3, 14):
        import zipfile

        return zipfile
    try:
        from backports.zstd import zipfile  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise InputError("reading Inspect .eval logs needs zstd support: "
                         "pip install 'judgekit[inspect]'") from None
    return zipfile


def read_log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(header, samples)`` of an Inspect log, ``.eval`` or ``.json``."""
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: not a readable Inspect log ({exc})") from None
        return data, list(data.get("samples") or [])
    zipfile = _zipfile()
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            header = json.loads(archive.read("header.json"))
            samples = [json.loads(archive.read(name)) for name in sorted(names)
                       if name.startswith("samples/") and name.endswith(".json")]
    except KeyError:
        raise InputError(f"{path}: not an Inspect .eval log (no header.json)") from None
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable Inspect .eval log ({exc})") from None
    return header, samples


def _content(value: Any) -> str:
    """Message content (a string, or a list of content parts) as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in value]
        return "\n".join(part for part in parts if part)
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _input(value: Any) -> str:
    if isinstance(value, list):  # chat messages
        return "\n\n".join(_content(m.get("content")) for m in value if isinstance(m, dict))
    return _content(value)


def _label(value: Any, scale: Scale) -> str | None:
    text = str(value).strip()
    if scale.is_valid(text):
        return text
    key = text.lower() if text.lower() in ("true", "false") else text
    if key in _PASS and scale.kind == "binary":
        return binary_label(_PASS[key], scale, "Inspect")
    return None


def read(path: Path, rubric: Rubric, scorer: str | None = None) -> ToolRun:
    """Items (one per sample id) and one verdict per sample and epoch from ``scorer``."""
    header, samples = read_log(path)
    evaluation = header.get("eval") or {}
    scorers = evaluation.get("scorers") or []
    names = [s.get("name") for s in scorers if isinstance(s, dict)]
    chosen = scorer or (names[0] if names else None)
    if chosen is None:
        raise InputError(f"{path}: the log names no scorer")
    options = next((s.get("options") or {} for s in scorers if s.get("name") == chosen), {})
    judge = str(options.get("model") or f"inspect:{chosen}")
    items: dict[str, Item] = {}
    verdicts: list[dict[str, Any]] = []
    templates: set[str] = set()
    for sample in samples:
        item_id = str(sample.get("id"))
        target = sample.get("target")
        reference = "\n".join(map(str, target)) if isinstance(target, list) else target
        choices = (sample.get("output") or {}).get("choices") or [{}]
        answer = _content((choices[0].get("message") or {}).get("content"))
        items.setdefault(item_id, Item(
            id=item_id, input=_input(sample.get("input")), response=answer,
            reference=None if reference in (None, "") else str(reference),
            meta={"inspect": {"task": evaluation.get("task"),
                              "model": evaluation.get("model")}},
        ))
        score = (sample.get("scores") or {}).get(chosen)
        if not isinstance(score, dict):
            continue
        grading = (score.get("metadata") or {}).get("grading") or []
        if grading and isinstance(grading[0], dict) and isinstance(grading[0].get("content"),
                                                                   str):
            templates.add(grading[0]["content"])
        label = _label(score.get("value"), rubric.scale)
        row: dict[str, Any] = {"item_id": item_id, "judge": judge,
                               "sample": int(sample.get("epoch") or 1) - 1,
                               "reasoning": score.get("explanation") or None,
                               "raw": score.get("explanation") or json.dumps(score.get("value"))}
        if label is None:
            row["status"] = "parse_error"
        else:
            row["label"] = label
        verdicts.append(row)
    provenance = {
        "tool_version": (evaluation.get("packages") or {}).get("inspect_ai"),
        "task": evaluation.get("task"), "eval_id": evaluation.get("eval_id"),
        "model_under_test": evaluation.get("model"), "scorer": chosen, "grader_model": judge,
    }
    if len(templates) == 1:
        provenance["grader_prompt_sha256"] = sha256_text(templates.pop())
    return ToolRun("inspect", list(items.values()), verdicts, provenance)
