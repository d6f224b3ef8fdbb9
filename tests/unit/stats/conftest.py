"""Published data sets used as reference points by the statistics tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

NAN = float("nan")

#: Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C:
#: 4 coders x 12 units with missing values. alpha = 0.743 nominal, 0.815 ordinal,
#: 0.849 interval, 0.797 ratio.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]

#: Fleiss (1971), Table 1: 30 patients x 6 psychiatrists, 5 diagnoses, as counts
#: (items x categories). Fleiss' kappa = 0.430.
FLEISS_1971 = np.array(
    [
        [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
        [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
        [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
        [0, 0, 5, 0, 1], [3, 0, 0, 1, 2], [5, 1, 0, 0, 0], [0, 2, 0, 4, 0], [1, 0, 2, 0, 3],
        [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0], [1, 0, 0, 4, 1],
        [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0], [1, 0, 5, 0, 0], [0, 0, 0, 0, 6],
    ]
)  # fmt: skip


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def _noisy_rater(
    truth: np.ndarray, accuracy: float, n_categories: int, rng: np.random.Generator
) -> np.ndarray:
    guess = rng.integers(0, n_categories, truth.size)
    return np.where(rng.random(truth.size) < accuracy, truth, guess)


@pytest.fixture
def noisy_rater() -> Callable[[np.ndarray, float, int, np.random.Generator], np.ndarray]:
    """A rater who copies the truth with probability ``accuracy``, else guesses uniformly."""
    return _noisy_rater


@pytest.fixture
def krippendorff_2011() -> list[list[float]]:
    return [list(row) for row in KRIPPENDORFF_2011]


@pytest.fixture
def fleiss_1971() -> np.ndarray:
    return FLEISS_1971.copy()
