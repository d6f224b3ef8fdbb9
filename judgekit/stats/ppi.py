"""Prediction-powered estimates: the humans' rate, from a few labels and many judge verdicts.

A judge's own pass rate estimates the judge, not the humans. With human labels
on n items and judge verdicts on N, prediction-powered inference (PPI++,
Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453) corrects the judge's mean
by its average error on the labeled items, with a power-tuning weight lambda
chosen from the data: the interval is valid whatever the judge's quality and
narrower the better the judge is (lambda = 0 is the labels-only estimate).

Functions follow scipy: a frozen result with ``.statistic``, ``.n`` and
``.confidence_interval(confidence_level)``; undefined -> NaN with ``.reason``;
invalid input -> ``ValueError`` naming the argument. Without weights or clusters
the numbers equal ``ppi_py``'s ``ppi_mean_pointestimate`` / ``ppi_mean_ci``. The
variance rules for weights and clusters are in :mod:`judgekit.stats._ppi_core`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.stats import _ppi_core as core
from judgekit.stats._resample import z_critical
from judgekit.stats._result import NAN_INTERVAL, Interval, ResultMixin
from judgekit.stats._tdist import t_quantile
from judgekit.stats._validate import FloatArray, as_float_with_missing, check_confidence_level

Bounds = tuple[float, float]
ONE_CLUSTER = "one cluster: a cluster-robust variance needs two"


@dataclass(frozen=True)
class EstimateResult(ResultMixin):
    """One estimate of a mean (a rate, a mean score) with its standard error.

    ``n`` = labeled items used; ``n_unlabeled`` = judge-only items; ``lam`` = the
    PPI++ weight (NaN for other methods); ``effective_n`` = how many labels the
    labels-only estimate would need for the same variance. The interval is
    statistic +/- z * standard_error clipped to ``bounds`` (Wald, as PPI++) for a
    numeric target, and for a 0/1 target (a rate, a share at or above a level, a win
    share) Wilson's interval at the effective sample size ``wilson_n`` (labels only:
    p(1-p)/variance; PPI++: ybar(1-ybar)/variance), which stays inside [0, 1] and keeps
    both tails at pass rates near 1 where Wald's lies above the truth.
    """

    statistic: float
    standard_error: float
    n: int
    n_unlabeled: int = 0
    method: str = "ppi++"
    lam: float = math.nan
    effective_n: float = math.nan
    n_clusters: int | None = None
    reason: str | None = None
    note: str | None = None
    bounds: Bounds | None = None
    wilson_n: float | None = None
    df: float | None = None

    def confidence_interval(self, confidence_level: float = 0.95) -> Interval:
        """Two-sided interval at ``confidence_level`` (NaN when undefined)."""
        level = check_confidence_level(confidence_level)
        z = z_critical(level)
        if self.df is not None and self.df > 0:
            z = t_quantile(0.5 + level / 2.0, self.df)
        if not math.isfinite(self.statistic):
            return NAN_INTERVAL
        if self.wilson_n is not None:
            lows, highs = core.wilson_bounds_array(
                np.array([self.statistic]), np.array([self.wilson_n]), z
            )
            return float(lows[0]), float(highs[0])
        if not (math.isfinite(self.standard_error) and self.standard_error > 0):
            return NAN_INTERVAL
        half = z * self.standard_error
        low, high = self.statistic - half, self.statistic + half
        if self.bounds is not None:
            low, high = max(low, self.bounds[0]), min(high, self.bounds[1])
        return float(low), float(high)


def undefined_estimate(reason: str, n: int, n_unlabeled: int, method: str) -> EstimateResult:
    return EstimateResult(math.nan, math.nan, n, n_unlabeled, method, reason=reason)


def numbers(values: Any, name: str) -> FloatArray:
    arr = as_float_with_missing(values, name)
    if np.isnan(arr).any():
        raise ValueError(
            f"{name} contains missing values at position {int(np.flatnonzero(np.isnan(arr))[0])};"
            " drop the item or give it a value"
        )
    return arr


def design_of(
    n: int,
    n_unlabeled: int,
    weights: Any,
    clusters: Any,
    unlabeled_clusters: Any,
    strata: Any = None,
) -> tuple[core.Design, int | None, float | None]:
    """The design of the arrays, the number of clusters and the t degrees of freedom.

    With clusters the interval uses Student's t with (labeled clusters - 1)
    degrees of freedom: with few clusters a cluster-robust variance is itself
    uncertain, and z would make the interval too short.
    """
    w = None
    if weights is not None:
        w = numbers(weights, "weights")
        if w.size != n:
            raise ValueError(f"weights has length {w.size}; expected {n} (one per labeled item)")
        if (w <= 0).any():
            raise ValueError("weights must be positive (1 / inclusion probability)")
    if (clusters is None) != (unlabeled_clusters is None):
        raise ValueError("give clusters and unlabeled_clusters together, or neither")
    codes_s, n_strata = None, 0
    if strata is not None:
        names = list(strata)
        if len(names) != n:
            raise ValueError(f"strata has length {len(names)}; expected {n} (one per labeled item)")
        seen: dict[Any, int] = {}
        codes_s = np.fromiter((seen.setdefault(x, len(seen)) for x in names), np.int64, count=n)
        n_strata = len(seen)
    if clusters is None:
        return core.Design(weights=w, strata=codes_s, n_strata=n_strata), None, None
    lab, unl = list(clusters), list(unlabeled_clusters)
    if len(lab) != n:
        raise ValueError(f"clusters has length {len(lab)}; expected {n} (one per labeled item)")
    if len(unl) != n_unlabeled:
        raise ValueError(
            f"unlabeled_clusters has length {len(unl)}; expected {n_unlabeled}"
            " (one per unlabeled item)"
        )
    if any(c is None for c in lab + unl):
        raise ValueError("clusters contain missing values; give every item a cluster id")
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(c, len(index)) for c in lab), np.int64, count=n)
    codes_u = np.fromiter(
        (index.setdefault(c, len(index)) for c in unl), np.int64, count=n_unlabeled
    )
    design = core.Design(w, codes, codes_u, len(index), codes_s, n_strata)
    return design, len(index), float(core.labeled_clusters(design, 1)[0]) - 1.0


def estimate_inputs(
    labels: Any, judge_on_labeled: Any, judge_on_unlabeled: Any
) -> tuple[FloatArray, FloatArray, FloatArray]:
    y = numbers(labels, "labels")
    f = numbers(judge_on_labeled, "judge_on_labeled")
    fu = numbers(judge_on_unlabeled, "judge_on_unlabeled")
    if y.size != f.size:
        raise ValueError(
            f"labels has {y.size} values but judge_on_labeled has {f.size}:"
            " every labeled item needs the judge's verdict"
        )
    return y, f, fu


def check_bounds(labels: FloatArray, bounds: Bounds | None) -> None:
    """Labels outside ``bounds`` (a rate's label of 2, a 1-5 score of 0) are an input error."""
    if bounds is None or labels.size == 0:
        return
    outside = np.flatnonzero((labels < bounds[0]) | (labels > bounds[1]))
    if outside.size:
        raise ValueError(f"labels[{int(outside[0])}] = {labels[outside[0]]:g} is outside bounds "
                         f"[{bounds[0]:g}, {bounds[1]:g}]")


def is_share(labels: FloatArray, bounds: Bounds | None) -> bool:
    """A share target: 0/1 labels, or labels in [0, 1] with ``bounds`` (0, 1) (a pairwise win
    share, a tie counting half). Its interval is Wilson's at the effective sample size
    p(1 - p) / variance, the binomial sample size with the same variance."""
    if is_binary(labels):
        return True
    return bounds is not None and tuple(bounds) == (0.0, 1.0) and bool(
        ((labels >= 0.0) & (labels <= 1.0)).all())


def is_binary(*arrays: FloatArray) -> bool:
    return all(bool(np.isin(a, (0.0, 1.0)).all()) for a in arrays)


def kish_n(w: FloatArray | None, n: int) -> float:
    return float(n) if w is None else float(w.sum() ** 2 / (w**2).sum())


def ppi_mean(
    labels: Any,
    judge_on_labeled: Any,
    judge_on_unlabeled: Any,
    *,
    lam: float | None = None,
    weights: Any = None,
    clusters: Any = None,
    unlabeled_clusters: Any = None,
    strata: Any = None,
    bounds: Bounds | None = None,
) -> EstimateResult:
    """PPI++ estimate of the mean of ``labels`` over the population the judge saw.

    ``labels`` and ``judge_on_labeled`` are aligned numbers (0/1 for a rate) on the
    labeled items; ``judge_on_unlabeled`` the judge's on the other items (or on all
    items). ``lam`` fixes lambda (1 = plain PPI, 0 = labels only); None tunes it.
    ``weights`` (1/inclusion probability per labeled item) corrects a non-uniform
    labeling queue, ``strata`` (its stratum per labeled item) gives the stratified
    variance; ``clusters``/``unlabeled_clusters`` (one id per item, shared
    ids join the sets) give a cluster-robust variance. ``bounds`` clips the
    interval, e.g. (0, 1) for a rate, and every label must lie within it. 0/1 labels
    get Wilson's interval at PPI++'s effective sample size, the estimate kept in [0, 1].
    """
    y, f, fu = estimate_inputs(labels, judge_on_labeled, judge_on_unlabeled)
    n, big_n = y.size, fu.size
    if n == 0:
        return undefined_estimate("no labeled items: PPI needs human labels", n, big_n, "ppi++")
    if big_n == 0:
        return undefined_estimate(
            "no unlabeled items: every item is labeled; use the labels-only estimate",
            n,
            big_n,
            "ppi++",
        )
    if lam is not None and not (math.isfinite(lam) and 0.0 <= lam <= 1.0):
        raise ValueError(f"lam must be between 0 and 1, got {lam!r}")
    check_bounds(y, bounds)
    design, n_clusters, df = design_of(n, big_n, weights, clusters, unlabeled_clusters, strata)
    out = core.ppi_arrays(y[None], f[None], fu, design, lam)
    statistic, variance = float(out.statistic[0]), float(out.variance[0])
    classical = float(out.classical_variance[0])
    if not math.isfinite(variance):
        return undefined_estimate(ONE_CLUSTER, n, big_n, "ppi++")
    se = math.sqrt(variance)
    effective = n * classical / variance if variance > 0 else math.nan
    note, wilson_n = None, None
    if se == 0.0:
        if is_binary(y):
            wilson_n = kish_n(design.weights, n)
            note = "no variation in the labeled items: the labels-only Wilson interval is shown"
            statistic = float(out.classical[0])
        else:
            note = "no variation in the labeled items: the interval is undefined"
    elif is_share(y, bounds):
        # a 0/1 target: Wilson at PPI++'s effective sample size, inside [0, 1]; with 0/1
        # verdicts too, the variance behind that size is floored for unseen disagreements
        spread = out.variance
        if is_binary(y, f, fu):
            spread = np.maximum(spread, core.discordance_floor(y[None], f[None], fu, out.lam))
        wilson_n = float(core.ppi_wilson_n(out.classical, spread,
                                           kish_n(design.weights, n))[0])
        statistic = min(max(statistic, 0.0), 1.0)
    return EstimateResult(
        statistic,
        se,
        n,
        big_n,
        "ppi++",
        lam=float(out.lam[0]),
        effective_n=effective,
        n_clusters=n_clusters,
        note=note,
        bounds=bounds,
        wilson_n=wilson_n,
        df=df,
    )


def classical_mean(
    labels: Any,
    *,
    weights: Any = None,
    clusters: Any = None,
    strata: Any = None,
    bounds: Bounds | None = None,
    method: str = "labels only",
) -> EstimateResult:
    """Mean of ``labels`` alone (the classical estimate), design-weighted and cluster-robust.

    A 0/1 outcome (or a share in [0, 1] with bounds (0, 1)) gets a Wilson interval at its
    effective sample size (p(1-p)/variance: n itself for a simple random sample); other
    outcomes a Wald
    interval, as ``ppi_py``'s ``classical_mean_ci`` (population SD).
    """
    y = numbers(labels, "labels")
    n = y.size
    if n == 0:
        return undefined_estimate("no values", 0, 0, method)
    design, n_clusters, df = design_of(
        n, 0, weights, clusters, None if clusters is None else [], strata
    )
    means, variances = core.mean_arrays(y[None], design)
    statistic, variance = float(means[0]), float(variances[0])
    if not math.isfinite(variance):
        return undefined_estimate(ONE_CLUSTER, n, 0, method)
    wilson_n = None
    if is_share(y, bounds):
        wilson_n = (
            statistic * (1.0 - statistic) / variance if variance > 0 else kish_n(design.weights, n)
        )
    return EstimateResult(
        statistic,
        math.sqrt(variance),
        n,
        0,
        method,
        effective_n=float(n),
        n_clusters=n_clusters,
        bounds=bounds,
        wilson_n=wilson_n,
        df=df,
    )


def ppi_sample_size(
    *,
    half_width: float,
    variance: float,
    correlation: float = 0.0,
    n_unlabeled: float = math.inf,
    confidence_level: float = 0.95,
) -> int:
    """Labels for a PPI++ interval of +/- ``half_width`` (``correlation`` 0 = labels only).

    With the power-tuned lambda the variance with n labels is
    sigma^2 / n * (1 - rho^2 N / (N + n)) (sigma^2 = ``variance`` of the human
    outcome, rho = ``correlation`` of judge and human outcome, N judged items);
    the smallest n with z * sqrt(that) <= d solves a quadratic. N infinite gives
    z^2 sigma^2 (1 - rho^2) / d^2.
    """
    d = float(half_width)
    if not (math.isfinite(d) and d > 0):
        raise ValueError(f"half_width must be positive, got {half_width!r}")
    if not (math.isfinite(variance) and variance > 0):
        raise ValueError(f"variance must be a positive number, got {variance!r} (outcomes that "
                         "never vary cannot tell how many labels an interval needs)")
    if not (math.isfinite(correlation) and -1.0 <= correlation <= 1.0):
        raise ValueError(f"correlation must be between -1 and 1, got {correlation!r}")
    if not n_unlabeled > 0:
        raise ValueError(f"n_unlabeled must be positive, got {n_unlabeled!r}")
    z = z_critical(check_confidence_level(confidence_level))
    k = z * z * variance
    rho2 = correlation * correlation
    if math.isinf(n_unlabeled):
        n = k * (1.0 - rho2) / (d * d)
    else:
        big_n = float(n_unlabeled)
        b = d * d * big_n - k
        n = (-b + math.sqrt(b * b + 4.0 * d * d * k * big_n * (1.0 - rho2))) / (2.0 * d * d)
    return max(1, math.ceil(n - 1e-9))


__all__ = [
    "ONE_CLUSTER",
    "EstimateResult",
    "check_bounds",
    "classical_mean",
    "design_of",
    "estimate_inputs",
    "is_binary",
    "is_share",
    "kish_n",
    "numbers",
    "ppi_mean",
    "ppi_sample_size",
    "undefined_estimate",
]
