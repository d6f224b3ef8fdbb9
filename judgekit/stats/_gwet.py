"""Gwet's AC1 without the bootstrap: its large-sample variance and a Wilson-score interval.

Why not the percentile bootstrap: AC1 = 1 - (1 - p_o) / (1 - p_e) is, to first
order, a rescaled share of disagreeing items, and when that share is small (high
agreement, n around 50) the bootstrap behaves like the Wald interval of a
binomial proportion. Its resamples sit on the lattice d/n, and with 5 expected
disagreements in 50 items it covered 0.85-0.87 instead of 0.95 in the coverage
simulation (docs/statistics.md, Coverage); Gwet's analytic SE with a normal or
t interval has the same Wald shape and the same failure. The Wilson score
interval is the standard cure for exactly this binomial problem (Brown, Cai &
DasGupta 2001, *Statist. Sci.* 16:101-133), so the interval here is Wilson's
for the disagreement share q = 1 - p_o, with the sample size replaced by the
effective size q (1 - q) / Var(q) implied by Gwet's variance (so the spread of
p_e is counted too), mapped back through 1 - p_e.
"""

from __future__ import annotations

import math

import numpy as np

from judgekit.stats._interval import ConfidenceInterval
from judgekit.stats._resample import wilson_bounds
from judgekit.stats._validate import FloatArray


def gwet_analytic_se(table: FloatArray) -> float:
    """Large-sample SE of AC1 for two raters (Gwet 2008), as irrCAC's ``gwet.ac1.table``.

    With pi_k the mean of the two raters' shares of category k, K categories and
    g_kl = (1 - (pi_k + pi_l) / 2) / (K - 1):
    Var = (sum_kl p_kl ([k = l] - 2 (1 - AC1) g_kl)^2 - (p_o - 2 (1 - AC1) p_e)^2)
    / (n (1 - p_e)^2), the delta-method variance over items (no finite-population
    correction). NaN with fewer than two categories or p_e = 1.
    """
    n = float(table.sum())
    k = table.shape[0]
    if k < 2 or n <= 0:
        return math.nan
    p = table / n
    p_o = float(np.trace(p))
    pi = (p.sum(axis=1) + p.sum(axis=0)) / 2.0
    p_e = float(np.sum(pi * (1.0 - pi)) / (k - 1))
    if abs(1.0 - p_e) <= 1e-12:
        return math.nan
    ac1 = (p_o - p_e) / (1.0 - p_e)
    g = (1.0 - (pi[:, None] + pi[None, :]) / 2.0) / (k - 1)
    term = np.eye(k) - 2.0 * (1.0 - ac1) * g
    variance = (float(np.sum(p * term**2)) - (p_o - 2.0 * (1.0 - ac1) * p_e) ** 2) / (
        n * (1.0 - p_e) ** 2
    )
    return math.sqrt(max(variance, 0.0))


def wilson_ac1_interval(
    p_observed: float, p_expected: float, standard_error: float, n: int, confidence_level: float
) -> ConfidenceInterval:
    """Wilson-score interval of AC1 (or any (p_o - p_e) / (1 - p_e) with a known SE).

    The Wilson interval of the disagreement share q = 1 - p_o at the effective
    sample size n_eff = q (1 - q) / (SE (1 - p_e))^2, each bound mapped to
    1 - q / (1 - p_e). With n_eff = n this is Wilson's interval of p_o with p_e held
    fixed; the effective size widens it by as much as p_e's own spread adds. When
    q is 0 or 1, or the SE is 0, n is used. The lower bound is clipped at -1.
    """
    q = 1.0 - p_observed
    var_q = (standard_error * (1.0 - p_expected)) ** 2
    usable = 0.0 < q < 1.0 and math.isfinite(var_q) and var_q > 0.0
    n_eff = q * (1.0 - q) / var_q if usable else float(n)
    q_low, q_high = wilson_bounds(q * n_eff, n_eff, confidence_level)
    scale = 1.0 - p_expected
    return ConfidenceInterval(max(-1.0, 1.0 - q_high / scale), min(1.0, 1.0 - q_low / scale))


__all__ = ["gwet_analytic_se", "wilson_ac1_interval"]
