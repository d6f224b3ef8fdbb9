"""PPI++ under two designs: strata (``--by slice``) and a difference of two candidates.

Stratified PPI estimates each stratum on its own (its own lambda) and combines
them by stratum size, so a judge that is good on one slice and poor on another
is used where it helps. The difference of two candidates judged on the same
prompts is correlated through those prompts; treating each prompt as a cluster
across both sides makes the interval of the difference honest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgekit.stats import _ppi_core as core
from judgekit.stats._result import Interval
from judgekit.stats.ppi import (
    ONE_CLUSTER,
    Bounds,
    EstimateResult,
    classical_mean,
    design_of,
    estimate_inputs,
    is_binary,
    numbers,
    ppi_mean,
)


@dataclass(frozen=True)
class StratifiedResult(EstimateResult):
    """Overall estimate = per-stratum estimates weighted by stratum size; ``strata`` by name."""

    strata: dict[str, EstimateResult] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)


def ppi_mean_stratified(
    labels: Any,
    judge_on_labeled: Any,
    judge_on_unlabeled: Any,
    strata: Any,
    unlabeled_strata: Any,
    *,
    weights: Any = None,
    clusters: Any = None,
    unlabeled_clusters: Any = None,
    sizes: dict[str, int] | None = None,
    bounds: Bounds | None = None,
) -> StratifiedResult:
    """Stratified PPI++: one PPI++ estimate per stratum (its own lambda), combined by size.

    overall = sum_h (N_h / N) theta_h, variance sum_h (N_h / N)^2 Var_h (strata are
    independent; clusters are taken to lie within strata). ``sizes`` gives N_h;
    by default the labeled plus unlabeled items of the stratum. A stratum whose
    items are all labeled uses its labels-only estimate; one without labels makes
    the overall estimate undefined (NaN, naming it).
    """
    y, f, fu = estimate_inputs(labels, judge_on_labeled, judge_on_unlabeled)
    s_lab, s_unl = [str(s) for s in strata], [str(s) for s in unlabeled_strata]
    if len(s_lab) != y.size or len(s_unl) != fu.size:
        raise ValueError("strata and unlabeled_strata need one name per labeled / unlabeled item")
    w = None if weights is None else numbers(weights, "weights")
    lab_c = None if clusters is None else np.asarray(list(clusters), dtype=object)
    unl_c = (
        None if unlabeled_clusters is None else np.asarray(list(unlabeled_clusters), dtype=object)
    )
    names = sorted(set(s_lab) | set(s_unl))
    lab_names, unl_names = np.asarray(s_lab, dtype=object), np.asarray(s_unl, dtype=object)
    results: dict[str, EstimateResult] = {}
    counts: dict[str, int] = {}
    for name in names:
        li, ui = lab_names == name, unl_names == name
        counts[name] = int(sizes[name]) if sizes and name in sizes else int(li.sum() + ui.sum())
        kwargs: dict[str, Any] = {"bounds": bounds}
        if w is not None:
            kwargs["weights"] = w[li]
        if lab_c is not None and unl_c is not None:
            kwargs["clusters"], kwargs["unlabeled_clusters"] = lab_c[li], unl_c[ui]
        if ui.any() or not li.any():
            results[name] = ppi_mean(y[li], f[li], fu[ui], **kwargs)
        else:
            kwargs.pop("unlabeled_clusters", None)
            results[name] = classical_mean(y[li], **kwargs)
    total = sum(counts.values())
    missing = [name for name in names if not math.isfinite(results[name].statistic)]
    n, big_n = int(y.size), int(fu.size)
    if missing or total == 0:
        reason = (
            f"stratum {missing[0]!r} has no estimate ({results[missing[0]].reason})"
            if missing
            else "no items"
        )
        return StratifiedResult(
            math.nan,
            math.nan,
            n,
            big_n,
            "stratified ppi++",
            reason=reason,
            strata=results,
            sizes=counts,
        )
    shares = {name: counts[name] / total for name in names}
    statistic = sum(shares[k] * results[k].statistic for k in names)
    variance = sum(shares[k] ** 2 * results[k].standard_error ** 2 for k in names)
    classical = sum(
        shares[k] ** 2 * results[k].standard_error ** 2 * results[k].effective_n / results[k].n
        for k in names
        if math.isfinite(results[k].effective_n) and results[k].n
    )
    effective = n * classical / variance if variance > 0 else math.nan
    wilson_n = None
    if is_binary(y) and variance > 0:
        # a 0/1 target: Wilson at the effective sample size, as for one stratum
        wilson_n = effective if math.isfinite(effective) and effective > 0 else float(n)
        statistic = min(max(statistic, 0.0), 1.0)
    return StratifiedResult(
        float(statistic),
        math.sqrt(variance),
        n,
        big_n,
        "stratified ppi++",
        effective_n=effective,
        bounds=bounds,
        wilson_n=wilson_n,
        strata=results,
        sizes=counts,
    )


@dataclass(frozen=True)
class DifferenceResult(EstimateResult):
    """theta_A - theta_B of two PPI++ estimates sharing clusters (same prompts).

    For two 0/1 targets the interval is Newcombe's hybrid score interval (MOVER: each
    side's Wilson interval at its effective sample size, combined with the correlation
    of the two estimates, ``correlation``; Newcombe 1998 method 10, Zou & Donner 2008),
    which stays inside [-1, 1] and inherits Wilson's two tails; otherwise Wald.
    """

    first: EstimateResult | None = None
    second: EstimateResult | None = None
    correlation: float = 0.0

    def confidence_interval(self, confidence_level: float = 0.95) -> Interval:
        a, b = self.first, self.second
        if (a is None or b is None or a.wilson_n is None or b.wilson_n is None
                or not math.isfinite(self.statistic)):
            return super().confidence_interval(confidence_level)
        l1, u1 = a.confidence_interval(confidence_level)
        l2, u2 = b.confidence_interval(confidence_level)
        p1, p2, r = a.statistic, b.statistic, self.correlation
        below = (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * r * (p1 - l1) * (u2 - p2)
        above = (u1 - p1) ** 2 + (p2 - l2) ** 2 - 2 * r * (u1 - p1) * (p2 - l2)
        low = self.statistic - math.sqrt(max(below, 0.0))
        high = self.statistic + math.sqrt(max(above, 0.0))
        return max(low, -1.0), min(high, 1.0)


def ppi_mean_difference(
    first: tuple[Any, Any, Any],
    second: tuple[Any, Any, Any],
    *,
    clusters: tuple[Any, Any, Any, Any] | None = None,
) -> DifferenceResult:
    """PPI++ difference of two means, e.g. two candidates judged on the same prompts.

    ``first``/``second`` are ``(labels, judge_on_labeled, judge_on_unlabeled)``.
    ``clusters`` = (first labeled, first unlabeled, second labeled, second
    unlabeled) ids: items with the same id (the same prompt) are one cluster
    across both, so the variance of the difference counts their correlation
    (pairing); without it the two estimates are taken as independent. Each
    side keeps its own power-tuned lambda.
    """
    ya, fa, fua = estimate_inputs(*first)
    yb, fb, fub = estimate_inputs(*second)
    if clusters is None:
        a, b = ppi_mean(ya, fa, fua), ppi_mean(yb, fb, fub)
        if not (math.isfinite(a.statistic) and math.isfinite(b.statistic)):
            bad = a if not math.isfinite(a.statistic) else b
            return DifferenceResult(
                math.nan,
                math.nan,
                a.n + b.n,
                a.n_unlabeled + b.n_unlabeled,
                "ppi++ difference",
                reason=bad.reason,
                first=a,
                second=b,
            )
        se = math.hypot(a.standard_error, b.standard_error)
        return DifferenceResult(
            a.statistic - b.statistic,
            se,
            a.n + b.n,
            a.n_unlabeled + b.n_unlabeled,
            "ppi++ difference",
            bounds=(-1.0, 1.0) if a.bounds else None,
            first=a,
            second=b,
        )
    ca, cua, cb, cub = (list(c) for c in clusters)
    a = ppi_mean(ya, fa, fua, clusters=ca, unlabeled_clusters=cua)
    b = ppi_mean(yb, fb, fub, clusters=cb, unlabeled_clusters=cub)
    n, big_n = a.n + b.n, a.n_unlabeled + b.n_unlabeled
    if not (math.isfinite(a.statistic) and math.isfinite(b.statistic)):
        bad = a if not math.isfinite(a.statistic) else b
        return DifferenceResult(
            math.nan, math.nan, n, big_n, "ppi++ difference", reason=bad.reason, first=a, second=b
        )
    # the difference's contributions: side A's minus side B's, summed per shared cluster
    design, n_clusters, df = design_of(
        ya.size + yb.size, fua.size + fub.size, None, ca + cb, cua + cub
    )
    variance = core.difference_variance(
        (ya, fa, fua, a.lam), (yb, fb, fub, b.lam), design, ya.size, fua.size
    )
    if not math.isfinite(variance):
        return DifferenceResult(
            math.nan,
            math.nan,
            n,
            big_n,
            "ppi++ difference",
            reason=ONE_CLUSTER,
            first=a,
            second=b,
        )
    shared = (a.standard_error ** 2 + b.standard_error ** 2 - variance) / 2
    scale = a.standard_error * b.standard_error
    correlation = min(max(shared / scale, -1.0), 1.0) if scale > 0 else 0.0
    return DifferenceResult(
        a.statistic - b.statistic,
        math.sqrt(variance),
        n,
        big_n,
        "ppi++ difference",
        n_clusters=n_clusters,
        df=df,
        first=a,
        second=b,
        correlation=correlation,
    )


__all__ = ["DifferenceResult", "StratifiedResult", "ppi_mean_difference", "ppi_mean_stratified"]
