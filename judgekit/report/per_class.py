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
from judgekit.report.agreement import IntervalSpec, bootstrap_stat, proportion_stat, to_stat
from judgekit.report.model import Stat, undefined

#: Per-item outcome codes for one label, as :func:`_f1` reads them.
_TP, _FP, _FN = 1, 2, 3


def _f1(outcome: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
    """F1 = 2 TP / (2 TP + FP + FN) over the last axis of per-item outcome codes.

    One int8 code per item (0 true negative, then TP, FP, FN) instead of three float
    arrays: a bootstrap gathers a byte per item per resample, not 24, and the counts
    are the same integers, so the figures are those of the three-array form.
    """
    t = (outcome == _TP).sum(axis=-1)
    wrong = (outcome == _FP).sum(axis=-1) + (outcome == _FN).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: npt.NDArray[np.float64] = 2.0 * t / (2.0 * t + wrong)
    return out


def per_class(
    judge: Sequence[str], human: Sequence[str], labels: Sequence[str], spec: IntervalSpec
) -> dict[str, Stat]:
    """``precision_<label>``, ``recall_<label>`` and ``f1_<label>`` for every label."""
    ja, ha = np.asarray(judge, dtype=object), np.asarray(human, dtype=object)
    out: dict[str, Stat] = {}
    for label in labels:
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
        outcome = np.zeros(len(ja), dtype=np.int8)
        outcome[said & truth] = _TP
        outcome[said & ~truth] = _FP
        outcome[~said & truth] = _FN
        out[f"f1_{label}"] = (
            bootstrap_stat(_f1, [outcome], spec)
            if outcome.any()
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
