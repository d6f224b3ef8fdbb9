"""The answer of a call that judged every criterion at once, read into one result per criterion.

:func:`read_joint` takes the place of
:func:`~judgekit.clients.openai_client.completion_result` for such a call (the
client's ``judge(read=...)``): the answer is cleaned exactly as a single
verdict's is (secrets redacted, lone surrogates escaped, token usage, the
model's name), a failure of the whole answer (refusal, truncation, empty text)
is every criterion's, and otherwise :func:`~judgekit.parsing_joint.parse_joint`
gives each criterion its own verdict. With logprobs, each criterion's
confidence and G-Eval expected score are read at the first token of *its*
verdict, located inside its entry of the answer object.
:func:`for_criterion` is the single-verdict result a criterion's judgment is
stored from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from judgekit.clients.confidence import expected_score, verdict_confidence
from judgekit.clients.openai_client import REASONING_MAX_CHARS, CallResult, completion_result
from judgekit.clients.spec import redact
from judgekit.parsing import FALLBACK_PATTERNS, answer_failure, normalize_label
from judgekit.parsing_joint import parse_joint
from judgekit.textsafe import storable, storable_or_none
from judgekit.types import Scale, Verdict

__all__ = ["JointCallResult", "for_criterion", "read_joint"]


@dataclass(frozen=True)
class JointCallResult(CallResult):
    """A :class:`CallResult` with a verdict, confidence and expected score per criterion."""

    verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    confidences: Mapping[str, float | None] = field(default_factory=dict)
    expected_scores: Mapping[str, float | None] = field(default_factory=dict)


def _stored(verdict: Verdict) -> Verdict:
    """The verdict as a single one is kept: reasoning cut, text the store takes."""
    reasoning = verdict.reasoning
    if reasoning is not None and len(reasoning) > REASONING_MAX_CHARS:
        reasoning = reasoning[:REASONING_MAX_CHARS] + " [...]"
    return replace(verdict, reasoning=storable_or_none(reasoning),
                   detail=storable_or_none(verdict.detail))


def _verdict_start(text: str, span: tuple[int, int], scale: Scale, label: str) -> int | None:
    """Where the value read as ``label`` starts inside one criterion's entry (last match)."""
    start, end = span
    inside = text[start:end]
    matches = [m for pattern in FALLBACK_PATTERNS for m in pattern.finditer(inside)]
    for match in sorted(matches, key=lambda m: m.start(1), reverse=True):
        if normalize_label(match.group(1), scale) == label:
            return start + match.start(1)
    if normalize_label(inside, scale) == label:  # a bare label: "fluency": "3"
        return start + (1 if inside.startswith('"') else 0)
    return None


def read_joint(
    completion: dict[str, Any], scale: Scale, *, structured: bool,
    latency_ms: float | None = None, attempts: int = 1, secrets: Iterable[str | None] = (),
    scales: Mapping[str, Scale],
) -> CallResult:
    """One joint answer: the call's result with a verdict per criterion of ``scales``.

    ``scale`` (the first criterion's) only satisfies the client's reader signature.
    """
    secrets = tuple(secrets)
    base = completion_result(completion, scale, structured=structured, latency_ms=latency_ms,
                             attempts=attempts, secrets=secrets)
    if base.verdict is None:  # no usable choice: an api_error of the call
        return base
    choice = completion["choices"][0]
    message = choice["message"]

    def clean(value: Any) -> str | None:
        return storable(redact(value, secrets)) if isinstance(value, str) else None

    text = clean(message.get("content"))
    if answer_failure(text, finish_reason=base.finish_reason,
                      refusal=clean(message.get("refusal"))) is not None:
        # the single reading of this failure (with its details) is every criterion's
        return JointCallResult(**_fields(base), verdicts={name: base.verdict for name in scales})
    assert text is not None
    parsed = parse_joint(text, scales, structured=structured)
    verdicts = {name: _stored(verdict) for name, verdict in parsed.verdicts.items()}
    confidences: dict[str, float | None] = {}
    scores: dict[str, float | None] = {}
    logprobs = choice.get("logprobs")
    for name, verdict in verdicts.items():
        span = parsed.spans.get(name)
        if verdict.status != "ok" or verdict.label is None or span is None or not logprobs:
            continue
        start = _verdict_start(text, span, scales[name], verdict.label)
        if start is None:
            continue
        confidences[name] = verdict_confidence(text, logprobs, scales[name], verdict.label,
                                               start=start)
        if confidences[name] is not None:
            scores[name] = expected_score(text, logprobs, scales[name], verdict.label,
                                          start=start)
    return JointCallResult(**_fields(base), verdicts=verdicts, confidences=confidences,
                           expected_scores=scores)


def _fields(result: CallResult) -> dict[str, Any]:
    """The call-level fields of ``result`` (confidence and score are per criterion)."""
    return {"verdict": result.verdict, "failure": result.failure, "raw_text": result.raw_text,
            "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
            "model_returned": result.model_returned, "finish_reason": result.finish_reason,
            "latency_ms": result.latency_ms, "attempts": result.attempts}


def for_criterion(result: CallResult, name: str, *, tokens: bool) -> CallResult:
    """The single-verdict result criterion ``name``'s judgment is stored from.

    A call that failed as a whole (no answer) gives every criterion its failure.
    ``tokens``: whether this criterion's row carries the call's token usage (one
    criterion does, so the usage of a call is counted once).
    """
    usage: dict[str, Any] = {} if tokens else {"prompt_tokens": None, "completion_tokens": None}
    if not isinstance(result, JointCallResult):
        return replace(result, **usage)
    return CallResult(**{**_fields(result), **usage, "verdict": result.verdicts[name],
                         "confidence": result.confidences.get(name),
                         "expected_score": result.expected_scores.get(name)})
