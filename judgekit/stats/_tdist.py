"""Student t and normal tails from ``scipy.special``, without importing ``scipy.stats``.

Importing ``scipy.stats`` costs more than a second of CPU and about 50 MB, a large
share of a report's import time, for the few distribution functions the report
needs. ``scipy.stats`` computes these from the same ``scipy.special`` functions
(``t.ppf`` is ``stdtrit``, ``t.cdf`` is ``stdtr``, ``norm.cdf`` is ``ndtr``), so
calling them directly gives bit-identical results; the edges that
``rv_continuous`` handles around them (q of 0 or 1, a df that is not positive, NaN)
are repeated here. ``tests/unit/stats/test_tdist.py`` checks each function against
``scipy.stats`` over a grid of inputs.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy import special

from judgekit.stats._validate import FloatArray

Alternative = Literal["two-sided", "less", "greater"]


def t_quantile(q: float, df: float) -> float:
    """``scipy.stats.t.ppf(q, df)``: the q-quantile of Student's t on ``df`` degrees of freedom."""
    if math.isnan(q) or math.isnan(df) or not df > 0 or not 0.0 <= q <= 1.0:
        return math.nan
    if q == 0.0:
        return -math.inf
    if q == 1.0:
        return math.inf
    return float(special.stdtrit(df, q))


def normal_cdf(x: float) -> float:
    """``scipy.stats.norm.cdf(x)`` for one value."""
    return float(special.ndtr(x))


def ttest_1samp_pvalue(
    sample: FloatArray, popmean: float, alternative: Alternative = "two-sided"
) -> float:
    """The p-value of ``scipy.stats.ttest_1samp(sample, popmean, alternative=...)``.

    The same arithmetic in the same order as scipy (mean, the second central moment
    scaled by n / (n - 1), the standard error, then ``stdtr`` on n - 1 degrees of
    freedom), so the p-value is the same to the last bit. Fewer than two values
    give NaN, as does a NaN among them; zero variance gives the t statistic's
    limit (p of 0 or 1, NaN when the mean equals ``popmean``).
    """
    a = np.asarray(sample, dtype=np.float64).ravel()
    n = a.shape[0]
    if n < 2:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):  # inf and NaN propagate, as in scipy
        mean = np.mean(a)
        centre = np.mean(a, axis=0, keepdims=True)
        moment = np.mean((a - centre) ** 2, axis=0)
        nf = np.asarray(n, dtype=np.float64)
        variance = moment * (nf / (nf - 1))
        denom = np.sqrt(variance / n)
        t = np.divide(mean - np.float64(popmean), denom)
    df = np.float64(n - 1)
    if alternative == "less":
        p = special.stdtr(df, t)
    elif alternative == "greater":
        p = special.stdtr(df, -t)
    elif alternative == "two-sided":
        p = 2 * special.stdtr(df, -np.abs(t))
    else:
        raise ValueError(
            f"alternative must be 'less', 'greater' or 'two-sided', not {alternative!r}"
        )
    return float(p)
