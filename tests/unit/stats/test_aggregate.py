"""Micro/macro accuracy with abstention policies, pass@k and pass^k."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgekit.stats import grouped_accuracy, pass_at_k, pass_hat_k


def test_micro_and_macro_seed_example():
    correct = [1] * 81 + [0] * 9 + [1] * 1 + [0] * 9
    groups = ["A"] * 90 + ["B"] * 10
    result = grouped_accuracy(correct, groups)
    assert result.micro == pytest.approx(0.82)
    assert result.macro == pytest.approx(0.50)
    assert result.statistic == result.micro
    assert {name: (g.n, g.correct) for name, g in result.groups.items()} == {
        "A": (90, 81),
        "B": (10, 1),
    }
    low, high = result.groups["A"].confidence_interval()
    assert (round(low, 3), round(high, 3)) == (0.821, 0.946)  # Wilson for 81/90
    macro_low, macro_high = result.confidence_interval(which="macro", random_state=0)
    assert macro_low < 0.5 < macro_high
    assert result.to_dict() == {
        "statistic": pytest.approx(0.82),
        "ci_low": pytest.approx(result.confidence_interval()[0]),
        "ci_high": pytest.approx(result.confidence_interval()[1]),
        "n": 100,
    }


def test_abstention_policies_count_refusals_and_parse_errors_separately():
    correct = [1, 1, 0, None, None, None, None]
    status = ["ok", "ok", "ok", "refusal", "parse_error", "timeout", "truncated"]
    groups = ["g"] * 7
    excluded = grouped_accuracy(correct, groups, status=status, policy="exclude")
    assert (excluded.n, excluded.micro) == (3, pytest.approx(2 / 3))
    assert (excluded.abstentions, excluded.unparseable) == (1, 1)
    assert excluded.status_counts == {
        "ok": 3, "refusal": 1, "parse_error": 1, "timeout": 1, "truncated": 1
    }  # fmt: skip
    as_wrong = grouped_accuracy(correct, groups, status=status, policy="as_wrong")
    # refusal, parse_error and truncated count as wrong; the timeout never reached the model
    assert (as_wrong.n, as_wrong.micro) == (6, pytest.approx(2 / 6))
    assert as_wrong.groups["g"].status_counts["timeout"] == 1


def test_empty_group_is_an_error_never_zero():
    with pytest.raises(ValueError, match="group 'B' has no scorable item"):
        grouped_accuracy([1, None], ["A", "B"], status=["ok", "refusal"], policy="exclude")
    with pytest.raises(ValueError, match="declared groups have no items: C"):
        grouped_accuracy([1, 0], ["A", "B"], all_groups=["A", "B", "C"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"correct": [1, 2], "groups": ["a", "a"]}, "0/1"),
        ({"correct": [1, None], "groups": ["a", "a"]}, "status 'ok' but no correctness"),
        ({"correct": [1], "groups": ["a", "b"]}, "length mismatch"),
        ({"correct": [1], "groups": ["a"], "status": ["weird"]}, "unknown values"),
        ({"correct": [1], "groups": ["a"], "policy": "as_right"}, "policy must be one of"),
        ({"correct": [], "groups": []}, "empty"),
    ],
)
def test_grouped_accuracy_invalid_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        grouped_accuracy(**kwargs)


def test_pass_at_k_seed_example_and_naive_bias():
    assert round(pass_at_k(10, 3, 5), 3) == 0.917
    naive = 1 - (1 - 3 / 10) ** 5
    assert round(naive, 3) == 0.832
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - math.comb(7, 5) / math.comb(10, 5))


@pytest.mark.parametrize("seed", range(3))
def test_pass_at_k_and_pass_hat_k_match_binomial_formulas(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        n = int(rng.integers(1, 60))
        c = int(rng.integers(0, n + 1))
        k = int(rng.integers(1, n + 1))
        assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))
        assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k))
        assert pass_hat_k(n, c, k) <= c / n + 1e-12 <= pass_at_k(n, c, k) + 2e-12


def test_pass_hat_k_is_unbiased_for_p_to_the_k():
    # E[C(c,k)/C(n,k)] over c ~ Binomial(n, p) equals p**k exactly
    from scipy import stats

    n, k, p = 12, 3, 0.7
    expectation = sum(stats.binom.pmf(c, n, p) * pass_hat_k(n, c, k) for c in range(n + 1))
    assert expectation == pytest.approx(p**k)
    expectation = sum(stats.binom.pmf(c, n, p) * pass_at_k(n, c, k) for c in range(n + 1))
    assert expectation == pytest.approx(1 - (1 - p) ** k)


@pytest.mark.parametrize("args", [(0, 0, 1), (5, 6, 1), (5, 2, 0), (5, 2, 6), (5.0, 2, 1)])
def test_pass_at_k_invalid_input(args):
    with pytest.raises(ValueError):
        pass_at_k(*args)
    with pytest.raises(ValueError):
        pass_hat_k(*args)
