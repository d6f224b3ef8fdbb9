"""Population weighting: which labeling queue to weight by, and what the verdict then reads.

Labels drawn from a non-uniform queue over-represent some items. This module
finds the queue whose inclusion probabilities apply, computes the
inverse-probability-weighted section, and picks the figure the verdict reads,
so the gate describes the dataset rather than the labeled sample.
"""

from __future__ import annotations

from typing import Any

from judgekit.errors import InputError
from judgekit.report import sections
from judgekit.report._format import num
from judgekit.report.model import Stat, Weighted
from judgekit.report.pairing import ItemKey, Pairing
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.store import Store
from judgekit.types import Rubric

QueueWeights = tuple[dict[str, Any], dict[ItemKey, float], dict[ItemKey, str | None]]


def _is_uniform(probs: dict[ItemKey, float]) -> bool:
    """Whether every item had the same inclusion probability (to 12 decimals)."""
    return len({round(p, 12) for p in probs.values()}) <= 1


def pick_queue(
    store: Store, rubric: Rubric, name: str | None, dataset: str | None = None
) -> QueueWeights | None:
    """The queue to weight by: its metadata, inclusion probabilities and strata per item.

    A named queue is always used (and must exist); otherwise the latest queue of the
    rubric whose probabilities are not all equal, since uniform weights change nothing.
    """
    names = [name] if name else store.list_queues(rubric.sha256)
    for candidate in reversed(names):
        found = store.get_queue(candidate)
        if found is None:
            if name:
                raise InputError(f"no labeling queue named {name!r} in the store")
            continue
        meta, entries = found
        entries = [e for e in entries if dataset is None or e.dataset == dataset]
        probs = {(e.dataset, e.item_id): float(e.inclusion_prob) for e in entries}
        strata = {(e.dataset, e.item_id): e.stratum for e in entries}
        if name or not _is_uniform(probs):
            return meta, probs, strata
    return None


def weighted_section(
    store: Store,
    rubric: Rubric,
    pairing: Pairing,
    spec: IntervalSpec,
    primary: str,
    queue_name: str | None,
    dataset: str | None,
) -> tuple[Weighted | None, bool]:
    """The weighted estimates (None without a queue) and whether the queue is uniform."""
    queue = pick_queue(store, rubric, queue_name, dataset)
    if queue is None:
        return None, True
    meta, probs, strata = queue
    weighted = sections.weighted_estimates(
        pairing,
        probs,
        rubric.scale,
        spec,
        primary,
        str(meta.get("name")),
        str(meta.get("strategy")),
        strata=strata,
    )
    return weighted, _is_uniform(probs)


def verdict_statistic(
    primary: str, unweighted: Stat, weighted: Weighted | None, uniform_queue: bool
) -> tuple[Stat, str | None, bool]:
    """The figure the verdict reads and, when it is not the plain primary, why.

    Labels drawn from a non-uniform queue over-represent some items, so the
    unweighted figure describes the labeled sample, not the dataset: the verdict
    then reads the inverse-probability-weighted (population) estimate.
    """
    if weighted is None or uniform_queue:
        return unweighted, None, False
    key = "percent_agreement" if primary in sections.AGREEMENT_SHARES else primary
    stat = weighted.stats.get(key)
    if stat is None:
        return (
            unweighted,
            f"Labels came from the non-uniform queue {weighted.queue!r}, but {primary} has no "
            "weighted version, so this verdict describes the labeled sample, not the dataset.",
            False,
        )
    return (
        stat,
        "Read from the population estimate: labels came from the non-uniform queue "
        f"{weighted.queue!r}, so each item is weighted by 1/its inclusion probability "
        f"(unweighted {num(unweighted.statistic)} on the labeled sample).",
        True,
    )


__all__ = ["QueueWeights", "pick_queue", "verdict_statistic", "weighted_section"]
