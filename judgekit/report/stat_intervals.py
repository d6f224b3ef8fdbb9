"""How a statistic's result becomes a report :class:`Stat` with its interval.

Every figure of a report, a comparison and ``agree`` goes through these rules: the
interval spec (level, resamples, seed, clusters), the bootstrap of a statistic on
given arrays or on resampled counts, a Wilson interval for shares of independent
items, and the zero-width rule (an interval that never moved is replaced by the
Wilson bound or refused with a reason, never shown as a point). They sit below the
modules that choose *which* statistics a scale calls for
(:mod:`judgekit.report.agreement`, :mod:`judgekit.report.per_class`), so those need
not import each other.
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
from judgekit.report.model import Stat, undefined
from judgekit.stats._plan import CountStatistic, ResamplePlan
from judgekit.stats._resample import wilson_bounds

#: An interval narrower than this is a point: resampling never moved the estimate.
COLLAPSED_WIDTH = 1e-12

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
    stat = Stat(statistic, float(low), float(high), n, method, reason, refusal_reason(interval))
    wilson = params.get("method") is not None and params["method"].default == "wilson"
    if wilson and hasattr(result, "successes"):  # a share of items (AC1's Wilson is not)
        return wilson_if_collapsed(stat, spec)
    return stat


def refusal_reason(interval: Any) -> str | None:
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
    return Stat(estimate, float(low), float(high), n, name, None, refusal_reason(interval))


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
                refusal_reason(interval))


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
