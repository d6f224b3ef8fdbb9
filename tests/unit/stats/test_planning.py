"""Sample-size planning against the worked numbers in methods.md section 5."""

from __future__ import annotations

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
    assert kappa_sample_size(half_width=d, p_observed=p_o, p_expected=p_e) == expected
    assert kappa_sample_size(half_width=d, expected_kappa=kappa, p_expected=p_e) == expected
    assert kappa_sample_size(half_width=d, expected_kappa=kappa, p_observed=p_o) == expected
    assert (
        kappa_sample_size(half_width=d, expected_kappa=kappa, p_observed=p_o, p_expected=p_e)
        == expected
    )


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
