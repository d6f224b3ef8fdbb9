"""Seeded simulation: do 95% bootstrap intervals cover the true kappa about 95% of the time?"""

from __future__ import annotations

import numpy as np

from judgekit.stats import cohen_kappa


def test_kappa_bootstrap_interval_coverage():
    # Two raters each copy a balanced binary truth with accuracy a, else guess:
    # P(rater says truth) = a + (1 - a) / 2 = 0.875 for a = 0.75, so with
    # balanced marginals p_e = 0.5 and p_o = 0.875**2 + 0.125**2, kappa = 2 p_o - 1.
    q = 0.875
    true_kappa = 2 * (q * q + (1 - q) * (1 - q)) - 1  # = 0.5625
    rng = np.random.default_rng(2024)
    trials, n, covered = 200, 100, 0
    for _ in range(trials):
        truth = rng.integers(0, 2, n)
        a = np.where(rng.random(n) < q, truth, 1 - truth)
        b = np.where(rng.random(n) < q, truth, 1 - truth)
        low, high = cohen_kappa(a, b).confidence_interval(n_resamples=1000, random_state=rng)
        covered += low <= true_kappa <= high
    assert 0.90 <= covered / trials <= 0.99, covered
