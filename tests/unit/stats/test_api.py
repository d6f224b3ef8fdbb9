"""The public surface of judgekit.stats: names, result conventions, the report schema."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

import judgekit.stats as stats_api
from judgekit.stats import (
    binomial_test,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    kendall_tau,
    krippendorff_alpha,
    mcnemar,
    paired_bootstrap,
    percent_agreement,
    spearman,
)


def test_all_is_sorted_and_importable():
    assert stats_api.__all__ == sorted(stats_api.__all__)
    for name in stats_api.__all__:
        assert getattr(stats_api, name) is not None


A = ["pass", "fail", "pass", "pass", "fail", "pass", "fail", "fail"]
B = ["pass", "fail", "fail", "pass", "fail", "pass", "pass", "fail"]
RESULTS = {
    "cohen": lambda: cohen_kappa(A, B),
    "gwet": lambda: gwet_ac1(A, B),
    "percent": lambda: percent_agreement(A, B),
    "fleiss": lambda: fleiss_kappa([[x, y] for x, y in zip(A, B, strict=True)]),
    "alpha": lambda: krippendorff_alpha([A, B]),
    "spearman": lambda: spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]),
    "kendall": lambda: kendall_tau([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]),
    "mcnemar": lambda: mcnemar([1, 1, 0, 1], [1, 0, 0, 0]),
    "paired": lambda: paired_bootstrap([1, 1, 0, 1], [1, 0, 0, 0], random_state=0),
    "binomial": lambda: binomial_test(7, 10),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_results_are_frozen_and_follow_the_schema(name):
    result = RESULTS[name]()
    assert dataclasses.is_dataclass(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.statistic = 0.0  # type: ignore[misc]
    assert isinstance(result.statistic, float) and isinstance(result.n, int)
    low, high = result.confidence_interval(confidence_level=0.9)
    assert math.isnan(low) or low <= result.statistic <= high
    as_dict = result.to_dict()
    expected_keys = {"statistic", "ci_low", "ci_high", "n"}
    if hasattr(result, "pvalue"):
        expected_keys.add("pvalue")
    assert set(as_dict) == expected_keys
    json.dumps(as_dict, allow_nan=False)
    assert as_dict == result.to_dict()  # reports are reproducible by default


def test_to_dict_passes_interval_options_through():
    result = cohen_kappa(A * 5, B * 5)
    analytic = result.to_dict(confidence_level=0.9, method="analytic")
    assert (analytic["ci_low"], analytic["ci_high"]) == pytest.approx(
        result.confidence_interval(confidence_level=0.9, method="analytic")
    )


def test_result_arrays_are_read_only():
    result = cohen_kappa(A, B)
    with pytest.raises(ValueError):
        result.confusion[0, 0] = 99
    assert isinstance(result.confusion, np.ndarray)


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.confidence_interval(confidence_level=1.5),
        lambda r: r.confidence_interval(method="jackknife"),
        lambda r: r.confidence_interval(n_resamples=0),
    ],
)
def test_interval_arguments_are_checked(call):
    with pytest.raises(ValueError):
        call(cohen_kappa(A, B))
