"""judgekit.stats.bias against hand counts, published definitions and independent code."""

from __future__ import annotations

import json
import math
import random

import krippendorff
import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as sps
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
from statsmodels.stats.proportion import proportion_confint

from judgekit.stats.bias import (
    Estimate,
    bpde,
    length_effect,
    length_slope,
    level_order_bias,
    padding_effect,
    position_bias,
    prefer_longer_rate,
    repetition_stability,
    subsample_points,
)

# -- position ----------------------------------------------------------------------


def shi_position_fairness(raw_original: list[str], raw_swapped: list[str]) -> float:
    """Shi et al.'s preference score, written from their description on raw slot choices.

    Pair codes (original, swapped) with C = tie: AA/AC/CA primacy, BB/BC/CB
    recency; raw = rc*rc/(rc+pc) - pc*pc/(rc+pc), min-max scaled over [-n, n].
    """
    primacy = recency = 0
    for a, b in zip(raw_original, raw_swapped, strict=True):
        pair = a + b
        primacy += pair in ("AA", "AC", "CA")
        recency += pair in ("BB", "BC", "CB")
    n = len(raw_original)
    inconsistent = primacy + recency
    raw = 0.0
    if inconsistent:
        raw = recency * (recency / inconsistent) - primacy * (primacy / inconsistent)
    return (raw + n) / (2 * n) * 2 - 1


def to_raw_slot(mapped_back: str) -> str:
    """A mapped-back swapped verdict as the raw slot the judge picked (C = tie)."""
    return {"A": "B", "B": "A", "tie": "C"}[mapped_back]


def test_counts_follow_the_slot_definitions() -> None:
    original = ["A", "B", "tie", "A", "A", "tie", "B", "B", "tie"]
    swapped = ["A", "B", "tie", "B", "tie", "B", "A", "tie", "A"]
    res = position_bias(original, swapped)
    # consistent: A/A, B/B, tie/tie; primacy: A/B, A/tie, tie/B; recency: B/A, B/tie, tie/A
    assert (res.consistent, res.primacy, res.recency, res.n, res.n_failed) == (3, 3, 3, 9, 0)
    assert res.statistic == pytest.approx(3 / 9)
    assert res.pair_counts == {
        "A/A": 1, "A/B": 1, "A/tie": 1, "B/A": 1, "B/B": 1, "B/tie": 1,
        "tie/A": 1, "tie/B": 1, "tie/tie": 1,
    }
    assert res.inconsistent_indices() == [3, 4, 5, 6, 7, 8]


def test_always_first_slot_is_minus_one_and_always_last_is_plus_one() -> None:
    # A judge that always picks the first-shown answer says A as written and,
    # on the swapped presentation, the original B (mapped back).
    first = position_bias(["A"] * 10, ["B"] * 10)
    last = position_bias(["B"] * 10, ["A"] * 10)
    assert first.position_fairness.statistic == -1.0
    assert last.position_fairness.statistic == 1.0
    assert first.first_slot_rate.statistic == 1.0 and first.conflict_rate.statistic == 1.0
    assert last.second_slot_rate.statistic == 1.0
    assert first.is_biased() and last.is_biased()


def test_position_fairness_matches_shis_raw_formula() -> None:
    rng = random.Random(3)
    for _ in range(30):
        n = rng.randint(1, 40)
        original = [rng.choice(["A", "B", "tie"]) for _ in range(n)]
        swapped = [rng.choice(["A", "B", "tie"]) for _ in range(n)]
        raw_original = [{"A": "A", "B": "B", "tie": "C"}[v] for v in original]
        raw_swapped = [to_raw_slot(v) for v in swapped]
        expected = shi_position_fairness(raw_original, raw_swapped)
        assert position_bias(original, swapped).position_fairness.statistic == pytest.approx(
            expected
        )


def test_intervals_are_wilson_and_the_test_is_scipys_exact_binomial() -> None:
    original = ["A"] * 60 + ["A"] * 25 + ["B"] * 15
    swapped = ["A"] * 60 + ["B"] * 25 + ["A"] * 15  # 25 primacy, 15 recency
    res = position_bias(original, swapped)
    d = res.to_dict()
    low, high = proportion_confint(60, 100, alpha=0.05, method="wilson")
    assert d["position_consistency"]["statistic"] == pytest.approx(0.6)
    assert (d["position_consistency"]["ci_low"], d["position_consistency"]["ci_high"]) == (
        pytest.approx(low), pytest.approx(high))
    # the conflict rate is what the position gate reads: its exact (Clopper-Pearson) interval
    low, high = proportion_confint(40, 100, alpha=0.05, method="beta")
    assert d["conflict_rate"]["ci_low"] == pytest.approx(low)
    assert d["conflict_rate"]["ci_high"] == pytest.approx(high)
    p = sps.binomtest(25, 40, 0.5).pvalue
    assert d["first_slot_rate"]["pvalue"] == pytest.approx(p)
    assert d["first_slot_test"]["k"] == 25 and d["first_slot_test"]["n"] == 40
    exact = sps.binomtest(25, 40).proportion_ci(0.95, method="exact")
    assert d["first_slot_test"]["ci_low"] == pytest.approx(exact.low)
    assert d["slot_counts"] == {"consistent": 60, "first": 25, "second": 15}
    # a 90% interval is narrower than the 95% one
    narrow = res.consistency.confidence_interval(0.90)
    assert narrow[0] > d["position_consistency"]["ci_low"]


def test_failures_are_excluded_and_counted() -> None:
    res = position_bias(["A", None, "B", float("nan")], ["A", "A", None, "B"])
    assert res.n == 1 and res.n_failed == 3 and res.consistent == 1
    assert res.inconsistent_indices() == []


def test_no_inconsistent_pair_leaves_the_test_undefined_not_significant() -> None:
    res = position_bias(["A", "B"], ["A", "B"])
    assert math.isnan(res.pvalue) and not res.is_biased()
    d = res.to_dict()
    assert d["first_slot_test"]["pvalue"] is None
    assert d["first_slot_rate"]["pvalue"] is None
    json.dumps(d)  # JSON-ready


def test_all_failed_gives_nan_with_reason() -> None:
    d = position_bias([None, None], ["A", None]).to_dict()
    assert d["position_consistency"]["statistic"] is None
    assert d["position_consistency"]["n"] == 0
    assert "no valid pairs" in d["position_consistency"]["reason"]


@pytest.mark.parametrize(
    ("original", "swapped", "message"),
    [
        (["A", "C"], ["A", "B"], "original must contain"),
        (["A"], ["A", "B"], "length mismatch"),
        (["A"], ["a"], "swapped must contain"),
        ("AB", ["A", "B"], "not a single string"),
    ],
)
def test_invalid_input_is_a_value_error_naming_the_problem(original, swapped, message) -> None:
    with pytest.raises(ValueError, match=message):
        position_bias(original, swapped)


def test_bpde_is_the_entropy_of_both_orders_verdicts() -> None:
    values = bpde([["A", "A"], ["A", "B"], ["A", "tie", "B", "B"], [None, None]])
    assert values[0] == 0.0
    assert values[1] == pytest.approx(math.log(2))
    assert values[2] == pytest.approx(sps.entropy([1, 1, 2]))
    assert math.isnan(values[3])


def test_simulated_first_slot_preference_is_detected_and_a_fair_judge_is_not() -> None:
    rng = np.random.default_rng(11)
    n = 200
    better = rng.choice(["A", "B"], size=n)

    def judge(first: str, second: str, best: str, bias: float) -> str:
        # returns the *content* picked; with probability `bias` the first-shown one
        if rng.random() < bias:
            return first
        if rng.random() < 0.2:  # slot-blind noise
            return first if rng.random() < 0.5 else second
        return best

    def probe(bias: float):
        original = [judge("A", "B", b, bias) for b in better]
        swapped = [judge("B", "A", b, bias) for b in better]
        return position_bias(original, swapped)

    biased, fair = probe(0.2), probe(0.0)
    assert biased.is_biased() and biased.first_slot_rate.statistic > 0.1
    assert biased.position_fairness.confidence_interval()[1] < 0
    assert not fair.is_biased()
    low, high = fair.position_fairness.confidence_interval()
    assert low < 0 < high


# -- level order (pointwise) -----------------------------------------------------------


def test_level_order_directions_and_shift() -> None:
    # as written the first-listed level is index 0; reversed, the last index is first
    res = level_order_bias([0, 2, 3, 1, None], [1, 2, 1, 1, 4])
    assert (res.consistent, res.primacy, res.recency, res.n_failed) == (2, 1, 1, 1)
    assert res.shift is not None
    assert res.shift.statistic == pytest.approx((1 + 0 - 2 + 0) / 4)
    d = res.to_dict()
    assert d["level_order_shift"]["n"] == 4
    with pytest.raises(ValueError, match="level indices"):
        level_order_bias([0.5], [1])


# -- repetition ---------------------------------------------------------------------


def test_repetition_stability_hand_computed() -> None:
    samples = [
        ["pass", "pass", "pass"],  # stable
        ["pass", "fail", "pass"],  # modal 2/3
        ["fail", None, "fail"],  # two valid, stable
        ["fail", None, None],  # one valid: excluded
    ]
    res = repetition_stability(samples)
    assert res.n == 3 and res.n_excluded == 1 and res.samples == 3
    assert res.statistic == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert res.flip_rate.statistic == pytest.approx(1 / 3)
    assert res.unstable == (1,)
    assert res.label_counts == {"fail": 4, "pass": 5}


def test_repeat_agreement_matches_statsmodels_and_krippendorff() -> None:
    rng = np.random.default_rng(5)
    truth = rng.integers(1, 6, size=40)
    samples = np.clip(truth[:, None] + rng.integers(-1, 2, size=(40, 5)), 1, 5)
    labels = [[str(v) for v in row] for row in samples]
    res = repetition_stability(labels, level="ordinal", labels=["1", "2", "3", "4", "5"])
    table, _ = aggregate_raters(samples)
    assert res.to_dict()["repeat_fleiss_kappa"]["statistic"] == pytest.approx(sm_fleiss(table))
    expected_alpha = krippendorff.alpha(
        reliability_data=samples.T.astype(float), level_of_measurement="ordinal"
    )
    assert res.to_dict()["repeat_alpha"]["statistic"] == pytest.approx(expected_alpha)
    assert res.to_dict()["repeat_alpha"]["n"] == 40


def test_repetition_with_missing_repeats_uses_complete_rows_for_fleiss() -> None:
    res = repetition_stability([["A", "A"], ["B", None], ["B", "A"], ["A", "B"]])
    d = res.to_dict()
    assert d["repeat_fleiss_kappa"]["n"] == 3
    assert res.n == 3 and res.n_excluded == 1


def test_repetition_rejects_a_single_repeat() -> None:
    with pytest.raises(ValueError, match="at least 2 repeats"):
        repetition_stability([["pass"], ["fail"]])


def test_a_perfectly_stable_judge_has_undefined_kappa_with_a_reason() -> None:
    d = repetition_stability([["pass"] * 3] * 4).to_dict()
    assert d["repetition_stability"]["statistic"] == 1.0
    assert d["flip_rate"]["statistic"] == 0.0
    assert d["repeat_fleiss_kappa"]["statistic"] is None
    assert "reason" in d["repeat_fleiss_kappa"]


# -- length ----------------------------------------------------------------------------


def test_length_effect_is_scipys_spearman_and_kendall() -> None:
    rng = np.random.default_rng(2)
    lengths = rng.integers(50, 2000, size=60)
    scores = np.clip(np.round(lengths / 500 + rng.normal(0, 1, 60)), 1, 5)
    res = length_effect([*scores.tolist(), None], [*lengths.tolist(), 100])
    d = res.to_dict()
    assert d["length_correlation"]["statistic"] == pytest.approx(
        sps.spearmanr(lengths, scores).statistic)
    assert d["length_kendall"]["statistic"] == pytest.approx(
        sps.kendalltau(lengths, scores).statistic)
    assert d["length_correlation"]["n"] == 60
    assert d["length_correlation"]["ci_low"] > 0
    assert len(d["points"]) == 60


def test_subsample_points_caps_and_keeps_the_ends() -> None:
    pts = subsample_points(np.arange(10_000.0), np.arange(10_000.0), 2000)
    assert len(pts) == 2000 and pts[0] == [0.0, 0.0] and pts[-1] == [9999.0, 9999.0]


def test_padding_effect_shift_and_flip_rate() -> None:
    base = [3, 3, 4, 2, None, 5]
    padded = [4, 3, 5, 2, 5, None]
    res = padding_effect(base, padded)
    assert res.n == 4
    assert res.statistic == pytest.approx(0.5)
    assert res.flip_rate.statistic == pytest.approx(0.5)
    assert res.flipped == (0, 2)
    d = res.to_dict()
    assert d["padding_shift"]["ci_low"] >= 0 and d["padding_shift"]["ci_high"] <= 1
    assert "pvalue" in d["padding_shift"]
    # deterministic: the same call gives the same interval
    assert padding_effect(base, padded).to_dict() == d


def test_padding_effect_with_nothing_paired() -> None:
    d = padding_effect([None, 1], [1, None]).to_dict()
    assert d["padding_shift"]["statistic"] is None and d["padding_shift"]["n"] == 0


def test_prefer_longer_rate_counts_only_decided_pairs_over_the_gap() -> None:
    verdicts = ["A", "B", "A", "tie", None, "B", "A"]
    len_a = [200, 200, 100, 300, 300, 100, 131]
    len_b = [100, 100, 200, 100, 100, 200, 100]  # last gap is 31 > 30
    res = prefer_longer_rate(verdicts, len_a, len_b)
    # decided: A(longer) B(shorter) A(shorter) B(longer) A(longer) -> 3 of 5
    assert (res.longer, res.n, res.ties, res.failed) == (3, 5, 1, 1)
    assert res.statistic == pytest.approx(0.6)
    assert res.to_dict()["pvalue"] == pytest.approx(sps.binomtest(3, 5).pvalue)
    at_gap = prefer_longer_rate(["A"], [130], [100])
    assert at_gap.n == 0 and at_gap.to_dict()["statistic"] is None


def test_prefer_longer_rate_leaves_out_pairs_with_a_missing_length() -> None:
    # a pair whose length is unknown has no length gap: it is neither decided nor
    # counted as "the shorter answer won"
    len_a, len_b = [200, None, 100, 300], [100, 50, 200, float("nan")]
    res = prefer_longer_rate(["A", "A", "B", "B"], len_a, len_b)
    assert (res.longer, res.n, res.ties, res.failed) == (2, 2, 0, 0)
    assert res.statistic == pytest.approx(1.0)


# -- length slope (fixed effects by prompt) ---------------------------------------------


def prompts_data(seed: int, slope: float, n_prompts: int = 40, human_weight: float = 0.0):
    """Answers to shared prompts: score = prompt effect + slope * log2(len) (+ human) + noise."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_prompts), rng.integers(1, 6, n_prompts))
    n = groups.size
    # prompts differ in typical length and in difficulty, and the two are correlated, so a
    # pooled regression would be confounded
    typical = rng.uniform(5, 10, n_prompts)
    lengths = np.round(2 ** (typical[groups] + rng.normal(0, 0.7, n)))
    human = rng.normal(0, 1, n) + 0.3 * np.log2(lengths)
    score = (3 + slope * np.log2(lengths) + 0.4 * typical[groups] + human_weight * human
             + rng.normal(0, 0.5, n))
    return score, lengths, groups, human


def test_length_slope_is_statsmodels_ols_with_prompt_fixed_effects() -> None:
    score, lengths, groups, human = prompts_data(1, slope=0.3, human_weight=0.5)
    frame = pd.DataFrame({"y": score, "x": np.log2(lengths), "g": groups, "h": human})
    fe = smf.ols("y ~ x + C(g)", frame).fit().params
    res = length_slope(score, lengths, groups=groups)
    assert res.statistic == pytest.approx(fe["x"], rel=1e-9)
    assert res.n == int((np.bincount(groups)[groups] >= 2).sum())  # singleton prompts drop out
    assert res.n_groups == int((np.bincount(groups) >= 2).sum())
    with_h = smf.ols("y ~ x + h + C(g)", frame).fit().params
    adjusted = length_slope(score, lengths, groups=groups, human=human)
    assert adjusted.statistic == pytest.approx(with_h["x"], rel=1e-9)
    assert adjusted.human_coefficient == pytest.approx(with_h["h"], rel=1e-9)
    # without groups: one intercept
    pooled = smf.ols("y ~ x", frame).fit().params
    assert length_slope(score, lengths).statistic == pytest.approx(pooled["x"], rel=1e-9)
    # a pair's regressor is log2(len_a / len_b)
    ref = np.round(lengths * np.exp(np.random.default_rng(2).normal(0, 0.5, lengths.size)))
    frame["r"] = np.log2(lengths / ref)
    paired = smf.ols("y ~ r + C(g)", frame).fit().params
    res = length_slope(score, lengths, groups=groups, reference_lengths=ref)
    assert res.statistic == pytest.approx(paired["r"], rel=1e-9)


def test_length_slope_bootstrap_replicate_is_ols_on_the_resampled_prompts() -> None:
    from judgekit.stats._bias_slope import _resample_counts

    score, lengths, groups, _ = prompts_data(3, slope=0.3, n_prompts=12)
    res = length_slope(score, lengths, groups=groups, n_resamples=5, random_state=7)
    informative = np.flatnonzero(np.bincount(groups) >= 2)  # prompts in estimation order
    counts = _resample_counts(np.random.default_rng(7), 5, informative.size)
    for row, replicate in zip(counts, res._replicates, strict=True):
        rows = []
        for copy, (prompt, times) in enumerate(zip(informative, row.astype(int), strict=True)):
            for k in range(times):  # each draw of a prompt is its own fixed effect
                mask = groups == prompt
                rows.append(pd.DataFrame({"y": score[mask], "x": np.log2(lengths[mask]),
                                          "g": f"{copy}-{k}"}))
        expected = smf.ols("y ~ x + C(g)", pd.concat(rows)).fit().params["x"]
        assert replicate == pytest.approx(expected, rel=1e-8)


def test_length_slope_interval_covers_a_planted_slope_and_zero() -> None:
    rng = np.random.default_rng(11)
    groups = np.repeat(np.arange(60), 4)
    lengths = np.round(2 ** rng.uniform(5, 11, groups.size))
    noise = rng.normal(0, 0.6, groups.size)
    prompt = rng.normal(0, 1, 60)[groups]
    planted = length_slope(3 + 0.5 * np.log2(lengths) + prompt + noise, lengths, groups=groups)
    low, high = planted.confidence_interval()
    assert low < 0.5 < high and low > 0 and planted.to_dict()["pvalue"] < 0.01
    null = length_slope(3 + prompt + noise, lengths, groups=groups)
    d = null.to_dict()
    assert d["ci_low"] < 0 < d["ci_high"] and d["pvalue"] > 0.05
    assert set(d) == {"statistic", "ci_low", "ci_high", "n", "pvalue"} and d["n"] == 240
    # seeded: the same call gives the same interval; a wider level a wider one
    assert length_slope(3 + prompt + noise, lengths, groups=groups).to_dict() == d
    low90, high90 = null.confidence_interval(0.9)
    assert d["ci_low"] <= low90 and high90 <= d["ci_high"]
    json.dumps(d)


def test_length_slope_undefined_cases_have_reasons() -> None:
    few = length_slope([1, 2], [10, 20])
    assert math.isnan(few.statistic) and "fewer than three" in few.reason
    assert few.to_dict()["statistic"] is None and few.to_dict()["ci_low"] is None
    constant = length_slope([1, 2, 3, 4], [50, 50, 50, 50], groups=["p", "p", "q", "q"])
    assert "does not vary within any prompt" in constant.reason
    singles = length_slope([1, 2, 3], [10, 20, 40], groups=["p", "q", "r"])
    assert "no prompt has two or more" in singles.reason and singles.n == 0
    # length varies only between prompts: the fixed effects absorb it all
    between = length_slope([1, 1, 2, 2], [10, 10, 40, 40], groups=["p", "p", "q", "q"])
    assert "does not vary within any prompt" in between.reason
    collinear = length_slope([1, 2, 3, 5], [10, 20, 40, 80], human=[1, 2, 3, 4])
    assert "human score" in collinear.reason
    # missing scores, empty answers and unlabelled items (with human) are left out
    mixed = length_slope([1, None, 2, 3, 4], [10, 20, 0, 40, 80], human=[1, 5, 2, None, 0.5])
    assert mixed.n == 2 and "fewer than three" in mixed.reason
    with pytest.raises(ValueError, match="length mismatch"):
        length_slope([1, 2, 3], [10, 20])
    with pytest.raises(ValueError, match="non-negative"):
        length_slope([1, 2, 3], [10, -20, 30])


def test_estimate_to_dict_is_json_ready() -> None:
    d = Estimate(float("nan"), 0, None, "nothing").to_dict()
    assert d == {"statistic": None, "ci_low": None, "ci_high": None, "n": 0, "reason": "nothing"}
