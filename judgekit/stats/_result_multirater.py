"""Agreement results over several raters: Fleiss' kappa and Krippendorff's alpha.

Both are functions of per-unit contribution sums, so they are
:class:`~judgekit.stats._result._SumsResult` subclasses: the (cluster) bootstrap of
those sums, and a bound from the Wilson interval of the agreeing share when the
sample shows no disagreement at all. Alpha merges identical value-count rows
before its unclustered bootstrap.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgekit.stats import _resample, _tables
from judgekit.stats._result import Interval, _SumsResult
from judgekit.stats._validate import BoolArray, FloatArray, RandomState, rng_from


@dataclass(frozen=True)
class FleissKappaResult(_SumsResult):
    """Fleiss' kappa over items each rated by the same number of raters."""

    statistic: float
    n: int
    n_raters: int
    p_observed: float
    p_expected: float
    labels: tuple[Hashable, ...]
    category_proportions: tuple[float, ...]
    reason: str | None
    _counts: FloatArray = field(compare=False, repr=False)

    def _contributions(self) -> tuple[FloatArray, BoolArray]:
        return _tables.fleiss_contributions(self._counts), np.ones(self.n, dtype=bool)

    def _statistic_of_sums(self, sums: FloatArray) -> FloatArray:
        return _tables.fleiss_from_sums(sums, self.n_raters)[0]

    def _is_perfect(self) -> bool:
        return self.p_observed >= 1.0 - _tables.EPS

    def _perfect_bound(self, agreement_low: float) -> float:
        return (agreement_low - self.p_expected) / (1.0 - self.p_expected)


@dataclass(frozen=True)
class AlphaResult(_SumsResult):
    """Krippendorff's alpha; ``n`` = pairable units (those with at least two values)."""

    statistic: float
    n: int
    n_pairable_values: int
    level: str
    value_domain: tuple[Hashable, ...]
    observed_disagreement: float
    expected_disagreement: float
    reason: str | None
    _value_counts: FloatArray = field(compare=False, repr=False)
    _numeric_domain: FloatArray = field(compare=False, repr=False)
    _used: BoolArray = field(compare=False, repr=False)

    def _contributions(self) -> tuple[FloatArray, BoolArray]:
        return _tables.coincidence_contributions(self._value_counts[self._used]), self._used

    def _statistic_of_sums(self, sums: FloatArray) -> FloatArray:
        return _tables.alpha_from_sums(sums, self.level, self._numeric_domain)[0]

    def _is_perfect(self) -> bool:
        return self.observed_disagreement <= _tables.EPS

    def _perfect_bound(self, agreement_low: float) -> float:
        """D_o <= (1 - L) * the largest distance between values seen, so alpha >= 1 - that / D_e."""
        totals = self._value_counts[self._used].sum(axis=0)[None, :]
        distances = _tables.alpha_distances(self.level, self._numeric_domain, totals)[0]
        seen = totals[0] > 0
        largest = float(distances[np.ix_(seen, seen)].max())
        return 1.0 - (1.0 - agreement_low) * largest / self.expected_disagreement

    def _bootstrap(
        self,
        level: float,
        method: str,
        n_resamples: int,
        random_state: RandomState,
        clusters: Any,
    ) -> Interval:
        if clusters is not None:
            return super()._bootstrap(level, method, n_resamples, random_state, clusters)
        # identical value-count rows give identical coincidences: merge them first
        rows, frequencies = _resample.unique_rows(self._value_counts[self._used])
        return _resample.interval_from_patterns(
            self._statistic_of_sums,
            _tables.coincidence_contributions(rows.astype(np.float64)),
            frequencies.astype(np.int64),
            estimate=self.statistic,
            confidence_level=level,
            n_resamples=n_resamples,
            rng=rng_from(random_state),
            method=method,
        )


__all__ = ["AlphaResult", "FleissKappaResult"]
