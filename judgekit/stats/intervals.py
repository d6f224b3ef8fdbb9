"""Confidence intervals: Wilson for proportions, and the bootstrap for everything else.

The bootstrap here resamples the unit the data was sampled by: items by
default, or whole clusters (all items sharing a prompt or conversation) when
``clusters`` is given, because items from one cluster are not independent and
an item-level bootstrap then understates the uncertainty. All resampling is
seeded through ``random_state`` so a report is reproducible.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from judgekit.stats import _resample
from judgekit.stats._interval import ConfidenceInterval, refused
from judgekit.stats._result import used_clusters
from judgekit.stats._result_outcomes import PairedBootstrapResult
from judgekit.stats._validate import (
    FloatArray,
    IntArray,
    RandomState,
    as_float_with_missing,
    check_choice,
    check_confidence_level,
    check_n_resamples,
    check_same_length,
    cluster_codes,
    rng_from,
)

__all__ = ["bootstrap_ci", "paired_bootstrap", "wilson_interval"]


def _check_count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


def wilson_interval(successes: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927), no continuity correction.

    Unlike the Wald interval it never collapses to a point at 0/n or n/n:
    5/5 gives (0.566, 1.0) at 95%.
    """
    k = _check_count(successes, "successes")
    total = _check_count(n, "n")
    if total <= 0:
        raise ValueError(f"n must be positive, got {total}")
    if not 0 <= k <= total:
        raise ValueError(f"successes must be between 0 and n={total}, got {k}")
    return _resample.wilson_bounds(k, total, check_confidence_level(confidence_level))


def _stack_arrays(arrays: tuple[npt.ArrayLike, ...]) -> tuple[list[np.ndarray], int]:
    if not arrays:
        raise ValueError("bootstrap_ci needs at least one data array")
    data = [np.asarray(a) for a in arrays]
    for i, arr in enumerate(data):
        if arr.ndim == 0:
            raise ValueError(f"array {i} is a scalar; pass one value per item")
    n = check_same_length(*((f"array {i}", arr) for i, arr in enumerate(data)))
    return data, n


def _replicates(
    fn: Callable[..., Any],
    data: list[np.ndarray],
    n: int,
    n_resamples: int,
    rng: np.random.Generator,
    codes: IntArray | None,
    vectorized: bool,
    unit_strata: IntArray | None = None,
) -> FloatArray:
    if vectorized and codes is None:
        out = np.empty(n_resamples)
        step = max(1, min(n_resamples, 2_000_000 // max(n, 1)))
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            idx = rng.integers(0, n, size=(rows, n))
            out[start : start + rows] = np.asarray(fn(*(arr[idx] for arr in data)), dtype=float)
        return out
    if codes is None:
        values = np.empty(n_resamples)
        for r in range(n_resamples):
            idx = rng.integers(0, n, size=n)
            values[r] = float(fn(*(arr[idx] for arr in data)))
        return values
    values = np.empty(n_resamples)
    done = 0
    for flat, lengths in _resample.cluster_resample_indices(codes, n_resamples, rng, unit_strata):
        ends = np.cumsum(lengths)
        if vectorized:
            # resamples of equal length stack into one (rows, length) call
            for length in np.unique(lengths):
                same = np.flatnonzero(lengths == length)
                idx = flat[(ends[same] - length)[:, None] + np.arange(length)]
                values[done + same] = np.asarray(fn(*(arr[idx] for arr in data)), dtype=float)
        else:
            for r, idx in enumerate(np.split(flat, ends[:-1])):
                values[done + r] = float(fn(*(arr[idx] for arr in data)))
        done += lengths.size
    return values


def _jackknife(
    fn: Callable[..., Any], data: list[np.ndarray], n: int, codes: IntArray | None, vectorized: bool
) -> FloatArray:
    values = []
    for keep in _resample.jackknife_index_sets(codes, n):
        subset = [arr[keep] for arr in data]
        if vectorized:
            values.append(float(np.asarray(fn(*(a[None, ...] for a in subset))).reshape(-1)[0]))
        else:
            values.append(float(fn(*subset)))
    return np.asarray(values)


def bootstrap_ci(
    statistic_fn: Callable[..., Any],
    *arrays: npt.ArrayLike,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    random_state: RandomState = None,
    clusters: npt.ArrayLike | None = None,
    method: Literal["percentile", "bca"] = "percentile",
    vectorized: bool = False,
    strata: npt.ArrayLike | None = None,
) -> ConfidenceInterval:
    """Bootstrap interval of ``statistic_fn(*arrays)``, resampling items jointly.

    All arrays are indexed by the same resampled item indices (a paired
    bootstrap). With ``clusters`` (one id per item) whole clusters are drawn
    with replacement. With ``strata`` (one id per item, e.g. the stratum a
    labeling queue drew the item from) each stratum is resampled on its own and
    keeps its size, as the sampling design did (clusters are then nested in
    strata). ``method="bca"`` adds Efron's bias and acceleration
    corrections; its jackknife calls ``statistic_fn`` once per item (or
    cluster), so prefer the percentile method for large n with a slow statistic.
    With ``vectorized=True`` the function receives arrays with a leading
    resample axis, shape (B, n, ...), and must return shape (B,).
    """
    check_choice(method, "method", ("percentile", "bca"))
    check_n_resamples(n_resamples)
    level = check_confidence_level(confidence_level)
    data, n = _stack_arrays(arrays)
    codes = None if clusters is None else cluster_codes(clusters, n)
    unit_strata = None
    if strata is not None:
        codes, unit_strata = _resample.stratified_units(cluster_codes(strata, n, "strata"), codes)
    rng = rng_from(random_state)
    if vectorized:
        estimate = float(np.asarray(statistic_fn(*(a[None, ...] for a in data))).reshape(-1)[0])
    else:
        estimate = float(statistic_fn(*data))
    if not np.isfinite(estimate):
        return refused("the statistic is undefined on the data")
    replicates = _replicates(
        statistic_fn, data, n, n_resamples, rng, codes, vectorized, unit_strata
    )
    if method == "bca":
        jackknife = _jackknife(statistic_fn, data, n, codes, vectorized)
        return _resample.bca_interval(replicates, estimate, jackknife, None, level)
    return _resample.percentile_interval(replicates, level)


def paired_bootstrap(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    statistic: Callable[[FloatArray], float] = np.mean,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    random_state: RandomState = None,
    clusters: npt.ArrayLike | None = None,
    method: Literal["percentile", "bca"] = "percentile",
) -> PairedBootstrapResult:
    """Difference statistic(a) - statistic(b) on the same items, with a paired bootstrap.

    Both systems are resampled with the *same* item indices, which keeps the
    pairing (an item hard for one system is usually hard for the other). Pairs
    with a missing (None/NaN) score on either side are dropped; ``n`` counts
    the pairs used. For the default ``np.mean`` the replicates are computed from
    resampled sums in one vectorised step.
    """
    check_choice(method, "method", ("percentile", "bca"))
    check_n_resamples(n_resamples)
    level = check_confidence_level(confidence_level)
    xa = as_float_with_missing(a, "a")
    xb = as_float_with_missing(b, "b")
    check_same_length(("a", xa), ("b", xb))
    used = ~(np.isnan(xa) | np.isnan(xb))
    n = int(used.sum())
    if n == 0:
        raise ValueError("no pair has a score on both sides (all missing)")
    xa, xb = xa[used], xb[used]
    codes = None if clusters is None else used_clusters(clusters, used)
    rng = rng_from(random_state)
    stat_a, stat_b = float(statistic(xa)), float(statistic(xb))
    estimate = stat_a - stat_b
    if statistic is np.mean:
        diffs = xa - xb
        contributions = np.column_stack([diffs, np.ones(n)])
        patterns, frequencies = _resample.patterns_of(contributions, codes)
        sums = _resample.resampled_sums(patterns, frequencies, n_resamples, rng)
        replicates = sums[:, 0] / sums[:, 1]
        totals = contributions.sum(axis=0)
        if codes is None:
            jackknife = (totals[0] - diffs) / (n - 1) if n > 1 else np.array([np.nan])
        else:
            per_cluster = np.column_stack(
                [np.bincount(codes, weights=contributions[:, j]) for j in range(2)]
            )
            with np.errstate(divide="ignore", invalid="ignore"):
                jackknife = (totals[0] - per_cluster[:, 0]) / (totals[1] - per_cluster[:, 1])
    else:

        def difference(x: FloatArray, y: FloatArray) -> float:
            return float(statistic(x)) - float(statistic(y))

        replicates = _replicates(difference, [xa, xb], n, n_resamples, rng, codes, False)
        jackknife = (
            _jackknife(difference, [xa, xb], n, codes, False)
            if method == "bca"
            else np.array([], dtype=float)
        )
    if method == "bca":
        low, high = _resample.bca_interval(replicates, estimate, jackknife, None, level)
    else:
        low, high = _resample.percentile_interval(replicates, level)
    return PairedBootstrapResult(
        statistic=estimate,
        n=n,
        method="bca" if method == "bca" else "percentile",
        _replicates=replicates,
        _jackknife=np.asarray(jackknife, dtype=float),
        statistic_a=stat_a,
        statistic_b=stat_b,
        pvalue=_resample.bootstrap_pvalue(
            replicates, n if codes is None else int(np.unique(codes).size)),
        ci_low=low,
        ci_high=high,
        confidence_level=level,
    )
