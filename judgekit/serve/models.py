"""The request bodies of the API as pydantic models, and their errors as the imports' lines.

Types and ranges are checked before anything reads the store: ``seconds`` is a
finite number of seconds (0 to a day), ``flagged`` and ``blind`` are JSON
booleans (``"yes"`` is not), ``annotator`` is a string (``12345`` is not), every
text field is within :data:`judgekit.text_limits.MAX_LABEL_TEXT` and holds no lone
UTF-16 surrogate (``"\\ud800"`` is valid JSON but not text: SQLite refuses it,
which used to be a 500). A failure is a 422 whose ``detail`` lists one line per
problem, naming the record and the field as ``labels import`` names ``file:line``
(``labels:3: field 'seconds' must be at least 0, got -1``), and an echoed value is
cut to :data:`SHOWN` characters, so a 1 MB name does not come back whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt

from judgekit.text_limits import MAX_LABEL_TEXT

#: Characters of a value echoed in an error, and of one error line.
SHOWN = 60
LINE = 400
#: Longest time, in seconds, a label may say it took.
MAX_SECONDS = 86_400.0
_SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE_PROBLEM = "holds a lone surrogate (e.g. \\ud800), which is not valid Unicode text"


def _no_surrogate(value: str) -> str:
    if _SURROGATE.search(value):
        raise ValueError(SURROGATE_PROBLEM)
    return value


def _text(limit: int) -> Any:
    return Annotated[str, Field(strict=True, max_length=limit), AfterValidator(_no_surrogate)]


def _id_text(limit: int) -> Any:
    """Text, or an integer taken as its decimal text (item ids, ordinal labels)."""
    return _text(limit) | StrictInt


class LabelRecord(BaseModel):
    """One label: the fields of a line of a ``labels import`` file."""

    model_config = ConfigDict(extra="forbid")

    item_id: _id_text(MAX_LABEL_TEXT["item_id"])  # type: ignore[valid-type]
    label: _id_text(MAX_LABEL_TEXT["label"]) | None = None  # type: ignore[valid-type]
    annotator: _text(MAX_LABEL_TEXT["annotator"]) | None = Field(  # type: ignore[valid-type]
        default=None, description="Required with a write token; an annotate or adjudicate "
        "token's labels carry its name.")
    note: _text(MAX_LABEL_TEXT["note"]) | None = None  # type: ignore[valid-type]
    flagged: StrictBool | None = None
    blind: StrictBool | None = None
    seconds: Annotated[float, Field(strict=True, ge=0.0, le=MAX_SECONDS,
                                    allow_inf_nan=False)] | None = None
    dataset: _text(MAX_LABEL_TEXT["dataset"]) | None = None  # type: ignore[valid-type]
    created_at: _text(MAX_LABEL_TEXT["created_at"]) | None = None  # type: ignore[valid-type]
    source: _text(MAX_LABEL_TEXT["source"]) | None = None  # type: ignore[valid-type]


class LabelsIn(BaseModel):
    """A batch of human labels for one rubric (the fields of a `labels import` file)."""

    model_config = ConfigDict(extra="forbid")

    rubric: _text(1_000) = Field(  # type: ignore[valid-type]
        description="Rubric name or sha256, as stored.")
    dataset: _text(MAX_LABEL_TEXT["dataset"]) | None = Field(  # type: ignore[valid-type]
        default=None, description="Dataset the item ids belong to.")
    labels: list[LabelRecord] = Field(
        description="Records with item_id, label, and optionally annotator, note, flagged, "
        "blind, seconds, dataset, created_at, source (annotate and adjudicate tokens: the "
        "annotator is the token's name and the server sets blind, created_at and source; "
        "source \"adjudicate\" needs an adjudicate or admin token).",
    )


class JudgmentsIn(BaseModel):
    """A batch of judge verdicts for one rubric (the fields of a `judgments import` file)."""

    model_config = ConfigDict(extra="forbid")

    rubric: _text(1_000) = Field(  # type: ignore[valid-type]
        description="Rubric name or sha256, as stored.")
    dataset: _text(MAX_LABEL_TEXT["dataset"]) | None = None  # type: ignore[valid-type]
    judge: _text(1_000) | None = Field(  # type: ignore[valid-type]
        default=None, description="Only this judge's records.")
    judgments: list[dict[str, Any]]


class ImportOut(BaseModel):
    added: int
    unchanged: int


def shown(value: Any) -> str:
    """``repr`` of a value for an error line: at most :data:`SHOWN` characters, no surrogate."""
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    text = repr(value)
    if len(text) > SHOWN:
        text = f"{text[:SHOWN]}… ({len(text) - SHOWN:,} more characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def cut_line(line: str) -> str:
    """One error line at most :data:`LINE` characters long."""
    if len(line) <= LINE:
        return line
    return f"{line[:LINE]}… ({len(line) - LINE:,} more characters)"


def surrogate_problems(records: Sequence[Any], name: str) -> list[str]:
    """``name:N: field 'x' holds a lone surrogate`` for every record string that does."""
    problems = []
    for number, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            continue
        for key, value in record.items():
            if _has_surrogate(key) or _has_surrogate(value):
                problems.append(f"{name}:{number}: field {shown(key)} {SURROGATE_PROBLEM}")
                break
    return problems


def _has_surrogate(value: Any) -> bool:
    """Whether any string in ``value`` holds a lone surrogate (iterative: any nesting depth)."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if _SURROGATE.search(current) is not None:
                return True
        elif isinstance(current, Mapping):
            stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return False


def error_lines(errors: Sequence[Mapping[str, Any]]) -> list[str]:
    """pydantic's (or FastAPI's) validation errors as the import's one line per problem.

    A union (text or integer) fails once per member; only its first failure is kept.
    """
    lines: list[str] = []
    seen: set[tuple[Any, ...]] = set()
    for error in errors:
        loc = tuple(part for part in error.get("loc", ()) if not _is_union_branch(part))
        if loc in seen:
            continue
        seen.add(loc)
        if len(lines) == 50:
            lines.append(f"… and more problems ({len(errors):,} in all)")
            break
        lines.append(cut_line(_line(list(loc), error)))
    return lines


def _line(loc: list[Any], error: Mapping[str, Any]) -> str:
    kind = str(error.get("type", ""))
    if loc and loc[0] in ("query", "path", "header", "cookie"):
        name = shown(loc[1]) if len(loc) > 1 else ""
        return _phrase(kind, f"{loc[0]} parameter {name}", error)
    if loc and loc[0] == "body":
        loc = loc[1:]
    where = ""
    if len(loc) >= 2 and isinstance(loc[0], str) and isinstance(loc[1], int):
        where, loc = f"{loc[0]}:{loc[1] + 1}: ", loc[2:]
    field = f"field {shown(loc[-1])}" if loc else ("record" if where else "body")
    return where + _phrase(kind, field, error)


def _is_union_branch(part: Any) -> bool:
    """pydantic names the member of a union it tried (``str``, ``int``, ``constrained-str``)."""
    return isinstance(part, str) and (part in ("str", "int", "float", "bool")
                                       or part.startswith(("constrained-", "function-")))


def _phrase(kind: str, field: str, error: Mapping[str, Any]) -> str:
    got = shown(error.get("input"))
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return f"missing {field}"
    if kind == "extra_forbidden":
        return f"unknown {field}"
    if kind in ("string_type", "int_type", "str_type"):
        return f"{field} must be a string, got {_type(error.get('input'))} {got}"
    if kind == "string_unicode":
        return f"{field} {SURROGATE_PROBLEM}"
    if kind == "bool_type":
        return f"{field} must be true or false, got {got}"
    if kind in ("float_type", "finite_number", "float_parsing"):
        return f"{field} must be a finite number, got {got}"
    if kind == "greater_than_equal":
        return f"{field} must be at least {ctx.get('ge')}, got {got}"
    if kind == "less_than_equal":
        return f"{field} must be at most {ctx.get('le')}, got {got}"
    if kind == "string_too_long":
        value = error.get("input")
        size = f" ({len(value):,})" if isinstance(value, str) else ""
        return f"{field} is longer than {ctx.get('max_length', 0):,} characters{size}"
    if kind == "value_error":
        return f"{field} {ctx.get('error', error.get('msg', 'is invalid'))}"
    if kind in ("list_type", "model_type", "dict_type", "model_attributes_type"):
        return f"{field} must be a JSON {'array' if kind == 'list_type' else 'object'}, got {got}"
    if kind.startswith("json_"):
        return f"the body is not valid JSON ({error.get('msg', kind)})"
    return f"{field}: {error.get('msg', kind)}, got {got}"


def _type(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", type(None): "null"}.get(
        type(value), type(value).__name__)


__all__ = ["ImportOut", "JudgmentsIn", "LabelRecord", "LabelsIn", "error_lines", "shown",
           "surrogate_problems"]
