"""Scale-use and calibration kernels against scipy, sklearn and a plain loop, with the edges."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy
from sklearn.metrics import brier_score_loss

from judgekit.stats._bias_scale import (
    brier_score,
    expected_calibration_error,
    extreme_share,
    normalized_entropy,
    reliability_bins,
    variance_ratio,
)


def ece_by_loop(conf: np.ndarray, hit: np.ndarray, n_bins: int) -> float:
    """ECE as Guo et al. (2017) write it: bins (m-1)/M < p <= m/M, p = 0 in the first."""
    total = 0.0
    for m in range(1, n_bins + 1):
        lo, hi = (m - 1) / n_bins, m / n_bins
        inside = (conf > lo) & (conf <= hi) if m > 1 else (conf >= lo) & (conf <= hi)
        if inside.any():
            total += inside.mean() * abs(hit[inside].mean() - conf[inside].mean())
    return total


def test_entropy_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 5, size=200)
    counts = np.bincount(codes, minlength=5)
    assert normalized_entropy(codes, 5) == pytest.approx(scipy_entropy(counts) / np.log(5))
    assert normalized_entropy(np.full(10, 2), 5) == 0.0
    assert normalized_entropy(np.arange(5), 5) == pytest.approx(1.0)
    batch = np.stack([codes, np.full(200, 1)])
    assert normalized_entropy(batch, 5).shape == (2,)
    with pytest.raises(ValueError, match="2 levels"):
        normalized_entropy(codes, 1)


def test_ece_and_brier_match_independent_computations() -> None:
    rng = np.random.default_rng(1)
    conf = rng.uniform(0.3, 1.0, size=500)
    conf[:5] = [0.0, 0.1, 0.2, 0.3, 1.0]  # bin edges
    hit = (rng.uniform(size=500) < conf).astype(float)
    assert expected_calibration_error(conf, hit) == pytest.approx(ece_by_loop(conf, hit, 10))
    assert expected_calibration_error(conf, hit, 15) == pytest.approx(ece_by_loop(conf, hit, 15))
    assert brier_score(conf, hit) == pytest.approx(brier_score_loss(hit, conf))
    bins = reliability_bins(conf, hit)
    assert sum(b["n"] for b in bins) == 500
    assert all(b["low"] < b["confidence"] <= b["high"] or b["confidence"] == 0 for b in bins)


def test_perfect_and_overconfident_judges() -> None:
    assert expected_calibration_error([1.0, 1.0], [1, 1]) == 0.0
    assert expected_calibration_error([0.99] * 10, [1, 0] * 5) == pytest.approx(0.49)
    assert brier_score([0.5] * 4, [1, 0, 1, 0]) == pytest.approx(0.25)


@pytest.mark.parametrize(("conf", "hit", "message"), [
    ([1.2], [1], "in \\[0, 1\\]"), ([float("nan")], [1], "finite"), ([0.5], [2], "0/1"),
    ([0.5, 0.5], [1], "same length"),
])
def test_bad_input_is_a_value_error(conf: list[float], hit: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        expected_calibration_error(conf, hit)


def test_extremes_and_variance_ratio() -> None:
    judge = np.array([3, 3, 4, 2, 3, 3], dtype=float)
    human = np.array([1, 5, 4, 2, 5, 1], dtype=float)
    assert extreme_share(judge, 1, 5) == 0.0
    assert extreme_share(human, 1, 5) == pytest.approx(4 / 6)
    assert variance_ratio(judge, human) == pytest.approx(np.var(judge) / np.var(human))
    assert np.isnan(variance_ratio(judge, np.full(6, 3.0)))


def test_debiased_calibration_error_removes_the_small_sample_excess() -> None:
    """A calibrated judge's plug-in ECE is about 0.125 at 50 items; the debiased one is well
    below it, and near the truth where the gate decides (a true ECE of 0.15)."""
    from judgekit.stats._bias_scale import debiased_calibration_error

    rng = np.random.default_rng(1)
    conf = rng.uniform(0.3, 1.0, (2000, 50))
    calibrated = (rng.random((2000, 50)) < conf).astype(float)
    plug = expected_calibration_error(conf, calibrated).mean()
    debiased = debiased_calibration_error(conf, calibrated).mean()
    assert plug > 0.11 and debiased < 0.65 * plug
    off = (rng.random((2000, 50)) < conf - 0.15).astype(float)
    assert abs(debiased_calibration_error(conf, off).mean() - 0.15) < 0.015
    assert expected_calibration_error(conf, off).mean() > 0.18
    # one bin by hand: 2|g| - E|N(g, s^2)|, s^2 = sum c (1 - c) / n_b^2
    from scipy.stats import foldnorm

    c, h = np.array([0.82, 0.85, 0.88]), np.array([1.0, 0.0, 1.0])
    g, s = (h - c).mean(), np.sqrt((c * (1 - c)).sum()) / 3
    expected = 2 * abs(g) - foldnorm.mean(abs(g) / s, scale=s)
    assert debiased_calibration_error(c, h) == pytest.approx(expected)
