"""The rank correlations' default interval (jackknife on Fisher's z) and their perfect-sample bound.

The jackknife is checked against the textbook formula written as a plain loop over
scipy (Efron & Tibshirani 1993, eq. 11.5: se^2 = (m - 1)/m sum (theta_(i) - mean)^2),
and against the simulated spread; the perfect-sample bound against scipy on the
expanded population table.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from judgekit.stats import kendall_tau, spearman
from judgekit.stats._kendall_ase import influence, standard_error, tau_b_of_table
from judgekit.stats._rank_interval import perfect_order, spearman_of_table
from judgekit.stats._resample import wilson_bounds
from judgekit.stats.correlation import _PATTERN_LIMIT

Z = 1.959963984540054
SCIPY = {
    spearman: lambda a, b: sps.spearmanr(a, b).statistic,
    kendall_tau: lambda a, b: sps.kendalltau(a, b, variant="b").statistic,
}


def _five_point(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.integers(1, 6, n).astype(float)
    y = np.clip(x + rng.integers(-2, 3, n), 1, 5).astype(float)
    return x, y


def _loop_interval(fn, x, y, clusters=None):
    """The jackknife interval written out: leave each unit out, recompute with scipy."""
    r = SCIPY[fn](x, y)
    units = np.arange(x.size) if clusters is None else np.asarray(clusters)
    ids = np.unique(units)
    loo = np.array([SCIPY[fn](x[units != u], y[units != u]) for u in ids])
    m = ids.size
    se = math.sqrt((m - 1) / m * np.sum((loo - loo.mean()) ** 2))
    crit = Z if clusters is None else sps.t.ppf(0.975, m - 1)
    half = crit * se / (1 - r * r)
    return math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


@pytest.mark.parametrize("fn", [spearman, kendall_tau])
def test_default_is_the_jackknife_on_fishers_z(fn) -> None:
    x, y = _five_point(np.random.default_rng(5), 70)
    res = fn(x, y)
    expected = _loop_interval(fn, x, y)
    assert res.confidence_interval() == pytest.approx(expected, rel=1e-10)
    assert res.confidence_interval(method="jackknife") == pytest.approx(expected, rel=1e-10)
    low, high = res.confidence_interval()
    assert -1 < low < res.statistic < high < 1


@pytest.mark.parametrize("fn", [spearman, kendall_tau])
def test_clustered_jackknife_leaves_out_whole_clusters_with_t(fn) -> None:
    rng = np.random.default_rng(6)
    x, y = _five_point(rng, 60)
    clusters = rng.integers(0, 12, 60)  # unequal sizes
    res = fn(x, y)
    expected = _loop_interval(fn, x, y, clusters)
    assert res.confidence_interval(clusters=clusters) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("fn", [spearman, kendall_tau])
def test_jackknife_se_matches_the_sampling_spread_on_a_tied_scale(fn) -> None:
    rng = np.random.default_rng(8)
    x, y = _five_point(rng, 300)
    r = fn(x, y).statistic
    low, high = fn(x, y).confidence_interval()
    se = (math.atanh(high) - math.atanh(low)) / (2 * Z) * (1 - r * r)
    spread = np.std([SCIPY[fn](*_five_point(rng, 300)) for _ in range(500)])
    assert se == pytest.approx(spread, rel=0.1)


def test_kendall_jackknife_is_close_to_the_brown_benedetti_ase() -> None:
    """The ASE is the infinitesimal jackknife: the two agree up to O(1/n)."""
    x, y = _five_point(np.random.default_rng(9), 400)
    res = kendall_tau(x, y)
    _, psi, w = influence(x, y)
    ase, _ = standard_error(psi, w, None)
    low, high = res.confidence_interval()
    se = (math.atanh(high) - math.atanh(low)) / (2 * Z) * (1 - res.statistic**2)
    assert se == pytest.approx(ase, rel=0.02)
    assert se > ase


def test_many_distinct_pairs_kendall_falls_back_to_the_ase() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=_PATTERN_LIMIT + 50)
    y = x + rng.normal(size=x.size)
    res = kendall_tau(x, y)
    assert res.confidence_interval() == pytest.approx(res.confidence_interval(method="ase"))
    rho = spearman(x, y)  # Spearman's jackknife counts patterns at any size
    assert rho.confidence_interval() == pytest.approx(_loop_interval(spearman, x, y), rel=1e-9)


def test_perfect_order_is_decided_on_the_values() -> None:
    assert perfect_order(np.array([1.0, 1, 2, 2, 3]), np.array([5.0, 5, 7, 7, 9])) == 1
    assert perfect_order(np.array([1.0, 2, 3]), np.array([3.0, 2, 1])) == -1
    assert perfect_order(np.array([1.0, 1, 2]), np.array([1.0, 2, 3])) == 0  # tie on x only
    assert perfect_order(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])) == 0


def test_table_statistics_match_scipy_on_the_expanded_table() -> None:
    table = np.array([[30, 4, 1], [3, 10, 2], [0, 2, 8]], dtype=float)
    rows, cols = np.nonzero(table)
    counts = table[rows, cols].astype(int)
    x, y = np.repeat(rows, counts), np.repeat(cols, counts)
    assert spearman_of_table(table) == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
    assert tau_b_of_table(table) == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)
    assert spearman_of_table(table / 7.0) == pytest.approx(spearman_of_table(table))


def _expected_bound(fn, shares: np.ndarray, units: int) -> float:
    """The population table at the bound, expanded to integer counts and given to scipy."""
    low = wilson_bounds(units, units, 0.95)[0]
    lam = (1 - low) / (1 - np.sum(shares**2))
    table = (1 - lam) * np.diag(shares) + lam * np.outer(shares, shares)
    counts = np.rint(table * 200_000).astype(int)
    rows, cols = np.indices(counts.shape)
    x = np.repeat(rows.ravel(), counts.ravel())
    y = np.repeat(cols.ravel(), counts.ravel())
    return float(SCIPY[fn](x, y))


@pytest.mark.parametrize("fn", [spearman, kendall_tau])
@pytest.mark.parametrize("method", ["default", "jackknife", "bootstrap", "bca", "fisher"])
def test_perfect_sample_gets_a_boundary_aware_interval_not_a_point(fn, method) -> None:
    """A 5-point scale with 85% in one category, in perfect order (as at n = 50, kappa 0.8)."""
    x = np.array([1] * 42 + [2, 2, 3, 3, 4, 4, 5, 5], dtype=float)
    res = fn(x, x + 10)
    ci = res.confidence_interval(method=method, n_resamples=200)
    shares = np.array([42, 2, 2, 2, 2]) / 50
    assert ci.high == 1.0
    assert ci.low == pytest.approx(_expected_bound(fn, shares, 50), abs=2e-4)
    assert 0.3 < ci.low < 0.9
    negative = fn(x, -x).confidence_interval(method=method, n_resamples=200)
    assert negative == pytest.approx((-1.0, -ci.low))


def test_perfect_sample_with_clusters_counts_each_cluster_once() -> None:
    x = np.repeat(np.arange(1.0, 6.0), 8)
    res = spearman(x, x)
    plain = res.confidence_interval()
    clustered = res.confidence_interval(clusters=np.arange(40) // 4)  # 10 clusters
    assert clustered.low == pytest.approx(_expected_bound(spearman, np.full(5, 0.2), 10), abs=2e-4)
    assert clustered.low < plain.low < 1.0
    # two pairs, or one odd item among ten: the order may be chance, so nothing is excluded
    assert kendall_tau([1, 2], [1, 2]).confidence_interval() == (-1.0, 1.0)
    assert spearman([0] * 9 + [1], [0] * 9 + [1]).confidence_interval() == (-1.0, 1.0)


@pytest.mark.parametrize("fn", [spearman, kendall_tau])
def test_one_pair_carrying_all_variation_is_refused_with_a_reason(fn) -> None:
    ci = fn([0] * 20 + [1], [0] * 10 + [1] * 11).confidence_interval()
    assert not ci.defined
    # Spearman against a 0/1 variable takes the bootstrap (the jackknife collapses there),
    # which refuses as most resamples lose the one pair that varies
    reason = "undefined in" if fn is spearman else "rests on that pair alone"
    assert reason in ci.reason
    clustered = fn([0] * 20 + [1, 1], [0] * 10 + [1] * 12).confidence_interval(
        clusters=[0] * 5 + [1] * 5 + [2] * 5 + [3] * 5 + [4, 4]
    )
    cluster_reason = "undefined in" if fn is spearman else "that cluster alone"
    assert not clustered.defined and cluster_reason in clustered.reason


@pytest.mark.parametrize("fn", [spearman, kendall_tau])
def test_constant_rater_and_one_item_have_no_interval(fn) -> None:
    constant = fn([3, 3, 3, 3], [1, 2, 3, 4])
    assert math.isnan(constant.statistic) and "constant" in constant.reason
    assert not constant.confidence_interval().defined
    assert not fn([1], [2]).confidence_interval().defined


@pytest.mark.parametrize("fn", [spearman, kendall_tau])
def test_two_clusters_use_t_on_one_degree_of_freedom(fn) -> None:
    x, y = _five_point(np.random.default_rng(11), 40)
    clusters = np.repeat([0, 1], 20)
    ci = fn(x, y).confidence_interval(clusters=clusters)
    assert ci == pytest.approx(_loop_interval(fn, x, y, clusters), rel=1e-10)
    one = fn(x, y).confidence_interval(clusters=np.zeros(40))
    assert not one.defined and "needs at least two" in one.reason


def test_default_method_names_what_the_default_interval_is() -> None:
    x, y = _five_point(np.random.default_rng(12), 60)
    assert spearman(x, y).default_method() == "jackknife"
    assert kendall_tau(x, y).default_method(clusters=np.arange(60) // 5) == "jackknife"
    assert spearman([1, 2, 3], [1, 2, 3]).default_method() == "boundary"
    rng = np.random.default_rng(2)
    many = rng.normal(size=_PATTERN_LIMIT + 50)
    assert kendall_tau(many, many + rng.normal(size=many.size)).default_method() == "ase"


def test_many_distinct_values_fall_back_where_the_jackknife_would_cost_more(monkeypatch) -> None:
    from judgekit.stats import _result_correlation

    rng = np.random.default_rng(13)
    x = rng.normal(size=120)
    y = x + rng.normal(size=120)
    monkeypatch.setattr(_result_correlation, "JACKKNIFE_MAX_CELLS", 100 * 100)
    rho = spearman(x, y)
    assert rho.default_method() == "bootstrap"
    assert rho.confidence_interval(n_resamples=200) == rho.confidence_interval(
        method="bootstrap", n_resamples=200
    )
    # clustered: one row per cluster, so 12 clusters x 120 distinct pairs fit
    assert rho.default_method(clusters=np.arange(120) // 10) == "jackknife"
