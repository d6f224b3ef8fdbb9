"""Spearman and Kendall tau-b against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from judgekit.stats import kendall_tau, spearman


@pytest.mark.parametrize("seed", range(5))
def test_match_scipy_with_heavy_ties(seed):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, 80)  # a 1-5 scale: many ties
    judge = np.clip(human + rng.integers(-1, 2, 80), 1, 5)
    rho, tau = spearman(judge, human), kendall_tau(judge, human)
    expected_rho = stats.spearmanr(judge, human)
    expected_tau = stats.kendalltau(judge, human, variant="b")
    assert rho.statistic == pytest.approx(expected_rho.statistic, abs=1e-12)
    assert rho.pvalue == pytest.approx(expected_rho.pvalue, rel=1e-9)
    assert tau.statistic == pytest.approx(expected_tau.statistic, abs=1e-12)
    assert tau.pvalue == pytest.approx(expected_tau.pvalue, rel=1e-9)
    assert (rho.method, tau.method) == ("spearman", "kendall_tau_b")


def test_missing_pairs_dropped():
    result = spearman([1, 2, None, 4, 5], [2, 1, 3, float("nan"), 5])
    assert result.n == 3
    assert result.statistic == pytest.approx(stats.spearmanr([1, 2, 5], [2, 1, 5]).statistic)


def test_perfect_negative_and_undefined():
    assert spearman([1, 2, 3], [3, 2, 1]).statistic == pytest.approx(-1.0)
    assert kendall_tau([1, 2, 3], [1, 2, 3]).statistic == pytest.approx(1.0)
    constant = spearman([3, 3, 3], [1, 2, 3])
    assert math.isnan(constant.statistic) and "x is constant" in constant.reason
    one = kendall_tau([1], [2])
    assert math.isnan(one.statistic) and "at least 2" in one.reason
    assert math.isnan(one.confidence_interval()[0])
    assert one.to_dict()["statistic"] is None


def test_intervals_bootstrap_bca_fisher(rng):
    x = rng.normal(size=150)
    y = 0.6 * x + rng.normal(size=150)
    for fn in (spearman, kendall_tau):
        result = fn(x, y)
        boot = result.confidence_interval(method="bootstrap", random_state=0, n_resamples=500)
        fisher = result.confidence_interval(method="fisher")
        bca = result.confidence_interval(method="bca", random_state=0, n_resamples=500)
        for low, high in (boot, fisher, bca):
            assert low < result.statistic < high
        assert boot[1] - boot[0] == pytest.approx(fisher[1] - fisher[0], rel=0.25)
        clustered = result.confidence_interval(
            random_state=0, n_resamples=200, clusters=np.arange(150) // 5
        )
        assert clustered[0] < result.statistic < clustered[1]


def test_invalid_input():
    with pytest.raises(ValueError, match="length mismatch"):
        spearman([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="infinite"):
        kendall_tau([1, 2, float("inf")], [1, 2, 3])
    with pytest.raises(ValueError, match="numbers"):
        spearman(["a", "b"], [1, 2])
    with pytest.raises(ValueError, match="method must be one of"):
        spearman([1, 2, 3], [1, 3, 2]).confidence_interval(method="wald")


def test_vectorised_and_looped_kendall_agree(rng):
    from judgekit.stats.correlation import _kendall_batch, _kendall_pairwise

    x = rng.integers(1, 6, (3, 350)).astype(float)
    y = np.clip(x + rng.integers(-1, 2, x.shape), 1, 5)
    looped = _kendall_batch(x, y)  # n > 300 takes the scipy loop
    assert _kendall_pairwise(x, y) == pytest.approx(looped, abs=1e-12)


def _reference_interval(result, x, y, clusters, n_resamples, seed, method):
    """The slow path: expand every resample and rank it (one scipy-style call per resample)."""
    from judgekit.stats import _resample
    from judgekit.stats._result import used_clusters

    n = x.size
    rng = np.random.default_rng(seed)
    batch = result._batch
    if clusters is None:
        idx = rng.integers(0, n, size=(n_resamples, n))
        replicates = np.array([batch(x[i][None, :], y[i][None, :])[0] for i in idx])
        codes = None
    else:
        codes = used_clusters(clusters, np.ones(n, dtype=bool))
        draw = _resample.cluster_index_sampler(codes, n, rng)
        replicates = np.array(
            [batch(x[i][None, :], y[i][None, :])[0] for i in (draw() for _ in range(n_resamples))]
        )
    if method == "bca":
        sets = _resample.jackknife_index_sets(codes, n)
        jackknife = np.array([batch(x[s][None, :], y[s][None, :])[0] for s in sets])
        interval = _resample.bca_interval(replicates, result.statistic, jackknife, None, 0.95)
    else:
        interval = _resample.percentile_interval(replicates, 0.95)
    groups = None if codes is None else int(codes.max()) + 1
    return _resample.widen_for_few_clusters(interval, result.statistic, groups, 0.95)


@pytest.mark.parametrize("fn", [spearman, kendall_tau])
@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("method", ["bootstrap", "bca"])
def test_counted_resamples_equal_the_expanded_reference(rng, fn, clustered, method):
    """Replicates from pattern counts are the statistic of the very same resamples."""
    n = 90
    x = rng.integers(1, 6, n).astype(float)
    y = np.where(rng.random(n) < 0.6, x, rng.integers(1, 6, n)).astype(float)
    clusters = rng.integers(0, 25, n) if clustered else None  # unequal cluster sizes
    result = fn(x, y)
    ours = result.confidence_interval(
        method=method, n_resamples=200, random_state=11, clusters=clusters
    )
    reference = _reference_interval(result, x, y, clusters, 200, 11, method)
    assert ours == pytest.approx(reference, abs=1e-12)


def test_many_distinct_pairs_take_the_per_resample_path(rng):
    from judgekit.stats.correlation import _PATTERN_LIMIT

    n = _PATTERN_LIMIT + 50
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    clusters = rng.integers(0, 60, n)
    result = kendall_tau(x, y)
    for c in (None, clusters):
        ours = result.confidence_interval(
            method="bootstrap", n_resamples=30, random_state=2, clusters=c
        )
        reference = _reference_interval(result, x, y, c, 30, 2, "bootstrap")
        assert ours == pytest.approx(reference, abs=1e-12)
    rho = spearman(x, y)  # spearman counts patterns at any size
    ours = rho.confidence_interval(
        method="bootstrap", n_resamples=30, random_state=2, clusters=clusters
    )
    assert ours == pytest.approx(
        _reference_interval(rho, x, y, clusters, 30, 2, "bootstrap"), abs=1e-12
    )


def test_counted_replicates_handle_constant_resamples():
    # two clusters, one per value of x: resamples drawing one cluster twice are constant
    x = np.array([1.0, 1.0, 2.0, 2.0])
    y = np.array([1.0, 2.0, 1.0, 2.0])
    for fn in (spearman, kendall_tau):
        result = fn(x, y)
        ours = result.confidence_interval(
            method="bootstrap", n_resamples=100, random_state=0, clusters=[0, 0, 1, 1]
        )
        reference = _reference_interval(result, x, y, np.array([0, 0, 1, 1]), 100, 0, "bootstrap")
        assert ours == pytest.approx(reference, abs=1e-12, nan_ok=True)


def test_spearman_against_a_pass_fail_verdict_is_not_five_times_too_narrow() -> None:
    """Lengths against a 0/1 human verdict that passes the longer answers, as in the tutorial
    (0.868 [0.851, 0.884] on 31 items): no leave-one-out sample changes rho much, so the
    jackknife interval was far narrower than a plain item bootstrap; it now is that bootstrap."""
    import numpy as np
    from scipy.stats import bootstrap

    rng = np.random.default_rng(5)
    lengths = np.sort(rng.integers(100, 2000, 31)).astype(float)
    verdict = (np.arange(31) >= 14).astype(float)
    verdict[[12, 16]] = verdict[[16, 12]]  # one pass and one fail out of place
    res = spearman(lengths, verdict)
    low, high = res.confidence_interval(n_resamples=4000)
    assert res.default_method() == "bootstrap"
    ref = bootstrap((lengths, verdict), lambda a, b: _rho(a, b), paired=True,
                    vectorized=False, method="percentile", n_resamples=4000, random_state=1)
    assert low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert high == pytest.approx(ref.confidence_interval.high, abs=0.03)
    assert high - low > 0.1


def _rho(a, b) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def test_a_cluster_aware_p_value_goes_with_the_clustered_interval() -> None:
    """Scores with a prompt effect each and no correlation: the pairs' p-value ignores the
    prompts (it rejected in a quarter of such samples); the clustered one is the test the
    clustered jackknife interval inverts."""
    import numpy as np

    rng = np.random.default_rng(4)
    ids = np.repeat(np.arange(20), 5)
    x, y = (np.clip(np.round(3 + rng.normal(size=20)[ids] + 0.5 * rng.normal(size=100)), 1, 5)
            for _ in range(2))
    res = spearman(x, y)
    p = res.cluster_pvalue(ids)
    assert 0 < p <= 1 and p > res.pvalue
    # the 1 - p interval has 0 on its edge: the test and the interval agree
    low, high = res.confidence_interval(1 - p, clusters=ids)
    assert min(abs(low), abs(high)) < 1e-6
    assert math.isnan(spearman([1, 2, 3], [1, 2, 3]).cluster_pvalue([0, 0, 1]))
