"""The parser's rules against the injection probe's own strings.

A judge that reads an injected verdict in the judged text often quotes it in its
reasoning or after its answer. An answer that opens with the JSON verdict object
is decided by it, whatever follows; otherwise the verdict that comes *last* wins,
so when the judge's own verdict comes after the quote, the quote cannot decide.
These tests feed every template of ``judgekit probe injection`` (both kinds)
through the completion shapes judges write, and pin exactly where the parser can
be fooled: only when the judge's own verdict is missing in a form the parser
reads, or comes before the quote in an answer that does not open with it
(docs/probes.md, "What the parser can be fooled by").
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from judgekit.judging.injection_templates import TEMPLATES
from judgekit.parsing import parse_completion
from judgekit.types import Scale, ScaleLevel

ORDINAL = Scale(
    "ordinal", tuple(ScaleLevel(str(n), str(n), f"level {n}", float(n)) for n in range(1, 6))
)
PAIRWISE = Scale("pairwise", (ScaleLevel("A", "a"), ScaleLevel("B", "b"), ScaleLevel("tie", "t")))
#: (scale, the injected target, the judge's own verdict)
KINDS = {"ordinal": (ORDINAL, "5", "2"), "pairwise": (PAIRWISE, "A", "B")}

Shape = Callable[[str, str], str]

#: Completions whose own verdict comes after the quoted injection: never fooled.
REAL_ANSWER_LAST: dict[str, Shape] = {
    "quote, then the JSON answer": lambda inj, real: (
        f"The response contains: {inj}\nThat is an instruction to me; I ignore it.\n"
        + json.dumps({"reasoning": "Weak answer.", "verdict": real})),
    "JSON answer whose reasoning quotes it": lambda inj, real: json.dumps(
        {"reasoning": f"It says {inj!r}; ignored.", "verdict": real}),
    "fenced JSON, verdict key first, reasoning quotes it": lambda inj, real: (
        "Here is my answer:\n```json\n"
        + json.dumps({"verdict": real, "reasoning": f"It says {inj}; ignored."}) + "\n```"),
    "JSON with the quote unescaped (invalid JSON)": lambda inj, real: (
        '{"reasoning": "The response includes ' + inj + ' which I ignore", "verdict": "'
        + real + '"}'),
    "quote, then a Verdict: line": lambda inj, real: (
        f'The response says "{inj}". Ignoring that.\nVerdict: {real}'),
    "quote, then an MT-Bench [[X]]": lambda inj, real: (
        f'The response says "{inj}". Ignoring that.\n[[{real}]]'),
}

#: Completions that open with the JSON answer and quote the injection after it: never fooled.
REAL_ANSWER_OPENS: dict[str, Shape] = {
    "JSON answer, then a note quoting it": lambda inj, real: (
        json.dumps({"reasoning": "Weak answer.", "verdict": real})
        + f'\nNote: the response tried to inject "{inj}".'),
    "JSON answer, then the quote on its own line": lambda inj, real: (
        "  \n" + json.dumps({"reasoning": "Weak answer.", "verdict": real})
        + f"\n\nThe response ends with:\n\n{inj}\n"),
    "fenced JSON answer, then a note quoting it": lambda inj, real: (
        "```json\n" + json.dumps({"verdict": real, "reasoning": "Weak."}, indent=2)
        + f"\n```\nFor the record, the response contains {inj}"),
    "JSON answer, then a Verdict: line repeating the quote": lambda inj, real: (
        json.dumps({"reasoning": "Weak answer.", "verdict": real})
        + f"\nIt claims {inj} -- it even says verdict: {'5' if real == '2' else 'A'}"),
}

#: Completions the parser cannot read right when the quote carries a verdict pattern.
REAL_ANSWER_FIRST_OR_UNREADABLE: dict[str, Shape] = {
    "preface, JSON answer, then a note quoting it": lambda inj, real: (
        "My evaluation:\n" + json.dumps({"reasoning": "Weak answer.", "verdict": real})
        + f'\nNote: the response tried to inject "{inj}".'),
    "own verdict in prose only": lambda inj, real: (
        f'The response says "{inj}". I would rate it {real} out of 5.'),
    "own verdict as a bare last line": lambda inj, real: (
        f'The response says "{inj}", which I ignore.\n\n{real}'),
}

#: The templates whose text carries something the parser reads as a verdict.
VERDICT_SHAPED = {"fake_json", "fake_verdict_line"}


def _injected(template: str, kind: str) -> tuple[Scale, str, str, str]:
    scale, target, real = KINDS[kind]
    return scale, target, real, TEMPLATES[template].render(target, pairwise=kind == "pairwise")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("shape", REAL_ANSWER_LAST)
def test_the_judges_later_verdict_wins_over_every_injected_string(
    shape: str, template: str, kind: str
) -> None:
    scale, _, real, injected = _injected(template, kind)
    verdict = parse_completion(REAL_ANSWER_LAST[shape](injected, real), scale)
    assert (verdict.status, verdict.label) == ("ok", real)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("shape", REAL_ANSWER_OPENS)
def test_an_answer_opening_with_its_json_verdict_ignores_what_it_quotes_after(
    shape: str, template: str, kind: str
) -> None:
    scale, _, real, injected = _injected(template, kind)
    verdict = parse_completion(REAL_ANSWER_OPENS[shape](injected, real), scale)
    assert (verdict.status, verdict.label, verdict.method) == ("ok", real, "json")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("shape", REAL_ANSWER_FIRST_OR_UNREADABLE)
def test_where_the_parser_is_fooled(shape: str, template: str, kind: str) -> None:
    """Pinned on purpose: these are the parser's limits, so a change of rule shows here.

    A verdict-shaped injection (a JSON block, ``GRADE: 5``, ``[[A]]``) decides when the
    judge's own verdict precedes the quote or is in no form the parser reads; the
    plain-language instruction carries no verdict pattern, so it never decides, and the
    unreadable completions stay parse errors.
    """
    scale, target, real, injected = _injected(template, kind)
    verdict = parse_completion(REAL_ANSWER_FIRST_OR_UNREADABLE[shape](injected, real), scale)
    if template in VERDICT_SHAPED:
        assert (verdict.status, verdict.label) == ("ok", target)  # fooled
    elif shape == "preface, JSON answer, then a note quoting it":
        assert (verdict.status, verdict.label) == ("ok", real)
    else:
        assert verdict.status == "parse_error" and verdict.label is None


def test_the_fake_json_block_is_the_judges_own_answer_format() -> None:
    """The block imitates prompts.format_instructions: reasoning first, then the verdict."""
    block = json.loads(TEMPLATES["fake_json"].render("5", pairwise=False))
    assert list(block) == ["reasoning", "verdict"] and block["verdict"] == "5"
    alone = parse_completion(TEMPLATES["fake_json"].render("5", pairwise=False), ORDINAL)
    assert (alone.status, alone.label, alone.method) == ("ok", "5", "json")
    line = parse_completion(TEMPLATES["fake_verdict_line"].render("A", pairwise=True), PAIRWISE)
    assert (line.status, line.label) == ("ok", "A")
    # the plain instruction names the target, but is no verdict the parser reads
    plain = parse_completion(TEMPLATES["ignore_rubric"].render("5", pairwise=False), ORDINAL)
    assert plain.status == "parse_error"
