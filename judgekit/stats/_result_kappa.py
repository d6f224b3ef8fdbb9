"""Two-rater agreement results: Cohen's kappa (weighted or not) and Gwet's AC1.

Both are functions of the judge-by-human confusion table, so they share
:class:`_TwoRaterTable`: its interval resamples table cells (multinomially, or
whole clusters' cells), and a sample in perfect agreement gets a boundary-aware
interval instead of the bootstrap's false certainty. Conventions (frozen,
``statistic``, ``n``, ``confidence_interval``, ``to_dict``) are those of
:mod:`judgekit.stats._result`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from judgekit.stats import _gwet, _resample, _tables
from judgekit.stats._interval import ConfidenceInterval, refused
from judgekit.stats._result import (
    BOOTSTRAP_METHODS,
    NAN_INTERVAL,
    Interval,
    ResultMixin,
    _check_bootstrap_args,
    used_clusters,
)
from judgekit.stats._validate import (
    BoolArray,
    FloatArray,
    IntArray,
    RandomState,
    check_choice,
    rng_from,
)


@dataclass(frozen=True)
class _TwoRaterTable(ResultMixin):
    statistic: float
    n: int
    p_observed: float
    p_expected: float
    confusion: IntArray = field(compare=False)
    labels: tuple[Hashable, ...]
    weights: str | None
    standard_error: float
    reason: str | None
    _cells: IntArray = field(compare=False, repr=False)
    _used: BoolArray = field(compare=False, repr=False)

    def _fixed_by_construction(self) -> str | None:
        """Why every resample must give the same value, or None."""
        return None

    def _perfect_sample_interval(self, level: float, clusters: Any) -> Interval:
        """Boundary-aware interval when the raters agree on every item.

        Every resample of a perfect sample is perfect, so the bootstrap (and the
        analytic SE, which is 0) would claim certainty. Observed agreement is at
        least the Wilson lower bound L of units/units (each cluster counted once when
        clusters are given), and the statistic rises with agreement, so
        (L - p_e) / (1 - p_e) bounds it from below; the upper bound is 1.
        """
        units = self.n if clusters is None else len(set(used_clusters(clusters, self._used)))
        low = _resample.wilson_bounds(units, units, level)[0]
        p_e = self.p_expected
        if not (math.isfinite(p_e) and p_e < 1.0):
            return refused("chance agreement p_e = 1, so the statistic has no interval")
        return ConfidenceInterval(max(-1.0, (low - p_e) / (1.0 - p_e)), 1.0)

    def _statistic_of_tables(self, tables: FloatArray) -> FloatArray:
        raise NotImplementedError

    def _statistic_of_sums(self, sums: FloatArray) -> FloatArray:
        k = len(self.labels)
        return self._statistic_of_tables(sums.reshape(-1, k, k))

    @property
    def default_interval_method(self) -> str:
        """The method ``confidence_interval`` uses when none is named."""
        return "bootstrap"

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["bootstrap", "bca", "analytic"] | None = None,
        n_resamples: int = 2000,
        random_state: RandomState = 0,
        clusters: Any = None,
    ) -> Interval:
        """Interval for the statistic.

        ``"bootstrap"`` = percentile bootstrap over items (clusters when given),
        done by multinomial resampling of confusion-table cells; ``"bca"`` = the
        BCa variant; ``"analytic"`` = statistic +/- z * standard_error; ``None`` =
        :attr:`default_interval_method`.
        """
        chosen = method or self.default_interval_method
        level = _check_bootstrap_args(
            confidence_level, chosen, n_resamples, (*BOOTSTRAP_METHODS, "analytic")
        )
        if not math.isfinite(self.statistic):
            return NAN_INTERVAL
        fixed = self._fixed_by_construction()
        if fixed is not None:
            return refused(fixed)
        if int(np.trace(self.confusion)) == self.n:
            return self._perfect_sample_interval(level, clusters)
        if chosen == "analytic":
            if not math.isfinite(self.standard_error) or self.standard_error <= 0:
                return refused("the analytic standard error is undefined or 0 on these items")
            half = _resample.z_critical(level) * self.standard_error
            return ConfidenceInterval(
                max(-1.0, self.statistic - half), min(1.0, self.statistic + half)
            )
        k2 = len(self.labels) ** 2
        if clusters is None:
            patterns = np.eye(k2)
            frequencies = self.confusion.ravel().astype(np.int64)
        else:
            codes = used_clusters(clusters, self._used)
            n_clusters = int(codes.max()) + 1
            per_cluster = np.bincount(codes * k2 + self._cells, minlength=n_clusters * k2)
            patterns, frequencies = _resample.patterns_of(
                per_cluster.reshape(n_clusters, k2).astype(np.float64), None
            )
        return _resample.interval_from_patterns(
            self._statistic_of_sums,
            patterns,
            frequencies,
            estimate=self.statistic,
            confidence_level=level,
            n_resamples=n_resamples,
            rng=rng_from(random_state),
            method=chosen,
            n_clusters=None if clusters is None else n_clusters,
        )


@dataclass(frozen=True)
class KappaResult(_TwoRaterTable):
    """Cohen's kappa (weighted or not) of two raters; ``confusion`` rows = rater a."""

    def _fixed_by_construction(self) -> str | None:
        """A rater who used one category makes kappa exactly 0, whatever the other does."""
        for side, margin in (("a", self.confusion.sum(axis=1)), ("b", self.confusion.sum(axis=0))):
            used = np.flatnonzero(margin)
            if used.size == 1:
                return (
                    f"rater {side} used only {self.labels[int(used[0])]!r}, so kappa is 0 by "
                    "construction whatever the other rater does; an interval would describe "
                    "nothing"
                )
        return None

    @property
    def default_interval_method(self) -> str:
        """BCa for weighted kappa, the percentile bootstrap otherwise.

        Quadratic-weighted kappa's percentile bootstrap covered 0.88-0.92 at n = 50;
        BCa covers 0.93-0.97 in every grid cell but one (docs/statistics.md, Coverage),
        while for unweighted kappa BCa over-covers (0.98-0.99) at high agreement.
        """
        return "bootstrap" if self.weights is None else "bca"

    def _statistic_of_tables(self, tables: FloatArray) -> FloatArray:
        w = _tables.agreement_weights(len(self.labels), self.weights)
        return _tables.cohen_from_tables(tables, w)[0]


@dataclass(frozen=True)
class GwetResult(_TwoRaterTable):
    """Gwet's AC1 of two raters; ``standard_error`` is Gwet's (2008) large-sample SE."""

    def _statistic_of_tables(self, tables: FloatArray) -> FloatArray:
        return _tables.gwet_from_tables(tables)[0]

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["wilson", "bootstrap", "bca", "analytic"] | None = "wilson",
        n_resamples: int = 2000,
        random_state: RandomState = 0,
        clusters: Any = None,
    ) -> Interval:
        """Interval for AC1.

        ``"wilson"`` (default) = Wilson's score interval of the disagreement share at
        the effective sample size Gwet's SE implies, mapped to AC1 (see
        :mod:`judgekit.stats._gwet`: the percentile bootstrap covered 0.85 at n = 50
        with 90% agreement). It assumes independent items, so ``clusters`` needs
        ``"bootstrap"`` or ``"bca"``; ``"analytic"`` = AC1 +/- z * SE.
        """
        if method == "bootstrap" or method == "bca" or method == "analytic":
            return super().confidence_interval(
                confidence_level, method, n_resamples, random_state, clusters
            )
        check_choice(method, "method", ("wilson", "bootstrap", "bca", "analytic", None))
        level = _check_bootstrap_args(confidence_level, "bootstrap", n_resamples, ("bootstrap",))
        if clusters is not None:
            raise ValueError(
                "the Wilson interval of AC1 assumes independent items; with clusters use "
                "method='bootstrap'"
            )
        if not math.isfinite(self.statistic):
            return NAN_INTERVAL
        if int(np.trace(self.confusion)) == self.n:
            return self._perfect_sample_interval(level, None)
        return _gwet.wilson_ac1_interval(
            self.p_observed, self.p_expected, self.standard_error, self.n, level
        )


__all__ = ["GwetResult", "KappaResult"]
