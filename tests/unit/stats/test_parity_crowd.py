"""Parity figures from labels as rows give what the annotators x items table gave.

The alternative annotator test is checked against the reference code's algorithm written
out here with loops (each annotator left out in turn, scored against the others item by
item, scipy's one-sided t-test); the randomization p of the agreement gap against its exact
null distribution, enumerated over every way of picking the rater who plays the judge.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from scipy import stats as sps

from judgekit.stats.parity import (
    agreement_gap,
    agreement_gap_of,
    agreement_gap_pvalue,
    alt_test,
    alt_test_of,
)
from judgekit.stats.parity_crowd import CrowdLabels


def crowd(seed: int, items: int, annotators: int, values: list[object], density: float
          ) -> tuple[list[object], dict[str, list[object]]]:
    rng = random.Random(seed)
    judge = [rng.choice(values) for _ in range(items)]
    table = {f"a{k:02d}": [rng.choice(values) if rng.random() < density else None
                           for _ in range(items)] for k in range(annotators)}
    return judge, table


Row = tuple[int, float, float, float]


def reference_alt_test(judge: list[object], table: dict[str, list[object]], scoring: str,
                       epsilon: float, min_items: int) -> dict[str, Row]:
    """Per annotator: n, judge advantage, annotator advantage, one-sided t-test p."""
    out = {}
    for name, own in sorted(table.items()):
        judge_ind, human_ind = [], []
        for i, h in enumerate(own):
            others = [v[i] for a, v in table.items() if a != name and v[i] is not None]
            if h is None or judge[i] is None or not others:
                continue

            def score(x: object, others: list[object] = others) -> float:
                if scoring == "accuracy":
                    return sum(o == x for o in others) / len(others)
                return -math.sqrt(sum((float(o) - float(x)) ** 2 for o in others)  # type: ignore[arg-type]
                                  / len(others))

            f_score, h_score = score(judge[i]), score(h)
            judge_ind.append(float(f_score >= h_score))
            human_ind.append(float(h_score >= f_score))
        if len(judge_ind) < min_items:
            continue
        diff = np.asarray(human_ind) - np.asarray(judge_ind)
        p = (0.0 if diff[0] < epsilon else 1.0) if np.ptp(diff) == 0 else float(
            sps.ttest_1samp(diff, epsilon, alternative="less").pvalue)
        out[name] = (len(judge_ind), float(np.mean(judge_ind)), float(np.mean(human_ind)), p)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scoring", ["accuracy", "neg_rmse"])
def test_alt_test_is_the_reference_algorithm(seed: int, scoring: str) -> None:
    values: list[object] = ["x", "y", "z"] if scoring == "accuracy" else [1, 2, 3, 4, 5]
    judge, table = crowd(seed, 60, 7, values, 0.6)
    result = alt_test(judge, table, scoring=scoring, min_items=10)  # type: ignore[arg-type]
    expected = reference_alt_test(judge, table, scoring, 0.2, 10)
    assert [a.annotator for a in result.annotators] == list(expected)
    for row in result.annotators:
        n, rho_f, rho_h, p = expected[row.annotator]
        assert (row.n, row.judge_advantage, row.annotator_advantage) == (n, rho_f, rho_h)
        assert row.pvalue == pytest.approx(p, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("scoring", ["accuracy", "neg_rmse"])
def test_rows_built_per_item_give_the_table_s_figures(scoring: str) -> None:
    values: list[object] = ["x", "y"] if scoring == "accuracy" else [1, 2, 3]
    judge, table = crowd(9, 80, 12, values, 0.4)
    per_item = [{a: v[i] for a, v in table.items() if v[i] is not None}
                for i in range(len(judge))]
    rows = CrowdLabels.from_items(judge, per_item, scoring)
    by_rows = alt_test_of(rows, scoring=scoring, min_items=5)  # type: ignore[arg-type]
    by_table = alt_test(judge, table, scoring=scoring, min_items=5)  # type: ignore[arg-type]
    assert by_rows == by_table
    if scoring == "accuracy":
        assert agreement_gap_of(rows, n_resamples=200) == agreement_gap(judge, table,
                                                                          n_resamples=200)


def test_the_gap_pvalue_matches_its_exact_null_distribution() -> None:
    """Four items, few raters: every way to pick the rater who plays the judge, enumerated."""
    judge = ["a", "b", "a", "b"]
    table = {"p": ["a", "a", "b", "b"], "q": ["a", "b", "b", "a"], "r": ["b", "b", None, "a"]}
    raters = [[judge[i], *(v[i] for v in table.values() if v[i] is not None)]
              for i in range(4)]

    def item_gap(labels: list[str], judge_at: int) -> float:
        j, people = labels[judge_at], labels[:judge_at] + labels[judge_at + 1:]
        m = len(people)
        pairs = list(itertools.combinations(people, 2))
        return sum(h == j for h in people) / m - sum(a == b for a, b in pairs) / len(pairs)

    observed = abs(np.mean([item_gap(r, 0) for r in raters]))
    means = [np.mean([item_gap(r, k) for r, k in zip(raters, pick, strict=True)])
             for pick in itertools.product(*(range(len(r)) for r in raters))]
    exact = float(np.mean([abs(v) >= observed - 1e-12 for v in means]))
    draws = 20_000
    p = agreement_gap_pvalue(judge, table, n_draws=draws, random_state=3)
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / draws) + 1e-4


def test_a_crowd_costs_its_labels() -> None:
    """20,000 annotators with one label each over 25 items: the randomization test once
    compared every rater with every other on an item (19 GB, 220 s)."""
    import time

    n = 20_000
    per_item = [dict() for _ in range(25)]  # type: list[dict[str, str]]
    for k in range(n):
        per_item[k % 25][f"a{k}"] = "pass" if (k * 7) % 3 else "fail"
    judge = ["pass" if i % 2 else "fail" for i in range(25)]
    rows = CrowdLabels.from_items(judge, per_item)
    start = time.perf_counter()
    from judgekit.stats.parity_crowd import gap_pvalue

    gap_pvalue(rows, 1000, 0)
    alt_test_of(rows)
    assert time.perf_counter() - start < 20
