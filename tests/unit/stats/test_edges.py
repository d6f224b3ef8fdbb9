"""The edges where calibration data lives: perfect and constant raters, one unit, tiny n.

Rule under test: an interval is never zero-width unless the whole population was
observed. A statistic fixed by construction has a NaN interval with that reason; a
perfect sample gets a boundary-aware interval; a bootstrap whose resamples are too
often undefined refuses (NaN with a reason); bootstrap p-values are never 0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from judgekit import stats
from judgekit.stats._interval import MAX_UNDEFINED_SHARE
from judgekit.stats.bias import length_slope


def _zero_width(interval: tuple[float, float]) -> bool:
    return bool(np.isfinite(interval).all()) and interval[1] - interval[0] <= 1e-12


@pytest.mark.parametrize("method", ["bootstrap", "bca", "analytic"])
def test_perfect_kappa_gets_a_wilson_bound_not_a_point(method: str) -> None:
    res = stats.cohen_kappa([0, 1] * 5, [0, 1] * 5)
    low, high = res.confidence_interval(method=method, random_state=0)
    wilson_low = stats.wilson_interval(10, 10)[0]
    assert res.statistic == 1.0 and high == 1.0
    assert low == pytest.approx((wilson_low - 0.5) / 0.5)  # p_e = 0.5
    # clustered: each of the 2 clusters counts once, so the bound is far lower
    clustered = res.confidence_interval(clusters=[0] * 5 + [1] * 5, random_state=0)
    assert clustered[0] == pytest.approx((stats.wilson_interval(2, 2)[0] - 0.5) / 0.5)


def test_constant_judge_kappa_has_no_interval_and_says_why() -> None:
    res = stats.cohen_kappa(["pass"] * 10, ["pass", "fail"] * 5)
    assert res.statistic == 0.0
    for method in ("bootstrap", "analytic"):
        ci = res.confidence_interval(method=method, random_state=0)
        assert np.isnan(ci).all() and "0 by construction" in ci.reason
    assert "0 by construction" in res.to_dict()["note"]


def test_perfect_ac1_fleiss_and_alpha_are_boundary_aware() -> None:
    ac1 = stats.gwet_ac1([0, 1] * 10, [0, 1] * 10).confidence_interval(random_state=0)
    fleiss = stats.fleiss_kappa([[0, 0, 0], [1, 1, 1]] * 10).confidence_interval(random_state=0)
    alpha = stats.krippendorff_alpha([[1, 2, 3] * 10, [1, 2, 3] * 10], level="ordinal")
    for low, high in (ac1, fleiss, alpha.confidence_interval(random_state=0)):
        assert high == 1.0 and -1.0 <= low < 1.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: stats.fleiss_kappa([[1, 1, 2]]),  # one item
        lambda: stats.krippendorff_alpha([[1, 2, 1], [2, 1, 1]]),  # alike units
        lambda: stats.spearman([1, 2, 3], [1, 2, 3]),
        lambda: stats.kendall_tau([1, 2, 3, 4], [1, 2, 3, 4]),
    ],
)
def test_no_zero_width_bootstrap_interval(make) -> None:
    res = make()
    ci = res.confidence_interval(random_state=0)
    assert not _zero_width(ci)
    if np.isnan(ci).any():
        assert ci.reason


def test_spearman_tiny_n_interval_refused_for_undefined_resamples() -> None:
    ci = stats.spearman([1, 2, 3], [1, 3, 2]).confidence_interval(
        method="bootstrap", random_state=0
    )
    assert np.isnan(ci).all() and ci.n_undefined > MAX_UNDEFINED_SHARE * 2000
    assert "undefined in" in ci.reason


def test_grouped_macro_interval_at_15_of_15_matches_wilson() -> None:
    res = stats.grouped_accuracy([1] * 15, ["a"] * 15)
    low, high = res.confidence_interval(which="macro", random_state=0)
    assert (low, high) == pytest.approx(stats.wilson_interval(15, 15))  # (0.796, 1)


def test_paired_bootstrap_one_pair_has_no_interval_and_no_pvalue() -> None:
    res = stats.paired_bootstrap([1.0], [0.0], random_state=0)
    assert math.isnan(res.ci_low) and math.isnan(res.pvalue)
    assert "same value" in res.confidence_interval().reason


def test_bootstrap_pvalue_is_never_zero_and_refused_below_ten_units() -> None:
    res = stats.paired_bootstrap([1, 1, 1, 1, 1, 0, 1, 1, 1, 1], [0] * 10, random_state=0)
    assert res.pvalue >= 2 / 2001
    # 8 items: the bootstrap p (floored at 2/(B+1) = 0.001) would claim far more than the
    # exact McNemar test (7 discordant pairs all one way: 2 / 2**7), so none is given
    few = stats.paired_bootstrap([1, 1, 1, 1, 1, 0, 1, 1], [0] * 8, random_state=0)
    assert math.isnan(few.pvalue)
    assert stats.mcnemar([1, 1, 1, 1, 1, 0, 1, 1], [0] * 8).pvalue == pytest.approx(0.015625)


def test_length_slope_with_two_prompts_has_a_nonzero_pvalue() -> None:
    rng = np.random.default_rng(3)
    lengths = rng.integers(50, 400, 12)
    scores = np.log2(lengths) + rng.normal(0, 0.1, 12)
    res = length_slope(scores, lengths, groups=[0] * 6 + [1] * 6, random_state=0)
    # two prompts: the bootstrap p was 0.001 (its floor); below ten prompts it is refused
    assert res.pvalue is None or math.isnan(res.pvalue)
    assert not _zero_width(res.confidence_interval())


@pytest.mark.parametrize(("n", "p"), [(2, 1.0), (3, 1 / 3), (4, 1 / 12)])
def test_spearman_exact_pvalue_in_perfect_order(n: int, p: float) -> None:
    assert stats.spearman(range(n), range(n)).pvalue == pytest.approx(p)


def test_spearman_exact_pvalue_matches_scipy_permutation_test() -> None:
    x = np.array([1, 2, 3, 4, 5, 6, 7.0])
    for y in (np.array([2, 1, 4, 3, 7, 5, 6.0]), np.array([1, 1, 2, 2, 3, 3, 3.0])):
        ref = sps.permutation_test(
            (y,),
            lambda b: sps.spearmanr(x, b).statistic,
            permutation_type="pairings",
            n_resamples=np.inf,
        )
        assert stats.spearman(x, y).pvalue == pytest.approx(ref.pvalue)


def test_weighted_kappa_over_the_declared_scale() -> None:
    a = [1, 2, 5, 5, 1, 2, 5, 1, 1, 2]
    b = [1, 5, 5, 2, 1, 2, 5, 2, 1, 1]
    with pytest.raises(ValueError, match="pass labels="):
        stats.cohen_kappa(a, b, weights="quadratic")
    declared = stats.cohen_kappa(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5])
    reference = cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5])
    assert declared.statistic == pytest.approx(reference, abs=1e-12)
    # consecutive integers need no labels=
    assert stats.cohen_kappa([1, 2, 3, 2], [1, 3, 3, 2], weights="linear").n == 4


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.cohen_kappa([1, math.inf], [1, 2]), "infinite"),
        (lambda: stats.krippendorff_alpha([[1, math.inf], [1, 2]]), "infinite"),
        (
            lambda: stats.krippendorff_alpha([[1.0, math.inf], [1.0, 2.0]], level="interval"),
            "infinite",
        ),
        (lambda: stats.krippendorff_alpha([1, 2, 3]), "two-dimensional"),
        (lambda: stats.level_order_bias(["x"], ["x"]), "level indices"),
        (lambda: stats.spearman(["1", "2", "3"], [1, 2, 3]), "not text"),
    ],
)
def test_input_contract_value_errors_name_the_problem(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
