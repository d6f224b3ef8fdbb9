"""Kendall tau-b's asymptotic SE (Brown-Benedetti), right with ties, and its interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from judgekit.stats import kendall_tau
from judgekit.stats._kendall_ase import influence, standard_error


def _brute_force_ase(x: np.ndarray, y: np.ndarray) -> float:
    """The ASE formula written pair by pair, without the contingency table.

    d_i = sum_j sign(x_i - x_j) sign(y_i - y_j); v_i = n_x(i) w_c + n_y(i) w_r with n_x(i)
    the observations tied with i on x; psi_i = 2 w d_i + tau v_i;
    ASE = sqrt(sum (psi_i - mean psi)^2) / w^2.
    """
    n = x.size
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    d = np.sum(sx * sy, axis=1)
    ties_x = np.sum(x[:, None] == x[None, :], axis=1).astype(float)
    ties_y = np.sum(y[:, None] == y[None, :], axis=1).astype(float)
    w_r = n * n - np.sum(ties_x)  # sum of n_i.^2 = sum over observations of their row count
    w_c = n * n - np.sum(ties_y)
    w = math.sqrt(w_r * w_c)
    tau = sps.kendalltau(x, y).statistic
    psi = 2 * w * d + tau * (ties_x * w_c + ties_y * w_r)
    return float(np.sqrt(np.sum((psi - psi.mean()) ** 2)) / w**2)


def _five_point(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.integers(1, 6, n).astype(float)
    y = np.clip(x + rng.integers(-2, 3, n), 1, 5).astype(float)
    return x, y


def test_tau_and_ase_match_scipy_and_the_pairwise_formula() -> None:
    x, y = _five_point(np.random.default_rng(3), 120)
    tau, psi, w = influence(x, y)
    assert tau == pytest.approx(sps.kendalltau(x, y, variant="b").statistic, abs=1e-12)
    se, units = standard_error(psi, w, None)
    assert units == 120
    assert se == pytest.approx(_brute_force_ase(x, y), rel=1e-10)


def test_ase_agrees_with_the_jackknife_and_the_sampling_spread() -> None:
    """Two independent routes to the same variance on a tied 5-point scale."""
    rng = np.random.default_rng(8)
    x, y = _five_point(rng, 300)
    _, psi, w = influence(x, y)
    se, _ = standard_error(psi, w, None)
    n = x.size
    loo = np.array(
        [sps.kendalltau(np.delete(x, i), np.delete(y, i)).statistic for i in range(n)]
    )
    jackknife = math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
    assert se == pytest.approx(jackknife, rel=0.03)
    spread = np.std([sps.kendalltau(*_five_point(rng, 300)).statistic for _ in range(600)])
    assert se == pytest.approx(spread, rel=0.1)


def test_clusters_of_one_item_are_the_item_level_se_with_the_g_over_g_minus_1_factor() -> None:
    x, y = _five_point(np.random.default_rng(4), 80)
    _, psi, w = influence(x, y)
    se, _ = standard_error(psi, w, None)
    clustered, g = standard_error(psi, w, np.arange(80))
    assert g == 80
    assert clustered == pytest.approx(se * math.sqrt(80 / 79), rel=1e-12)


def test_ase_interval_is_on_fishers_scale() -> None:
    x, y = _five_point(np.random.default_rng(5), 60)
    res = kendall_tau(x, y)
    _, psi, w = influence(x, y)
    se, _ = standard_error(psi, w, None)
    half = 1.959963984540054 * se / (1 - res.statistic**2)
    expected = (
        math.tanh(math.atanh(res.statistic) - half),
        math.tanh(math.atanh(res.statistic) + half),
    )
    assert res.confidence_interval(method="ase") == pytest.approx(expected, rel=1e-12)
    low, high = res.confidence_interval(method="ase")
    assert -1 < low < res.statistic < high < 1


def test_clustered_interval_uses_t_on_g_minus_1_and_is_wider() -> None:
    rng = np.random.default_rng(6)
    x, y = _five_point(rng, 60)
    clusters = np.repeat(np.arange(12), 5)
    res = kendall_tau(x, y)
    low, high = res.confidence_interval(method="ase", clusters=clusters)
    _, psi, w = influence(x, y)
    se, g = standard_error(psi, w, clusters)
    half = sps.t.ppf(0.975, g - 1) * se / (1 - res.statistic**2)
    assert (low, high) == pytest.approx(
        (math.tanh(math.atanh(res.statistic) - half), math.tanh(math.atanh(res.statistic) + half))
    )


def test_perfect_order_gets_the_boundary_interval_not_the_zero_ase() -> None:
    """tau = 1 has ASE 0: never a zero-width interval (see test_rank_interval.py)."""
    res = kendall_tau([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6])
    low, high = res.confidence_interval(method="ase")
    assert high == 1.0 and low < 0.9


def test_ase_is_only_for_kendall() -> None:
    from judgekit.stats import spearman

    with pytest.raises(ValueError, match="Kendall"):
        spearman([1, 2, 3, 4], [1, 3, 2, 4]).confidence_interval(method="ase")
