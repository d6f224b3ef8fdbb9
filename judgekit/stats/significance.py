"""Significance tests: McNemar for paired correctness, an exact binomial test,
and Benjamini-Hochberg for many slices at once.

Two judges (or two models) scored on the *same* items are paired data; only
the items where they disagree carry evidence about which is better, which is
what McNemar's test uses. When a report tests every slice, some slices look
significant by chance; Benjamini-Hochberg controls the expected share of such
false discoveries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from judgekit.stats._resample import chunk_rows, patterns_of, resample_pattern_counts
from judgekit.stats._result_outcomes import BinomialTestResult, McNemarResult
from judgekit.stats._validate import (
    BoolArray,
    FloatArray,
    as_binary,
    check_same_length,
    cluster_codes,
)

__all__ = [
    "ClusterDifferenceTest",
    "benjamini_hochberg",
    "binomial_test",
    "cluster_difference_test",
    "mcnemar",
]


def mcnemar(
    a_correct: Iterable[Any] | npt.ArrayLike, b_correct: Iterable[Any] | npt.ArrayLike
) -> McNemarResult:
    """McNemar's test (McNemar 1947) with the exact two-sided binomial p-value.

    b = items only system a got right, c = items only system b got right;
    under "equally good" b ~ Binomial(b + c, 1/2). ``statistic`` is the paired
    accuracy difference (b - c) / n with a Newcombe interval; ``chi2`` is the
    uncorrected (b - c)**2 / (b + c) for reference. Items with a missing value
    on either side are dropped. With no discordant item the p-value is 1.
    """
    from scipy import stats  # a second to import: only where it is used
    xa, xb = as_binary(a_correct, "a_correct"), as_binary(b_correct, "b_correct")
    check_same_length(("a_correct", xa), ("b_correct", xb))
    used = ~(np.isnan(xa) | np.isnan(xb))
    xa, xb = xa[used], xb[used]
    n = int(xa.size)
    b = int(np.count_nonzero((xa == 1) & (xb == 0)))
    c = int(np.count_nonzero((xa == 0) & (xb == 1)))
    both_correct = int(np.count_nonzero((xa == 1) & (xb == 1)))
    both_wrong = n - b - c - both_correct
    if n == 0:
        nan = float("nan")
        reason = "no item has a result for both systems (all pairs have a missing value)"
        return McNemarResult(nan, 0, 0, 0, 0, 0, nan, nan, reason, xa - xb, used)
    discordant = b + c
    pvalue = 1.0 if discordant == 0 else float(stats.binomtest(b, discordant, 0.5).pvalue)
    chi2 = float("nan") if discordant == 0 else (b - c) ** 2 / discordant
    return McNemarResult(
        (b - c) / n, n, b, c, both_correct, both_wrong, min(pvalue, 1.0), chi2, None, xa - xb, used
    )


def binomial_test(k: int, n: int, p: float = 0.5) -> BinomialTestResult:
    """Exact two-sided binomial test of k successes in n trials against proportion p.

    ``statistic`` is k / n; the interval is Wilson's (``method="exact"`` for
    Clopper-Pearson).
    """
    from scipy import stats  # a second to import: only where it is used
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= k <= n:
        raise ValueError(f"k must be between 0 and n={n}, got {k}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be between 0 and 1, got {p!r}")
    pvalue = float(stats.binomtest(int(k), int(n), p).pvalue)
    return BinomialTestResult(int(k) / int(n), int(n), int(k), min(pvalue, 1.0), float(p))


def benjamini_hochberg(
    pvalues: Iterable[float] | npt.ArrayLike, q: float = 0.05
) -> tuple[BoolArray, FloatArray]:
    """Benjamini-Hochberg (1995) step-up procedure at false discovery rate q.

    Returns ``(rejected, adjusted)`` in the input order: ``adjusted`` are the BH
    adjusted p-values (min over k >= i of p_(k) m / k, capped at 1) and
    ``rejected`` is ``adjusted <= q``, i.e. the largest k with
    p_(k) <= k q / m and everything below it.
    """
    p = np.asarray(pvalues if isinstance(pvalues, np.ndarray) else list(pvalues), dtype=float)  # type: ignore[arg-type]
    if p.ndim != 1:
        raise ValueError(f"pvalues must be one-dimensional, got shape {p.shape}")
    check_same_length(("pvalues", p))
    if not np.isfinite(p).all():
        raise ValueError("pvalues contains NaN or infinite values")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("pvalues must lie in [0, 1]")
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q must be in (0, 1], got {q!r}")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted <= q, adjusted


@dataclass(frozen=True)
class ClusterDifferenceTest:
    """Result of :func:`cluster_difference_test`.

    ``statistic`` is the observed difference (group rate minus rest rate), ``n``
    the number of units, ``n_clusters`` the number of clusters resampled.
    """

    statistic: float
    pvalue: float
    n: int
    n_clusters: int
    n_resamples: int
    alternative: str


def cluster_difference_test(
    successes: Iterable[Any] | npt.ArrayLike,
    in_group: Iterable[Any] | npt.ArrayLike,
    clusters: Iterable[Any] | npt.ArrayLike,
    *,
    alternative: Literal["less", "greater"] = "less",
    n_resamples: int = 1000,
    random_state: int | None = 0,
) -> ClusterDifferenceTest:
    """Cluster bootstrap test of a difference in success rates, group vs rest.

    The statistic is ``d = mean(successes[group]) - mean(successes[rest])``. Whole
    clusters are resampled with replacement (each brings all its units, in the
    group or not), so units that share a cluster are never treated as independent
    (Davison & Hinkley 1997, sec. 3.8; Field & Welsh 2007). The null distribution
    of ``d`` is the bootstrap distribution of ``d* - d`` (centred at the observed
    value: Hall & Wilson 1991, first guideline), so the one-sided p-value for
    ``alternative="less"`` is ``(1 + #{d* - d <= d}) / (B + 1)``. A resample in
    which the group or the rest is empty (its rate undefined) counts against
    rejection. Vectorised: clusters with identical sums are merged into patterns
    and each resample is a multinomial draw of pattern counts.
    """
    y = as_binary(successes, "successes").astype(np.float64)
    g = as_binary(in_group, "in_group").astype(np.float64)
    check_same_length(("successes", y), ("in_group", g))
    if np.isnan(y).any() or np.isnan(g).any():
        raise ValueError("successes and in_group must not contain missing values")
    if alternative not in ("less", "greater"):
        raise ValueError(f"alternative must be 'less' or 'greater', got {alternative!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    n = int(y.size)
    codes = cluster_codes(clusters, n)
    n_clusters = int(codes.max()) + 1 if n else 0
    n_in, n_out = float(g.sum()), float(n - g.sum())
    if n_in == 0 or n_out == 0:
        return ClusterDifferenceTest(math.nan, math.nan, n, n_clusters, n_resamples, alternative)
    observed = float((y * g).sum() / n_in - (y * (1 - g)).sum() / n_out)
    contributions = np.column_stack([y * g, g, y * (1 - g), 1 - g])
    patterns, frequencies = patterns_of(contributions, codes)
    rng = np.random.default_rng(random_state)
    sign = 1.0 if alternative == "less" else -1.0
    extreme = 0
    step = chunk_rows(n_resamples, int(frequencies.size))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        sums = resample_pattern_counts(frequencies, rows, rng).astype(np.float64) @ patterns
        with np.errstate(divide="ignore", invalid="ignore"):
            replicate = sums[:, 0] / sums[:, 1] - sums[:, 2] / sums[:, 3]
        # NaN (an empty side) fails the comparison and so counts as not extreme enough to reject
        extreme += int(np.sum(~(sign * (replicate - observed) > sign * observed)))
    pvalue = min(1.0, (1 + extreme) / (n_resamples + 1))
    return ClusterDifferenceTest(observed, pvalue, n, n_clusters, n_resamples, alternative)
