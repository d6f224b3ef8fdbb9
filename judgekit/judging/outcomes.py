"""A judge call's outcome as the judgment row the store keeps.

One function turns a :class:`~judgekit.clients.openai_client.CallResult` into a
:class:`~judgekit.types.Judgment`, for the live runner and for Batch API output
alike: the label mapped back for a swapped pair, the score by the scale's one
rule, the error text of a failure, tokens, finish reason and confidence. A batch
judgment therefore differs from a live one only in its run (its provenance).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgekit import __version__
from judgekit.types import Judgment, Rubric

if TYPE_CHECKING:
    from judgekit.clients.openai_client import CallResult

__all__ = ["CallRef", "judgment_of", "utc_now"]

_SWAP = {"A": "B", "B": "A"}


def utc_now() -> str:
    """The timestamp stored on judgments and runs (UTC, microseconds)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class CallRef:
    """Which call an outcome belongs to: everything of its row that is not the answer.

    ``item_hash`` is the content hash of the original item (a swapped pair's
    source), so the judgment matches the dataset; ``swap_labels`` maps a
    pairwise verdict back (A<->B) to the item's own orientation.
    """

    item_id: str
    variant: str
    sample: int
    key: str
    item_hash: str
    swap_labels: bool = False


def _score(result: CallResult, rubric: Rubric, label: str | None) -> float | None:
    """The logprob-weighted expected score when the call measured one, else the label's value.

    A swapped pair's label is mapped back above; an expected score exists only for
    ordinal scales, which have no swapped presentation, so it needs no mapping.
    """
    found = getattr(result, "expected_score", None)
    return float(found) if found is not None else rubric.scale.score_of(label)


def judgment_of(
    result: CallResult, call: CallRef, *, rubric: Rubric, run_id: str, dataset: str,
    model: str, endpoint: str, sampling: Mapping[str, Any],
) -> Judgment:
    """The stored judgment of one call's ``result``; ``endpoint`` is credential-free."""
    verdict = result.verdict
    label = verdict.label if verdict is not None else None
    if label is not None and call.swap_labels:
        label = _SWAP.get(label, label)
    if verdict is not None:
        error = verdict.detail if verdict.status != "ok" else None
    else:
        error = result.failure.message if result.failure else None
    return Judgment(
        run_id=run_id, dataset=dataset, item_id=call.item_id,
        sample_index=call.sample, status=result.status,  # type: ignore[arg-type]
        label=label, score=_score(result, rubric, label),
        reasoning=verdict.reasoning if verdict is not None else None,
        raw_text=result.raw_text, model_requested=model,
        model_returned=result.model_returned, base_url=endpoint,
        sampling=dict(sampling), rubric_name=rubric.name,
        rubric_version=rubric.version, rubric_hash=rubric.sha256,
        cache_key=call.key, variant=call.variant, prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens, latency_ms=result.latency_ms,
        finish_reason=result.finish_reason, error=error,
        judgekit_version=__version__, created_at=utc_now(),
        item_hash=call.item_hash, confidence=result.confidence,
    )
