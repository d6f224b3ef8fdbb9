"""The stratified self-preference's p-value: a permutation of own/other within each human level.

At a handful of items the bootstrap's p-value is floored at 2/(B+1) whatever the data;
the permutation test reaches the exact conditional p (checked here by enumerating every
within-level arrangement), so five items cannot FAIL a gate on a test that is not significant.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from judgekit.stats._bias_self import self_preference_stratified


def _gap(above: np.ndarray, own: np.ndarray, strata: np.ndarray) -> float:
    num = den = 0.0
    for level in np.unique(strata):
        inside = strata == level
        o, a = own[inside], above[inside]
        if 0 < o.sum() < o.size:
            w = o.sum()
            num += w * (a[o == 1].mean() - a[o == 0].mean())
            den += w
    return num / den


def _exact_p(above: np.ndarray, own: np.ndarray, strata: np.ndarray) -> float:
    """Every arrangement of the own flags within each level, equally likely."""
    levels = np.unique(strata)
    per_level = []
    for level in levels:
        idx = np.flatnonzero(strata == level)
        k = int(own[idx].sum())
        per_level.append([(idx, set(c)) for c in itertools.combinations(range(idx.size), k)])
    observed = abs(_gap(above, own, strata)) - 1e-9
    hits = total = 0
    for combo in itertools.product(*per_level):
        flags = np.zeros_like(own)
        for idx, chosen in combo:
            for j in chosen:
                flags[idx[j]] = 1.0
        total += 1
        hits += abs(_gap(above, flags, strata)) >= observed
    return hits / total


def test_the_permutation_p_matches_the_exact_conditional_p() -> None:
    above = np.array([1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1], dtype=float)
    own = np.array([1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0], dtype=float)
    strata = np.array([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
    got = self_preference_stratified(above, own, strata, n_resamples=200)["self_preference"]
    assert got.statistic == pytest.approx(_gap(above, own, strata))
    assert got.pvalue == pytest.approx(_exact_p(above, own, strata), abs=0.025)


def test_five_items_are_not_significant_however_they_fall() -> None:
    # four own responses all rated above people, one other response not: the bootstrap
    # would say p = 0.002; no arrangement of five items can be that unlikely
    above = np.array([1, 1, 1, 1, 0], dtype=float)
    own = np.array([1, 1, 1, 0, 0], dtype=float)
    strata = np.array([4, 4, 4, 4, 4])
    got = self_preference_stratified(above, own, strata, n_resamples=500)["self_preference"]
    assert got.statistic == pytest.approx(0.5)
    assert got.pvalue is not None and got.pvalue > 0.05


def test_no_effect_gives_roughly_uniform_p_values() -> None:
    rng = np.random.default_rng(3)
    rejections = 0
    runs = 150
    for _ in range(runs):
        strata = rng.integers(1, 4, size=60)
        own = rng.integers(0, 2, size=60).astype(float)
        above = (rng.random(60) < 0.2 + 0.2 * (strata == 1)).astype(float)
        p = self_preference_stratified(above, own, strata, n_resamples=100,
                                       random_state=int(rng.integers(1 << 30)))
        rejections += p["self_preference"].pvalue < 0.05
    assert rejections / runs < 0.1  # nominal 0.05; MC SE about 0.018
