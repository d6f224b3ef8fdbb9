"""Population weighting: which labeling queue to weight by, and what the verdict then reads.

Labels drawn from a non-uniform queue over-represent some items. This module
finds the queue whose inclusion probabilities apply, computes the
inverse-probability-weighted section, and picks the figure the verdict reads,
so the gate describes the dataset rather than the labeled sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.errors import InputError
from judgekit.report._format import num
from judgekit.report.model import Stat, Weighted
from judgekit.report.pairing import ItemKey, Pairing
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat
from judgekit.store import Store
from judgekit.types import Rubric, Scale

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
    A queue drawn for a whole multi-criteria file is a queue of each of its criteria: it
    drew the items every criterion's labels come from.
    """
    from judgekit.store.queues import QueueMatch

    names = [name] if name else [
        head.name for head in store.queue_heads(QueueMatch.of([rubric.sha256]))]
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
    weighted = weighted_estimates(
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
    key = "percent_agreement" if primary in AGREEMENT_SHARES else primary
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


#: Primary statistics with a weighted (inverse-probability) version in the weighted section.
WEIGHTED_TABLE_STATS = ("cohen_kappa", "weighted_kappa", "gwet_ac1")
#: Primary statistics that are plain shares of agreeing items.
AGREEMENT_SHARES = ("percent_agreement", "exact_agreement", "agreement_with_ties")


def _weighted_table_fn(name: str, k: int) -> Any:
    """Statistic of weighted confusion tables, from the same code as :mod:`judgekit.stats`."""
    from judgekit.stats import _tables

    w = _tables.agreement_weights(k, "quadratic" if name == "weighted_kappa" else None)

    def fn(ji: Any, hi: Any, wt: Any) -> npt.NDArray[np.float64]:
        b = ji.shape[0]
        cells = (np.arange(b)[:, None] * k * k + ji * k + hi).ravel()
        counts = np.bincount(cells, weights=wt.ravel(), minlength=b * k * k)
        tables = counts.reshape(b, k, k).astype(np.float64)
        if name == "gwet_ac1":
            return _tables.gwet_from_tables(tables)[0]
        return _tables.cohen_from_tables(tables, w)[0]

    return fn


def weighted_estimates(
    pairing: Pairing,
    inclusion: Mapping[ItemKey, float],
    scale: Scale,
    spec: IntervalSpec,
    primary: str,
    queue: str,
    strategy: str,
    strata: Mapping[ItemKey, str | None] | None = None,
) -> Weighted:
    """Population estimates weighting each labeled item by 1 / its inclusion probability.

    The estimator is the ratio (Hajek) form: the confusion table is filled with
    weights 1/pi and the statistic computed from it. ``strata`` (the queue stratum
    each item was drawn from) makes the design explicit: items of the queue that
    have no compared pair (not labeled yet, judgment failed) are treated as missing
    at random within their stratum, so the compared items of a stratum carry its
    full weight; and the bootstrap resamples each stratum on its own (clusters
    nested in strata), as the queue was drawn.
    """
    keep = np.array([key in inclusion and inclusion[key] > 0 for key in pairing.keys], dtype=bool)
    kept = [key for key, ok in zip(pairing.keys, keep, strict=True) if ok]
    index = {label: i for i, label in enumerate(scale.labels)}
    ji = np.array([index[x] for x in pairing.judge], dtype=np.int64)[keep]
    hi = np.array([index[x] for x in pairing.human], dtype=np.int64)[keep]
    w = np.array([1.0 / inclusion[key] for key in kept])
    sub = spec.subset(keep)
    stratum_ids = None
    adjusted = False
    if strata is not None and kept:
        names = [str(strata.get(key)) for key in kept]
        in_queue: dict[str, float] = {}
        for key, prob in inclusion.items():
            if prob > 0:
                name = str(strata.get(key))
                in_queue[name] = in_queue.get(name, 0.0) + 1.0 / prob
        compared: dict[str, float] = {}
        for name, weight in zip(names, w.tolist(), strict=True):
            compared[name] = compared.get(name, 0.0) + weight
        factors = np.array([in_queue[name] / compared[name] for name in names])
        adjusted = bool(np.any(np.abs(factors - 1.0) > 1e-12))
        w = w * factors
        stratum_ids = np.asarray(names, dtype=object)
    k = len(scale.labels)
    kind_primary = "weighted_kappa" if scale.kind == "ordinal" else "cohen_kappa"
    table_stat = primary if primary in WEIGHTED_TABLE_STATS else kind_primary

    def stat(fn: Any) -> Stat:
        if stratum_ids is None:
            return bootstrap_stat(fn, [ji, hi, w], sub)
        return bootstrap_stat(fn, [ji, hi, w], sub, strata=stratum_ids)

    out = {
        table_stat: stat(_weighted_table_fn(table_stat, k)),
        "percent_agreement": stat(
            lambda j, h, wt: (wt * (j == h)).sum(axis=-1) / wt.sum(axis=-1)
        ),
    }
    note = (
        f"Labels came from a non-uniform queue; {int(keep.sum())} of {len(pairing.keys)} compared "
        "items are in it and are weighted by 1/inclusion probability (a Hajek ratio estimator), "
        "so these estimate agreement on the whole dataset rather than on the labeled sample."
    )
    if stratum_ids is not None:
        note += " The bootstrap resamples each queue stratum separately, as the queue was drawn."
    if adjusted:
        note += (
            " Queue items without a compared pair (not labeled yet, or a failed judgment) are "
            "treated as missing at random within their stratum: the compared items of each "
            "stratum carry its whole weight."
        )
    if primary not in WEIGHTED_TABLE_STATS and primary not in AGREEMENT_SHARES:
        note += f" {primary} has no weighted version here; {table_stat} is shown instead."
    return Weighted(queue, strategy, int(keep.sum()), out, note)


__all__ = ["AGREEMENT_SHARES", "QueueWeights", "pick_queue", "verdict_statistic",
           "weighted_estimates", "weighted_section"]
