"""Per-class figures for categorical and pairwise scales, and kappa over decisive pairs.

A single kappa hides which class the judge gets wrong. For each label the
report gives the judge's precision (of the items it gave that label, the share
humans gave it too), recall (of the items humans gave that label, the share the
judge found) and F1, each with its interval: Wilson for the two proportions
(cluster bootstrap when clustered), the bootstrap for F1. On a pairwise scale,
kappa over the decisive pairs (both sides said A or B) separates "which is
better" from "is there a difference".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from judgekit import stats
from judgekit.report.model import Stat, undefined
from judgekit.report.stat_intervals import (
    IntervalSpec,
    counts_stat,
    proportion_stat,
    resample_plan,
    to_stat,
)
from judgekit.stats._plan import CountStatistic


def _f1_of(cell: npt.NDArray[np.int64], label: int) -> CountStatistic:
    """F1 = 2 TP / (2 TP + FP + FN) of label ``label`` from judge-by-human cell counts.

    ``cell[j, h]`` is the code of the items the judge called ``j`` and humans ``h``;
    TP, FP and FN are sums of those counts, the same integers as counting the items.
    """
    others = [i for i in range(cell.shape[0]) if i != label]
    tp, fp, fn = cell[label, label], cell[label, others], cell[others, label]

    def f1(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        t = counts[:, tp]
        wrong = counts[:, fp].sum(axis=-1) + counts[:, fn].sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out: npt.NDArray[np.float64] = 2.0 * t / (2.0 * t + wrong)
        return out

    return f1


def per_class(
    judge: Sequence[str], human: Sequence[str], labels: Sequence[str], spec: IntervalSpec
) -> dict[str, Stat]:
    """``precision_<label>``, ``recall_<label>`` and ``f1_<label>`` for every label.

    Every F1 is a function of the judge-by-human table, so all of them are evaluated
    on one :class:`~judgekit.stats._plan.ResamplePlan` (one draw of the resamples):
    each item's code is its cell, a label outside ``labels`` counting as "other".
    """
    ja, ha = np.asarray(judge, dtype=object), np.asarray(human, dtype=object)
    index = {label: i for i, label in enumerate(labels)}
    width = len(labels) + 1  # the last row and column: any other label
    cell = np.arange(width * width, dtype=np.int64).reshape(width, width)
    codes = cell[
        np.fromiter((index.get(x, width - 1) for x in judge), dtype=np.int64, count=len(ja)),
        np.fromiter((index.get(x, width - 1) for x in human), dtype=np.int64, count=len(ha)),
    ]
    plan = resample_plan(codes, width * width, spec)
    out: dict[str, Stat] = {}
    for i, label in enumerate(labels):
        said, truth = ja == label, ha == label
        out[f"precision_{label}"] = (
            proportion_stat(truth[said], spec.subset(said))
            if said.any()
            else undefined(f"the judge never said {label!r}", 0)
        )
        out[f"recall_{label}"] = (
            proportion_stat(said[truth], spec.subset(truth))
            if truth.any()
            else undefined(f"no human label is {label!r}", 0)
        )
        out[f"f1_{label}"] = (
            counts_stat(_f1_of(cell, i), plan, spec)
            if (said | truth).any()
            else undefined(f"neither the judge nor the humans said {label!r}", len(ja))
        )
    return out


def decisive_kappa(
    judge: Sequence[str], human: Sequence[str], labels: Sequence[str], spec: IntervalSpec
) -> Stat:
    """Cohen's kappa on the pairs where both sides chose a side (no tie on either)."""
    sides = [label for label in labels if label != "tie"]
    ja, ha = np.asarray(judge, dtype=object), np.asarray(human, dtype=object)
    decisive = np.isin(ja, sides) & np.isin(ha, sides)
    if not decisive.any():
        return undefined("no pair where both the judge and the humans chose a side")
    return to_stat(
        stats.cohen_kappa(list(ja[decisive]), list(ha[decisive]), labels=sides),
        spec.subset(decisive),
    )


__all__ = ["decisive_kappa", "per_class"]
