"""Agreement statistics against independent implementations and published examples."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judgekit.stats import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
)

WEIGHTS = [None, "linear", "quadratic"]


# --- Cohen's kappa -----------------------------------------------------------------


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_matches_sklearn_on_random_data(weights, seed, noisy_rater):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = int(rng.integers(20, 400))
    truth = rng.integers(0, k, n)
    a, b = noisy_rater(truth, 0.7, k, rng), noisy_rater(truth, 0.6, k, rng)
    result = cohen_kappa(a, b, weights=weights)
    assert result.statistic == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)
    assert result.n == n


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_kappa_standard_error_matches_statsmodels(weights, rng, noisy_rater):
    truth = rng.integers(0, 4, 300)
    a, b = noisy_rater(truth, 0.7, 4, rng), noisy_rater(truth, 0.6, 4, rng)
    result = cohen_kappa(a, b, weights=weights)
    reference = cohens_kappa(result.confusion, wt=weights)
    assert result.statistic == pytest.approx(reference.kappa, abs=1e-12)
    assert result.standard_error == pytest.approx(reference.std_kappa, rel=1e-9)


def test_cohen_kappa_labels_fix_the_order_for_weights():
    a = ["low", "mid", "high", "mid", "low", "high", "mid"]
    b = ["mid", "mid", "high", "low", "low", "mid", "high"]
    order = ["low", "mid", "high"]
    result = cohen_kappa(a, b, weights="quadratic", labels=order)
    expected = cohen_kappa_score(a, b, weights="quadratic", labels=order)
    assert result.statistic == pytest.approx(expected)
    assert result.labels == tuple(order)
    # sorted order ("high" < "low" < "mid") is a different scale and gives another value
    assert cohen_kappa(a, b, weights="quadratic").statistic != pytest.approx(expected)


def test_kappa_paradox_high_agreement_low_kappa():
    # both raters say "pass" 90% of the time, agree on 85% of items:
    # p_o = 0.85, p_e = 0.9**2 + 0.1**2 = 0.82, kappa = 0.03 / 0.18 = 0.17
    a = ["pass"] * 83 + ["pass"] * 7 + ["fail"] * 7 + ["fail"] * 3
    b = ["pass"] * 83 + ["fail"] * 7 + ["pass"] * 7 + ["fail"] * 3
    result = cohen_kappa(a, b)
    assert result.p_observed == pytest.approx(0.86)
    # reproduce the seed's numbers exactly with a table that has p_o = 0.85
    a = ["pass"] * 825 + ["pass"] * 75 + ["fail"] * 75 + ["fail"] * 25
    b = ["pass"] * 825 + ["fail"] * 75 + ["pass"] * 75 + ["fail"] * 25
    result = cohen_kappa(a, b)
    assert result.p_observed == pytest.approx(0.85)
    assert result.p_expected == pytest.approx(0.82)
    assert result.statistic == pytest.approx(0.03 / 0.18)
    assert round(result.statistic, 2) == 0.17
    # AC1 and percent agreement stay high on the same data (report them beside kappa)
    assert gwet_ac1(a, b).statistic > 0.75
    assert percent_agreement(a, b).statistic == pytest.approx(0.85)


def test_cohen_kappa_drops_pairs_with_missing_values():
    a = ["pass", "fail", None, "pass", float("nan"), "fail"]
    b = ["pass", "fail", "pass", None, "fail", "pass"]
    result = cohen_kappa(a, b)
    assert result.n == 3
    assert result.statistic == pytest.approx(
        cohen_kappa_score(["pass", "fail", "fail"], ["pass", "fail", "pass"])
    )
    assert result.confusion.sum() == 3


def test_cohen_kappa_perfect_and_negative_agreement():
    a = ["A", "B", "A", "B", "tie", "A"]
    assert cohen_kappa(a, a).statistic == pytest.approx(1.0)
    flipped = ["B" if x == "A" else "A" for x in ["A", "B"] * 10]
    result = cohen_kappa(["A", "B"] * 10, flipped)
    assert result.statistic == pytest.approx(-1.0)
    assert result.reason is None


def test_cohen_kappa_undefined_when_both_raters_use_one_identical_category():
    result = cohen_kappa(["pass"] * 8, ["pass"] * 8, labels=["pass", "fail"])
    assert math.isnan(result.statistic)
    assert result.p_expected == pytest.approx(1.0)
    assert "'pass'" in result.reason and "p_e = 1" in result.reason
    assert all(math.isnan(v) for v in result.confidence_interval(random_state=0))
    assert result.to_dict()["statistic"] is None
    assert "reason" in result.to_dict()


def test_cohen_kappa_constant_rater_against_varying_rater_is_zero():
    result = cohen_kappa(["pass"] * 6, ["pass", "fail"] * 3)
    assert result.statistic == pytest.approx(0.0)
    assert result.reason is None


def test_cohen_kappa_all_missing_is_undefined_not_an_error():
    result = cohen_kappa([None, None], ["pass", None])
    assert result.n == 0
    assert math.isnan(result.statistic)
    assert "missing" in result.reason


def test_cohen_kappa_one_item():
    result = cohen_kappa(["pass"], ["fail"])
    assert result.n == 1
    assert result.statistic == pytest.approx(0.0)  # p_o = 0, p_e = 0


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "message"),
    [
        (["x", "y"], ["x"], {}, "length mismatch"),
        ([], [], {}, "empty"),
        (["x", "z"], ["x", "y"], {"labels": ["x", "y"]}, "outside the declared labels"),
        (["x"], ["x"], {"weights": "cubic"}, "weights must be one of"),
        (["x"], ["x"], {"labels": ["x", "x"]}, "duplicates"),
        ("xy", "xy", {}, "not a single string"),
        ([1, "a"], ["a", 1], {}, "mix types"),
    ],
)
def test_cohen_kappa_invalid_input_names_the_problem(a, b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cohen_kappa(a, b, **kwargs)


def test_cohen_kappa_intervals(rng, noisy_rater):
    truth = rng.integers(0, 2, 500)
    a, b = noisy_rater(truth, 0.8, 2, rng), noisy_rater(truth, 0.8, 2, rng)
    result = cohen_kappa(a, b)
    boot = result.confidence_interval(random_state=1)
    assert boot == result.confidence_interval(random_state=1)  # seeded = reproducible
    analytic = result.confidence_interval(method="analytic")
    bca = result.confidence_interval(method="bca", random_state=1)
    for low, high in (boot, analytic, bca):
        assert low < result.statistic < high
    # the bootstrap and the Fleiss-Cohen-Everitt interval describe the same uncertainty
    assert boot[1] - boot[0] == pytest.approx(analytic[1] - analytic[0], rel=0.15)
    wider = result.confidence_interval(confidence_level=0.99, random_state=1)
    assert wider[0] < boot[0] and wider[1] > boot[1]


def test_cohen_kappa_cluster_bootstrap_is_wider_for_clustered_data(rng):
    # 40 prompts x 10 near-identical items: the effective sample is ~40, not 400
    prompt_truth = rng.integers(0, 2, 40)
    prompt_flip_a = rng.random(40) < 0.2
    prompt_flip_b = rng.random(40) < 0.2
    clusters = np.repeat(np.arange(40), 10)
    truth = prompt_truth[clusters]
    a = np.where(prompt_flip_a[clusters], 1 - truth, truth)
    b = np.where(prompt_flip_b[clusters], 1 - truth, truth)
    result = cohen_kappa(a, b)
    naive = result.confidence_interval(random_state=0)
    clustered = result.confidence_interval(random_state=0, clusters=clusters)
    assert (clustered[1] - clustered[0]) > 2 * (naive[1] - naive[0])


def test_cohen_kappa_clusters_may_cover_input_or_used_pairs():
    a = ["p", "f", None, "p", "f", "p", "f", "p"]
    b = ["p", "f", "p", "f", "f", "p", "p", "p"]
    result = cohen_kappa(a, b)
    full = [0, 0, 1, 1, 2, 2, 3, 3]
    used = [0, 0, 1, 2, 2, 3, 3]
    assert result.confidence_interval(random_state=3, clusters=full) == (
        result.confidence_interval(random_state=3, clusters=used)
    )
    with pytest.raises(ValueError, match="clusters has length 3"):
        result.confidence_interval(clusters=[0, 1, 2])


# --- Gwet's AC1 and percent agreement ----------------------------------------------


def test_gwet_ac1_by_hand():
    # 2x2 table [[40, 10], [5, 45]]: p_o = 0.85; pi_pass = (0.5 + 0.45)/2 = 0.475
    a = ["pass"] * 50 + ["fail"] * 50
    b = ["pass"] * 40 + ["fail"] * 10 + ["pass"] * 5 + ["fail"] * 45
    pi = (0.50 + 0.45) / 2
    p_e = 2 * pi * (1 - pi) / (2 - 1)
    result = gwet_ac1(a, b)
    assert result.p_observed == pytest.approx(0.85)
    assert result.p_expected == pytest.approx(p_e)
    assert result.statistic == pytest.approx((0.85 - p_e) / (1 - p_e))


def test_gwet_ac1_equals_kappa_with_balanced_marginals():
    a = ["x"] * 30 + ["y"] * 30
    b = ["x"] * 20 + ["y"] * 10 + ["x"] * 10 + ["y"] * 20
    assert gwet_ac1(a, b).statistic == pytest.approx(cohen_kappa(a, b).statistic)


def test_gwet_ac1_with_declared_scale_and_one_used_category():
    # kappa is undefined here; AC1 with the declared binary scale is perfect agreement
    result = gwet_ac1(["pass"] * 5, ["pass"] * 5, labels=["pass", "fail"])
    assert result.statistic == pytest.approx(1.0)
    undeclared = gwet_ac1(["pass"] * 5, ["pass"] * 5)
    assert math.isnan(undeclared.statistic)
    assert "labels=" in undeclared.reason
    low, high = gwet_ac1(["p", "f"] * 20, ["p", "f"] * 19 + ["f", "p"]).confidence_interval(
        random_state=0
    )
    assert low < high <= 1.0


def test_percent_agreement_with_wilson_interval_and_tolerance():
    result = percent_agreement(["1", "2", "3", "4", "5"], ["1", "2", "3", "5", "3"])
    assert (result.statistic, result.n, result.successes) == (0.6, 5, 3)
    from statsmodels.stats.proportion import proportion_confint

    expected = proportion_confint(3, 5, method="wilson")
    assert result.confidence_interval() == pytest.approx(expected)
    within_one = percent_agreement([1, 2, 3, 4, 5], [1, 2, 3, 5, 3], tolerance=1)
    assert within_one.statistic == pytest.approx(0.8)
    with pytest.raises(ValueError, match="method='bootstrap'"):
        result.confidence_interval(clusters=[0, 0, 1, 1, 2])
    clustered = result.confidence_interval(method="bootstrap", clusters=[0, 0, 1, 1, 2])
    assert 0.0 <= clustered[0] <= clustered[1] <= 1.0


# --- Fleiss' kappa -----------------------------------------------------------------


def test_fleiss_kappa_fleiss_1971(fleiss_1971):
    result = fleiss_kappa(counts=fleiss_1971)
    assert result.statistic == pytest.approx(0.4302445200601408, abs=1e-12)
    assert round(result.statistic, 3) == 0.430
    assert (result.n, result.n_raters) == (30, 6)
    low, high = result.confidence_interval(random_state=0)
    assert low < 0.430 < high


@pytest.mark.parametrize("seed", range(4))
def test_fleiss_kappa_matches_statsmodels_on_random_ratings(seed, noisy_rater):
    rng = np.random.default_rng(seed)
    n_raters, k = int(rng.integers(2, 7)), int(rng.integers(2, 5))
    truth = rng.integers(0, k, 200)
    ratings = np.column_stack([noisy_rater(truth, 0.6, k, rng) for _ in range(n_raters)])
    table, _ = aggregate_raters(ratings)
    assert fleiss_kappa(ratings).statistic == pytest.approx(sm_fleiss_kappa(table), abs=1e-12)
    assert fleiss_kappa(counts=table).statistic == pytest.approx(sm_fleiss_kappa(table), abs=1e-12)


def test_fleiss_kappa_string_ratings_with_a_missing_column_per_item():
    ratings = [["pass", "pass", None], ["fail", None, "fail"], [None, "pass", "fail"]]
    result = fleiss_kappa(ratings)
    assert result.n_raters == 2
    assert result.labels == ("fail", "pass")


def test_fleiss_kappa_unequal_ratings_point_to_krippendorff():
    with pytest.raises(ValueError, match="krippendorff_alpha"):
        fleiss_kappa([["a", "a", "b"], ["a", None, "b"]])
    with pytest.raises(ValueError, match="krippendorff_alpha"):
        fleiss_kappa([["a", "a", "b"], ["a", "b"]])


def test_fleiss_kappa_undefined_and_invalid():
    result = fleiss_kappa([["x", "x"], ["x", "x"]])
    assert math.isnan(result.statistic) and "'x'" in result.reason
    with pytest.raises(ValueError, match="exactly one"):
        fleiss_kappa()
    with pytest.raises(ValueError, match="at least 2 ratings"):
        fleiss_kappa([["x"], ["y"]])
    with pytest.raises(ValueError, match="non-negative integers"):
        fleiss_kappa(counts=[[1.5, 0.5]])


# --- Krippendorff's alpha ----------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_alpha_published_example(krippendorff_2011, level, expected):
    result = krippendorff_alpha(krippendorff_2011, level=level)
    assert round(result.statistic, 3) == expected
    assert result.n == 11  # unit 12 has a single value and is not pairable
    assert result.n_pairable_values == 40
    assert 1 - result.observed_disagreement / result.expected_disagreement == pytest.approx(
        result.statistic
    )


def test_krippendorff_alpha_with_none_and_string_labels(krippendorff_2011):
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    data = [[None if math.isnan(v) else names[int(v)] for v in row] for row in krippendorff_2011]
    assert round(krippendorff_alpha(data).statistic, 3) == 0.743
    ordinal = krippendorff_alpha(data, level="ordinal", value_domain=list(names.values()))
    assert round(ordinal.statistic, 3) == 0.815
    with pytest.raises(ValueError, match="value_domain"):
        krippendorff_alpha(data, level="ordinal")
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha(data, level="interval", value_domain=list(names.values()))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_matches_package_on_random_data(level, rng):
    truth = rng.integers(1, 6, 150)
    data = np.clip(truth + rng.integers(-1, 2, (5, 150)), 1, 5).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    result = krippendorff_alpha(data, level=level)
    assert result.statistic == pytest.approx(expected, abs=1e-12)
    # the bootstrap path computes alpha from its own sums: same number at the original data
    sums = np.ones((1, 1)) @ result._contributions()[0].sum(axis=0)[None, :]
    assert result._statistic_of_sums(sums)[0] == pytest.approx(expected, abs=1e-12)
    low, high = result.confidence_interval(random_state=0, n_resamples=500)
    assert low < result.statistic < high


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_krippendorff_alpha_interval_matches_a_unit_bootstrap_through_the_package(level):
    """The percentile interval (multinomial draws of unit patterns, alpha from summed
    coincidences) is the textbook unit bootstrap: resampling the pairable units' columns and
    recomputing alpha with the ``krippendorff`` package gives the same bounds up to Monte
    Carlo error (about 0.01 here)."""
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, 60)
    data = np.where(rng.random((3, 60)) < 0.6, truth, rng.integers(1, 6, (3, 60))).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    result = krippendorff_alpha(data, level=level)
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    assert result.n == pairable.shape[1] == 50
    units = pairable.shape[1]
    replicates = [
        krippendorff.alpha(
            reliability_data=pairable[:, rng.integers(0, units, units)],
            level_of_measurement=level,
            value_domain=[1, 2, 3, 4, 5],
        )
        for _ in range(1000)
    ]
    expected = np.quantile(replicates, [0.025, 0.975])
    low, high = result.confidence_interval(n_resamples=2000, random_state=0)
    assert low == pytest.approx(expected[0], abs=0.03)
    assert high == pytest.approx(expected[1], abs=0.03)


def test_krippendorff_alpha_edge_cases():
    all_missing = krippendorff_alpha([[None, None], [None, 1]])
    assert math.isnan(all_missing.statistic) and all_missing.n == 0
    assert "pairable" in all_missing.reason
    constant = krippendorff_alpha([[1, 1, 1], [1, 1, 1]])
    assert math.isnan(constant.statistic) and "expected disagreement is 0" in constant.reason
    perfect = krippendorff_alpha([[1, 2, 3, None], [1, 2, 3, 4], [None, 2, 3, 4]])
    assert perfect.statistic == pytest.approx(1.0)
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha([[1, 2]], level="cardinal")
    with pytest.raises(ValueError, match="outside the declared labels"):
        krippendorff_alpha([[1, 2], [1, 3]], value_domain=[1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        krippendorff_alpha([[1, -2], [1, 3]], level="ratio")


def test_krippendorff_alpha_cluster_bootstrap(rng):
    truth = rng.integers(1, 4, 60)
    data = np.vstack([truth, np.where(rng.random(60) < 0.7, truth, rng.integers(1, 4, 60))])
    result = krippendorff_alpha(data)
    low, high = result.confidence_interval(random_state=0, clusters=np.arange(60) // 3)
    assert low < result.statistic < high
