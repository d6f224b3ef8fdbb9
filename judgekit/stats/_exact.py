"""Intervals for counts that gates read: Clopper-Pearson and Tango's paired score interval.

A gate FAILs a judge when the lower bound of a figure's interval exceeds a
threshold, so the interval's *one-sided* error at the threshold is the gate's
false-FAIL rate. Wilson's interval is two-sided accurate on average but its
lower bound can exceed a true rate of 0.1 up to ~10% of the time at small n;
Clopper-Pearson never does (it is the inversion of the exact binomial test).

The injection probe's net move, (toward - away) / n over paired verdicts, is a
difference of two paired proportions (McNemar's design): Tango's (1998) score
interval inverts the score test of that difference with the cell probabilities
re-estimated under each null, stays inside [-1, 1], is never zero-width, and is
one of the intervals Fagerland, Lydersen & Laake (2013, Statistics in Medicine
32:1703) recommend for this design. Checked against R's ``PropCIs::scoreci.mp``.
"""

from __future__ import annotations

import math

from judgekit.stats._validate import check_confidence_level

__all__ = ["clopper_pearson_interval", "tango_interval"]


def _counts(k: int, n: int) -> None:
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= k <= n:
        raise ValueError(f"k must be between 0 and n={n}, got {k}")


def clopper_pearson_interval(k: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of ``k / n``: each tail holds at most (1-level)/2."""
    from scipy import stats  # a second to import: only where it is used

    _counts(k, n)
    alpha = 1 - check_confidence_level(confidence_level)
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def _score(toward: int, away: int, n: int, delta: float) -> float:
    """Tango's score statistic of H0: p(toward) - p(away) = delta (decreasing in delta)."""
    numerator = toward - away - n * delta
    if numerator == 0:
        return 0.0
    b = -toward - away + (2 * n - toward + away) * delta
    c = -away * delta * (1 - delta)
    # the restricted maximum-likelihood p(away) under H0 (Tango 1998, eq. 25)
    p_away = (math.sqrt(max(b * b - 8 * n * c, 0.0)) - b) / (4 * n)
    variance = n * (2 * p_away + delta * (1 - delta))
    if variance <= 0:
        return math.copysign(math.inf, numerator)
    return numerator / math.sqrt(variance)


def _solve(toward: int, away: int, n: int, target: float, low: float, high: float) -> float:
    """The delta in [low, high] where the (decreasing) score equals ``target``, by bisection."""
    for _ in range(200):
        mid = (low + high) / 2
        if _score(toward, away, n, mid) > target:
            low = mid
        else:
            high = mid
        if high - low < 1e-13:
            break
    return (low + high) / 2


def tango_interval(toward: int, away: int, n: int,
                   confidence_level: float = 0.95) -> tuple[float, float]:
    """Tango's score interval for (toward - away) / n: ``toward`` and ``away`` are the two
    discordant counts among ``n`` pairs (the rest unchanged)."""
    from scipy import stats

    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if toward < 0 or away < 0 or toward + away > n:
        raise ValueError(f"toward ({toward}) and away ({away}) must be counts summing to at "
                         f"most n={n}")
    level = check_confidence_level(confidence_level)
    z = float(stats.norm.ppf(1 - (1 - level) / 2))
    estimate = (toward - away) / n
    low = -1.0 if away == n else _solve(toward, away, n, z, -1.0, estimate)
    high = 1.0 if toward == n else _solve(toward, away, n, -z, estimate, 1.0)
    return max(-1.0, low), min(1.0, high)
