"""The small-cluster widening of cluster-bootstrap intervals (CR1 with t on G - 1 df)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from judgekit.stats import cohen_kappa, percent_agreement
from judgekit.stats._resample import few_clusters_factor, widen_for_few_clusters
from judgekit.stats.bias import length_slope


@pytest.mark.parametrize("g", [2, 10, 20, 50, 200])
def test_factor_is_sqrt_g_over_g_minus_1_times_t_over_z(g: int) -> None:
    expected = math.sqrt(g / (g - 1)) * sps.t.ppf(0.975, g - 1) / sps.norm.ppf(0.975)
    assert few_clusters_factor(g, 0.95) == pytest.approx(expected, rel=1e-12)


def test_factor_falls_towards_1_and_is_undefined_for_one_cluster() -> None:
    assert few_clusters_factor(10, 0.95) == pytest.approx(1.2166, abs=1e-3)
    assert few_clusters_factor(10_000, 0.95) == pytest.approx(1.0, abs=1e-3)
    assert math.isnan(few_clusters_factor(1, 0.95))


def _clustered(rng: np.random.Generator, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ids = np.repeat(np.arange(g), 5)
    a = rng.integers(0, 2, ids.size)
    b = np.where(rng.random(ids.size) < 0.7, a, rng.integers(0, 2, ids.size))
    return a, b, ids


def test_clustered_kappa_is_the_percentile_interval_widened_about_the_estimate() -> None:
    from judgekit.stats import _resample

    a, b, ids = _clustered(np.random.default_rng(1), 12)
    res = cohen_kappa(a, b)
    ours = res.confidence_interval(n_resamples=500, random_state=3, clusters=ids)
    # the same resamples without the widening: the per-cluster tables as patterns
    per_cluster = np.zeros((12, 4))
    np.add.at(per_cluster, (ids, a * 2 + b), 1.0)
    patterns, frequencies = _resample.patterns_of(per_cluster, None)
    plain = _resample.interval_from_patterns(
        res._statistic_of_sums, patterns, frequencies, estimate=res.statistic,
        confidence_level=0.95, n_resamples=500, rng=np.random.default_rng(3), method="bootstrap",
    )
    factor = few_clusters_factor(12, 0.95)
    assert ours.low == pytest.approx(res.statistic - factor * (res.statistic - plain.low))
    widened_high = res.statistic + factor * (plain.high - res.statistic)
    assert ours.high == pytest.approx(min(1.0, widened_high))


def test_item_level_intervals_are_not_widened() -> None:
    a, b, _ = _clustered(np.random.default_rng(2), 40)
    res = cohen_kappa(a, b)
    assert res.confidence_interval(random_state=1) == res.confidence_interval(random_state=1)
    interval = res.confidence_interval(random_state=1)
    assert widen_for_few_clusters(interval, res.statistic, None, 0.95) == interval


def test_widened_proportion_stays_inside_0_1() -> None:
    rng = np.random.default_rng(4)
    ids = np.repeat(np.arange(6), 5)
    outcome = (rng.random(ids.size) < 0.93).astype(int)
    outcome[0] = 0
    res = percent_agreement(outcome, np.ones_like(outcome))
    low, high = res.confidence_interval(method="bootstrap", clusters=ids, random_state=0)
    assert 0.0 <= low < res.statistic < high <= 1.0


def test_length_slope_widened_only_with_prompts() -> None:
    rng = np.random.default_rng(5)
    ids = np.repeat(np.arange(10), 5)
    lengths = 2.0 ** rng.normal(8, 1, ids.size)
    scores = 0.3 * np.log2(lengths) + rng.normal(0, 1, ids.size)
    grouped = length_slope(scores, lengths, groups=ids, random_state=0)
    plain_low, plain_high = np.quantile(grouped._replicates, [0.025, 0.975])
    factor = few_clusters_factor(10, 0.95)
    low, high = grouped.confidence_interval()
    assert low == pytest.approx(grouped.statistic - factor * (grouped.statistic - plain_low))
    assert high == pytest.approx(grouped.statistic + factor * (plain_high - grouped.statistic))
    ungrouped = length_slope(scores, lengths, random_state=0)
    assert ungrouped.confidence_interval() == pytest.approx(
        tuple(np.quantile(ungrouped._replicates, [0.025, 0.975]))
    )
