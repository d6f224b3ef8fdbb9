"""Frozen domain types shared by every layer (no I/O here).

These are the nouns of judgekit: an :class:`Item` to be judged, a
:class:`Rubric` with its :class:`Scale`, the :class:`Judgment` a judge produced
(or the failure category it ended in), and a human :class:`Label`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

ScaleKind = Literal["binary", "ordinal", "categorical", "pairwise"]
SCALE_KINDS: tuple[ScaleKind, ...] = ("binary", "ordinal", "categorical", "pairwise")

Status = Literal[
    "ok", "parse_error", "refusal", "truncated", "rate_limited", "timeout", "api_error"
]
#: Every status a judgment can end in, in report order.
STATUSES: tuple[Status, ...] = (
    "ok", "parse_error", "refusal", "truncated", "rate_limited", "timeout", "api_error"
)
#: Failures where the model never answered: retried on the next run.
TRANSIENT_STATUSES: frozenset[str] = frozenset({"rate_limited", "timeout", "api_error"})
#: Failures where the model did answer (a paid call): cached like a success,
#: re-judged only with ``--retry-failed`` or ``--force``.
ANSWERED_FAILURES: frozenset[str] = frozenset({"parse_error", "refusal", "truncated"})

#: Presentation variants of an item. ``""`` is the item as written; probes add
#: others ("swapped" = A/B exchanged, "pad25"/"pad50"/"pad100" = filler added,
#: "reversed_levels" = rubric levels listed in reverse order, "sample" = one of the samples
#: a rubric's ``[sampling]`` votes over, see ``judgekit.judging.voting``).
DEFAULT_VARIANT = ""
#: The variant of a pair shown with A and B exchanged (its label is mapped back).
SWAPPED_VARIANT = "swapped"


def canonical_json(value: Any) -> str:
    """Deterministic JSON (sorted keys, no whitespace) used for every hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ScaleLevel:
    """One allowed verdict: its canonical label, the key that picks it, its meaning."""

    label: str
    key: str
    description: str = ""
    value: float | None = None  # numeric value for ordinal levels


@dataclass(frozen=True)
class Scale:
    """The verdicts a rubric allows, in order.

    binary: labels ``pass``/``fail`` (keys p/f); ordinal: ``"1"``..``"5"`` with
    numeric values (keys 1-5); categorical: named labels (keys 1..n); pairwise:
    ``A``/``B``/``tie`` (keys a/b/t).
    """

    kind: ScaleKind
    levels: tuple[ScaleLevel, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(level.label for level in self.levels)

    @cached_property
    def label_set(self) -> frozenset[str]:
        """The labels as a set, made once per scale: checking 100,000 verdicts or labels
        against the scale is then one lookup each, not a scan of the levels."""
        return frozenset(self.labels)

    def level(self, label: str) -> ScaleLevel | None:
        for candidate in self.levels:
            if candidate.label == label:
                return candidate
        return None

    def is_valid(self, label: str) -> bool:
        return label in self.label_set

    def value_of(self, label: str) -> float | None:
        """Numeric value of a label (ordinal only); None for other kinds."""
        found = self.level(label)
        return None if found is None else found.value

    def score_of(self, label: str | None) -> float | None:
        """The score stored with a verdict: ordinal level value, binary pass=1/fail=0, else None.

        One rule for every writer of judgments, so a judged and an imported
        verdict with the same label carry the same score.
        """
        if label is None:
            return None
        if self.kind == "binary":
            return 1.0 if label == "pass" else 0.0
        return self.value_of(label)


@dataclass(frozen=True)
class Example:
    """A labeled item shown to the judge inside its prompt (few-shot): the human's verdict.

    Kept in the rubric file with the item's text, so the rubric stays self-contained
    and its hash covers exactly what the judge sees; ``item_id`` (and ``dataset``)
    record where it came from, so nobody can use it again as held-out evidence.
    """

    item_id: str
    label: str
    input: str = ""
    response: str | None = None
    response_a: str | None = None
    response_b: str | None = None
    note: str = ""
    dataset: str = ""


@dataclass(frozen=True)
class Rubric:
    """A validated rubric; ``sha256`` of its canonical content is its identity."""

    name: str
    version: str
    description: str
    scale: Scale
    system_prompt: str
    user_prompt: str
    sha256: str
    source_text: str
    path: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    #: Markdown for human annotators (never sent to the judge); shown by ``annotate``
    guidelines: str = ""
    #: sha256 of the rubric this version was derived from (``judgekit align``), else ""
    parent: str = ""
    #: what changed from the parent, in words
    changes: str = ""
    #: few-shot examples rendered through ``{examples}`` or after the instructions
    examples: tuple[Example, ...] = ()
    #: how ``annotate`` shows items (rubric ``[display]``): ``titles`` (section -> title),
    #: ``meta`` (meta fields shown as sections), ``show_id`` (ids safe to show when blind)
    display: Mapping[str, Any] = field(default_factory=dict)
    #: self-consistency voting the rubric declares (``[sampling]``), else None
    voting: Voting | None = None


@dataclass(frozen=True)
class Voting:
    """A rubric's ``[sampling]`` table: judge each item ``samples`` times at ``temperature``
    (no seed) and take ``aggregate`` of the samples as the judge's one verdict."""

    samples: int
    temperature: float
    aggregate: str = "majority"


@dataclass(frozen=True)
class Item:
    """One thing to judge: a response (pointwise) or a pair of responses."""

    id: str
    input: str
    response: str | None = None
    response_a: str | None = None
    response_b: str | None = None
    reference: str | None = None
    slice: str | None = None
    cluster: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_pairwise(self) -> bool:
        return self.response_a is not None and self.response_b is not None

    @property
    def source_group(self) -> str | None:
        """The items this one is not independent of: its ``cluster``, else its prompt (None
        with neither: it shares nothing known). What a p-value by prompt counts."""
        return self.cluster if self.cluster is not None else (self.input or None)

    @property
    def content_hash(self) -> str:
        """sha256 of everything a judge sees, so an edited item is re-judged."""
        return sha256_text(
            canonical_json(
                {
                    "input": self.input,
                    "response": self.response,
                    "response_a": self.response_a,
                    "response_b": self.response_b,
                    "reference": self.reference,
                    "meta": dict(self.meta),
                }
            )
        )


@dataclass(frozen=True)
class SamplingParams:
    """Sampling parameters, always sent explicitly (servers' defaults differ).

    The last three are for models that need them (OpenAI's reasoning models):
    ``max_completion_tokens`` replaces ``max_tokens`` in the request;
    ``reasoning_effort`` is sent where the endpoint accepts it; ``extra_body`` is
    the canonical JSON of an object merged into every request. They are part of
    :meth:`as_dict` (and so of the cache key) only when set, so judges that do
    not use them keep their keys.
    """

    temperature: float = 0.0
    max_tokens: int = 512
    top_p: float = 1.0
    seed: int | None = 0
    max_completion_tokens: int | None = None
    reasoning_effort: str | None = None
    extra_body: str | None = None
    #: self-consistency voting (:mod:`judgekit.judging.voting`): the canonical JSON of
    #: ``{"aggregate": ..., "samples": K}``; never sent, but in the key and the provenance
    vote: str | None = None

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "seed": self.seed,
        }
        if self.max_completion_tokens is not None:
            found["max_completion_tokens"] = self.max_completion_tokens
        if self.reasoning_effort is not None:
            found["reasoning_effort"] = self.reasoning_effort
        if self.extra_body is not None:
            found["extra_body"] = self.extra_body
        if self.vote is not None:
            found["vote"] = json.loads(self.vote)
        return found


@dataclass(frozen=True)
class Verdict:
    """What parsing a completion produced: a label on the scale, or a failure."""

    status: Status
    label: str | None = None
    reasoning: str | None = None
    detail: str | None = None  # why parsing failed, for parse_error/refusal
    method: str | None = None  # "structured" | "json" | "regex"


@dataclass(frozen=True)
class Judgment:
    """One judge call's outcome with its full provenance (one row in the store)."""

    run_id: str
    dataset: str
    item_id: str
    sample_index: int
    status: Status
    label: str | None
    score: float | None
    reasoning: str | None
    raw_text: str | None
    model_requested: str
    model_returned: str | None
    base_url: str
    sampling: Mapping[str, Any]
    rubric_name: str
    rubric_version: str
    rubric_hash: str
    cache_key: str
    variant: str = DEFAULT_VARIANT
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    finish_reason: str | None = None
    error: str | None = None
    judgekit_version: str = ""
    created_at: str = ""
    item_hash: str = ""
    imported: bool = False
    #: P(verdict) from the judge's logprobs, renormalised over the scale's labels
    #: (see ``judgekit.clients.confidence``); None when the endpoint gave none.
    confidence: float | None = None


def primary_model(counts: Mapping[str, int]) -> str:
    """The primary judge: the model with the most successful judgments (ties: first by name)."""
    return min(counts, key=lambda model: (-counts[model], model))


def majority_label(labels: Sequence[str]) -> str | None:
    """Most common label; ties go to the label seen first (stable)."""
    if not labels:
        return None
    counts = Counter(labels)
    best = max(counts.values())
    return next(label for label in labels if counts[label] == best)


#: ``Label.source`` of a label written by ``annotate --adjudicate``: the item's
#: reference label in reports, kept apart from the annotators' own labels.
ADJUDICATED_SOURCE = "adjudicate"


@dataclass(frozen=True)
class Label:
    """One human label. Labels are append-only; the latest per key wins."""

    dataset: str
    item_id: str
    rubric_hash: str
    annotator: str
    label: str | None  # None = skipped
    note: str | None = None
    flagged: bool = False
    blind: bool = True
    seconds: float | None = None
    created_at: str = ""
    source: str = "annotate"  # "annotate" | "import" | ADJUDICATED_SOURCE
