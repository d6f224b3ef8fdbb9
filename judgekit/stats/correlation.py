"""Rank correlations between a judge's scores and human scores.

Spearman's rho and Kendall's tau-b measure whether the judge *orders* items
like humans do, which is what matters for an ordinal (e.g. 1-5) scale whose
spacing is arbitrary. Tau-b corrects for the heavy ties of short scales.
p-values come from scipy; intervals default to the percentile bootstrap over
pairs (Fisher z is available as ``method="fisher"``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.stats._result_correlation import (
    CorrelationResult,
    WeightedFactory,
    WeightedStatistic,
)
from judgekit.stats._validate import FloatArray, as_float_with_missing, check_same_length

__all__ = ["kendall_tau", "spearman"]


def _pairs(x: Any, y: Any) -> tuple[FloatArray, FloatArray, np.ndarray]:
    fx, fy = as_float_with_missing(x, "x"), as_float_with_missing(y, "y")
    check_same_length(("x", fx), ("y", fy))
    used = ~(np.isnan(fx) | np.isnan(fy))
    return fx[used], fy[used], used


def _undefined_reason(x: FloatArray, y: FloatArray) -> str | None:
    if x.size < 2:
        return f"{x.size} complete pair(s): a correlation needs at least 2"
    if np.all(x == x[0]):
        return "x is constant, so the correlation is undefined"
    if np.all(y == y[0]):
        return "y is constant, so the correlation is undefined"
    return None


def _rowwise_pearson(a: FloatArray, b: FloatArray) -> FloatArray:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sum(a * b, axis=1) / np.sqrt(np.sum(a * a, axis=1) * np.sum(b * b, axis=1))
    return np.clip(r, -1.0, 1.0)


def _spearman_batch(x: FloatArray, y: FloatArray) -> FloatArray:
    """Spearman's rho for each row of (B, n) arrays: Pearson on mid-ranks."""
    from scipy import stats  # a second to import: only where it is used
    return _rowwise_pearson(stats.rankdata(x, axis=1), stats.rankdata(y, axis=1))


#: Up to this many pairs per row, tau-b is computed from pair-sign matrices in numpy.
_PAIRWISE_LIMIT = 300


def _kendall_pairwise(x: FloatArray, y: FloatArray) -> FloatArray:
    """tau-b = S / sqrt(n1 n2) from the signs of all pairs (O(n**2) per row, vectorised)."""
    n = x.shape[1]
    upper = np.triu_indices(n, k=1)
    out = np.empty(x.shape[0])
    step = max(1, 4_000_000 // max(n * n, 1))
    for start in range(0, x.shape[0], step):
        xs, ys = x[start : start + step], y[start : start + step]
        dx = np.sign(xs[:, :, None] - xs[:, None, :])[:, upper[0], upper[1]]
        dy = np.sign(ys[:, :, None] - ys[:, None, :])[:, upper[0], upper[1]]
        concordance = np.sum(dx * dy, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start : start + step] = concordance / np.sqrt(
                np.sum(dx * dx, axis=1) * np.sum(dy * dy, axis=1)
            )
    return out


def _kendall_batch(x: FloatArray, y: FloatArray) -> FloatArray:
    """Kendall's tau-b for each row of (B, n) arrays (NaN for a constant row)."""
    if x.shape[1] <= _PAIRWISE_LIMIT:
        return _kendall_pairwise(x, y)
    from scipy import stats  # a second to import: only where it is used
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        if np.all(x[i] == x[i, 0]) or np.all(y[i] == y[i, 0]):
            out[i] = np.nan
        else:
            out[i] = stats.kendalltau(x[i], y[i], variant="b").statistic
    return out


# -- weighted forms: one row of pattern counts per resample -----------------------
#
# A bootstrap resample (of items or of whole clusters) is a multiset of the
# observed pairs. Pairs with equal (x, y) are interchangeable, so a resample is
# fully described by how often each distinct pair ("pattern") occurs in it. The
# functions below compute the statistic of the expanded resample from those
# counts, for many resamples at once: the same value as ranking the expanded
# arrays, without building them.


def _midranks(values: FloatArray, counts: FloatArray) -> FloatArray:
    """Mid-rank of each pattern's value within each weighted row: shape (B, T)."""
    levels, inverse = np.unique(values, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(levels.size))
    per_level = np.add.reduceat(counts[:, order], starts, axis=1)
    ranks = np.cumsum(per_level, axis=1) - (per_level - 1.0) / 2.0
    ranks_of_patterns: FloatArray = ranks[:, inverse]
    return ranks_of_patterns


def _spearman_weighted(px: FloatArray, py: FloatArray) -> WeightedStatistic:
    def rho(counts: FloatArray) -> FloatArray:
        centre = (counts.sum(axis=1, keepdims=True) + 1.0) / 2.0  # mean of ranks 1..N
        rx = _midranks(px, counts) - centre
        ry = _midranks(py, counts) - centre
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.sum(counts * rx * ry, axis=1) / np.sqrt(
                np.sum(counts * rx * rx, axis=1) * np.sum(counts * ry * ry, axis=1)
            )
        return np.clip(r, -1.0, 1.0)

    return rho


#: Up to this many distinct (x, y) pairs, tau-b replicates come from pattern counts
#: (cost B * T**2); beyond it, from scipy per resample.
_PATTERN_LIMIT = 400


def _kendall_weighted(px: FloatArray, py: FloatArray) -> WeightedStatistic | None:
    if px.size > _PATTERN_LIMIT:
        return None
    sx = np.sign(px[:, None] - px[None, :])
    sy = np.sign(py[:, None] - py[None, :])
    concordance, ties_x, ties_y = sx * sy, sx * sx, sy * sy

    def tau_b(counts: FloatArray) -> FloatArray:
        # sums over ordered pairs of copies; copies of one pattern tie on both sides
        s = np.sum((counts @ concordance) * counts, axis=1)
        nx = np.sum((counts @ ties_x) * counts, axis=1)
        ny = np.sum((counts @ ties_y) * counts, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.clip(s / np.sqrt(nx * ny), -1.0, 1.0)

    return tau_b


def _correlation(
    x: Any,
    y: Any,
    method: str,
    compute: Callable[[FloatArray, FloatArray], tuple[float, float]],
    batch: Callable[[FloatArray, FloatArray], FloatArray],
    weighted: WeightedFactory,
    fisher_variance: Callable[[int], float],
) -> CorrelationResult:
    fx, fy, used = _pairs(x, y)
    reason = _undefined_reason(fx, fy)
    if reason is None:
        statistic, pvalue = compute(fx, fy)
    else:
        statistic = pvalue = float("nan")
    return CorrelationResult(
        float(statistic),
        int(fx.size),
        float(pvalue),
        method,
        reason,
        fx,
        fy,
        used,
        batch,
        weighted,
        fisher_variance,
    )


def _spearman_fisher_variance(n: int) -> float:
    return 1.06 / (n - 3) if n > 3 else float("nan")


def _kendall_fisher_variance(n: int) -> float:
    return 0.437 / (n - 4) if n > 4 else float("nan")


#: Up to this many pairs the Spearman p-value is the exact permutation p (n! orderings).
EXACT_PERMUTATION_MAX_N = 8


def _spearman_exact_pvalue(x: FloatArray, y: FloatArray, rho: float) -> float:
    """Two-sided exact permutation p of rho: share of the n! pairings with |rho*| >= |rho|.

    At small n the t approximation is badly off (n = 4 in perfect order gives 0.0
    where the exact p is 2/24 = 1/12; n = 2 gives NaN where it is 1).
    """
    from scipy import stats  # a second to import: only where it is used
    n = x.size
    ry = stats.rankdata(y)
    orders = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    permuted = _spearman_batch(np.broadcast_to(x, (orders.shape[0], n)), ry[orders])
    extreme = np.count_nonzero(np.abs(permuted) >= abs(rho) - 1e-12)
    return float(extreme / orders.shape[0])


def spearman(
    x: Iterable[Any] | npt.ArrayLike, y: Iterable[Any] | npt.ArrayLike
) -> CorrelationResult:
    """Spearman's rank correlation (Pearson correlation of mid-ranks).

    Pairs with None/NaN on either side are dropped. The p-value is the exact
    permutation p up to ``EXACT_PERMUTATION_MAX_N`` pairs, scipy's t approximation
    (n-2 degrees of freedom) beyond. Undefined (NaN) with fewer than two pairs or a
    constant variable.
    """
    from scipy import stats  # a second to import: only where it is used

    def compute(a: FloatArray, b: FloatArray) -> tuple[float, float]:
        res = stats.spearmanr(a, b)
        rho = float(res.statistic)
        if a.size <= EXACT_PERMUTATION_MAX_N:
            return rho, _spearman_exact_pvalue(a, b, rho)
        return rho, float(res.pvalue)

    return _correlation(
        x, y, "spearman", compute, _spearman_batch, _spearman_weighted, _spearman_fisher_variance
    )


def kendall_tau(
    x: Iterable[Any] | npt.ArrayLike, y: Iterable[Any] | npt.ArrayLike
) -> CorrelationResult:
    """Kendall's tau-b (Kendall 1945), which adjusts for ties in either variable.

    Pairs with None/NaN on either side are dropped. The p-value is scipy's
    (exact for small samples without ties, otherwise the normal approximation).
    """
    from scipy import stats  # a second to import: only where it is used

    def compute(a: FloatArray, b: FloatArray) -> tuple[float, float]:
        res = stats.kendalltau(a, b, variant="b")
        return float(res.statistic), float(res.pvalue)

    return _correlation(
        x,
        y,
        "kendall_tau_b",
        compute,
        _kendall_batch,
        _kendall_weighted,
        _kendall_fisher_variance,
    )
