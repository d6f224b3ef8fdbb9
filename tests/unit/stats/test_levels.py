"""Per-group and system-level agreement: scipy's numbers, and NaN with a reason at the edges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from judgekit.stats.levels import group_level, one_sided_ties, pairwise_accuracy, system_level


def test_group_level_skips_constant_groups_like_g_eval() -> None:
    judge = [1, 2, 3, 4, 4, 4, 1, 3, 2, 5, 5]
    human = [2, 1, 3, 5, 1, 2, 1, 2, 3, 4, 4]
    groups = ["a", "a", "a", "b", "b", "b", "c", "c", "c", "d", "e"]
    result = group_level(judge, human, groups, n_resamples=200)
    # b: the judge is constant; d and e: one item each
    expected = np.mean([sps.spearmanr([1, 2, 3], [2, 1, 3])[0],
                        sps.spearmanr([1, 3, 2], [1, 2, 3])[0]])
    assert result.n_groups == 3 and result.n_used == 2
    assert result.figures["spearman"].statistic == pytest.approx(expected)
    assert result.figures["spearman"].n == 2


def test_group_level_undefined_without_a_group_that_varies() -> None:
    result = group_level([1, 2, 3], [1, 2, 3], ["a", "b", "c"])
    assert math.isnan(result.figures["kendall_tau"].statistic)
    assert result.figures["kendall_tau"].reason == "no two items share a group"
    one = group_level([1, 2, 3], [3, 1, 2], ["a", "a", "a"])
    assert one.figures["pearson"].statistic == pytest.approx(sps.pearsonr([1, 2, 3], [3, 1, 2])[0])
    assert math.isnan(one.figures["pearson"].ci_low)
    assert one.figures["pearson"].note == "no interval: one group only: nothing to resample"


def test_pairwise_accuracy_counts_a_one_sided_tie_as_half() -> None:
    judge = np.array([[1.0, 2.0, 2.0, 4.0]])
    human = np.array([[1.0, 3.0, 2.0, 2.0]])
    # pairs: (0,1) agree, (0,2) agree, (0,3) agree, (1,2) judge ties: 0.5,
    # (1,3) disagree, (2,3) human ties: 0.5
    assert pairwise_accuracy(judge, human)[0] == pytest.approx(4.0 / 6.0)
    # two pairs tie on one side only: Kocmi et al. (2021) would count 3 of 6
    assert one_sided_ties(judge[0], human[0]) == 2
    # a pair tied on both sides is no one-sided tie; means equal to 9 decimals tie
    assert one_sided_ties([1.0, 1.0, 2.0], [3.0, 3.0, 1.0]) == 0
    assert one_sided_ties([0.1 + 0.2, 0.3], [1.0, 2.0]) == 1


def test_system_level_needs_three_systems_for_a_correlation() -> None:
    result = system_level([1, 2, 3, 4], [1, 2, 3, 5], ["x", "y", "x", "y"],
                          ["g1", "g1", "g2", "g2"], n_resamples=100)
    assert result.figures["kendall_tau"].reason == (
        "needs 3 or more systems with compared items (found 2)")
    assert result.figures["pairwise_accuracy"].statistic == 1.0
    assert result.n_pairs == 1


def test_system_level_interval_is_refused_when_no_resample_moves_it() -> None:
    # every group orders the three systems the same way on both sides: accuracy 1 everywhere
    judge = [1, 2, 3] * 5
    human = [2, 3, 4] * 5
    systems = ["a", "b", "c"] * 5
    groups = [g for g in range(5) for _ in range(3)]
    result = system_level(judge, human, systems, groups, n_resamples=200)
    accuracy = result.figures["pairwise_accuracy"]
    assert accuracy.statistic == 1.0
    assert math.isnan(accuracy.ci_low) and accuracy.note is not None


def test_midranks_equal_scipy_rankdata_with_ties() -> None:
    from judgekit.stats.levels import _midranks

    rng = np.random.default_rng(0)
    rows = rng.integers(1, 4, size=(50, 9)).astype(float)
    assert np.allclose(_midranks(rows), sps.rankdata(rows, axis=1))
    wide = rng.integers(1, 6, size=(2, 400)).astype(float)  # beyond the pairwise limit
    assert np.allclose(_midranks(wide), sps.rankdata(wide, axis=1))
