"""Sample-size planning against the worked numbers in methods.md section 5."""

from __future__ import annotations

import numpy as np
import pytest

from judgekit.stats import kappa_sample_size, proportion_sample_size


@pytest.mark.parametrize(
    ("kappa", "p_o", "p_e", "d", "expected"),
    [
        (0.70, 0.85, 0.5, 0.10, 196),
        (0.70, 0.85, 0.5, 0.15, 88),
        (0.60, 0.80, 0.5, 0.10, 246),
        (0.60, 0.80, 0.5, 0.15, 110),
        (0.6875, 0.90, 0.68, 0.10, 338),
        (0.6875, 0.90, 0.68, 0.15, 151),
    ],
)
def test_kappa_sample_size_worked_examples(kappa, p_o, p_e, d, expected):
    # the published worked numbers use Cohen's (1960) approximate SE
    old = {"se": "cohen-1960"}
    assert kappa_sample_size(half_width=d, p_observed=p_o, p_expected=p_e, **old) == expected
    assert kappa_sample_size(half_width=d, expected_kappa=kappa, p_expected=p_e, **old) == expected
    assert kappa_sample_size(half_width=d, expected_kappa=kappa, p_observed=p_o, **old) == expected
    assert (
        kappa_sample_size(
            half_width=d, expected_kappa=kappa, p_observed=p_o, p_expected=p_e, **old
        )
        == expected
    )


@pytest.mark.parametrize(
    ("p_o", "p_e", "d", "analysis", "cohen"),
    [(0.85, 0.5, 0.10, 196, 196), (0.892, 0.82, 0.10, 848, 1143), (0.90, 0.68, 0.10, 325, 338)],
)
def test_kappa_planning_uses_the_analysis_se(p_o, p_e, d, analysis, cohen):
    """At balanced prevalence both SEs agree; at 90/10 the analysis SE needs 848, not 1,143."""
    assert kappa_sample_size(half_width=d, p_observed=p_o, p_expected=p_e) == analysis
    assert kappa_sample_size(half_width=d, p_observed=p_o, p_expected=p_e, se="cohen-1960") == cohen


def test_planned_n_gives_the_analysis_half_width():
    """The plan from a table: at the planned n, cohen_kappa's own SE gives half-width <= d."""
    from judgekit.stats import cohen_kappa

    table = np.array([[60, 5, 1], [6, 20, 3], [2, 2, 11]])
    n = kappa_sample_size(half_width=0.08, table=table, weights="quadratic")
    a, b = np.repeat(np.indices(table.shape).reshape(2, -1), table.ravel(), axis=1)
    res = cohen_kappa(a, b, weights="quadratic", labels=[0, 1, 2])
    half = 1.959963984540054 * res.standard_error * np.sqrt(table.sum() / n)
    assert half <= 0.08 < 1.959963984540054 * res.standard_error * np.sqrt(table.sum() / (n - 1))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"p_observed": 1.0, "p_expected": 0.5},
        {"p_observed": 0.0, "p_expected": 0.0},
        {"table": [[5, 0], [0, 5]]},
        {"table": [[10, 0], [3, 0]]},
    ],
)
def test_kappa_planning_refuses_zero_variance(kwargs):
    with pytest.raises(ValueError, match="zero-width"):
        kappa_sample_size(half_width=0.1, **kwargs)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_proportion_planning_refuses_zero_variance(p):
    with pytest.raises(ValueError, match="zero-width"):
        proportion_sample_size(half_width=0.1, p=p)


def test_kappa_sample_size_quarter_width_needs_about_four_times_more():
    wide = kappa_sample_size(half_width=0.10, expected_kappa=0.7, p_expected=0.5)
    narrow = kappa_sample_size(half_width=0.05, expected_kappa=0.7, p_expected=0.5)
    assert 4 * wide - 4 <= narrow <= 4 * wide


def test_proportion_sample_size_worked_examples():
    assert proportion_sample_size(half_width=0.10, p=0.8) == 62
    assert proportion_sample_size(half_width=0.05, p=0.8) == 246
    assert proportion_sample_size(half_width=0.05) == 385
    assert proportion_sample_size(half_width=0.01) == 9604


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"half_width": 0.1, "expected_kappa": 0.7}, "give two of"),
        ({"half_width": 0.0, "p_observed": 0.8, "p_expected": 0.5}, "half_width"),
        ({"half_width": 0.1, "p_observed": 0.8, "p_expected": 1.0}, "p_expected must be below 1"),
        (
            {"half_width": 0.1, "expected_kappa": 0.2, "p_observed": 0.8, "p_expected": 0.5},
            "inconsistent",
        ),
        ({"half_width": 0.1, "expected_kappa": 0.9, "p_observed": 0.5}, "impossible"),
    ],
)
def test_kappa_sample_size_invalid_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kappa_sample_size(**kwargs)


def test_proportion_sample_size_invalid_input():
    with pytest.raises(ValueError, match="p must be"):
        proportion_sample_size(half_width=0.1, p=1.2)
    with pytest.raises(ValueError, match="confidence_level"):
        proportion_sample_size(half_width=0.1, confidence_level=95)
