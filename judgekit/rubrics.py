"""Rubric files: load and validate TOML, hash the content.

Rendering the prompt is :mod:`judgekit.prompts`; its names are re-exported here.

A rubric is data, never code: prompts are filled by plain substitution of a fixed
set of placeholders, parsed once at load time, so a template error surfaces when
the rubric is loaded (naming the field) rather than halfway through a paid run,
and item text is inserted verbatim and never substituted again.
See ``docs/rubrics.md`` for the format.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from judgekit.criteria import criteria_data, load_criteria, pick_criterion, split_reference
from judgekit.errors import RubricError
from judgekit.prompts import (
    ORDER_INSTRUCTION,
    Segment,
    format_instructions,
    parse_template,
    placeholders,
    render_messages,
    render_scale,
    verdict_json_schema,
)
from judgekit.types import Example, Rubric, Scale, ScaleLevel, Voting, canonical_json, sha256_text

#: Where a bare rubric name is looked up, after ``./rubrics/``.
REPO_RUBRICS_DIR = Path(__file__).resolve().parent.parent / "rubrics"
BUNDLED_RUBRICS_DIR = Path(__file__).resolve().parent / "bundled_rubrics"

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_TOML_LINE_RE = re.compile(r"at line (\d+)")


_BINARY_DEFAULTS = {
    "pass": "The response meets the criterion.",
    "fail": "The response does not meet the criterion.",
}
_PAIRWISE_DEFAULTS = {
    "A": "Response A is better.",
    "B": "Response B is better.",
    "tie": "Both responses are equally good, or equally bad.",
}
_MAX_CATEGORIES = 9  # keys 1..9 in the annotate app


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _CategorySpec(_Strict):
    name: str
    description: str = ""


class _ScaleSpec(_Strict):
    kind: Literal["binary", "ordinal", "categorical", "pairwise"]
    min: int | None = None
    max: int | None = None
    levels: dict[str, str] | None = None
    labels: list[_CategorySpec] | None = None
    allow_tie: bool | None = None


class _PromptSpec(_Strict):
    system: str = ""
    user: str


class _ExampleSpec(_Strict):
    item_id: str
    label: str
    dataset: str = ""
    input: str = ""
    response: str | None = None
    response_a: str | None = None
    response_b: str | None = None
    note: str = ""


class _DisplaySpec(_Strict):
    """How the annotate app shows items (never sent to the judge; not in the rubric's hash)."""

    input: str | None = None
    response: str | None = None
    response_a: str | None = None
    response_b: str | None = None
    reference: str | None = None
    meta: list[str] = []
    show_id: bool = False


class _SamplingSpec(_Strict):
    """Self-consistency voting (``[sampling]``): part of the hash, so runs record it."""

    samples: int
    temperature: float | int
    aggregate: Literal["majority"] = "majority"


class _RubricSpec(_Strict):
    name: str
    version: Any  # a string or an integer; checked in _build for a clear message
    description: str = ""
    guidelines: str = ""
    #: the sha256 this version came from and what changed (``judgekit align``)
    parent: str = ""
    changes: str = ""
    scale: _ScaleSpec
    prompt: _PromptSpec
    examples: list[_ExampleSpec] = []
    display: _DisplaySpec | None = None
    sampling: _SamplingSpec | None = None


# -- loading -------------------------------------------------------------------


def resolve_rubric_path(name: str | Path) -> Path:
    """A rubric file for a path, or for a bare name: ./rubrics/NAME.toml, then the shipped ones."""
    path = Path(name)
    if path.suffix == ".toml" or len(path.parts) > 1 or path.is_file():
        if not path.is_file():
            raise RubricError(f"{path}: no such rubric file")
        return path
    folders = [Path("rubrics"), REPO_RUBRICS_DIR, BUNDLED_RUBRICS_DIR]
    for folder in folders:
        candidate = folder / f"{name}.toml"
        if candidate.is_file():
            return candidate
    available = sorted(
        {p.stem for folder in folders if folder.is_dir() for p in folder.glob("*.toml")}
    )
    raise RubricError(
        f"rubric {str(name)!r} not found in ./rubrics/ or the shipped rubrics"
        + (f" (available: {', '.join(available)})" if available else "")
    )


def load_rubric(path_or_name: str | Path) -> Rubric:
    """Load, validate and hash a rubric; every error names the file and the field.

    ``FILE#CRITERION`` names one criterion of a multi-criteria file
    (:mod:`judgekit.criteria`); such a file without a criterion is an error listing them.
    """
    target, criterion = split_reference(path_or_name)
    if criterion is not None and not Path(str(path_or_name)).is_file():
        path_or_name = target
    path, source_text = read_source(path_or_name)
    multi = criteria_data(source_text, str(path))
    if multi is not None:
        return pick_criterion(source_text, str(path), multi, criterion)
    return rubric_from_text(source_text, path=str(path))


def load_rubrics(path_or_name: str | Path) -> list[Rubric]:
    """Every rubric a file stands for: its criteria's (multi-criteria), else the one."""
    if split_reference(path_or_name)[1] is not None and not Path(str(path_or_name)).is_file():
        return [load_rubric(path_or_name)]
    path, source_text = read_source(path_or_name)
    multi = criteria_data(source_text, str(path))
    if multi is not None:
        return load_criteria(source_text, str(path), multi)
    return [rubric_from_text(source_text, path=str(path))]


def read_source(path_or_name: str | Path) -> tuple[Path, str]:
    """A rubric file's path and text (named by path or bare name); errors name the file."""
    path = resolve_rubric_path(path_or_name)
    try:
        return path, path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RubricError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise RubricError(f"{path}: cannot read: {exc.strerror}") from None


def rubric_from_text(source_text: str, *, path: str = "<rubric>") -> Rubric:
    """Validate rubric TOML text (``path`` only labels error messages and ``Rubric.path``)."""
    try:
        data = tomllib.loads(source_text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE_RE.search(str(exc))
        where = f"{path}:{found.group(1)}" if found else path
        raise RubricError(f"{where}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses per nested array or inline table
        raise RubricError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
    try:
        spec = _RubricSpec.model_validate(data)
    except ValidationError as exc:
        raise RubricError(f"{path}: {_describe_validation(exc)}") from None
    try:
        return _build(spec, data, source_text, path)
    except RubricError as exc:
        raise RubricError(f"{path}: {exc}") from None


def _describe_validation(exc: ValidationError) -> str:
    """Every problem, unknown fields first: a typo such as ``[promt]`` is the real cause of
    the "prompt: Field required" that follows it, so name it (with a suggestion) up front."""
    errors = exc.errors()
    missing = [".".join(str(p) for p in e["loc"]) for e in errors if e["type"] == "missing"]
    messages: list[str] = []
    for error in sorted(errors, key=lambda e: e["type"] != "extra_forbidden"):
        loc = ".".join(str(part) for part in error["loc"]) or "(top level)"
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(loc, missing, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            messages.append(f"{loc}: unknown field{hint}")
        else:
            messages.append(f"{loc}: {error['msg']}")
    return "; ".join(messages)


def _build(spec: _RubricSpec, data: Mapping[str, Any], source_text: str, path: str) -> Rubric:
    if not _NAME_RE.match(spec.name):
        raise RubricError(
            "name: use letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    if isinstance(spec.version, bool) or not isinstance(spec.version, str | int):
        raise RubricError("version: must be a string such as \"1\" or \"2024-05\"")
    version = str(spec.version).strip()
    if not version:
        raise RubricError("version: must not be empty")
    scale = build_scale(spec.scale)
    system = parse_template(spec.prompt.system, "prompt.system", scale.kind)
    user = parse_template(spec.prompt.user, "prompt.user", scale.kind)
    if not spec.prompt.user.strip():
        raise RubricError("prompt.user: must not be empty")
    used = placeholders(system) | placeholders(user)
    needed = ("response_a", "response_b") if scale.kind == "pairwise" else ("response",)
    for placeholder in needed:
        if placeholder not in used:
            raise RubricError(f"prompt.user: must contain {{{placeholder}}} so the judge sees it")
    if spec.parent and not _SHA256_RE.match(spec.parent):
        raise RubricError("parent: must be the sha256 of the rubric this one came from")
    return Rubric(
        name=spec.name,
        version=version,
        description=spec.description,
        guidelines=spec.guidelines.strip(),
        scale=scale,
        system_prompt=spec.prompt.system,
        user_prompt=spec.prompt.user,
        # [display] only changes how people see items: editing it keeps the rubric's
        # identity (and every cached judgment), so it is left out of the hash
        sha256=sha256_text(canonical_json(_jsonable(
            {k: v for k, v in data.items() if k != "display"}))),
        source_text=source_text,
        path=path,
        parent=spec.parent,
        changes=spec.changes.strip(),
        examples=_examples(spec.examples, scale),
        display=_display(spec.display),
        voting=_voting(spec.sampling),
    )


def _voting(spec: _SamplingSpec | None) -> Voting | None:
    """``[sampling]``: 2 or more samples at a temperature above 0 (one seedless answer
    repeated would be no vote), at most 2 as the OpenAI API allows."""
    if spec is None:
        return None
    if not 2 <= spec.samples <= 100:
        raise RubricError("sampling.samples: a vote needs 2 to 100 samples per item")
    if not 0 < spec.temperature <= 2:
        raise RubricError("sampling.temperature: must be above 0 (samples at 0 would agree) "
                          "and at most 2")
    return Voting(spec.samples, float(spec.temperature), spec.aggregate)


def _examples(specs: list[_ExampleSpec], scale: Scale) -> tuple[Example, ...]:
    """The ``[[examples]]`` tables, each one's verdict on the scale and the right responses."""
    out: list[Example] = []
    for index, ex in enumerate(specs):
        where = f"examples.{index}"
        if not scale.is_valid(ex.label):
            raise RubricError(f"{where}.label: {ex.label!r} is not on the scale "
                              f"({', '.join(scale.labels)})")
        paired = ex.response_a is not None and ex.response_b is not None
        if (scale.kind == "pairwise") != paired or (paired and ex.response is not None):
            need = "response_a and response_b" if scale.kind == "pairwise" else "response"
            raise RubricError(f"{where}: a {scale.kind} example needs {need}")
        out.append(Example(ex.item_id, ex.label, ex.input, ex.response, ex.response_a,
                           ex.response_b, ex.note.strip(), ex.dataset))
    return tuple(out)


def _display(spec: _DisplaySpec | None) -> dict[str, Any]:
    """The ``[display]`` table as plain data: section titles, meta fields, ``show_id``."""
    if spec is None:
        return {}
    for field_name in spec.meta:
        if not field_name.strip():
            raise RubricError("display.meta: field names must not be empty")
    titles = {k: v.strip() for k, v in spec.model_dump().items()
              if k not in ("meta", "show_id") and isinstance(v, str) and v.strip()}
    return {"titles": titles, "meta": list(spec.meta), "show_id": spec.show_id}


def _jsonable(value: Any) -> Any:
    """TOML dates/times become strings so any parsed file hashes deterministically."""
    return json.loads(json.dumps(value, default=str))


def _only_for(spec: _ScaleSpec, kinds: tuple[str, ...], *fields: str) -> None:
    for field in fields:
        if getattr(spec, field) is not None and spec.kind not in kinds:
            raise RubricError(f"scale.{field}: only valid for {'/'.join(kinds)} scales")


def build_scale(spec: _ScaleSpec) -> Scale:
    """The ordered levels of a validated ``[scale]`` table."""
    _only_for(spec, ("ordinal",), "min", "max")
    _only_for(spec, ("categorical",), "labels")
    _only_for(spec, ("pairwise",), "allow_tie")
    _only_for(spec, ("binary", "ordinal", "pairwise"), "levels")
    given = spec.levels or {}
    if spec.kind == "binary":
        _check_level_names(given, ("pass", "fail"))
        levels = tuple(
            ScaleLevel(label, label[0], given.get(label, _BINARY_DEFAULTS[label]))
            for label in ("pass", "fail")
        )
    elif spec.kind == "pairwise":
        labels = ("A", "B", "tie") if spec.allow_tie else ("A", "B")
        if "tie" in given and not spec.allow_tie:
            raise RubricError("scale.levels.tie: set scale.allow_tie = true to allow ties")
        _check_level_names(given, labels)
        levels = tuple(
            ScaleLevel(label, label[0].lower(), given.get(label, _PAIRWISE_DEFAULTS[label]))
            for label in labels
        )
    elif spec.kind == "ordinal":
        levels = _ordinal_levels(spec, given)
    else:
        levels = _categorical_levels(spec)
    return Scale(kind=spec.kind, levels=levels)


def _check_level_names(given: Mapping[str, str], allowed: tuple[str, ...]) -> None:
    for name in given:
        if name not in allowed:
            raise RubricError(
                f"scale.levels.{name}: not a level of this scale ({', '.join(allowed)})"
            )


def _ordinal_levels(spec: _ScaleSpec, given: Mapping[str, str]) -> tuple[ScaleLevel, ...]:
    if spec.min is None:
        raise RubricError("scale.min: required for an ordinal scale")
    if spec.max is None:
        raise RubricError("scale.max: required for an ordinal scale")
    if spec.min < 0:
        raise RubricError("scale.min: must be 0 or more")
    if spec.max <= spec.min:
        raise RubricError("scale.max: must be greater than scale.min")
    if spec.max - spec.min + 1 > 10 or spec.max > 10:
        raise RubricError("scale.max: at most 10 levels, within 0..10 (one key per level)")
    numbers = range(spec.min, spec.max + 1)
    _check_level_names(given, tuple(str(n) for n in numbers))
    for number in numbers:
        if not given.get(str(number), "").strip():
            raise RubricError(f'scale.levels."{number}": missing description of level {number}')
    return tuple(
        ScaleLevel(str(n), str(n % 10), given[str(n)].strip(), float(n)) for n in numbers
    )


def _categorical_levels(spec: _ScaleSpec) -> tuple[ScaleLevel, ...]:
    labels = spec.labels or []
    if len(labels) < 2:
        raise RubricError("scale.labels: a categorical scale needs at least 2 labels")
    if len(labels) > _MAX_CATEGORIES:
        raise RubricError(f"scale.labels: at most {_MAX_CATEGORIES} labels")
    seen: dict[str, int] = {}
    for index, label in enumerate(labels):
        if not _NAME_RE.match(label.name):
            raise RubricError(
                f"scale.labels.{index}.name: {label.name!r} is not a plain word "
                "(letters, digits, '.', '_', '-')"
            )
        if label.name.lower() in seen:
            first = seen[label.name.lower()]
            raise RubricError(f"scale.labels.{index}.name: {label.name!r} repeats label {first}")
        seen[label.name.lower()] = index
    return tuple(
        ScaleLevel(label.name, str(i + 1), label.description.strip())
        for i, label in enumerate(labels)
    )


__all__ = [
    "BUNDLED_RUBRICS_DIR",
    "ORDER_INSTRUCTION",
    "REPO_RUBRICS_DIR",
    "Segment",
    "build_scale",
    "format_instructions",
    "load_rubric",
    "load_rubrics",
    "parse_template",
    "read_source",
    "render_messages",
    "render_scale",
    "resolve_rubric_path",
    "rubric_from_text",
    "verdict_json_schema",
]
