"""Judge-versus-human figures for one set of paired labels, chosen by the scale kind.

The numbers come from :mod:`judgekit.stats` on the same arrays a user could pass
themselves (the tests check that), so this module only decides *which* statistics
a scale calls for (methods.md section 5) and turns each result into a :class:`Stat`
with its interval: a Wilson interval for proportions of independent items, and a
(cluster) bootstrap for everything else or whenever items share a cluster.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit import stats
from judgekit.report.model import Confusion, Stat, undefined
from judgekit.stats._plan import CountStatistic, ResamplePlan
from judgekit.stats._resample import wilson_bounds
from judgekit.types import Scale

#: An interval narrower than this is a point: resampling never moved the estimate.
COLLAPSED_WIDTH = 1e-12

#: Primary statistic per scale kind: chance-corrected agreement, so one threshold means
#: the same thing for every kind (quadratic weights for ordinal scales).
PRIMARY_BY_KIND: dict[str, str] = {
    "binary": "cohen_kappa",
    "ordinal": "weighted_kappa",
    "categorical": "cohen_kappa",
    "pairwise": "cohen_kappa",
}


@dataclass(frozen=True)
class IntervalSpec:
    """How intervals are made: level, resamples, seed, and optional cluster ids per pair."""

    confidence_level: float = 0.95
    n_resamples: int = 1000
    random_state: int = 0
    clusters: npt.NDArray[Any] | None = None

    def subset(self, mask: npt.NDArray[np.bool_]) -> IntervalSpec:
        clusters = None if self.clusters is None else self.clusters[mask]
        return IntervalSpec(self.confidence_level, self.n_resamples, self.random_state, clusters)

    @property
    def bootstrap_name(self) -> str:
        return "cluster bootstrap" if self.clusters is not None else "bootstrap"


#: How the report names the interval a rank correlation's default method gave
#: (without clusters, with clusters).
_RANK_INTERVAL_NAMES = {
    False: {
        "jackknife": "jackknife",
        "ase": "asymptotic SE",
        "bootstrap": "bootstrap",
        "boundary": "perfect-order bound",
    },
    True: {
        "jackknife": "cluster jackknife",
        "ase": "cluster-robust asymptotic SE",
        "bootstrap": "cluster bootstrap",
        "boundary": "perfect-order bound by cluster",
    },
}


def to_stat(result: Any, spec: IntervalSpec) -> Stat:
    """A stats result -> :class:`Stat`, asking for the interval the spec calls for."""
    statistic = float(result.statistic)
    n = int(result.n)
    reason = getattr(result, "reason", None)
    if not math.isfinite(statistic):
        return Stat(math.nan, math.nan, math.nan, n, "", reason or "undefined")
    params = inspect.signature(result.confidence_interval).parameters
    kwargs: dict[str, Any] = {"confidence_level": spec.confidence_level}
    method = "bootstrap"
    if "method" in params and params["method"].default in ("wilson", "newcombe"):
        if spec.clusters is None:
            method = str(params["method"].default)
        else:
            kwargs["method"] = "bootstrap"
    elif "method" in params and params["method"].default == "analytic":
        kwargs["method"] = "bootstrap"
    if method == "bootstrap":
        if "n_resamples" in params:
            kwargs["n_resamples"] = spec.n_resamples
        if "random_state" in params:
            kwargs["random_state"] = spec.random_state
        if "clusters" in params and spec.clusters is not None:
            kwargs["clusters"] = spec.clusters
        method = spec.bootstrap_name if "n_resamples" in params else "bootstrap"
        if getattr(result, "default_interval_method", None) == "bca":  # weighted kappa
            method = f"BCa {method}"
        if getattr(result, "method", None) in ("spearman", "kendall_tau_b"):
            # their default is the jackknife on Fisher's z (or its fallback), not the bootstrap
            names = _RANK_INTERVAL_NAMES[spec.clusters is not None]
            method = names[result.default_method(spec.clusters)]
    interval = result.confidence_interval(**kwargs)
    low, high = interval
    stat = Stat(statistic, float(low), float(high), n, method, reason, _refusal(interval))
    wilson = params.get("method") is not None and params["method"].default == "wilson"
    if wilson and hasattr(result, "successes"):  # a share of items (AC1's Wilson is not)
        return wilson_if_collapsed(stat, spec)
    return stat


def _refusal(interval: Any) -> str | None:
    """Why a defined statistic has no interval (the stats layer's reason), else None."""
    reason = getattr(interval, "reason", None)
    return f"no interval: {reason}" if reason else None


def wilson_if_collapsed(stat: Stat, spec: IntervalSpec) -> Stat:
    """A clustered proportion whose bootstrap interval is a point -> Wilson over clusters.

    When every cluster has the same rate (say, each pair of items holds exactly one
    agreement), resampling clusters never moves the estimate and the percentile
    interval collapses, as if the rate were known exactly. It is not: the bootstrap
    simply cannot see the spread. Counting each cluster once, at the observed rate,
    assumes the strongest within-cluster correlation the clustering allows, so the
    interval claims no independence that ``--cluster-by`` ruled out. The stat's note
    says so in every format.
    """
    collapsed = not (math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high)) or (
        stat.ci_high - stat.ci_low <= COLLAPSED_WIDTH
    )
    if spec.clusters is None or not stat.defined or not collapsed:
        return stat
    k = len(set(spec.clusters.tolist()))
    low, high = wilson_bounds(stat.statistic * k, k, spec.confidence_level)
    return replace(
        stat,
        ci_low=low,
        ci_high=high,
        method="wilson over clusters",
        note=(
            "every cluster has the same rate, so the cluster bootstrap collapsed to a point; "
            f"Wilson interval with each of the {k} clusters counted once"
        ),
    )


def bootstrap_stat(
    fn: Callable[..., npt.NDArray[np.float64]],
    arrays: Sequence[npt.NDArray[Any]],
    spec: IntervalSpec,
    strata: npt.NDArray[Any] | None = None,
) -> Stat:
    """A custom statistic (vectorised over a leading resample axis) with its bootstrap interval.

    ``strata`` (one id per item) resamples each stratum separately (a stratified design).
    """
    n = len(arrays[0])
    if n == 0:
        return undefined("no items", 0)
    estimate = float(np.asarray(fn(*(a[None, ...] for a in arrays))).reshape(-1)[0])
    if not math.isfinite(estimate):
        return undefined("undefined on these items", n)
    interval = stats.bootstrap_ci(
        fn,
        *arrays,
        n_resamples=spec.n_resamples,
        confidence_level=spec.confidence_level,
        random_state=spec.random_state,
        clusters=spec.clusters,
        vectorized=True,
        strata=strata,
    )
    name = spec.bootstrap_name if strata is None else f"stratified {spec.bootstrap_name}"
    low, high = interval
    return Stat(estimate, float(low), float(high), n, name, None, _refusal(interval))


def counts_stat(statistic: CountStatistic, plan: ResamplePlan, spec: IntervalSpec) -> Stat:
    """:func:`bootstrap_stat` for a statistic of code counts on a shared :class:`ResamplePlan`.

    The same figure as :func:`bootstrap_stat` with the statistic written over the items'
    arrays (the plan draws what ``bootstrap_ci`` draws), for one draw of the resamples
    however many statistics use them.
    """
    if plan.n == 0:
        return undefined("no items", 0)
    estimate = float(np.asarray(statistic(plan.observed)).reshape(-1)[0])
    if not math.isfinite(estimate):
        return undefined("undefined on these items", plan.n)
    interval = plan.interval(statistic, spec.confidence_level)
    low, high = interval
    return Stat(estimate, float(low), float(high), plan.n, spec.bootstrap_name, None,
                _refusal(interval))


def resample_plan(codes: npt.ArrayLike, n_codes: int, spec: IntervalSpec) -> ResamplePlan:
    """The spec's design (seed, resamples, clusters) for items of ``n_codes`` kinds."""
    return ResamplePlan(codes, n_codes, n_resamples=spec.n_resamples,
                        random_state=spec.random_state, clusters=spec.clusters)


def proportion_stat(successes: npt.NDArray[np.bool_], spec: IntervalSpec) -> Stat:
    """Share of True: Wilson interval for independent items, cluster bootstrap otherwise."""
    n = int(successes.size)
    if n == 0:
        return undefined("no items", 0)
    k = int(successes.sum())
    if spec.clusters is None:
        low, high = stats.wilson_interval(k, n, confidence_level=spec.confidence_level)
        return Stat(k / n, low, high, n, "wilson")
    return wilson_if_collapsed(
        bootstrap_stat(lambda x: x.mean(axis=-1), [successes.astype(float)], spec), spec
    )


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
        _refusal(res.confidence_interval(spec.confidence_level)),
    )


def _ordinal(j: list[str], h: list[str], scale: Scale, spec: IntervalSpec) -> dict[str, Stat]:
    jv, hv = numeric_values(scale, j), numeric_values(scale, h)
    return {
        "weighted_kappa": to_stat(
            stats.cohen_kappa(j, h, weights="quadratic", labels=list(scale.labels)), spec
        ),
        "krippendorff_alpha": to_stat(stats.krippendorff_alpha([jv, hv], level="ordinal"), spec),
        "spearman": to_stat(stats.spearman(jv, hv), spec),
        "kendall_tau": to_stat(stats.kendall_tau(jv, hv), spec),
        "exact_agreement": to_stat(stats.percent_agreement(j, h), spec),
        "within_one_agreement": to_stat(stats.percent_agreement(jv, hv, tolerance=1), spec),
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
        "percent_agreement": to_stat(stats.percent_agreement(j, h), spec),
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


from judgekit.report.per_class import decisive_kappa, per_class  # noqa: E402 (uses the above)

_BY_KIND = {
    "binary": _binary,
    "ordinal": _ordinal,
    "pairwise": _pairwise,
    "categorical": _categorical,
}


def judge_vs_human(
    judge: Sequence[str], human: Sequence[str], scale: Scale, spec: IntervalSpec
) -> dict[str, Stat]:
    """Every figure the scale kind calls for, judge labels against human labels item by item."""
    if len(judge) != len(human):
        raise ValueError("judge and human label lists differ in length")
    if not judge:
        return {PRIMARY_BY_KIND[scale.kind]: undefined("no item has both a judgment and a label")}
    return _BY_KIND[scale.kind](list(judge), list(human), scale, spec)


def primary_only(
    judge: Sequence[str], human: Sequence[str], scale: Scale, spec: IntervalSpec, primary: str
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
    return judge_vs_human(j, h, scale, spec).get(primary, undefined(f"{primary} not computed"))
