"""promptfoo's named metrics in its CSV output: each metric's score as a grader's verdict.

An assertion with ``metric: NAME`` adds its score to the test's ``namedScores``
(the weighted mean of the scores of the test's assertions with that name; promptfoo's
``AssertionsResult``). promptfoo's CSV writes these per prompt as ``Named Scores`` (a
JSON object, each score rounded to 2 places) and one ``Metric: NAME`` column per name
(sorted; the score with ``toFixed(2)``, blank where the test has no such assertion).
Older releases (0.118) wrote them into the cell: ``[PASS] (1.00, NAME: 1.00, ...)``.

The CSV keeps each metric's score, not the assertion's ``pass`` nor its ``threshold``
(an ``llm-rubric``'s pass is the grader's ``pass``, and with a threshold also
``score >= threshold``), so the verdict is read from what the row holds:

- binary rubric: a test whose ``Status`` is ``PASS`` with promptfoo's "All assertions
  passed" passed every assertion, so each of its metrics is the first (pass) label;
  otherwise a score of at least :data:`PASS_SCORE` is pass, below it fail;
- ordinal rubric: the score (0..1, the range promptfoo's grading prompts ask for) placed
  on the scale's range, ``low + score * (high - low)``, and the nearest level (a tie
  goes to the higher level); that number is the verdict's score.

A binary verdict's score is promptfoo's score as it is. A score outside 0..1 is not
a grader's 0..1 score and is refused with its line: the JSON output holds each
assertion's own pass.
"""

from __future__ import annotations

import math
import re
from typing import Any

from judgekit.errors import InputError
from judgekit.io.tool_shape import At
from judgekit.types import Scale

#: The judge of a named metric's verdicts: ``promptfoo-csv:<metric>`` (no grader model).
JUDGE_PREFIX = "promptfoo-csv:"
#: The lowest score read as pass where the row does not say the assertion passed.
PASS_SCORE = 0.5
#: promptfoo's reason of a test that passed every assertion (no threshold, no scoring
#: function deciding instead).
ALL_PASSED = "All assertions passed"
#: A number as JavaScript's ``toFixed`` (or a spreadsheet's re-save) writes it.
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
#: What ``toFixed`` gives for a missing or not-a-number value: no score.
_NO_SCORE = ("", "undefined", "NaN", "null")
#: One ``NAME: SCORE`` of an older release's ``(SCORE, NAME: SCORE, ...)``.
_LEGACY_SCORE = re.compile(r"(.+?): ([^,\s]+)(?:, |$)", re.DOTALL)


def judge_of(metric: str) -> str:
    return JUDGE_PREFIX + metric


def legacy_scores(at: At, named: str) -> dict[str, str]:
    """``NAME: SCORE, ...`` of an older release's status cell as metric -> score text."""
    found: dict[str, str] = {}
    position = 0
    while position < len(named):
        match = _LEGACY_SCORE.match(named, position)
        if match is None:
            at.fail(f"expected 'NAME: SCORE, ...' after the score, got {named[position:][:40]!r}")
        found[match.group(1)] = match.group(2)
        position = match.end()
    return found


def metric_verdict(at: At, metric: str, cell: str, scale: Scale, *, status: str,
                   reason: str) -> dict[str, Any] | None:
    """The verdict record (without item and sample) of one metric's cell, None when blank."""
    text = cell.strip()
    if text in _NO_SCORE:
        return None
    score = _score(at, text)
    passed = status == "PASS" and reason == ALL_PASSED
    label, number = _label(score, scale, passed)
    return {"judge": judge_of(metric), "label": label, "score": number, "reasoning": None,
            "raw": {"metric": metric, "score": score, "status": status,
                    "reason": reason or None}}


def _score(at: At, text: str) -> float:
    if not _NUMBER.fullmatch(text):
        at.fail(f"expected the metric's score (a number such as 0.75), got {text[:40]!r}")
    score = float(text)
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        at.fail(f"score {text} is outside 0..1, the range of promptfoo's graders; read "
                "this metric from promptfoo's JSON output (-o results.json), which holds "
                "each assertion's own pass")
    return score


def _label(score: float, scale: Scale, passed: bool) -> tuple[str, float]:
    """The verdict's label and score on the rubric's scale (module docstring)."""
    if scale.kind == "binary":
        good = passed or score >= PASS_SCORE
        return (scale.labels[0] if good else scale.labels[1]), score
    if scale.kind == "ordinal":
        levels = [(level.value, level.label) for level in scale.levels
                  if level.value is not None]
        if levels:
            low, high = min(v for v, _ in levels), max(v for v, _ in levels)
            number = low + score * (high - low)
            # nearest level; of two equally near, the higher
            _, label = min(levels, key=lambda vl: (abs(vl[0] - number), -vl[0]))
            return label, number
    raise InputError(f"promptfoo's metric scores are 0..1: use a binary rubric (pass from "
                     f"{PASS_SCORE}) or an ordinal one (this one is {scale.kind})")
