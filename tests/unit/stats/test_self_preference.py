"""Self-preference kernels against scipy's bootstrap and a plain cluster loop, with the edges,
and the 5% level of an unbiased judge in seeded simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import bootstrap

from judgekit.stats._bias_self import self_preference_pairwise, self_preference_pointwise


def _pairwise_data(n: int, rng: np.random.Generator, bias: float = 0.0) -> tuple[np.ndarray, ...]:
    """Human own-win outcomes and a judge that agrees with them, plus ``bias`` extra own wins."""
    human = rng.choice([0.0, 0.5, 1.0], size=n, p=[0.45, 0.1, 0.45])
    judge = np.where(rng.uniform(size=n) < 0.8, human, rng.choice([0.0, 1.0], size=n))
    judge = np.where(rng.uniform(size=n) < bias, 1.0, judge)
    return judge, human


def test_pairwise_figures_match_a_direct_computation_and_scipy() -> None:
    rng = np.random.default_rng(7)
    judge, human = _pairwise_data(120, rng, bias=0.2)
    out = self_preference_pairwise(judge, human, n_resamples=4000, random_state=1)
    gap = out["self_preference"]
    assert out["judge_own_win_rate"].statistic == pytest.approx(judge.mean())
    assert out["human_own_win_rate"].statistic == pytest.approx(human.mean())
    assert gap.statistic == pytest.approx(judge.mean() - human.mean())
    assert gap.n == 120
    ref = bootstrap((judge, human), lambda j, h: np.mean(j) - np.mean(h), paired=True,
                    method="percentile", n_resamples=4000, random_state=2)
    assert gap.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.015)
    assert gap.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.015)
    assert gap.pvalue is not None and gap.pvalue < 0.01


def test_pointwise_gap_matches_a_plain_cluster_bootstrap_loop() -> None:
    rng = np.random.default_rng(11)
    n = 90
    clusters = np.arange(n) // 3
    own = (rng.uniform(size=n) < 0.4).astype(float)
    above = (rng.uniform(size=n) < np.where(own == 1, 0.6, 0.3)).astype(float)
    out = self_preference_pointwise(above, own, clusters=clusters, n_resamples=4000,
                                    random_state=3)
    direct = above[own == 1].mean() - above[own == 0].mean()
    assert out["self_preference"].statistic == pytest.approx(direct)
    assert out["own_rated_above_human"].n == int(own.sum())
    assert out["other_rated_above_human"].n == n - int(own.sum())
    # an independent loop: draw whole clusters with replacement, recompute the gap
    loop_rng = np.random.default_rng(4)
    ids = np.unique(clusters)
    reps = []
    for _ in range(4000):
        picked = loop_rng.choice(ids, size=ids.size, replace=True)
        idx = np.concatenate([np.flatnonzero(clusters == c) for c in picked])
        a, o = above[idx], own[idx]
        if o.sum() and (1 - o).sum():
            reps.append(a[o == 1].mean() - a[o == 0].mean())
    low, high = np.quantile(reps, [0.025, 0.975])
    assert out["self_preference"].ci_low == pytest.approx(low, abs=0.03)
    assert out["self_preference"].ci_high == pytest.approx(high, abs=0.03)


def test_edges_are_nan_with_a_reason_never_a_zero_width_interval() -> None:
    empty = self_preference_pairwise([], [])
    assert math.isnan(empty["self_preference"].statistic) and empty["self_preference"].reason
    one = self_preference_pairwise([1.0], [0.0])
    assert one["self_preference"].statistic == 1.0
    assert math.isnan(one["self_preference"].ci_low) and one["self_preference"].reason
    constant = self_preference_pairwise([1.0] * 20, [1.0] * 20)
    assert constant["self_preference"].statistic == 0.0
    assert math.isnan(constant["self_preference"].ci_low)
    only_own = self_preference_pointwise([1, 0, 1], [1, 1, 1])
    assert math.isnan(only_own["self_preference"].statistic)
    assert "other-family" in (only_own["self_preference"].reason or "")
    assert only_own["own_rated_above_human"].statistic == pytest.approx(2 / 3)
    # a single cluster: every resample is the same data
    one_cluster = self_preference_pairwise([1.0, 0.0, 1.0], [0.0, 0.0, 1.0],
                                           clusters=["c", "c", "c"])
    assert math.isnan(one_cluster["self_preference"].ci_low)


def test_invalid_input_names_the_problem() -> None:
    with pytest.raises(ValueError, match="judge_own must hold only"):
        self_preference_pairwise([0.3], [0.0])
    with pytest.raises(ValueError, match="2 pairs but human_own has 1"):
        self_preference_pairwise([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="own must hold only"):
        self_preference_pointwise([1.0], [2.0])
    with pytest.raises(ValueError, match="confidence"):
        self_preference_pairwise([1.0], [1.0], confidence_level=1.5)


def test_an_unbiased_judge_is_not_flagged_at_the_5_percent_level() -> None:
    """200 seeded datasets of 40 pairs: the lower bound excludes 0 in about 2.5%, the
    p-value is below 0.05 in about 5%; a planted +0.3 trips the default gate (0.1) in most."""
    lower_above_zero = significant = planted_found = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        judge, human = _pairwise_data(40, rng)
        gap = self_preference_pairwise(judge, human, n_resamples=500, random_state=seed)
        s = gap["self_preference"]
        lower_above_zero += s.ci_low > 0
        significant += s.pvalue is not None and s.pvalue < 0.05
        if seed < 40:
            judge_b, human_b = _pairwise_data(100, rng, bias=0.6)
            biased = self_preference_pairwise(judge_b, human_b, n_resamples=500,
                                              random_state=seed)["self_preference"]
            planted_found += biased.ci_low > 0.1
    assert lower_above_zero <= 10, lower_above_zero  # expected 5 of 200
    assert significant <= 18, significant  # expected 10 of 200
    assert planted_found >= 30, planted_found


def test_tiny_samples_get_the_exact_p_value_not_the_bootstrap_floor() -> None:
    """Five pairs, four favouring the judge's family (one tie for both): the bootstrap p was
    0.002 (its floor); the sign-flip test over the four non-zero differences gives 2/16."""
    judge = np.array([1.0, 1.0, 1.0, 1.0, 0.5])
    human = np.array([0.0, 0.0, 0.0, 0.0, 0.5])
    gap = self_preference_pairwise(judge, human, n_resamples=2000)["self_preference"]
    assert gap.statistic == pytest.approx(0.8)
    assert gap.pvalue == pytest.approx(0.125)
    # the same as scipy's exact binomial sign test when every difference is +-1
    from scipy.stats import binomtest
    assert gap.pvalue == pytest.approx(binomtest(4, 4).pvalue)
    # clusters: their sums are flipped, two clusters -> p = 2/4 at best
    clustered = self_preference_pairwise(judge, human, clusters=[0, 0, 1, 1, 1],
                                         n_resamples=500)["self_preference"]
    assert clustered.pvalue == pytest.approx(0.5)


def test_pointwise_p_is_fishers_exact_test_without_clusters() -> None:
    from scipy.stats import fisher_exact
    above = np.array([1, 1, 1, 0, 0, 1, 0, 0, 0, 0], dtype=float)
    own = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=float)
    gap = self_preference_pointwise(above, own, n_resamples=500)["self_preference"]
    assert gap.pvalue == pytest.approx(fisher_exact([[3, 1], [1, 5]]).pvalue)
    # clusters mixing own and other, fewer than 20 of them: no p-value, and the reason
    pairs = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    mixed_own = np.array([1, 0, 1, 0, 1, 0, 0, 0, 0, 0], dtype=float)
    mixed = self_preference_pointwise(above, mixed_own, clusters=pairs,
                                      n_resamples=500)["self_preference"]
    assert mixed.pvalue is None and "clusters mix own and other" in (mixed.p_reason or "")
    # clusters each all one side: the own/other labels are permuted between clusters
    whole = self_preference_pointwise(above, own, clusters=pairs,
                                      n_resamples=500)["self_preference"]
    # 2 of the 5 clusters are own: C(5, 2) = 10 splits, the observed one among the most extreme
    assert whole.pvalue is not None and 0.1 <= whole.pvalue <= 0.5


def test_the_sign_flip_p_is_uniform_for_an_unbiased_judge() -> None:
    from scipy.stats import kstest
    pvalues = []
    for seed in range(300):
        rng = np.random.default_rng(1000 + seed)
        judge, human = _pairwise_data(30, rng)
        pvalues.append(self_preference_pairwise(judge, human, n_resamples=200,
                                                random_state=seed)["self_preference"].pvalue)
    assert np.mean(np.array(pvalues) < 0.05) <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 300)
    # discrete at small n, so conservative: no more small p-values than uniform ones
    assert kstest(pvalues, "uniform", alternative="greater").pvalue > 0.01
