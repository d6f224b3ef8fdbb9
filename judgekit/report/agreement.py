"""Judge-versus-human figures for one set of paired labels, chosen by the scale kind.

The numbers come from :mod:`judgekit.stats` on the same arrays a user could pass
themselves (the tests check that), so this module only decides *which* statistics
a scale calls for (methods.md section 5) and turns each result into a :class:`Stat`
with its interval: a Wilson interval for proportions of independent items, and a
(cluster) bootstrap for everything else or whenever items share a cluster.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from judgekit import stats
from judgekit.report.model import Confusion, Stat, undefined
from judgekit.report.per_class import decisive_kappa, per_class
from judgekit.report.stat_intervals import (
    IntervalSpec,
    bootstrap_stat,
    proportion_stat,
    refusal_reason,
    to_stat,
)
from judgekit.types import Scale

#: Primary statistic per scale kind: chance-corrected agreement, so one threshold means
#: the same thing for every kind (quadratic weights for ordinal scales).
PRIMARY_BY_KIND: dict[str, str] = {
    "binary": "cohen_kappa",
    "ordinal": "weighted_kappa",
    "categorical": "cohen_kappa",
    "pairwise": "cohen_kappa",
}


def confusion_of(judge: Sequence[str], human: Sequence[str], labels: Sequence[str]) -> Confusion:
    """Judge (rows) by human (columns) counts, in the scale's label order."""
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    matrix = np.zeros((k, k), dtype=int)
    for j, h in zip(judge, human, strict=True):
        matrix[index[j], index[h]] += 1
    return Confusion(tuple(labels), tuple(tuple(int(c) for c in row) for row in matrix))


def numeric_values(scale: Scale, labels: Sequence[str]) -> npt.NDArray[np.float64]:
    """Ordinal labels -> their numeric values (level index when a level has no value)."""
    lookup = {
        level.label: (float(level.value) if level.value is not None else float(i))
        for i, level in enumerate(scale.levels)
    }
    return np.array([lookup[label] for label in labels], dtype=float)


def _binary(j: list[str], h: list[str], scale: Scale, spec: IntervalSpec) -> dict[str, Stat]:
    labels = list(scale.labels)
    positive = "pass" if "pass" in labels else labels[0]
    ja, ha = np.array(j, dtype=object), np.array(h, dtype=object)
    agree = ja == ha
    out = {
        "cohen_kappa": to_stat(stats.cohen_kappa(j, h, labels=labels), spec),
        "percent_agreement": to_stat(stats.percent_agreement(j, h), spec),
        "gwet_ac1": to_stat(stats.gwet_ac1(j, h, labels=list(scale.labels)), spec),
        "krippendorff_alpha": to_stat(stats.krippendorff_alpha([j, h], level="nominal"), spec),
        "pabak": bootstrap_stat(lambda a: 2.0 * a.mean(axis=-1) - 1.0, [agree.astype(float)], spec),
        "prevalence_human": proportion_stat(ha == positive, spec),
        "prevalence_judge": proportion_stat(ja == positive, spec),
    }
    pos, neg = ha == positive, ha != positive
    out["tpr"] = (
        proportion_stat(agree[pos], spec.subset(pos))
        if pos.any()
        else undefined(f"no item with human '{positive}'")
    )
    out["tnr"] = (
        proportion_stat(agree[neg], spec.subset(neg))
        if neg.any()
        else undefined(f"no item with human label other than '{positive}'")
    )
    return out


def mean_difference(
    a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], spec: IntervalSpec
) -> Stat:
    """Mean of a - b with the paired bootstrap from :func:`judgekit.stats.paired_bootstrap`."""
    res = stats.paired_bootstrap(
        a,
        b,
        n_resamples=spec.n_resamples,
        confidence_level=spec.confidence_level,
        random_state=spec.random_state,
        clusters=spec.clusters,
    )
    return Stat(
        res.statistic, res.ci_low, res.ci_high, res.n, spec.bootstrap_name, None,
        refusal_reason(res.confidence_interval(spec.confidence_level)),
    )


def _ordinal(
    j: list[str],
    h: list[str],
    scale: Scale,
    spec: IntervalSpec,
    numbers: tuple[Sequence[float], Sequence[float]] | None = None,
) -> dict[str, Stat]:
    """Level figures on the labels; Spearman, Kendall and mean bias on ``numbers`` when given
    (the judge's scores and the human reference numbers, :mod:`judgekit.report.measures`)."""
    jl, hl = numeric_values(scale, j), numeric_values(scale, h)
    if numbers is None:
        jv, hv = jl, hl
    else:
        jv, hv = np.asarray(numbers[0], dtype=float), np.asarray(numbers[1], dtype=float)
    return {
        "weighted_kappa": to_stat(
            stats.cohen_kappa(j, h, weights="quadratic", labels=list(scale.labels)), spec
        ),
        "krippendorff_alpha": to_stat(stats.krippendorff_alpha([jl, hl], level="ordinal"), spec),
        "spearman": to_stat(stats.spearman(jv, hv), spec),
        "kendall_tau": to_stat(stats.kendall_tau(jv, hv), spec),
        "exact_agreement": to_stat(stats.percent_agreement(j, h), spec),
        "within_one_agreement": to_stat(stats.percent_agreement(jl, hl, tolerance=1), spec),
        "mean_bias": mean_difference(jv, hv, spec),
        "cohen_kappa": to_stat(stats.cohen_kappa(j, h, labels=list(scale.labels)), spec),
    }


def _pairwise(j: list[str], h: list[str], scale: Scale, spec: IntervalSpec) -> dict[str, Stat]:
    ja, ha = np.array(j, dtype=object), np.array(h, dtype=object)
    no_tie = (ja != "tie") & (ha != "tie")
    return {
        "cohen_kappa": to_stat(stats.cohen_kappa(j, h, labels=list(scale.labels)), spec),
        "agreement_with_ties": proportion_stat(ja == ha, spec),
        "agreement_without_ties": proportion_stat((ja == ha)[no_tie], spec.subset(no_tie))
        if no_tie.any()
        else undefined("every pair has a tie on one side"),
        "krippendorff_alpha": to_stat(stats.krippendorff_alpha([j, h], level="nominal"), spec),
        "decisive_kappa": decisive_kappa(j, h, list(scale.labels), spec),
        **per_class(j, h, list(scale.labels), spec),
    }


def _categorical(j: list[str], h: list[str], scale: Scale, spec: IntervalSpec) -> dict[str, Stat]:
    return {
        "cohen_kappa": to_stat(stats.cohen_kappa(j, h, labels=list(scale.labels)), spec),
        "percent_agreement": to_stat(stats.percent_agreement(j, h), spec),
        "gwet_ac1": to_stat(stats.gwet_ac1(j, h, labels=list(scale.labels)), spec),
        "krippendorff_alpha": to_stat(stats.krippendorff_alpha([j, h], level="nominal"), spec),
        **per_class(j, h, list(scale.labels), spec),
    }


_BY_KIND = {
    "binary": _binary,
    "ordinal": _ordinal,
    "pairwise": _pairwise,
    "categorical": _categorical,
}


def judge_vs_human(
    judge: Sequence[str],
    human: Sequence[str],
    scale: Scale,
    spec: IntervalSpec,
    numbers: tuple[Sequence[float], Sequence[float]] | None = None,
) -> dict[str, Stat]:
    """Every figure the scale kind calls for, judge labels against human labels item by item.

    ``numbers`` (judge scores, human reference numbers; ordinal scales) replace the
    labels' values in the correlations and the mean bias: ``--reference mean`` and
    judges with scores of their own between levels.
    """
    if len(judge) != len(human):
        raise ValueError("judge and human label lists differ in length")
    if not judge:
        return {PRIMARY_BY_KIND[scale.kind]: undefined("no item has both a judgment and a label")}
    if scale.kind == "ordinal" and numbers is not None:
        if not len(numbers[0]) == len(numbers[1]) == len(judge):
            raise ValueError("judge and human numbers differ in length from the labels")
        return _ordinal(list(judge), list(human), scale, spec, numbers)
    return _BY_KIND[scale.kind](list(judge), list(human), scale, spec)


def primary_only(
    judge: Sequence[str],
    human: Sequence[str],
    scale: Scale,
    spec: IntervalSpec,
    primary: str,
    numbers: tuple[Sequence[float], Sequence[float]] | None = None,
) -> Stat:
    """Just one figure (for slices and comparisons), computed exactly as in the full set."""
    if not judge:
        return undefined("no items")
    j, h, labels = list(judge), list(human), list(scale.labels)
    if primary == "cohen_kappa":
        return to_stat(stats.cohen_kappa(j, h, labels=labels), spec)
    if primary == "weighted_kappa":
        return to_stat(stats.cohen_kappa(j, h, weights="quadratic", labels=labels), spec)
    if primary == "percent_agreement":
        return to_stat(stats.percent_agreement(j, h), spec)
    if primary == "gwet_ac1":
        return to_stat(stats.gwet_ac1(j, h, labels=labels), spec)
    return judge_vs_human(j, h, scale, spec, numbers).get(
        primary, undefined(f"{primary} not computed")
    )
