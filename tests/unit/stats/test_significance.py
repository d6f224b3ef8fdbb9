"""McNemar, the binomial test and Benjamini-Hochberg against statsmodels/scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from judgekit.stats import (
    benjamini_hochberg,
    binomial_test,
    cluster_difference_test,
    mcnemar,
)


def _paired(both: int, only_a: int, only_b: int, neither: int) -> tuple[list[int], list[int]]:
    a = [1] * both + [1] * only_a + [0] * only_b + [0] * neither
    b = [1] * both + [0] * only_a + [1] * only_b + [0] * neither
    return a, b


def test_mcnemar_published_example():
    # 200 items: A alone right on 15, B alone right on 5 -> chi2 = 5.0, exact p ~ 0.041
    a, b = _paired(100, 15, 5, 80)
    result = mcnemar(a, b)
    assert (result.b, result.c, result.n) == (15, 5, 200)
    assert result.chi2 == pytest.approx(5.0)
    assert round(result.pvalue, 3) == 0.041
    assert result.statistic == pytest.approx(10 / 200)


@pytest.mark.parametrize("seed", range(6))
def test_mcnemar_matches_statsmodels_exact(seed):
    rng = np.random.default_rng(seed)
    a = rng.random(300) < 0.7
    b = np.where(rng.random(300) < 0.85, a, ~a)
    result = mcnemar(a, b)
    table = [[result.both_correct, result.b], [result.c, result.both_wrong]]
    assert result.pvalue == pytest.approx(sm_mcnemar(table, exact=True).pvalue, rel=1e-12)


def test_mcnemar_no_discordant_items_and_missing_values():
    result = mcnemar([1, 0, 1, None], [1, 0, 1, 1])
    assert result.n == 3 and result.pvalue == 1.0 and math.isnan(result.chi2)
    assert result.statistic == 0.0
    empty = mcnemar([None], [1])
    assert math.isnan(empty.statistic) and empty.reason


def test_mcnemar_intervals():
    a, b = _paired(100, 15, 5, 80)
    result = mcnemar(a, b)
    low, high = result.confidence_interval()
    assert 0 < low < 0.05 < high < 0.1  # p < 0.05 and the interval excludes 0, consistently
    boot = result.confidence_interval(method="bootstrap", random_state=0)
    assert boot[0] < 0.05 < boot[1]
    assert result.to_dict()["pvalue"] == pytest.approx(result.pvalue)
    with pytest.raises(ValueError, match="0/1"):
        mcnemar([1, 2], [1, 0])


def test_binomial_test_matches_scipy():
    result = binomial_test(15, 20)
    assert result.statistic == 0.75
    assert result.pvalue == pytest.approx(stats.binomtest(15, 20).pvalue)
    assert result.confidence_interval()[0] == pytest.approx(0.5313, abs=1e-4)
    exact = result.confidence_interval(method="exact")
    ci = stats.binomtest(15, 20).proportion_ci(method="exact")
    assert exact == pytest.approx((ci.low, ci.high))
    with pytest.raises(ValueError, match="between 0 and n"):
        binomial_test(21, 20)
    with pytest.raises(ValueError, match="p must be"):
        binomial_test(1, 2, p=1.5)


@pytest.mark.parametrize("q", [0.01, 0.05, 0.2])
def test_benjamini_hochberg_matches_statsmodels_and_scipy(q, rng):
    for _ in range(20):
        p = np.concatenate([rng.uniform(0, 0.02, 5), rng.uniform(0, 1, 20)])
        rejected, adjusted = benjamini_hochberg(p, q=q)
        sm_rejected, sm_adjusted, _, _ = multipletests(p, alpha=q, method="fdr_bh")
        assert np.array_equal(rejected, sm_rejected)
        assert adjusted == pytest.approx(sm_adjusted)
        assert adjusted == pytest.approx(stats.false_discovery_control(p, method="bh"))


def test_benjamini_hochberg_step_up_rule_by_hand():
    # sorted p: .001 .008 .039 .041 .042 .06 ; m = 6, q = .05: thresholds k*q/m
    # .0083 .0167 .025 .0333 .0417 .05 -> the largest k with p_(k) <= kq/m is 2
    p = [0.039, 0.001, 0.06, 0.008, 0.042, 0.041]
    rejected, _ = benjamini_hochberg(p)
    assert rejected.tolist() == [False, True, False, True, False, False]


@pytest.mark.parametrize(
    ("p", "q", "message"),
    [
        ([0.1, float("nan")], 0.05, "NaN"),
        ([0.1, 1.2], 0.05, r"\[0, 1\]"),
        ([0.1], 0.0, "q must"),
        ([], 0.05, "empty"),
    ],
)
def test_benjamini_hochberg_invalid_input(p, q, message):
    with pytest.raises(ValueError, match=message):
        benjamini_hochberg(p, q=q)


def test_newcombe_interval_coverage_simulation():
    from judgekit.stats._result_outcomes import newcombe_paired_interval

    rng = np.random.default_rng(11)
    cells = np.array([0.6, 0.1, 0.05, 0.25])  # both, only a, only b, neither
    true_difference = cells[1] - cells[2]
    trials = 400
    covered = sum(
        low <= true_difference <= high
        for low, high in (
            newcombe_paired_interval(*map(int, rng.multinomial(100, cells)), 0.95)
            for _ in range(trials)
        )
    )
    assert 0.92 <= covered / trials <= 0.99


def _clustered_null(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """40 clusters of 10 with a cluster-level agreement rate; no slice effect at all."""
    clusters = np.repeat(np.arange(40), 10)
    rate = rng.beta(1.0, 0.5, size=40)[clusters]
    success = rng.random(400) < rate
    in_group = np.repeat(rng.permutation(40) < 10, 10)  # 10 whole clusters form the slice
    return success, in_group, clusters


def test_cluster_difference_test_holds_its_level_where_fisher_does_not():
    rng = np.random.default_rng(3)
    ours, fisher = [], []
    for _ in range(200):
        y, g, c = _clustered_null(rng)
        ours.append(cluster_difference_test(y, g, c, n_resamples=400).pvalue)
        table = [[(y & g).sum(), (~y & g).sum()], [(y & ~g).sum(), (~y & ~g).sum()]]
        fisher.append(stats.fisher_exact(table, alternative="less").pvalue)
    assert np.mean(np.asarray(ours) < 0.05) <= 0.09
    assert np.mean(np.asarray(fisher) < 0.05) >= 0.15


def test_cluster_difference_test_detects_a_real_difference_and_is_seeded():
    rng = np.random.default_rng(4)
    clusters = np.repeat(np.arange(60), 4)
    in_group = clusters < 20
    y = rng.random(240) < np.where(in_group, 0.5, 0.9)
    result = cluster_difference_test(y, in_group, clusters, n_resamples=1000, random_state=1)
    assert result.statistic == pytest.approx(y[in_group].mean() - y[~in_group].mean())
    assert result.pvalue < 0.01 and result.n_clusters == 60 and result.n == 240
    again = cluster_difference_test(y, in_group, clusters, n_resamples=1000, random_state=1)
    assert again.pvalue == result.pvalue
    greater = cluster_difference_test(y, in_group, clusters, alternative="greater")
    assert greater.pvalue > 0.9


def test_cluster_difference_test_edge_cases():
    empty = cluster_difference_test([1, 0, 1], [False, False, False], ["a", "a", "b"])
    assert math.isnan(empty.statistic) and math.isnan(empty.pvalue)
    with pytest.raises(ValueError, match="alternative"):
        cluster_difference_test([1, 0], [True, False], [1, 2], alternative="two-sided")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="length"):
        cluster_difference_test([1, 0], [True, False], [1])
