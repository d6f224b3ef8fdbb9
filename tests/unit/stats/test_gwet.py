"""Gwet's AC1: the analytic SE against irrCAC, and the default Wilson interval at its edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from judgekit.stats import gwet_ac1
from judgekit.stats._gwet import gwet_analytic_se, wilson_ac1_interval

#: Gwet's Handbook table "cont3x3abstractors" (irrCAC's data set): rows = abstractor 1.
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]


def _pairs(table: list[list[int]]) -> tuple[list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return a, b


def test_se_and_t_interval_match_irrcac_on_the_handbook_table() -> None:
    # irrCAC 0.4.4, CAC(table_cont3x3abstractors()).gwet(): AC1 0.84933, se 0.0432175,
    # confidence_interval (0.76358, 0.93508) = AC1 +/- t(0.975, n - 1) * se
    res = gwet_ac1(*_pairs(ABSTRACTORS))
    assert res.statistic == pytest.approx(0.8493305482, abs=1e-9)
    assert res.standard_error == pytest.approx(0.04321746752, abs=1e-9)
    t = scipy_stats.t.ppf(0.975, res.n - 1)
    low, high = res.statistic - t * res.standard_error, res.statistic + t * res.standard_error
    assert (low, high) == pytest.approx((0.76357772, 0.93508338), abs=1e-7)
    z_low, z_high = res.confidence_interval(method="analytic")
    assert z_high - z_low == pytest.approx(2 * 1.959963985 * res.standard_error)


def test_se_matches_irrcac_on_a_two_by_two_table() -> None:
    # irrCAC: CAC(pd.DataFrame([[40, 10], [5, 45]])).gwet() -> se 0.0713518
    assert gwet_analytic_se(np.array([[40.0, 10.0], [5.0, 45.0]])) == pytest.approx(
        0.0713518, abs=1e-7
    )


def test_se_is_the_delta_method_spread() -> None:
    # the SE agrees with the spread of AC1 over many samples of one population
    rng = np.random.default_rng(7)
    p = np.array([0.42, 0.08, 0.05, 0.45])
    values, ses = [], []
    for _ in range(3000):
        cells = rng.choice(4, size=400, p=p)
        res = gwet_ac1(cells // 2, cells % 2, labels=[0, 1])
        values.append(res.statistic)
        ses.append(res.standard_error)
    assert float(np.sqrt(np.mean(np.square(ses)))) == pytest.approx(np.std(values), rel=0.06)


def test_wilson_interval_with_fixed_chance_term_is_wilson_of_observed_agreement() -> None:
    # an SE that implies n_eff = n is Wilson's interval of p_o mapped through p_e
    from statsmodels.stats.proportion import proportion_confint

    n, agree, p_e = 50, 44, 0.3
    q = 1 - agree / n
    se = math.sqrt(q * (1 - q) / n) / (1 - p_e)
    low, high = wilson_ac1_interval(agree / n, p_e, se, n, 0.95)
    p_low, p_high = proportion_confint(agree, n, method="wilson")
    assert (low, high) == pytest.approx(((p_low - p_e) / (1 - p_e), (p_high - p_e) / (1 - p_e)))


def test_default_interval_is_wilson_and_asymmetric_near_the_top() -> None:
    res = gwet_ac1(*_pairs(ABSTRACTORS))
    low, high = res.confidence_interval()
    assert low < res.statistic < high < 1.0
    assert res.statistic - low > high - res.statistic  # pulled away from the bound at 1
    assert res.to_dict()["ci_low"] == pytest.approx(low)


def test_perfect_agreement_gets_the_boundary_aware_bound() -> None:
    res = gwet_ac1([0, 1] * 10, [0, 1] * 10)
    low, high = res.confidence_interval()
    wilson_low = 20 / (20 + 1.959963985**2)  # Wilson's lower bound of 20/20
    assert high == 1.0
    assert low == pytest.approx((wilson_low - res.p_expected) / (1 - res.p_expected))


def test_one_item_and_total_disagreement_are_never_zero_width() -> None:
    for a, b in (([0], [1]), ([0], [0]), ([0, 1] * 5, [1, 0] * 5)):
        res = gwet_ac1(a, b, labels=[0, 1])
        low, high = res.confidence_interval()
        assert -1.0 <= low <= res.statistic <= high <= 1.0
        assert high - low > 0.3


def test_constant_rater_has_an_interval() -> None:
    # unlike kappa, AC1 is not fixed by a rater who used one category
    res = gwet_ac1(["pass"] * 20, ["pass"] * 18 + ["fail"] * 2, labels=["pass", "fail"])
    low, high = res.confidence_interval()
    assert math.isfinite(res.standard_error) and res.standard_error > 0
    assert low < res.statistic < high <= 1.0


def test_undefined_ac1_has_a_nan_interval_with_the_reason() -> None:
    res = gwet_ac1(["pass"] * 5, ["pass"] * 5)  # one category, none declared
    assert math.isnan(res.standard_error)
    assert all(math.isnan(x) for x in res.confidence_interval())
    assert "labels=" in res.to_dict()["reason"]


def test_clusters_need_the_bootstrap() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 40)
    b = np.where(rng.random(40) < 0.8, a, 1 - a)
    ids = np.repeat(np.arange(10), 4)
    res = gwet_ac1(a, b)
    with pytest.raises(ValueError, match="method='bootstrap'"):
        res.confidence_interval(clusters=ids)
    low, high = res.confidence_interval(method="bootstrap", clusters=ids, random_state=0)
    assert low < res.statistic < high


def test_wilson_covers_where_the_bootstrap_did_not() -> None:
    # 90% agreement on a balanced binary scale at n = 50 (AC1 = 0.8): the percentile
    # bootstrap covered 0.85 here; Wilson's interval at this lattice point covers ~0.97
    rng = np.random.default_rng(2008)
    p = np.array([0.45, 0.05, 0.05, 0.45])
    covered = 0
    reps = 1000
    for _ in range(reps):
        cells = rng.choice(4, size=50, p=p)
        low, high = gwet_ac1(cells // 2, cells % 2, labels=[0, 1]).confidence_interval()
        covered += low <= 0.8 <= high
    assert 0.94 <= covered / reps <= 0.99
