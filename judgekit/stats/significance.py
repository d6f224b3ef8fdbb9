"""Significance tests: McNemar for paired correctness, an exact binomial test,
and Benjamini-Hochberg for many slices at once.

Two judges (or two models) scored on the *same* items are paired data; only
the items where they disagree carry evidence about which is better, which is
what McNemar's test uses. When a report tests every slice, some slices look
significant by chance; Benjamini-Hochberg controls the expected share of such
false discoveries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from judgekit.stats._result_outcomes import BinomialTestResult, McNemarResult
from judgekit.stats._validate import BoolArray, FloatArray, as_binary, check_same_length

__all__ = ["benjamini_hochberg", "binomial_test", "mcnemar"]


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
