"""Completion text -> :class:`~judgekit.types.Verdict` (a label on the scale, or a failure).

A judge's answer is data with a category: a refusal, a truncation or an
unparseable answer is recorded as such and never turned into a score. An answer
that opens with the requested JSON object has given its verdict there, so what
follows it (often a quotation of the judged text, which may imitate that very
format) cannot change it. Otherwise the *last* verdict in the text wins, so a
verdict quoted from the item (or injected into it) before the judge's own cannot
decide the outcome. A verdict that is not on the scale is a ``parse_error``; it
is never clamped or rounded.
Every rule is documented in ``docs/rubrics.md`` ("How verdicts are parsed").
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from judgekit.types import Scale, Verdict

#: Bumped whenever a rule below changes, which changes every cache key: the next run
#: re-judges (and pays for) every call, and old rows stay as history under their old keys.
#: "2": an answer that opens with a JSON verdict object is decided by that object.
PARSER_VERSION = "2"

#: JSON keys read as the verdict, in order of preference (case-insensitive).
VERDICT_KEYS = ("verdict", "score", "label", "grade", "rating", "winner")
#: JSON keys read as the reasoning (case-insensitive).
REASONING_KEYS = ("reasoning", "explanation", "rationale", "feedback")

#: A value copied from an options list ("A" or "B", pass|fail) is not a verdict.
_NOT_A_CHOICE = r"(?![A-Za-z0-9_.\-])(?![\"'`*\]]*\s*(?:or\b|\|))"
_VALUE = r"[\s*_\"'`\[\](]*([A-Za-z0-9][A-Za-z0-9_.\-]*)" + _NOT_A_CHOICE
#: Regex fallback patterns; over all of them together, the match starting last wins.
FALLBACK_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\[\[\s*([A-Za-z0-9][A-Za-z0-9_.\-]*)\s*\]\]" + _NOT_A_CHOICE),  # [[A]] (MT-Bench)
    re.compile(r"\[RESULT\]\s*:?" + _VALUE, re.IGNORECASE),  # [RESULT] 4 (Prometheus)
    re.compile(
        r"\b(?:final\s+)?(?:verdict|score|grade|rating|label|winner|decision)\b[\s*_\"'`]*[:=]"
        + _VALUE,
        re.IGNORECASE,
    ),  # verdict: X, "verdict": "X", Score: 4, GRADE: pass, **Verdict:** pass
)

REFUSAL_RE = re.compile(
    r"\b(?:I\s*(?:can(?:no|['’])t|cannot|won['’]t|will\s+not|am\s+(?:not\s+able|unable)"
    r"|['’]m\s+(?:not\s+able|unable))\s+(?:to\s+)?"
    r"(?:help|assist|comply|provide|do\s+that|evaluate|judge|answer)"
    r"|I\s*(?:must|have\s+to)\s+(?:decline|refuse)"
    r"|as\s+an\s+AI\b[^.]{0,80}\b(?:can(?:no|['’])t|cannot|unable))",
    re.IGNORECASE,
)

_DECODER = json.JSONDecoder()
#: The opening of a Markdown code fence (```json, ```JSON, ```), on its own line.
_FENCE_OPEN = re.compile(r"```[A-Za-z]*[ \t]*\r?\n")


def _label_map(scale: Scale) -> dict[str, str]:
    """Normalised spelling -> canonical label (case-insensitive; pairwise also 'Response A')."""
    mapping = {label.lower(): label for label in scale.labels}
    if scale.kind == "pairwise":
        for label in ("A", "B"):
            for prefix in ("response", "assistant", "answer", "output"):
                mapping[f"{prefix} {label.lower()}"] = label
    return mapping


def normalize_label(value: Any, scale: Scale) -> str | None:
    """The canonical label for ``value``, or None when it is not on the scale."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if scale.kind != "ordinal" or not math.isfinite(value) or value != int(value):
            return None
        value = str(int(value))
    if not isinstance(value, str):
        return None
    text = " ".join(value.strip().strip("\"'`*[]().,;!").split()).lower()
    if scale.kind == "ordinal":
        try:
            number = float(text)
        except ValueError:
            return None
        if not math.isfinite(number) or number != int(number):
            return None
        text = str(int(number))
    return _label_map(scale).get(text)


def _pick(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any] | None:
    lowered = {str(k).lower(): (k, v) for k, v in obj.items()}
    for key in keys:
        if key in lowered:
            return lowered[key]
    return None


def verdict_from_object(obj: dict[str, Any], scale: Scale, method: str) -> Verdict | None:
    """A verdict from a JSON object, or None when it has no verdict key at all."""
    found = _pick(obj, VERDICT_KEYS)
    if found is None:
        return None
    key, raw = found
    reasoning_entry = _pick(obj, REASONING_KEYS)
    reasoning = reasoning_entry[1] if reasoning_entry else None
    reasoning = reasoning if isinstance(reasoning, str) else None
    label = normalize_label(raw, scale)
    if label is None:
        return Verdict(
            status="parse_error",
            reasoning=reasoning,
            detail=f"{key} {json.dumps(raw)[:60]} is not on the scale ({', '.join(scale.labels)})",
            method=method,
        )
    return Verdict(status="ok", label=label, reasoning=reasoning, method=method)


def json_objects(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """Every top-level JSON object in ``text`` (code fences included): (start, end, object)."""
    objects: list[tuple[int, int, dict[str, Any]]] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            objects.append((pos, end, value))
        pos = text.find("{", end)
    return objects


def leading_object(text: str) -> dict[str, Any] | None:
    """The JSON object the answer opens with (bare or first in a code fence), if any.

    Only leading whitespace may come before it: a preface ("Here is my answer:")
    leaves the answer to the last-verdict rule, since prose can quote anything.
    """
    start = len(text) - len(text.lstrip())
    fence = _FENCE_OPEN.match(text, start)
    if fence is not None:
        start = fence.end()
        start += len(text[start:]) - len(text[start:].lstrip())
    if not text.startswith("{", start):
        return None
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _last_pattern_match(text: str) -> tuple[int, str] | None:
    """(start offset, raw value) of the verdict-looking match that starts last, if any."""
    last: tuple[int, str] | None = None
    for pattern in FALLBACK_PATTERNS:
        for match in pattern.finditer(text):
            if last is None or match.start() >= last[0]:
                last = (match.start(), match.group(1))
    return last


def _pattern_verdict(raw: str, scale: Scale) -> Verdict:
    if scale.kind == "pairwise" and raw.upper() == "C" and "tie" in scale.labels:
        raw = "tie"  # MT-Bench writes a tie as [[C]]
    label = normalize_label(raw, scale)
    if label is None:
        return Verdict(
            status="parse_error",
            detail=f"last verdict {raw!r} is not on the scale ({', '.join(scale.labels)})",
            method="regex",
        )
    return Verdict(status="ok", label=label, method="regex")


def _bare_verdict(text: str, scale: Scale) -> Verdict | None:
    """A completion that is nothing but a label (``"pass"``, ``"4."``, ``"**A**"``)."""
    label = normalize_label(text, scale)
    return None if label is None else Verdict(status="ok", label=label, method="regex")


def answer_failure(
    text: str | None, *, finish_reason: str | None = None, refusal: str | None = None
) -> Verdict | None:
    """What a whole answer failed as before any verdict is read (rules 1-3), else None.

    A refusal, a content filter, a truncation or an empty text: the same for every
    verdict the answer was asked for (one call judging several criteria fails for all).
    """
    if refusal:
        return Verdict(status="refusal", detail=refusal.strip()[:500])
    if finish_reason == "content_filter":
        return Verdict(status="refusal", detail="finish_reason=content_filter")
    if finish_reason == "length":
        return Verdict(
            status="truncated",
            detail="finish_reason=length: the completion hit max_tokens",
        )
    if text is None or not text.strip():
        return Verdict(status="parse_error", detail="empty completion")
    return None


def parse_completion(
    text: str | None,
    scale: Scale,
    *,
    finish_reason: str | None = None,
    refusal: str | None = None,
    structured: bool = False,
) -> Verdict:
    """Parse one completion against ``scale``; the rules, in order, are in docs/rubrics.md.

    ``structured=True`` says the endpoint enforced the verdict schema, which only
    changes the recorded ``method`` of a strict-JSON answer to ``"structured"``.
    """
    failed = answer_failure(text, finish_reason=finish_reason, refusal=refusal)
    if failed is not None:
        return failed
    assert text is not None

    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        verdict = verdict_from_object(whole, scale, "structured" if structured else "json")
        if verdict is not None:
            return verdict

    # An answer that opens with the requested object has answered; the rest is commentary.
    leading = leading_object(text)
    if leading is not None:
        verdict = verdict_from_object(leading, scale, "json")
        if verdict is not None:
            return verdict

    # Whatever verdict comes last in the text wins: a JSON object with a verdict
    # key, or a pattern match that starts after that object ends.
    candidates = [(end, obj) for _, end, obj in json_objects(text) if _pick(obj, VERDICT_KEYS)]
    pattern = _last_pattern_match(text)
    if candidates and (pattern is None or pattern[0] < candidates[-1][0]):
        verdict = verdict_from_object(candidates[-1][1], scale, "json")
        if verdict is not None:
            return verdict
    if pattern is not None:
        return _pattern_verdict(pattern[1], scale)
    verdict = _bare_verdict(text, scale)
    if verdict is not None:
        return verdict
    if REFUSAL_RE.search(text):
        return Verdict(status="refusal", detail=text.strip()[:500])
    return Verdict(
        status="parse_error",
        detail=f"no verdict found (expected one of {', '.join(scale.labels)})",
    )
