"""Human parity: the alternative annotator test and the judge-minus-human agreement gap.

The alt-test is checked against an independent transcription of the authors'
reference procedure (nitaytech/AltTest, ``alt_test`` in alt_test_example.ipynb):
dictionaries in, a per-item Python loop, scipy's one-sample t-test and the
Benjamini-Yekutieli step-up, on fixed seeded data.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ttest_1samp

from judgekit import stats
from judgekit.stats.parity import agreement_gap, alt_test


def _reference(llm, humans, score, epsilon, q=0.05, min_humans=2, min_items=30):
    """The reference procedure, item by item, from annotator -> {item: label} dictionaries."""
    by_item: dict = {}
    for h, labels in humans.items():
        for i in labels:
            by_item.setdefault(i, []).append(h)
    keep = {i for i, hs in by_item.items() if len(hs) >= min_humans and i in llm}
    pvalues, rho = [], []
    for h, labels in humans.items():
        items = [i for i in labels if i in keep]
        if len(items) < min_items:
            continue
        f_ind, h_ind = [], []
        for i in items:
            rest = [humans[o][i] for o in by_item[i] if o != h]
            s_h, s_f = score(labels[i], rest), score(llm[i], rest)
            f_ind.append(1 if s_f >= s_h else 0)
            h_ind.append(1 if s_h >= s_f else 0)
        d = np.array(h_ind) - np.array(f_ind)
        pvalues.append(ttest_1samp(d, epsilon, alternative="less").pvalue)
        rho.append(np.mean(f_ind))
    p = np.array(pvalues)
    m = p.size
    order = np.argsort(p)
    thresholds = np.arange(1, m + 1) / m * q / np.sum(1 / np.arange(1, m + 1))
    below = np.flatnonzero(p[order] <= thresholds)
    rejected = 0 if below.size == 0 else below[-1] + 1
    return rejected / m, float(np.mean(rho))


def _accuracy(x, rest):
    return float(np.mean([x == r for r in rest]))


def _neg_rmse(x, rest):
    return -float(np.sqrt(np.mean([(x - r) ** 2 for r in rest])))


def _panel(seed: int, n: int, n_annotators: int, judge_accuracy: float, missing: float):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n)

    def rater(accuracy):
        return np.where(rng.random(n) < accuracy, truth, rng.integers(0, 3, n))

    judge = rater(judge_accuracy)
    humans = {f"h{j}": rater(0.75) for j in range(n_annotators)}
    labels = {
        name: [None if rng.random() < missing else int(v) for v in values]
        for name, values in humans.items()
    }
    return [int(v) for v in judge], labels


@pytest.mark.parametrize(
    ("seed", "judge_accuracy", "epsilon"), [(1, 0.95, 0.2), (2, 0.6, 0.1), (3, 0.8, 0.15)]
)
def test_alt_test_matches_the_reference_procedure(seed, judge_accuracy, epsilon) -> None:
    judge, labels = _panel(seed, 80, 5, judge_accuracy, missing=0.2)
    ours = alt_test(judge, labels, epsilon=epsilon)
    llm = dict(enumerate(judge))
    humans = {h: {i: v for i, v in enumerate(vals) if v is not None} for h, vals in labels.items()}
    omega, rho = _reference(llm, humans, _accuracy, epsilon)
    assert ours.winning_rate == pytest.approx(omega)
    assert ours.advantage_probability == pytest.approx(rho)
    assert ours.passed == (omega >= 0.5)


def test_alt_test_neg_rmse_matches_the_reference_procedure() -> None:
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, 60).astype(float)
    labels = {
        f"h{j}": [float(np.clip(t + rng.integers(-1, 2), 1, 5)) for t in truth] for j in range(4)
    }
    judge = [float(t) for t in truth]
    ours = alt_test(judge, labels, scoring="neg_rmse", epsilon=0.1)
    humans = {h: dict(enumerate(v)) for h, v in labels.items()}
    omega, rho = _reference(dict(enumerate(judge)), humans, _neg_rmse, 0.1)
    assert (ours.winning_rate, ours.advantage_probability) == pytest.approx((omega, rho))
    assert ours.passed  # the judge is the truth the annotators scatter around


def test_alt_test_bh_rejects_at_least_as_often_as_by() -> None:
    judge, labels = _panel(4, 100, 6, 0.85, missing=0.0)
    by, bh = alt_test(judge, labels), alt_test(judge, labels, fdr_method="bh")
    assert bh.winning_rate >= by.winning_rate
    pvalues = [a.pvalue for a in bh.annotators]
    assert [a.adjusted_pvalue for a in bh.annotators] == pytest.approx(
        stats.benjamini_hochberg(pvalues)[1]
    )


def test_alt_test_skips_annotators_with_too_few_items() -> None:
    judge, labels = _panel(5, 40, 3, 0.9, missing=0.0)
    labels["late"] = [None] * 35 + [0] * 5
    res = alt_test(judge, labels)
    assert res.skipped == ("late",) and len(res.annotators) == 3
    none = alt_test(judge, labels, min_items=41)
    assert np.isnan(none.winning_rate) and not none.passed and none.reason


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"epsilon": 1.5}, "epsilon"), ({"q": 0}, "q must"), ({"scoring": "f1"}, "scoring")],
)
def test_alt_test_rejects_bad_arguments(kwargs, message) -> None:
    judge, labels = _panel(6, 40, 3, 0.9, missing=0.0)
    with pytest.raises(ValueError, match=message):
        alt_test(judge, labels, **kwargs)
    with pytest.raises(ValueError, match="at least 2 annotators"):
        alt_test(judge, {"only": labels["h0"]})


def test_agreement_gap_by_hand() -> None:
    # item 1: judge a; humans a, a -> judge-human 1, human-human 1
    # item 2: judge a; humans a, b -> 0.5, 0
    # item 3: judge b; humans a, a, a -> 0, 1
    # item 4: one annotator only -> left out
    judge = ["a", "a", "b", "a"]
    labels = {"x": ["a", "a", "a", "a"], "y": ["a", "b", "a", None], "z": [None, None, "a", None]}
    res = agreement_gap(judge, labels, n_resamples=500)
    assert res.n == 3
    assert res.statistic_a == pytest.approx(1.5 / 3) and res.statistic_b == pytest.approx(2 / 3)
    assert res.statistic == pytest.approx(-1 / 6)
    assert res.ci_low < res.statistic < res.ci_high


def test_agreement_gap_is_near_zero_for_a_judge_drawn_like_the_annotators() -> None:
    judge, labels = _panel(8, 400, 3, 0.75, missing=0.0)
    res = agreement_gap(judge, labels, n_resamples=1000)
    assert res.ci_low < 0 < res.ci_high
    better, _ = _panel(8, 400, 3, 1.0, missing=0.0)
    assert agreement_gap(better, labels, n_resamples=1000).ci_low > 0


def test_agreement_gap_needs_two_annotators_on_an_item() -> None:
    with pytest.raises(ValueError, match="two or more annotators"):
        agreement_gap(["a", "b"], {"x": ["a", None], "y": [None, "b"]})


def test_the_gap_randomization_test_swaps_the_judge_with_an_annotator() -> None:
    """A judge that is one more annotator gets a p-value spread over [0, 1]; one that always
    gives the majority label gets a small one; three items by hand give the exact
    distribution's lower limit."""
    from judgekit.stats.parity import agreement_gap_pvalue

    rng = np.random.default_rng(3)
    truth = rng.integers(0, 2, 60)

    def rate() -> list[int]:
        return np.where(rng.random(60) < 0.7, truth, rng.integers(0, 2, 60)).tolist()

    people = {f"h{i}": rate() for i in range(3)}
    assert agreement_gap_pvalue(rate(), people, n_draws=500) > 0.05
    labels = np.array([people[a] for a in people])
    majority = (labels.sum(axis=0) >= 2).astype(int).tolist()
    assert agreement_gap_pvalue(majority, people, n_draws=500) < 0.01
    # every item: the judge agrees with all three annotators, who agree; nothing can move
    assert agreement_gap_pvalue([1, 0], {"a": [1, 0], "b": [1, 0], "c": [1, 0]}) == 1.0
    with pytest.raises(ValueError, match="at least 2 annotators"):
        agreement_gap_pvalue([1], {"a": [1]})
