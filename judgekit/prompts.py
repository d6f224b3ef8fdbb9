"""Prompt templates: parse a rubric's prompt into literal text and placeholders, and
render the chat messages a judge receives for one item.

Plain substitution of a fixed set of placeholders, never ``str.format`` or code:
a template error surfaces when the rubric is loaded (naming the field), and item
text is inserted verbatim and never substituted again. Loading and validating
rubric files is :mod:`judgekit.rubrics`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from judgekit.errors import InputError, RubricError
from judgekit.types import Example, Item, Rubric, Scale, ScaleKind, canonical_json

_META_RE = re.compile(r"^meta\.([A-Za-z0-9_-]+)$")
_TOKEN_RE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")

_POINTWISE_FIELDS = frozenset({"input", "response", "reference", "scale", "examples"})
_PAIRWISE_FIELDS = frozenset({"input", "response_a", "response_b", "reference", "scale",
                              "examples"})


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


def placeholders(segments: tuple[Segment, ...]) -> set[str]:
    return {text for text, is_placeholder in segments if is_placeholder}


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


#: Heads the few-shot block: the verdicts are people's, not a model's.
EXAMPLES_HEADING = "Examples judged by people (their verdict, and their note where they wrote one):"


@lru_cache(maxsize=64)
def examples_text(examples: tuple[Example, ...]) -> str:
    """The ``{examples}`` text: each example's item, the human verdict and the annotator's note.

    Empty without examples, so a template that names ``{examples}`` renders as before.
    """
    if not examples:
        return ""
    blocks = [EXAMPLES_HEADING]
    for number, example in enumerate(examples, start=1):
        lines = [f"Example {number}", f"Input: {example.input}"]
        if example.response_a is not None or example.response_b is not None:
            lines += [f"Response A: {example.response_a or ''}",
                      f"Response B: {example.response_b or ''}"]
        else:
            lines.append(f"Response: {example.response or ''}")
        lines.append(f"Verdict: {example.label}")
        if example.note:
            lines.append(f"Note: {example.note}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _fill(
    segments: tuple[Segment, ...], values: Mapping[str, str], rubric: Rubric, item: Item
) -> str:
    parts: list[str] = []
    for text, is_placeholder in segments:
        if not is_placeholder:
            parts.append(text)
        elif text in values:
            parts.append(values[text])
        else:  # {meta.FIELD}: present, as check_item made sure
            value = item.meta[text.removeprefix("meta.")]
            parts.append(value if isinstance(value, str) else canonical_json(value))
    return "".join(parts)


class _Layout(NamedTuple):
    """What every item of one rubric shares: its parsed templates, their placeholders, the
    ``{scale}`` text and the answer-format line (per level order). Computed once per rubric
    and order: a batch of 100,000 calls would otherwise parse the prompt 200,000 times."""

    system: tuple[Segment, ...]
    user: tuple[Segment, ...]
    used: tuple[str, ...]  # sorted, as check_item reads them
    scale_text: str
    instructions: str

    @staticmethod
    def of(rubric: Rubric, reverse_levels: bool) -> _Layout:
        # the same Rubric object again (a batch): no hashing of its scale per call
        key = (id(rubric), reverse_levels)
        found = _RECENT.get(key)
        if found is not None and found[0] is rubric:
            return found[1]
        layout = _layout(rubric.system_prompt, rubric.user_prompt, rubric.scale, reverse_levels)
        if len(_RECENT) >= 64:
            _RECENT.clear()
        _RECENT[key] = (rubric, layout)  # the rubric is kept, so its id is not reused
        return layout


#: Layouts of the rubric objects rendered lately, by identity.
_RECENT: dict[tuple[int, bool], tuple[Rubric, _Layout]] = {}


@lru_cache(maxsize=64)
def _layout(system_prompt: str, user_prompt: str, scale: Scale, reverse_levels: bool) -> _Layout:
    system = parse_template(system_prompt, "prompt.system", scale.kind)
    user = parse_template(user_prompt, "prompt.user", scale.kind)
    return _Layout(system, user, tuple(sorted(placeholders(system) | placeholders(user))),
                   render_scale(scale, reverse_levels=reverse_levels),
                   format_instructions(scale, reverse_levels=reverse_levels))


def check_item(rubric: Rubric, item: Item, used: Collection[str]) -> None:
    """An :class:`InputError` if ``item`` cannot fill the rubric's prompt (``used``: its
    placeholders): the wrong kind of item for the scale, or a missing reference or meta field."""
    kind = rubric.scale.kind
    if (kind == "pairwise") != item.is_pairwise:
        has = "response_a/response_b" if item.is_pairwise else "a single response"
        raise InputError(f"item {item.id!r} has {has}, but rubric {rubric.name!r} is {kind}")
    if "reference" in used and item.reference is None:
        raise InputError(
            f"item {item.id!r} has no reference, but rubric {rubric.name!r} uses {{reference}}"
        )
    for text in sorted(used):
        if text.startswith("meta.") and text.removeprefix("meta.") not in item.meta:
            raise InputError(
                f"item {item.id!r}: no meta field {text.removeprefix('meta.')!r}, but rubric "
                f"{rubric.name!r} uses {{{text}}}"
            )


def check_items_render(rubric: Rubric, items: Iterable[Item]) -> None:
    """:func:`check_item` for every item, the templates parsed once: a file the rubric
    cannot judge is refused before anything is stored or sent."""
    used = _Layout.of(rubric, False).used
    for item in items:
        check_item(rubric, item, used)


def render_messages(
    rubric: Rubric, item: Item, *, reverse_levels: bool = False,
    scale_text: str | None = None, instructions: str | None = None,
) -> list[dict[str, str]]:
    """System and user chat messages for one item (``reverse_levels`` lists levels last-first).

    ``scale_text`` and ``instructions`` replace the ``{scale}`` text and the answer-format
    line (a call judging several criteria at once lists them all and asks for one object).
    """
    layout = _Layout.of(rubric, reverse_levels)
    check_item(rubric, item, layout.used)
    values = {
        "input": item.input,
        "response": item.response or "",
        "response_a": item.response_a or "",
        "response_b": item.response_b or "",
        "reference": item.reference or "",
        "scale": layout.scale_text if scale_text is None else scale_text,
        "examples": examples_text(rubric.examples),
    }
    messages: list[dict[str, str]] = []
    system_text = _fill(layout.system, values, rubric, item).rstrip()
    system_text = f"{system_text} {ORDER_INSTRUCTION}" if system_text else ORDER_INSTRUCTION
    if rubric.examples and "examples" not in layout.used:  # appended after the instructions
        system_text = f"{system_text}\n\n{values['examples']}"
    messages.append({"role": "system", "content": system_text})
    user_text = _fill(layout.user, values, rubric, item).rstrip()
    answer = layout.instructions if instructions is None else instructions
    messages.append({"role": "user", "content": f"{user_text}\n\n{answer}"})
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
