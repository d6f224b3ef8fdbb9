"""Wilson intervals and the bootstrap helpers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from judgekit.stats import bootstrap_ci, paired_bootstrap, wilson_interval


def test_wilson_published_examples():
    low, high = wilson_interval(5, 5)
    assert round(low, 3) == 0.566 and high == 1.0
    low, high = wilson_interval(90, 100)
    assert (round(low, 3), round(high, 3)) == (0.826, 0.945)
    low, high = wilson_interval(0, 30)
    assert low == 0.0 and round(high, 3) == 0.114


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(level, rng):
    for _ in range(50):
        n = int(rng.integers(1, 500))
        k = int(rng.integers(0, n + 1))
        expected = proportion_confint(k, n, alpha=1 - level, method="wilson")
        assert wilson_interval(k, n, level) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3, 0), "n must be positive"),
        ((6, 5), "between 0 and n"),
        ((-1, 5), "between 0 and n"),
        ((2.5, 5), "integer"),
        ((True, 5), "integer"),
        ((2, 5, 1.0), "confidence_level"),
    ],
)
def test_wilson_invalid_input(args, message):
    with pytest.raises(ValueError, match=message):
        wilson_interval(*args)


def test_bootstrap_ci_agrees_with_scipy(rng):
    x = rng.exponential(size=200)
    ours = bootstrap_ci(np.mean, x, random_state=0, n_resamples=4000)
    theirs = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=4000, random_state=0)
    assert ours == pytest.approx(
        (theirs.confidence_interval.low, theirs.confidence_interval.high), abs=0.03
    )
    ours_bca = bootstrap_ci(np.mean, x, random_state=0, n_resamples=4000, method="bca")
    theirs_bca = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=4000, random_state=0)
    assert ours_bca == pytest.approx(
        (theirs_bca.confidence_interval.low, theirs_bca.confidence_interval.high), abs=0.03
    )


def test_bootstrap_ci_is_seeded_paired_and_vectorisable(rng):
    x = rng.normal(size=120)
    y = x + rng.normal(scale=0.5, size=120)

    def corr(a, b):
        return np.corrcoef(a, b)[0, 1]

    first = bootstrap_ci(corr, x, y, random_state=7, n_resamples=300)
    assert first == bootstrap_ci(corr, x, y, random_state=7, n_resamples=300)
    assert first[0] < corr(x, y) < first[1]

    def mean_rows(a):
        return a.mean(axis=-1)

    looped = bootstrap_ci(np.mean, x, random_state=3, n_resamples=500)
    vectorised = bootstrap_ci(mean_rows, x, random_state=3, n_resamples=500, vectorized=True)
    assert looped == pytest.approx(vectorised)


def test_bootstrap_ci_cluster_resampling_keeps_clusters_whole(rng):
    clusters = np.repeat(np.arange(30), 5)
    effects = rng.normal(size=30)[clusters]
    x = effects + rng.normal(scale=0.1, size=clusters.size)
    naive = bootstrap_ci(np.mean, x, random_state=0, n_resamples=1000)
    clustered = bootstrap_ci(np.mean, x, random_state=0, n_resamples=1000, clusters=clusters)
    assert clustered[1] - clustered[0] > 1.8 * (naive[1] - naive[0])
    seen_sizes = []

    def record(values):
        seen_sizes.append(values.size)
        return float(values.mean())

    bootstrap_ci(record, x, random_state=0, n_resamples=20, clusters=clusters)
    assert all(size % 5 == 0 for size in seen_sizes)


def test_bootstrap_ci_invalid_input():
    with pytest.raises(ValueError, match="length mismatch"):
        bootstrap_ci(np.mean, [1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="method must be one of"):
        bootstrap_ci(np.mean, [1, 2, 3], method="studentized")
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(np.mean, [1, 2, 3], n_resamples=0)
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_ci(np.mean)
    with pytest.raises(ValueError, match="clusters has length"):
        bootstrap_ci(np.mean, [1, 2, 3], clusters=[1, 2])


def test_paired_bootstrap_mean_difference(rng):
    a = (rng.random(400) < 0.80).astype(float)
    b = np.where(rng.random(400) < 0.9, a, 1 - a)
    b[:40] = 0  # system b misses 40 items system a may get right
    result = paired_bootstrap(a, b, random_state=0)
    assert result.statistic == pytest.approx(a.mean() - b.mean())
    assert result.n == 400
    assert result.ci_low < result.statistic < result.ci_high
    assert result.confidence_interval() == pytest.approx((result.ci_low, result.ci_high))
    assert result.to_dict()["pvalue"] == result.pvalue
    same = paired_bootstrap(a, a, random_state=0)
    assert same.statistic == 0 and same.pvalue == 1.0
    # a system against itself differs by 0 by construction: no interval, and a reason
    assert np.isnan(same.ci_low) and np.isnan(same.ci_high)
    assert "same value" in same.confidence_interval().reason


def test_paired_bootstrap_seed_example_and_missing_pairs():
    # A=[1,1,0,1], B=[1,0,0,1]: observed mean difference 0.25
    result = paired_bootstrap([1, 1, 0, 1, None], [1, 0, 0, 1, 1], random_state=7)
    assert result.statistic == pytest.approx(0.25)
    assert result.n == 4
    assert 0.0 <= result.ci_low <= 0.25 <= result.ci_high <= 0.75


def test_paired_bootstrap_generic_statistic_and_bca(rng):
    a = rng.normal(1.0, 1.0, 150)
    b = a - 0.3 + rng.normal(0, 0.3, 150)
    median = paired_bootstrap(a, b, statistic=np.median, random_state=0, n_resamples=500)
    assert median.statistic == pytest.approx(np.median(a) - np.median(b))
    assert median.ci_low < median.statistic < median.ci_high
    bca = paired_bootstrap(a, b, random_state=0, method="bca")
    assert bca.method == "bca" and bca.ci_low < 0.3 < bca.ci_high
    assert bca.pvalue < 0.01


def test_paired_bootstrap_clusters_widen_the_interval(rng):
    clusters = np.repeat(np.arange(25), 8)
    shift = rng.normal(scale=0.5, size=25)[clusters]
    a = shift + rng.normal(scale=0.1, size=200)
    b = rng.normal(scale=0.1, size=200)
    naive = paired_bootstrap(a, b, random_state=0)
    clustered = paired_bootstrap(a, b, random_state=0, clusters=clusters)
    assert clustered.statistic == naive.statistic
    assert clustered.ci_high - clustered.ci_low > 2 * (naive.ci_high - naive.ci_low)


def test_paired_bootstrap_invalid_input():
    with pytest.raises(ValueError, match="all missing"):
        paired_bootstrap([None, 1], [1, None])
    with pytest.raises(ValueError, match="infinite"):
        paired_bootstrap([1, float("inf")], [1, 2])
    with pytest.raises(ValueError, match="length mismatch"):
        paired_bootstrap([1, 2], [1])


def test_cluster_resamples_built_at_once_equal_one_by_one(rng):
    from judgekit.stats import _resample

    clusters = rng.integers(0, 12, 70)
    codes = np.unique(clusters, return_inverse=True)[1]
    draw = _resample.cluster_index_sampler(codes, codes.size, np.random.default_rng(4))
    one_by_one = [draw() for _ in range(40)]
    at_once = []
    for flat, lengths in _resample.cluster_resample_indices(codes, 40, np.random.default_rng(4)):
        at_once.extend(np.split(flat, np.cumsum(lengths)[:-1]))
    assert len(at_once) == 40
    for a, b in zip(one_by_one, at_once, strict=True):
        np.testing.assert_array_equal(a, b)
    counts = _resample.cluster_pick_counts(int(codes.max()) + 1, 40, np.random.default_rng(4))
    for row, idx in zip(counts, one_by_one, strict=True):
        assert row[codes].sum() == idx.size


def test_vectorised_cluster_bootstrap_equals_the_loop(rng):
    clusters = rng.integers(0, 15, 80)  # unequal sizes: resamples differ in length
    x = rng.normal(size=80)

    def mean_rows(a):
        return a.mean(axis=-1)

    looped = bootstrap_ci(np.mean, x, random_state=5, n_resamples=300, clusters=clusters)
    vectorised = bootstrap_ci(
        mean_rows, x, random_state=5, n_resamples=300, clusters=clusters, vectorized=True
    )
    assert looped == pytest.approx(vectorised, abs=1e-12)


def test_bootstrap_ci_strata_keep_each_stratum_size(rng):
    # a stratified design fixes how many items come from each stratum: the share of
    # stratum "a" in a resample must not vary, while an unstratified bootstrap moves it
    strata = np.array(["a"] * 30 + ["b"] * 70, dtype=object)
    is_a = (strata == "a").astype(float)

    def share(x):
        return x.mean(axis=-1)

    # the share is fixed by the design, so every resample gives 0.3: the interval is
    # refused (NaN with a reason) rather than shown as a zero-width "exact" figure
    fixed = bootstrap_ci(share, is_a, strata=strata, vectorized=True, random_state=1)
    assert np.isnan(fixed).all() and "same value" in fixed.reason
    low, high = bootstrap_ci(share, is_a, vectorized=True, random_state=1)
    assert low < 0.25 and high > 0.35
    # clusters nest in strata: every resample still holds 30 "a" items in whole clusters
    clusters = np.repeat(np.arange(20), 5)
    fixed = bootstrap_ci(
        lambda x: x.sum(), is_a, strata=strata, clusters=clusters, random_state=1
    )
    assert np.isnan(fixed).all() and "same value" in fixed.reason


def test_bootstrap_ci_strata_give_the_stratified_variance(rng):
    # mean of two strata with different means: the stratified bootstrap sees only the
    # within-stratum spread, so it is narrower than the unstratified one
    y = np.concatenate([rng.normal(0, 1, 200), rng.normal(5, 1, 200)])
    strata = np.repeat([0, 1], 200)
    plain = bootstrap_ci(np.mean, y, random_state=2)
    strat = bootstrap_ci(np.mean, y, strata=strata, random_state=2)
    se = np.sqrt((np.var(y[:200]) + np.var(y[200:])) / 200) / 2
    assert strat[1] - strat[0] == pytest.approx(2 * 1.96 * se, rel=0.15)
    assert (strat[1] - strat[0]) < 0.6 * (plain[1] - plain[0])
    with pytest.raises(ValueError, match="strata"):
        bootstrap_ci(np.mean, y, strata=strata[:10])
