"""Rubric files: load and validate TOML, hash the content, render chat messages.

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

from judgekit.errors import InputError, RubricError
from judgekit.types import Item, Rubric, Scale, ScaleKind, ScaleLevel, canonical_json, sha256_text

#: Where a bare rubric name is looked up, after ``./rubrics/``.
REPO_RUBRICS_DIR = Path(__file__).resolve().parent.parent / "rubrics"
BUNDLED_RUBRICS_DIR = Path(__file__).resolve().parent / "bundled_rubrics"

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_META_RE = re.compile(r"^meta\.([A-Za-z0-9_-]+)$")
_TOKEN_RE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_TOML_LINE_RE = re.compile(r"at line (\d+)")

_POINTWISE_FIELDS = frozenset({"input", "response", "reference", "scale"})
_PAIRWISE_FIELDS = frozenset({"input", "response_a", "response_b", "reference", "scale"})

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


class _RubricSpec(_Strict):
    name: str
    version: Any  # a string or an integer; checked in _build for a clear message
    description: str = ""
    scale: _ScaleSpec
    prompt: _PromptSpec


# -- templates -----------------------------------------------------------------

Segment = tuple[str, bool]  # (text, is_placeholder)


def parse_template(text: str, field: str, kind: ScaleKind) -> tuple[Segment, ...]:
    """Split a prompt into literal text and placeholders, rejecting any the scale cannot fill."""
    allowed = _PAIRWISE_FIELDS if kind == "pairwise" else _POINTWISE_FIELDS
    segments: list[Segment] = []
    literal: list[str] = []
    pos = 0
    for match in _TOKEN_RE.finditer(text):
        literal.append(text[pos : match.start()])
        pos = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            literal.append(token[0])
            continue
        name = match.group(1)
        if name is None:
            line = text.count("\n", 0, match.start()) + 1
            raise RubricError(
                f"{field}: unbalanced {token!r} on line {line} of the prompt "
                "(write {{ or }} for a literal brace)"
            )
        if name not in allowed and not _META_RE.match(name):
            if name in _PAIRWISE_FIELDS | _POINTWISE_FIELDS:
                why = f"a {kind} rubric has no {{{name}}}"
            else:
                names = ", ".join(f"{{{n}}}" for n in sorted(allowed))
                why = f"allowed: {names}, {{meta.FIELD}}"
            raise RubricError(
                f"{field}: unknown placeholder {{{name}}} ({why}; write {{{{ and }}}} "
                "for literal braces)"
            )
        if literal:
            segments.append(("".join(literal), False))
            literal = []
        segments.append((name, True))
    literal.append(text[pos:])
    if "".join(literal):
        segments.append(("".join(literal), False))
    return tuple(segments)


def _placeholders(segments: tuple[Segment, ...]) -> set[str]:
    return {text for text, is_placeholder in segments if is_placeholder}


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
    """Load, validate and hash a rubric; every error names the file and the field."""
    path = resolve_rubric_path(path_or_name)
    try:
        source_text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RubricError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise RubricError(f"{path}: cannot read: {exc.strerror}") from None
    return rubric_from_text(source_text, path=str(path))


def rubric_from_text(source_text: str, *, path: str = "<rubric>") -> Rubric:
    """Validate rubric TOML text (``path`` only labels error messages and ``Rubric.path``)."""
    try:
        data = tomllib.loads(source_text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE_RE.search(str(exc))
        where = f"{path}:{found.group(1)}" if found else path
        raise RubricError(f"{where}: invalid TOML: {exc}") from None
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
    used = _placeholders(system) | _placeholders(user)
    needed = ("response_a", "response_b") if scale.kind == "pairwise" else ("response",)
    for placeholder in needed:
        if placeholder not in used:
            raise RubricError(f"prompt.user: must contain {{{placeholder}}} so the judge sees it")
    return Rubric(
        name=spec.name,
        version=version,
        description=spec.description,
        scale=scale,
        system_prompt=spec.prompt.system,
        user_prompt=spec.prompt.user,
        sha256=sha256_text(canonical_json(_jsonable(data))),
        source_text=source_text,
        path=path,
    )


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


# -- rendering -----------------------------------------------------------------


def render_scale(scale: Scale, *, reverse_levels: bool = False) -> str:
    """The ``{scale}`` text: one ``- label: description`` line per level."""
    levels = reversed(scale.levels) if reverse_levels else scale.levels
    return "\n".join(
        f"- {level.label}: {level.description}" if level.description else f"- {level.label}"
        for level in levels
    )


#: Appended to the system message: the order matters (reasoning before the verdict).
ORDER_INSTRUCTION = "Give your reasoning first, then your verdict."


def format_instructions(scale: Scale, *, reverse_levels: bool = False) -> str:
    """The JSON line appended to every user message: reasoning first, verdict last.

    Kept to one line with the literal choices: small local models copy its shape
    far more reliably than a longer explanation.
    """
    labels = list(reversed(scale.labels) if reverse_levels else scale.labels)
    choices = " or ".join(f'"{label}"' for label in labels)
    return f'Write your answer as JSON: {{"reasoning": "your reason", "verdict": {choices}}}'


def _fill(
    segments: tuple[Segment, ...], values: Mapping[str, str], rubric: Rubric, item: Item
) -> str:
    parts: list[str] = []
    for text, is_placeholder in segments:
        if not is_placeholder:
            parts.append(text)
        elif text in values:
            parts.append(values[text])
        else:
            meta_field = text.removeprefix("meta.")
            if meta_field not in item.meta:
                raise InputError(
                    f"item {item.id!r}: no meta field {meta_field!r}, but rubric "
                    f"{rubric.name!r} uses {{{text}}}"
                )
            value = item.meta[meta_field]
            parts.append(value if isinstance(value, str) else canonical_json(value))
    return "".join(parts)


def render_messages(
    rubric: Rubric, item: Item, *, reverse_levels: bool = False
) -> list[dict[str, str]]:
    """System and user chat messages for one item (``reverse_levels`` lists levels last-first)."""
    kind = rubric.scale.kind
    if (kind == "pairwise") != item.is_pairwise:
        has = "response_a/response_b" if item.is_pairwise else "a single response"
        raise InputError(f"item {item.id!r} has {has}, but rubric {rubric.name!r} is {kind}")
    system = parse_template(rubric.system_prompt, "prompt.system", kind)
    user = parse_template(rubric.user_prompt, "prompt.user", kind)
    if "reference" in _placeholders(system) | _placeholders(user) and item.reference is None:
        raise InputError(
            f"item {item.id!r} has no reference, but rubric {rubric.name!r} uses {{reference}}"
        )
    values = {
        "input": item.input,
        "response": item.response or "",
        "response_a": item.response_a or "",
        "response_b": item.response_b or "",
        "reference": item.reference or "",
        "scale": render_scale(rubric.scale, reverse_levels=reverse_levels),
    }
    messages: list[dict[str, str]] = []
    system_text = _fill(system, values, rubric, item).rstrip()
    system_text = f"{system_text} {ORDER_INSTRUCTION}" if system_text else ORDER_INSTRUCTION
    messages.append({"role": "system", "content": system_text})
    user_text = _fill(user, values, rubric, item).rstrip()
    instructions = format_instructions(rubric.scale, reverse_levels=reverse_levels)
    messages.append({"role": "user", "content": f"{user_text}\n\n{instructions}"})
    return messages


def verdict_json_schema(rubric: Rubric) -> dict[str, Any]:
    """JSON schema for structured output: ``reasoning`` (first) and a ``verdict`` on the scale."""
    return {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "verdict": {"type": "string", "enum": list(rubric.scale.labels)},
        },
        "required": ["reasoning", "verdict"],
        "additionalProperties": False,
    }
