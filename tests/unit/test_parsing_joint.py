"""One answer with a verdict per criterion: the answer object, and failures per criterion."""

from __future__ import annotations

import json

import pytest

from judgekit.parsing_joint import parse_joint
from judgekit.types import Scale, ScaleLevel


def ordinal(top: int) -> Scale:
    return Scale("ordinal", tuple(ScaleLevel(str(n), str(n), f"level {n}", float(n))
                                  for n in range(1, top + 1)))


SCALES = {"coherence": ordinal(5), "fluency": ordinal(3), "relevance": ordinal(5)}
ANSWER = {"coherence": {"reasoning": "Ordered.", "verdict": "4"},
          "fluency": {"reasoning": "Slips.", "verdict": "2"},
          "relevance": {"reasoning": "On point.", "verdict": "5"}}


def outcome(text: str | None, **kw: object) -> dict[str, tuple[str, str | None]]:
    found = parse_joint(text, SCALES, **kw)  # type: ignore[arg-type]
    return {name: (v.status, v.label) for name, v in found.verdicts.items()}


def test_a_strict_answer_gives_every_criterion_its_verdict_and_reasoning() -> None:
    found = parse_joint(json.dumps(ANSWER), SCALES, structured=True)
    assert {n: v.label for n, v in found.verdicts.items()} == {
        "coherence": "4", "fluency": "2", "relevance": "5"}
    assert found.verdicts["fluency"].reasoning == "Slips."
    assert {v.method for v in found.verdicts.values()} == {"structured"}
    text = json.dumps(ANSWER)
    start, end = found.spans["relevance"]
    assert json.loads(text[start:end]) == ANSWER["relevance"]


def test_failures_stay_with_their_criterion() -> None:
    answer = {**ANSWER, "fluency": {"reasoning": "x", "verdict": "4"}}  # off a 1-3 scale
    del answer["relevance"]
    found = parse_joint(json.dumps(answer), SCALES)
    assert found.verdicts["coherence"].label == "4"
    assert found.verdicts["fluency"].status == "parse_error"
    assert "criterion 'fluency'" in (found.verdicts["fluency"].detail or "")
    assert found.verdicts["relevance"].status == "parse_error"
    assert "missing" in (found.verdicts["relevance"].detail or "")
    no_verdict = {**ANSWER, "coherence": {"reasoning": "only words"}}
    assert outcome(json.dumps(no_verdict))["coherence"] == ("parse_error", None)


@pytest.mark.parametrize("text", [
    # a reasoning model drafts an object in its think block; the answer comes last
    '<think>First guess {"coherence": {"verdict": "1"}}</think>\n' + json.dumps(ANSWER),
    # a fenced answer, then commentary quoting another object
    "```json\n" + json.dumps(ANSWER) + '\n```\nI avoided {"coherence": {"verdict": "1"}}.',
    # case-insensitive names, bare labels, numbers
    '{"Coherence": 4, "FLUENCY": {"score": 2}, "relevance": "5"}',
    # one wrapping object
    json.dumps({"scores": ANSWER}),
])
def test_the_answer_object_is_found_as_a_single_verdict_is(text: str) -> None:
    assert outcome(text) == {"coherence": ("ok", "4"), "fluency": ("ok", "2"),
                             "relevance": ("ok", "5")}


def test_whole_answer_failures_are_every_criterion_s() -> None:
    assert set(outcome("Good summary, I'd say a four.").values()) == {("parse_error", None)}
    assert set(outcome("I can't help with that.").values()) == {("refusal", None)}
    assert set(outcome(json.dumps(ANSWER), finish_reason="length").values()) == {
        ("truncated", None)}
    assert set(outcome(None, refusal="No.").values()) == {("refusal", None)}
    assert set(outcome("   ").values()) == {("parse_error", None)}
    # an object that names no criterion is no answer
    assert set(outcome('{"verdict": "4"}').values()) == {("parse_error", None)}
