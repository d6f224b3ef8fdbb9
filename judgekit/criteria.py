"""Rubrics with several criteria: one file, one derived rubric per criterion.

SummEval rates every summary on coherence, consistency, fluency and relevance;
four rubric files for one annotation study is friction. A rubric file may
declare criteria instead of one scale::

    name = "summeval"
    version = "1"
    # per_call = true          # one judge call per criterion (default: one call for all)

    [scale]                    # shared by every criterion unless it has its own
    kind = "ordinal"
    min = 1
    max = 5
    levels = { "1" = "Very poor.", "2" = "Poor.", "3" = "Fair.", "4" = "Good.", "5" = "Very good." }

    [prompt]                   # shared
    system = "You rate summaries."
    user = "Document: {input}\\n\\nSummary: {response}\\n\\n{scale}"

    [criteria.coherence]
    description = "The summary is well structured and organised."

    [criteria.fluency]
    description = "Sentences are grammatical and read naturally."
    [criteria.fluency.scale]
    kind = "ordinal"
    min = 1
    max = 3
    levels = { "1" = "Broken.", "2" = "Slips.", "3" = "Fluent." }

Each criterion becomes an ordinary rubric named ``NAME.CRITERION`` (its own
scale, prompt and sha256), written out as TOML text so the store keeps a file
that loads on its own. Verdicts and labels of a criterion are those of its
derived rubric, so every command works on one criterion unchanged: a rubric
argument ``FILE#CRITERION`` (or ``--criterion`` where a command has it) names
it; ``report`` on the whole file ends with a table across criteria.

``judge`` on the whole file judges every criterion, in one of two ways:

- **one call per item** (``per_call`` absent or false, the default): the call
  lists every criterion with its description and levels and asks for one JSON
  object with a verdict per criterion (:mod:`judgekit.criteria_joint`,
  :mod:`judgekit.judging.joint`). Every criterion is asked with the shared
  ``[prompt]``, so a criterion's own ``prompt`` is an error here (it needs
  ``per_call = true``); its own scale is fine.
- **one call per criterion** (``per_call = true``): each criterion's rubric is
  judged on its own; a criterion without a prompt of its own gets the shared one
  with "Criterion: NAME. DESCRIPTION" added to the system prompt.

The derived rubrics are the same either way (``per_call`` is not part of them),
so human labels serve both; the judgments of the two ways are two judges (their
provenance and cache keys differ), never mixed.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgekit.errors import RubricError
from judgekit.types import Rubric

#: The top-level keys of a multi-criteria file besides those of a rubric.
_EXTRA = ("criteria", "per_call")
_CRITERION_KEYS = ("description", "guidelines", "scale", "prompt")


def split_reference(value: str | Path) -> tuple[str | Path, str | None]:
    """``FILE#CRITERION`` -> (FILE, CRITERION); anything else -> (value, None)."""
    text = str(value)
    if "#" in text:
        path, _, criterion = text.rpartition("#")
        if path and criterion:
            return path, criterion
    return value, None


def criteria_data(source_text: str, path: str) -> dict[str, Any] | None:
    """The parsed file when it declares ``[criteria]``, else None (an ordinary rubric)."""
    try:
        data = tomllib.loads(source_text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None  # the ordinary loader reports it with its line
    if "criteria" not in data:
        return None
    criteria = data["criteria"]
    if not isinstance(criteria, dict) or not criteria or not all(
        isinstance(v, dict) for v in criteria.values()
    ):
        raise RubricError(f"{path}: criteria: a table of [criteria.NAME] tables, one or more")
    for name, spec in criteria.items():
        unknown = sorted(set(spec) - set(_CRITERION_KEYS))
        if unknown:
            raise RubricError(f"{path}: criteria.{name}.{unknown[0]}: unknown field "
                              f"(a criterion takes {', '.join(_CRITERION_KEYS)})")
    if "sampling" in data:  # a vote is one rubric's calls; a file's criteria share none
        raise RubricError(f"{path}: sampling: a vote ([sampling]) is declared in a rubric of "
                          "one criterion, not in a file of several")
    per_call = data.get("per_call", False)
    if not isinstance(per_call, bool):
        raise RubricError(f"{path}: per_call: true (one call per criterion) or false "
                          "(every criterion in one call, the default)")
    if not per_call:
        for name, spec in criteria.items():
            if "prompt" in spec:
                raise RubricError(
                    f"{path}: criteria.{name}.prompt: a criterion's own prompt needs "
                    "per_call = true (one call per criterion); in one call every criterion "
                    "is asked with the shared [prompt]")
    return data


def is_joint(data: Mapping[str, Any]) -> bool:
    """Whether a criteria file is judged in one call per item (``per_call`` absent or false)."""
    return data.get("per_call", False) is False


def criterion_names(data: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(data["criteria"])


def derived_text(data: Mapping[str, Any], criterion: str, path: str) -> str:
    """The TOML of one criterion's rubric: the shared fields, the criterion's own on top."""
    spec = data["criteria"][criterion]
    shared_prompt = dict(data.get("prompt") or {})
    prompt = dict(spec.get("prompt") or {})
    if not prompt:
        description = spec.get("description", "")
        system = str(shared_prompt.get("system", "")).rstrip()
        named = f"Criterion: {criterion}." + (f" {description}" if description else "")
        prompt = {**shared_prompt, "system": f"{system}\n\n{named}".strip()}
    elif "user" not in prompt and "user" in shared_prompt:
        prompt = {**shared_prompt, **prompt}
    derived: dict[str, Any] = {
        "name": f"{data.get('name')}.{criterion}",
        "version": data.get("version"),
        "description": spec.get("description", data.get("description", "")),
        "guidelines": spec.get("guidelines", data.get("guidelines", "")),
        "scale": spec.get("scale", data.get("scale")),
        "prompt": prompt,
    }
    lines = [f"# criterion {criterion!r} of {Path(path).name}"]
    lines += [f"{k} = {_value(v)}" for k, v in derived.items()
              if v is not None and not isinstance(v, dict)]
    for table in ("scale", "prompt"):
        value = derived.get(table)
        if not isinstance(value, dict):
            continue
        lines.append(f"[{table}]")
        nested = {k: v for k, v in value.items() if isinstance(v, dict)}
        arrays = {k: v for k, v in value.items() if isinstance(v, list)}
        lines += [f"{k} = {_value(v)}" for k, v in value.items()
                  if k not in nested and k not in arrays]
        for key, rows in arrays.items():
            for row in rows:
                lines.append(f"[[{table}.{key}]]")
                lines += [f"{k} = {_value(v)}" for k, v in row.items()]
        for key, sub in nested.items():
            lines.append(f"[{table}.{key}]")
            lines += [f"{json.dumps(str(k))} = {_value(v)}" for k, v in sub.items()]
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    """A TOML value for a string, number or boolean (JSON's escapes are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


def load_criteria(source_text: str, path: str, data: Mapping[str, Any]) -> list[Rubric]:
    """Every criterion's rubric, in file order."""
    from judgekit.rubrics import rubric_from_text

    return [rubric_from_text(derived_text(data, name, path), path=f"{path}#{name}")
            for name in criterion_names(data)]


def pick_criterion(source_text: str, path: str, data: Mapping[str, Any],
                   criterion: str | None) -> Rubric:
    """One criterion's rubric; without a name, an error listing the criteria."""
    from judgekit.rubrics import rubric_from_text

    names = criterion_names(data)
    if criterion is None:
        raise RubricError(f"{path}: declares criteria {', '.join(names)}; name one as "
                          f"{path}#{names[0]} (or --criterion {names[0]})")
    if criterion not in names:
        raise RubricError(f"{path}: no criterion {criterion!r} (criteria: {', '.join(names)})")
    return rubric_from_text(derived_text(data, criterion, path), path=f"{path}#{criterion}")


__all__ = ["criteria_data", "criterion_names", "derived_text", "is_joint", "load_criteria",
           "pick_criterion", "split_reference"]
