"""The like-for-like human ceiling: the primary kappa between pairs of annotators.

The report's primary statistic compares the judge with one label per item: Cohen's
kappa, quadratic-weighted on ordinal scales. Fleiss' kappa and Krippendorff's alpha
are multi-rater figures of another kind (Fleiss' treats every level as a nominal
category), so setting the judge's quadratic kappa beside them compares unlike
things: on SummEval the experts' mean pairwise quadratic kappa is 0.50-0.69 while
their Fleiss' kappa is far lower. This module gives the figure the primary can be
read against:

- ``mean_pairwise_<primary>``: the mean over annotator pairs of the primary kappa
  between the two annotators, each pair on the items both labeled;
- ``judge_mean_<primary>``: the mean over annotators of the same kappa between the
  judge and that annotator, on the items both labeled.

Both are one statistic of the item-level data, so their interval is the report's
(cluster) bootstrap over items: every resample recomputes every pair's kappa, from
the counts of each distinct labelling pattern (:class:`judgekit.stats._plan.ResamplePlan`),
so 100,000 items cost no more than the few hundred patterns they hold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from judgekit.report.model import Stat, undefined
from judgekit.report.pairing import ItemKey
from judgekit.report.stat_intervals import IntervalSpec, counts_stat, resample_plan
from judgekit.types import Scale

#: Primary statistics with a pairwise version in the ceiling, and their kappa weights.
PAIRWISE_PRIMARIES = {"weighted_kappa": "quadratic", "cohen_kappa": None}
#: A pair of raters needs this many shared items to enter the mean.
MIN_SHARED = 5
#: At most this many annotators (those with the most labels) enter the pairs: the
#: mean over 300 annotators' 44,850 pairs is already a precise figure, and a crowd of
#: 20,000 annotators would otherwise cost 200 million pairs per resample.
MAX_PAIRED_ANNOTATORS = 300


def _weights(k: int, kind: str | None) -> npt.NDArray[np.float64]:
    if kind is None:
        return np.eye(k)
    grid = np.subtract.outer(np.arange(k), np.arange(k)) / max(k - 1, 1)
    return 1.0 - grid**2


def _mean_kappa_fn(
    patterns: npt.NDArray[np.int64], pairs: Sequence[tuple[int, int]], k: int,
    weights: npt.NDArray[np.float64],
) -> Callable[[npt.NDArray[np.int64]], npt.NDArray[np.float64]]:
    """Mean kappa over rater pairs from (B, P) counts of item patterns.

    ``patterns`` (P, R) holds each distinct item's label codes (-1: not labeled), so a
    pair's confusion table in every resample is one matrix product of the counts.
    """
    tables = []
    for r1, r2 in pairs:
        x, y = patterns[:, r1], patterns[:, r2]
        both = (x >= 0) & (y >= 0)
        onehot = np.zeros((len(patterns), k * k))
        onehot[np.flatnonzero(both), (x * k + y)[both]] = 1.0
        tables.append(onehot)

    def fn(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        counts = np.atleast_2d(counts).astype(np.float64)
        b = counts.shape[0]
        values = np.full((b, len(tables)), np.nan)
        for p, onehot in enumerate(tables):
            table = (counts @ onehot).reshape(b, k, k)
            total = table.sum(axis=(1, 2))
            with np.errstate(divide="ignore", invalid="ignore"):
                prob = table / total[:, None, None]
                p_o = np.einsum("bij,ij->b", prob, weights)
                p_e = np.einsum("bi,ij,bj->b", prob.sum(axis=2), weights, prob.sum(axis=1))
                kappa = np.where(np.abs(1 - p_e) < 1e-12, np.nan, (p_o - p_e) / (1 - p_e))
            values[:, p] = np.where(total > 0, kappa, np.nan)
        defined = ~np.isnan(values)
        count = defined.sum(axis=1)
        summed = np.where(defined, values, 0.0).sum(axis=1)
        return np.where(count > 0, summed / np.maximum(count, 1), np.nan)

    return fn


def pairwise_kappas(
    keys: Sequence[ItemKey],
    annotators: Mapping[ItemKey, Mapping[str, str]],
    judge: Mapping[ItemKey, str] | None,
    scale: Scale,
    spec: IntervalSpec,
    primary: str,
) -> dict[str, Stat]:
    """``mean_pairwise_<primary>`` among annotators and, with ``judge``, ``judge_mean_<primary>``.

    ``keys`` are the items two or more annotators labeled; ``spec.clusters`` (one per
    key) makes the bootstrap resample clusters. Empty for a primary with no pairwise form.
    """
    if primary not in PAIRWISE_PRIMARIES or not keys:
        return {}
    index = {label: i for i, label in enumerate(scale.labels)}
    k = len(scale.labels)
    weights = _weights(k, PAIRWISE_PRIMARIES[primary])
    # only annotators with MIN_SHARED labels can be in a pair: a crowd where each
    # person labeled one item never builds a table of people by items
    labeled: dict[str, int] = {}
    for key in keys:
        for a in annotators[key]:
            labeled[a] = labeled.get(a, 0) + 1
    eligible = sorted((a for a, n in labeled.items() if n >= MIN_SHARED),
                      key=lambda a: (-labeled[a], a))
    capped = len(eligible) > MAX_PAIRED_ANNOTATORS
    names = sorted(eligible[:MAX_PAIRED_ANNOTATORS])
    position = {a: i for i, a in enumerate(names)}
    raters = [*names, "\0judge"]
    codes = np.full((len(keys), len(raters)), -1, dtype=np.int64)
    for i, key in enumerate(keys):
        for a, label in annotators[key].items():
            column = position.get(a)
            if column is not None:
                codes[i, column] = index[label]
        if judge is not None and key in judge:
            codes[i, -1] = index[judge[key]]
    patterns, item_codes = np.unique(codes, axis=0, return_inverse=True)
    plan = resample_plan(item_codes.reshape(-1), len(patterns), spec)
    out: dict[str, Stat] = {}
    seen = (codes[:, :-1] >= 0).astype(np.int64)
    shared = seen.T @ seen  # items each pair of kept annotators both labeled
    human_pairs = [(int(a), int(b))
                   for a, b in zip(*np.triu_indices(len(names), 1), strict=True)
                   if shared[a, b] >= MIN_SHARED]
    note = (f"over the {MAX_PAIRED_ANNOTATORS} annotators with the most labels of "
            f"{len(eligible)} with {MIN_SHARED} or more" if capped else None)
    out[f"mean_pairwise_{primary}"] = (
        replace(counts_stat(_mean_kappa_fn(patterns, human_pairs, k, weights), plan, spec),
                note=note)
        if human_pairs
        else undefined(f"no two annotators share {MIN_SHARED} items", len(keys))
    )
    if judge is not None:
        with_judge = seen.T @ (codes[:, -1] >= 0).astype(np.int64)
        judge_pairs = [(a, len(raters) - 1) for a in range(len(names))
                       if with_judge[a] >= MIN_SHARED]
        out[f"judge_mean_{primary}"] = (
            counts_stat(_mean_kappa_fn(patterns, judge_pairs, k, weights), plan, spec)
            if judge_pairs
            else undefined(f"no annotator shares {MIN_SHARED} items with the judge", len(keys))
        )
    return out


def like_for_like_sentence(stats: Mapping[str, Stat], primary: str, name: str) -> str | None:
    """The judge's mean kappa with single annotators beside the annotators' with each other."""
    human = stats.get(f"mean_pairwise_{primary}")
    judge = stats.get(f"judge_mean_{primary}")
    if human is None or judge is None or not (human.defined and judge.defined):
        return None
    from judgekit.report._format import interval, num

    return (
        f"Like for like on {name}: the judge against single annotators averages "
        f"{num(judge.statistic)} {interval(judge)}; annotators against each other "
        f"{num(human.statistic)} {interval(human)} (mean over pairs, each pair on the items "
        "both labeled)."
    )


__all__ = ["PAIRWISE_PRIMARIES", "like_for_like_sentence", "pairwise_kappas"]
