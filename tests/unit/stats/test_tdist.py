"""The t and normal tails taken from scipy.special, bit for bit against scipy.stats.

``judgekit.stats._tdist`` exists so that a report need not import scipy.stats; the
values it gives must be exactly scipy.stats' (``==`` on floats, NaN where scipy
gives NaN), over sample sizes from 2, one- and two-sided alternatives, zero
variance, NaN and degrees of freedom at the edges.
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

from judgekit.stats._tdist import normal_cdf, t_quantile, ttest_1samp_pvalue

ALTERNATIVES = ("less", "greater", "two-sided")


def _same(ours: float, theirs: float) -> bool:
    return (math.isnan(ours) and math.isnan(theirs)) or ours == theirs


def _scipy_p(sample: np.ndarray, popmean: float, alternative: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.ttest_1samp(sample, popmean, alternative=alternative).pvalue)


def _samples() -> list[np.ndarray]:
    rng = np.random.default_rng(20261201)
    out = []
    for n in (2, 3, 4, 5, 7, 10, 30, 31, 100, 999, 5000):
        out.append(rng.normal(0.1, 1.0, n))
        out.append(rng.integers(-1, 2, n).astype(np.float64))  # ties, the alt-test's case
        out.append(rng.normal(0.0, 1e-9, n) + 1e6)  # large offset, tiny spread
    out.append(np.array([0.0, 1.0]))
    out.append(np.array([0.3, 0.3, 0.3]))  # zero variance, mean above
    out.append(np.array([-0.5, -0.5]))  # zero variance, mean below
    out.append(np.array([0.2, 0.2, 0.2]))  # zero variance, mean at popmean
    out.append(np.array([0.1, np.nan, 0.4]))
    out.append(np.array([np.nan, np.nan]))
    out.append(np.array([np.inf, 0.0, 1.0]))
    return out


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_ttest_pvalue_is_scipys_to_the_bit(alternative: str) -> None:
    checked = 0
    for sample in _samples():
        for popmean in (0.2, 0.0, -0.3, 1e6, 0.5):
            ours = ttest_1samp_pvalue(sample, popmean, alternative)  # type: ignore[arg-type]
            theirs = _scipy_p(sample, popmean, alternative)
            assert _same(ours, theirs), (sample[:5], sample.size, popmean, ours, theirs)
            checked += 1
    assert checked == len(_samples()) * 5


def test_ttest_pvalue_of_fewer_than_two_values_is_nan() -> None:
    for sample in (np.array([]), np.array([0.4])):
        assert math.isnan(ttest_1samp_pvalue(sample, 0.2, "less"))
        assert math.isnan(_scipy_p(sample, 0.2, "less"))


def test_ttest_pvalue_rejects_an_unknown_alternative() -> None:
    with pytest.raises(ValueError, match="alternative"):
        ttest_1samp_pvalue(np.array([1.0, 2.0]), 0.0, "smaller")  # type: ignore[arg-type]


def test_t_quantile_is_scipys_to_the_bit() -> None:
    qs = (0.0, 1e-12, 0.025, 0.05, 0.5, 0.8, 0.9, 0.95, 0.975, 0.995, 0.9995, 1 - 1e-12, 1.0,
          -0.1, 1.1, math.nan)
    dfs = (0.5, 1, 2, 3, 4, 9, 19, 29, 49, 99, 1e3, 1e6, math.inf, 0, -1, math.nan)
    for q in qs:
        for df in dfs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = float(stats.t.ppf(q, df))
            assert _same(t_quantile(q, df), theirs), (q, df)


def test_normal_cdf_is_scipys_to_the_bit() -> None:
    rng = np.random.default_rng(7)
    xs = [*rng.normal(0, 3, 500).tolist(), 0.0, -0.0, 40.0, -40.0, math.inf, -math.inf, math.nan]
    for x in xs:
        assert _same(normal_cdf(x), float(stats.norm.cdf(x))), x
        z = np.float64(x)  # the BCa bounds pass numpy scalars
        assert _same(normal_cdf(z), float(stats.norm.cdf(z))), x


def test_importing_the_report_does_not_import_scipy_stats() -> None:
    code = "import sys, judgekit.report; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
