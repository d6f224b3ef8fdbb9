"""Inspect AI eval logs (``.eval``; also the older ``.json``): scorers' verdicts as judge runs.

An ``.eval`` file is a ZIP archive whose members are zstd-compressed JSON:
``header.json`` (``eval.task``, ``eval.model``, ``eval.packages.inspect_ai``,
``eval.scorers[].name/options.model``) and ``samples/<id>_epoch_<n>.json``
(``id``, ``epoch``, ``input``, ``target``, ``output.choices[0].message.content``,
``scores.<scorer>.value/explanation/metadata.grading``). Python reads zstd ZIP
members from 3.14 on; before that the ``inspect`` extra's ``backports.zstd``
supplies the same ``zipfile``. The archive is read under a decompression cap
(:mod:`judgekit.io.archive`) and one sample at a time: a 30,000-sample log holds
one sample's JSON in memory, not all of them.

Each sample is an item (input, the model's answer, the target as reference); each
scorer is its own judge (``scorer=`` picks one): ``C``/``I`` (or true/false, 1/0)
on a binary rubric's first/second label, a value that is itself a label as it is,
anything else a ``parse_error``. Epoch N is sample N-1. A scorer's model is its
``model`` option (``inspect:<scorer>`` for a scorer without one, such as
``includes()``); its explanation is both reasoning and raw output, and the hash of
its first grading message (the filled-in template) is recorded when all samples
share one template.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.archive import CappedZip
from judgekit.io.file_checks import load_json
from judgekit.io.jsonline import loads_document
from judgekit.io.tool_shape import At
from judgekit.io.tools import Grader, ToolRun, binary_label, judge_names, pick_graders, sha256_text
from judgekit.types import Item, Rubric, Scale

_PASS = {"C": True, "I": False, "true": True, "false": False, "1": True, "0": False}
KIND = "Inspect .eval log"


def _member(archive: CappedZip, name: str) -> Any:
    try:
        return loads_document(archive.read(name))
    except json.JSONDecodeError as exc:
        raise InputError(f"{archive.path}: {name}: invalid JSON: {exc.msg}") from None


def iter_log(path: Path) -> tuple[dict[str, Any], Iterator[tuple[At, dict[str, Any]]]]:
    """``(header, samples)`` of an Inspect log; the samples are read as they are iterated."""
    if path.suffix.lower() == ".json":
        data = load_json(path)
        if not isinstance(data, dict):
            raise InputError(f"{path}: not an Inspect log (expected a JSON object)")
        return data, iter(At(path).each_obj(data, "samples"))
    archive = CappedZip(path, KIND)
    try:
        if "header.json" not in archive.names:
            raise InputError(f"{path}: not an {KIND} (no header.json)")
        header = _member(archive, "header.json")
        if not isinstance(header, dict):
            raise InputError(f"{path}: header.json: expected a JSON object")
    except BaseException:
        archive.close()
        raise
    names = sorted(n for n in archive.names if n.startswith("samples/") and n.endswith(".json"))

    def samples() -> Iterator[tuple[At, dict[str, Any]]]:
        with archive:
            for name in names:
                sample = _member(archive, name)
                if not isinstance(sample, dict):
                    raise InputError(f"{path}: {name}: expected a JSON object")
                yield At(path, name), sample

    return header, samples()


def _content(at: At, value: Any) -> str:
    """Message content (a string, or a list of content parts) as text."""
    if isinstance(value, str):
        return at.text(value)
    if isinstance(value, list):
        parts = [p.get("text", "") if isinstance(p, dict) else p for p in value]
        return at.text("\n".join(p if isinstance(p, str) else json.dumps(p) for p in parts
                                 if p))
    return "" if value is None else at.text(value)


def _input(at: At, value: Any) -> str:
    if isinstance(value, list):  # chat messages
        return at.text("\n\n".join(_content(at, m.get("content")) for m in value
                                   if isinstance(m, dict)))
    return _content(at, value)


def _label(value: Any, scale: Scale) -> str | None:
    if isinstance(value, dict | list):
        return None
    text = str(value).strip()
    if scale.is_valid(text):
        return text
    key = text.lower() if text.lower() in ("true", "false") else text
    if key in _PASS and scale.kind == "binary":
        return binary_label(_PASS[key], scale, "Inspect")
    return None


def _scorers(at: At, evaluation: dict[str, Any]) -> dict[str, str]:
    """scorer name -> its model (``inspect:<name>`` when it names none), from the header."""
    found: dict[str, str] = {}
    for place, scorer in at.each_obj(evaluation, "scorers"):
        name = place.string(scorer, "name")
        if name:
            model = place.obj(scorer, "options").get("model")
            found[name] = model if isinstance(model, str) and model else f"inspect:{name}"
    return found


def read(path: Path, rubric: Rubric, scorer: str | None = None) -> ToolRun:
    """Items (one per sample id) and one verdict per sample, epoch and scorer."""
    header, samples = iter_log(path)
    top = At(path, "header.json") if path.suffix.lower() != ".json" else At(path)
    evaluation = top.obj(header, "eval")
    models = _scorers(top.key("eval"), evaluation)
    items: dict[str, Item] = {}
    rows: list[tuple[str, dict[str, Any]]] = []
    templates: dict[str, set[str]] = {}
    for at, sample in samples:
        item_id = at.ident(sample, "id", required=True)
        assert item_id is not None
        target = sample.get("target")
        if isinstance(target, list):
            target = "\n".join(t if isinstance(t, str) else json.dumps(t) for t in target)
        choices = at.key("output").items(at.obj(sample, "output"), "choices")
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        found = first.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        item = Item(
            id=item_id, input=_input(at.key("input"), sample.get("input")),
            response=_content(at.key("output"), message.get("content")),
            reference=None if target in (None, "") else at.text(target, "target"),
            meta={"inspect": {"task": evaluation.get("task"), "model": evaluation.get("model")}},
        )
        items.setdefault(item_id, item)  # a later epoch's answer is that sample's verdict only
        epoch = at.integer(sample, "epoch", 1)
        if epoch < 1:
            at.key("epoch").fail(f"expected an epoch of 1 or more, got {epoch}")
        for name, score in at.obj(sample, "scores").items():
            place = at.key("scores").key(name)
            if not isinstance(score, dict):
                place.fail(f"expected an object, got {type(score).__name__}")
            grading = place.obj(score, "metadata").get("grading")
            if isinstance(grading, list) and grading and isinstance(grading[0], dict) \
                    and isinstance(grading[0].get("content"), str):
                templates.setdefault(name, set()).add(grading[0]["content"])
            explanation = place.optional_text(score, "explanation")
            label = _label(score.get("value"), rubric.scale)
            row: dict[str, Any] = {"item_id": item_id, "sample": epoch - 1,
                                   "reasoning": explanation or None,
                                   "raw": explanation or place.text(score.get("value"))}
            if label is None:
                row["status"] = "parse_error"
            else:
                row["label"] = label
            rows.append((name, row))
            models.setdefault(name, f"inspect:{name}")
    chosen = set(pick_graders(list(models), scorer, path, "scorer"))
    judges = judge_names(models.items())  # named over the whole file, whatever is chosen
    verdicts = [{**row, "judge": judges[(name, models[name])]} for name, row in rows
                if name in chosen]
    if not verdicts:
        raise InputError(f"{path}: no sample holds a score of "
                         f"{' or '.join(map(repr, sorted(chosen)))}")
    graders = []
    for name in sorted(chosen):
        provenance: dict[str, Any] = {"scorer": name, "grader_model": models[name]}
        if len(templates.get(name, ())) == 1:
            provenance["grader_prompt_sha256"] = sha256_text(next(iter(templates[name])))
        graders.append(Grader("scorer", name, judges[(name, models[name])], provenance))
    packages = top.key("eval").obj(evaluation, "packages")
    provenance = {
        "tool_version": packages.get("inspect_ai"), "task": evaluation.get("task"),
        "eval_id": evaluation.get("eval_id"), "model_under_test": evaluation.get("model"),
    }
    return ToolRun("inspect", list(items.values()), verdicts, provenance, graders=graders)
