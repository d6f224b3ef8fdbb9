"""From store rows to aligned arrays: one judge verdict and one human reference per item.

Choices made here, documented in docs/reports.md:

- the judge's verdict for an item is its plain presentation (variant ``""``) at the
  lowest sample index; probe variants and repeats are the bias section's business;
- a failed judgment is never a label: the item is counted and left out of agreement;
- the human reference is one annotator's label when ``annotator`` is given or only one
  labeled the item, otherwise the majority label (ordinal: the lower median); an item
  whose annotators tie with no majority is left out and counted. Which labels take
  part (blind only, adjudications first) is :mod:`judgekit.report.reference`;
  ``--reference`` and the judge's own scores (the numbers correlations compare) are
  :mod:`judgekit.report.measures`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from judgekit.report.measures import (
    default_reference,
    judge_numbers,
    level_values,
    reference_level,
    reference_number,
    reference_sentence,
    score_outside,
)
from judgekit.store.columns import ItemFacts, JudgmentRow
from judgekit.types import Item, Judgment, Scale

ItemKey = tuple[str, str]  # (dataset, item_id)
#: A full judgment or the lean row a report reads (the same attribute names).
AnyJudgment = Judgment | JudgmentRow
J = TypeVar("J", Judgment, JudgmentRow)
#: A full item or the facts (prompt, grouping fields) a report reads.
AnyItem = Item | ItemFacts


def select_judgments(
    judgments: Iterable[J], keys: Mapping[ItemKey, ItemKey] | None = None
) -> dict[ItemKey, J]:
    """One judgment per item: the plain variant at the lowest sample index, latest row wins.

    ``keys`` (item key -> the caller's key object, for every judged item) keys the
    result by the caller's key objects instead of new tuples.
    """
    chosen: dict[ItemKey, J] = {}
    for j in judgments:  # insertion order: a later row replaces an earlier one
        if j.variant != "":
            continue
        key = (j.dataset, j.item_id)
        if keys is not None:
            key = keys[key]
        current = chosen.get(key)
        if current is None or j.sample_index <= current.sample_index:
            chosen[key] = j
    return chosen


def reference_label(
    by_annotator: Mapping[str, str], scale: Scale, reference: str | None = None
) -> str | None:
    """The human reference level for one item (None when annotators tie with no majority).

    ``reference`` is ``--reference`` (None: the scale's default, lower median for
    ordinal scales, majority otherwise); see :mod:`judgekit.report.measures`.
    """
    return reference_level(by_annotator, scale, reference or default_reference(scale))


def reference_rule_of(
    scale: Scale, reference: str | None = None
) -> Callable[[Mapping[str, str]], str | None]:
    """:func:`reference_label` for ``scale``, computed once per distinct labels mapping.

    The human reference shares one dict among items labeled alike, so a pass over
    100,000 items meets a few dozen mappings. The memo is keyed by the mapping's
    identity and holds the mapping, so no id is reused while it lives; use the
    function for one pass over mappings that do not change meanwhile.
    """
    memo: dict[int, tuple[Mapping[str, str], str | None]] = {}
    chosen = reference or default_reference(scale)

    def rule(by_annotator: Mapping[str, str]) -> str | None:
        found = memo.get(id(by_annotator))
        if found is None:
            found = memo[id(by_annotator)] = (
                by_annotator, reference_level(by_annotator, scale, chosen)
            )
        return found[1]

    return rule


def reference_rule(
    annotator: str | None, max_annotators: int, scale: Scale, reference: str | None = None
) -> str:
    """How the reference per item was formed, in words (every output format shows it)."""
    return reference_sentence(
        reference or default_reference(scale), scale, annotator, max_annotators
    )


@dataclass
class Pairing:
    """Aligned judge/human labels for items with an ok judgment and a human reference."""

    keys: list[ItemKey] = field(default_factory=list)
    judge: list[str] = field(default_factory=list)
    human: list[str] = field(default_factory=list)
    failed: list[tuple[ItemKey, str, AnyJudgment]] = field(default_factory=list)  # (key, human, j)
    no_judgment: int = 0
    no_majority: int = 0
    #: ``--reference`` as applied (majority, median or mean)
    reference: str = "majority"
    #: the numbers correlations and means compare: the judge's score (its own finite
    #: ``score``, else its label's value) and the human reference number (the mean of the
    #: annotators' values with ``--reference mean``, else the reference level's value)
    judge_values: list[float] = field(default_factory=list)
    human_values: list[float] = field(default_factory=list)
    #: compared items whose judge score differs from its label's value
    n_scored: int = 0
    #: compared items whose stored score is off the scale (its label's value used instead)
    n_score_outside: int = 0


def pair_up(
    judgments: Mapping[ItemKey, AnyJudgment],
    references: Mapping[ItemKey, Mapping[str, str]],
    scale: Scale,
    reference: str | None = None,
) -> Pairing:
    """Align verdicts with human references; failures and gaps are counted, never scored.

    Besides the two label lists, the pairing holds the numbers the numeric figures
    compare (:mod:`judgekit.report.measures`): the judge's score and the human
    reference number under ``reference`` (None: the scale's default).
    """
    chosen = reference or default_reference(scale)
    out = Pairing(reference=chosen)
    valid = scale.label_set
    rule = reference_rule_of(scale, chosen)
    numbers = level_values(scale) if scale.kind == "ordinal" else {}
    number = judge_numbers(numbers) if numbers else None
    for key in sorted(references):
        by_annotator = references[key]
        ref = rule(by_annotator)
        if ref is None:
            out.no_majority += 1
            continue
        judgment = judgments.get(key)
        if judgment is None:
            out.no_judgment += 1
            continue
        if judgment.status != "ok" or judgment.label is None or judgment.label not in valid:
            out.failed.append((key, ref, judgment))
            continue
        out.keys.append(key)
        out.judge.append(judgment.label)
        out.human.append(ref)
        if number is not None:
            value = number(judgment.label, judgment.score)
            out.n_scored += value != numbers[judgment.label]
            out.n_score_outside += score_outside(judgment.score, numbers)
            out.judge_values.append(value)
            out.human_values.append(reference_number(by_annotator, ref, chosen, numbers))
    return out


#: The note a report (or ``agree --rubric``) adds when ``default_cluster_by`` chose the prompt.
PROMPT_CLUSTER_NOTE = (
    "Items share prompts and have no cluster field, so intervals resample whole prompts "
    "(answers to one prompt are not independent); --cluster-by item turns this off."
)


def default_cluster_by(
    requested: str | None, keys: list[ItemKey], items: Mapping[ItemKey, AnyItem]
) -> str | None:
    """``--cluster-by`` as given; else ``cluster`` when items have one, else ``prompt`` when
    two compared items share an input (their answers are not independent), else None."""
    if requested is not None:
        return requested
    present = [items[k] for k in keys if items.get(k) is not None]
    if any(item.cluster for item in present):
        return "cluster"
    inputs = [item.input for item in present]
    return "prompt" if len(set(inputs)) < len(inputs) else None


def cluster_ids(
    keys: Sequence[ItemKey], items: Mapping[ItemKey, AnyItem], cluster_by: str
) -> list[str]:
    """Cluster id per item from ``cluster``, ``prompt`` (the input), ``slice``, ``meta.NAME``
    or a bare meta key.

    An item without the field is its own cluster (it shares nothing known).
    """
    ids = []
    field_name = cluster_by[5:] if cluster_by.startswith("meta.") else cluster_by
    for key in keys:
        item = items.get(key)
        value: object = None
        if item is not None:
            if cluster_by == "cluster":
                value = item.cluster
            elif cluster_by == "prompt":
                value = item.input
            elif cluster_by == "slice":
                value = item.slice
            else:
                value = item.meta.get(field_name)
        ids.append(f"v:{value}" if value is not None else f"item:{key[0]}/{key[1]}")
    return ids
