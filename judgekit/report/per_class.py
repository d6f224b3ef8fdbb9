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


def _f1(
    tp: npt.NDArray[np.float64], fp: npt.NDArray[np.float64], fn: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    t = tp.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: npt.NDArray[np.float64] = 2.0 * t / (2.0 * t + fp.sum(axis=-1) + fn.sum(axis=-1))
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
        tp, fp, fn = said & truth, said & ~truth, ~said & truth
        out[f"f1_{label}"] = (
            bootstrap_stat(_f1, [tp.astype(float), fp.astype(float), fn.astype(float)], spec)
            if (tp | fp | fn).any()
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
