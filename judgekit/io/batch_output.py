"""An OpenAI Batch API output file made elsewhere, imported as a judge run.

The lines are read by :mod:`judgekit.judging.batch.lines` (the one Batch output
parser) and each answer is parsed with the rubric's parser exactly as a live
call's, so a refusal, a truncated answer or one without a verdict is a failure,
never a score. A failed line keeps its error text as the verdict's reasoning and
its category (``rate_limited``, ``timeout`` for a 408 or a ``request_timeout``
error, ``api_error``), and is filed under the same judge as the answered lines.

The file holds no items: each line names an item already in the store. By default
``custom_id`` is ``ITEM_ID``, optionally followed by ``::BA`` (the pair was sent
swapped; the label names the slots as shown) and ``::sN`` (sample N);
``strip_prefix`` drops a prefix first (``judge-`` of ``judge-arith-01``), and
``id_from="metadata.FIELD"`` takes the item id from the request body's
``metadata.FIELD`` in the batch *input* file (``requests``), matched by
``custom_id``. The judge is the model the answers name; a failed line, which names
none, takes the model of its request (``requests``) or the one model of the file's
answers (``--judge`` overrides). A ``custom_id`` repeated in the file is refused,
saying whether the two lines' verdicts agree.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.io.caps import text_too_long
from judgekit.io.tools import ToolRun
from judgekit.judging.batch.lines import OutputLine, line_result, read_output_lines
from judgekit.types import Rubric

_CUSTOM_ID = re.compile(r"^(?P<item>.+?)(?:::(?P<order>AB|BA))?(?:::s(?P<sample>\d+))?$")
#: Error codes of a line (or its response body) that mean the request timed out.
_TIMEOUT_CODES = ("request_timeout", "timeout", "timed_out")


def split_custom_id(custom_id: str) -> tuple[str, str, int]:
    """``(item id, order, sample)`` of a custom id ``ITEM[::AB|::BA][::sN]``."""
    match = _CUSTOM_ID.match(custom_id)
    if match is None:  # only an empty id; parse_output_line refuses those first
        raise InputError(f"custom_id {custom_id!r}: no item id")
    return match["item"], match["order"] or "AB", int(match["sample"] or 0)


def _requests(path: Path) -> dict[str, dict[str, Any]]:
    """custom_id -> request body of a Batch input file."""
    found: dict[str, dict[str, Any]] = {}
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        try:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    line = json.loads(text)
                except (json.JSONDecodeError, RecursionError):
                    raise InputError(f"{path}:{number}: not JSON") from None
                if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
                    raise InputError(f"{path}:{number}: not a Batch request line (no custom_id)")
                body = line.get("body")
                found[line["custom_id"]] = body if isinstance(body, dict) else {}
        except UnicodeDecodeError:
            raise InputError(f"{path}: not UTF-8 text") from None
    return found


def _item_id(line: OutputLine, id_from: str, strip_prefix: str | None,
             requests: dict[str, dict[str, Any]] | None) -> tuple[str, str, int]:
    item, order, sample = split_custom_id(line.custom_id)
    if id_from.startswith("metadata."):
        field = id_from.removeprefix("metadata.")
        if requests is None:
            raise InputError(f"--id-from {id_from} reads the batch input file: give --requests")
        body = requests.get(line.custom_id)
        if body is None:
            raise InputError(f"{line.where}: custom_id {line.custom_id!r} is not in the "
                             "--requests file")
        metadata = body.get("metadata")
        value = metadata.get(field) if isinstance(metadata, dict) else None
        if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
            raise InputError(f"{line.where}: the request of {line.custom_id!r} has no "
                             f"metadata.{field}")
        item = str(value)
    elif id_from != "custom_id":
        raise InputError(f"--id-from: expected custom_id or metadata.FIELD, got {id_from!r}")
    if strip_prefix:
        if not item.startswith(strip_prefix):
            raise InputError(f"{line.where}: id {item!r} does not start with --strip-prefix "
                             f"{strip_prefix!r}")
        item = item.removeprefix(strip_prefix)
    if not item.strip():
        raise InputError(f"{line.where}: custom_id {line.custom_id!r} names no item id")
    return item, order, sample


def _timed_out(line: OutputLine) -> bool:
    codes = [(line.error or {}).get("code")]
    if isinstance(line.body, dict) and isinstance(line.body.get("error"), dict):
        codes += [line.body["error"].get("code"), line.body["error"].get("type")]
    return any(code in _TIMEOUT_CODES for code in codes)


def read(path: Path, rubric: Rubric, *, id_from: str = "custom_id",
         strip_prefix: str | None = None, requests: Path | None = None) -> ToolRun:
    """One verdict record per output line (answered or failed)."""
    bodies = _requests(requests) if requests is not None else None
    verdicts: list[dict[str, Any]] = []
    models: set[str] = set()
    first: dict[tuple[str, str, int], tuple[str, tuple[str, str]]] = {}
    for line in read_output_lines(path):
        key = _item_id(line, id_from, strip_prefix, bodies)
        if line.status_code == 200 and isinstance(line.body, dict) and not isinstance(
                line.body.get("choices"), list):
            raise InputError(f"{line.where}: a 200 response without a 'choices' list")
        try:
            result = line_result(line, rubric.scale, structured=False)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
            raise InputError(f"{line.where}: not a chat completion response ({exc})") from None
        body_model = line.body.get("model") if isinstance(line.body, dict) else None
        model = result.model_returned or (body_model if isinstance(body_model, str) else None)
        if model is None and bodies is not None:
            asked = bodies.get(line.custom_id, {}).get("model")
            model = asked if isinstance(asked, str) and asked else None
        if model is not None:
            models.add(model)
        row: dict[str, Any] = {"item_id": key[0], "order": key[1], "sample": key[2],
                               "status": result.status, "_model": model}
        if result.verdict is not None:
            row["raw"] = result.raw_text
            if result.verdict.status == "ok":
                row["label"] = result.verdict.label
                row["reasoning"] = result.verdict.reasoning
            else:
                row["reasoning"] = result.verdict.detail
        elif result.failure is not None:
            row["reasoning"] = result.failure.message
            if _timed_out(line):
                row["status"] = "timeout"
        for name in ("raw", "reasoning"):
            text = row.get(name)
            if isinstance(text, str) and (problem := text_too_long(text)):
                raise InputError(f"{line.where}: {name}: {problem}")
            if isinstance(text, str) and not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise InputError(f"{line.where}: the answer holds a lone surrogate "
                                     "(e.g. \\ud800), which is not text") from None
        outcome = (str(row["status"]), str(row.get("label")))
        if key in first:
            where, earlier = first[key]
            agree = "the same verdict" if earlier == outcome else (
                f"a different verdict ({earlier[0]} {earlier[1]} vs {outcome[0]} {outcome[1]})")
            raise InputError(f"{line.where}: custom_id {line.custom_id!r} names the same call "
                             f"as {where}, with {agree}; keep one line per call")
        first[key] = (line.where, outcome)
        verdicts.append(row)
    if not verdicts:
        raise InputError(f"{path}: no output lines")
    only = next(iter(models)) if len(models) == 1 else None
    for row in verdicts:
        model = row.pop("_model")
        judge = model or only
        if judge is not None:
            row["judge"] = judge
    if any("judge" not in row for row in verdicts) and len(models) > 1:
        raise InputError(f"{path}: failed lines name no model and the answers name several "
                         f"({', '.join(sorted(models))}): give --requests (the batch input "
                         "file) or --judge")
    provenance = {"grader_model": ", ".join(sorted(models)) or None}
    return ToolRun("openai-batch", [], verdicts, provenance, needs_stored_items=True)
