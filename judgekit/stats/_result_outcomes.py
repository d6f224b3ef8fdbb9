"""Result objects for accuracy, paired comparisons and tests.

Same conventions as :mod:`judgekit.stats._result` (frozen, ``statistic``,
``n``, ``confidence_interval``, ``to_dict``); split off so each module stays
readable in one sitting (correlations are in
:mod:`judgekit.stats._result_correlation`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from judgekit.stats import _resample
from judgekit.stats._interval import ConfidenceInterval
from judgekit.stats._result import (
    Interval,
    ResultMixin,
    _check_bootstrap_args,
    _SumsResult,
)
from judgekit.stats._validate import (
    BoolArray,
    FloatArray,
    RandomState,
    check_choice,
    check_confidence_level,
    rng_from,
)


@dataclass(frozen=True)
class _MeanOverUnitsResult(_SumsResult):
    """A mean of one value per used unit: the sum of the values over the count of units.

    Resampling sums (value, 1) per unit, so one ratio serves every replicate.
    """

    def _unit_values(self) -> tuple[FloatArray, BoolArray]:
        """The per-unit values and the mask of units used."""
        raise NotImplementedError

    def _contributions(self) -> tuple[FloatArray, BoolArray]:
        values, used = self._unit_values()
        return np.column_stack([values, np.ones_like(values)]), used

    def _statistic_of_sums(self, sums: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return sums[:, 0] / sums[:, 1]


@dataclass(frozen=True)
class ProportionResult(_MeanOverUnitsResult):
    """A proportion of items (e.g. percent agreement) with its Wilson interval."""

    statistic: float
    n: int
    successes: int
    reason: str | None
    _outcomes: FloatArray = field(compare=False, repr=False)
    _used: BoolArray = field(compare=False, repr=False)

    _closed_form_method: ClassVar[str | None] = "wilson"
    _value_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    _closed_form_clusters_error: ClassVar[str] = (
        "clusters needs method='bootstrap' (Wilson assumes independent items)"
    )

    def _unit_values(self) -> tuple[FloatArray, BoolArray]:
        return self._outcomes, self._used

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["wilson", "bootstrap", "bca"] = "wilson",
        n_resamples: int = 2000,
        random_state: RandomState = 0,
        clusters: Any = None,
    ) -> Interval:
        """Wilson score interval, or a (cluster) bootstrap when items are not independent."""
        return self._closed_form_or_bootstrap(
            confidence_level, method, n_resamples, random_state, clusters
        )

    def _closed_form(self, level: float) -> Interval:
        return _resample.wilson_bounds(self.successes, self.n, level)


@dataclass(frozen=True)
class McNemarResult(_MeanOverUnitsResult):
    """Paired comparison of two systems' correctness on the same items.

    ``statistic`` = accuracy(a) - accuracy(b) = (b - c) / n; ``pvalue`` is the
    exact two-sided binomial test of b vs c; ``chi2`` = (b - c)**2 / (b + c).
    """

    statistic: float
    n: int
    b: int
    c: int
    both_correct: int
    both_wrong: int
    pvalue: float
    chi2: float
    reason: str | None
    _differences: FloatArray = field(compare=False, repr=False)
    _used: BoolArray = field(compare=False, repr=False)

    _closed_form_method: ClassVar[str | None] = "newcombe"

    def _unit_values(self) -> tuple[FloatArray, BoolArray]:
        return self._differences, self._used

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["newcombe", "bootstrap", "bca"] = "newcombe",
        n_resamples: int = 2000,
        random_state: RandomState = 0,
        clusters: Any = None,
    ) -> Interval:
        """Newcombe (1998, method 10) score interval for the paired difference, or a bootstrap."""
        return self._closed_form_or_bootstrap(
            confidence_level, method, n_resamples, random_state, clusters
        )

    def _closed_form(self, level: float) -> Interval:
        return newcombe_paired_interval(self.both_correct, self.b, self.c, self.both_wrong, level)


def newcombe_paired_interval(e: int, f: int, g: int, h: int, level: float) -> Interval:
    """Newcombe's hybrid score interval for p_a - p_b from a paired 2x2 table.

    e = both correct, f = only a correct, g = only b correct, h = both wrong.
    """
    n = e + f + g + h
    p1, p2 = (e + f) / n, (e + g) / n
    l1, u1 = _resample.wilson_bounds(e + f, n, level)
    l2, u2 = _resample.wilson_bounds(e + g, n, level)
    denominator = (e + f) * (g + h) * (e + g) * (f + h)
    # Newcombe's correlation estimate: a positive e*h - f*g is shrunk by n/2
    # (conservative), a negative one is used as is (Newcombe 1998b; Altman et al. 2000).
    numerator = float(e * h - f * g)
    if numerator > 0:
        numerator = max(numerator - n / 2.0, 0.0)
    phi = 0.0 if denominator == 0 else numerator / math.sqrt(denominator)
    delta = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    epsilon = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    diff = p1 - p2
    return max(-1.0, diff - delta), min(1.0, diff + epsilon)


@dataclass(frozen=True)
class BinomialTestResult(ResultMixin):
    """Exact binomial test of k successes in n against ``null_proportion``."""

    statistic: float
    n: int
    k: int
    pvalue: float
    null_proportion: float

    def confidence_interval(
        self, confidence_level: float = 0.95, method: Literal["wilson", "exact"] = "wilson"
    ) -> Interval:
        """Wilson score interval, or the Clopper-Pearson ``"exact"`` interval."""
        level = check_confidence_level(confidence_level)
        check_choice(method, "method", ("wilson", "exact"))
        if method == "exact":
            from scipy import stats

            ci = stats.binomtest(self.k, self.n).proportion_ci(level, method="exact")
            return float(ci.low), float(ci.high)
        return _resample.wilson_bounds(self.k, self.n, level)


@dataclass(frozen=True)
class ResampledResult(ResultMixin):
    """A statistic whose interval comes from stored bootstrap replicates."""

    statistic: float
    n: int
    method: str
    _replicates: FloatArray = field(compare=False, repr=False)
    _jackknife: FloatArray = field(compare=False, repr=False)

    def confidence_interval(self, confidence_level: float = 0.95) -> Interval:
        """Interval from the replicates drawn at creation (no new resampling)."""
        level = check_confidence_level(confidence_level)
        if self.method == "bca":
            return _resample.bca_interval(
                self._replicates, self.statistic, self._jackknife, None, level
            )
        return _resample.percentile_interval(self._replicates, level)


@dataclass(frozen=True)
class PairedBootstrapResult(ResampledResult):
    """statistic(a) - statistic(b) over the same items, with a paired bootstrap interval.

    ``pvalue`` is the two-sided bootstrap p-value of "no difference": twice the
    share of replicates on the far side of zero, counted as (1 + #) / (B + 1) so
    that it is never 0 (Efron & Tibshirani 1993, 16.4; Davison & Hinkley 1997, 4.11).
    """

    statistic_a: float = float("nan")
    statistic_b: float = float("nan")
    pvalue: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    confidence_level: float = 0.95


StatisticFn = Callable[..., float]


@dataclass(frozen=True)
class GroupAccuracy(ResultMixin):
    """Accuracy within one group (slice), with its status counts."""

    name: str
    statistic: float
    n: int
    correct: int
    status_counts: Mapping[str, int]

    @property
    def accuracy(self) -> float:
        return self.statistic

    def confidence_interval(self, confidence_level: float = 0.95) -> Interval:
        """Wilson score interval of the group's accuracy."""
        return _resample.wilson_bounds(
            self.correct, self.n, check_confidence_level(confidence_level)
        )


@dataclass(frozen=True)
class GroupedAccuracyResult(ResultMixin):
    """Micro and macro accuracy over groups; ``statistic`` is the micro accuracy.

    ``abstentions`` counts refusals and ``unparseable`` parse errors; under
    ``policy="exclude"`` they (and truncations) are left out of every
    denominator, under ``"as_wrong"`` they count as wrong answers. Failures where
    the model never answered (rate limits, timeouts, API errors) are always
    excluded and only counted.
    """

    statistic: float
    n: int
    micro: float
    macro: float
    policy: str
    groups: Mapping[str, GroupAccuracy]
    status_counts: Mapping[str, int]
    abstentions: int
    unparseable: int

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        which: Literal["micro", "macro"] = "micro",
        method: Literal["wilson", "bootstrap"] | None = None,
        n_resamples: int = 2000,
        random_state: RandomState = 0,
    ) -> Interval:
        """Micro: Wilson (default) or bootstrap; macro: bootstrap stratified by group.

        Resampling items within a group is, for 0/1 outcomes, exactly a binomial
        draw of that group's correct count, so the stratified bootstrap is done
        with one vectorised binomial draw per group.
        """
        check_choice(which, "which", ("micro", "macro"))
        chosen = method or ("wilson" if which == "micro" else "bootstrap")
        level = _check_bootstrap_args(
            confidence_level, chosen, n_resamples, ("wilson", "bootstrap")
        )
        if chosen == "wilson":
            if which == "macro":
                raise ValueError(
                    "the macro accuracy has no Wilson interval; use method='bootstrap'"
                )
            return _resample.wilson_bounds(
                sum(g.correct for g in self.groups.values()), self.n, level
            )
        rng = rng_from(random_state)
        sizes = np.array([g.n for g in self.groups.values()], dtype=np.int64)
        rates = np.array([g.accuracy for g in self.groups.values()])
        correct = rng.binomial(sizes, rates, size=(n_resamples, sizes.size))
        if which == "macro":
            replicates = np.mean(correct / sizes, axis=1)
        else:
            replicates = correct.sum(axis=1) / sizes.sum()
        interval = _resample.percentile_interval(replicates.astype(np.float64), level)
        if which == "macro" and not interval.defined and np.all((rates == 0) | (rates == 1)):
            # every group at 0/n or n/n: the binomial draws cannot move, so a
            # boundary-aware interval replaces them: the mean of the groups' Wilson bounds
            bounds = [g.confidence_interval(level) for g in self.groups.values()]
            return ConfidenceInterval(
                float(np.mean([b[0] for b in bounds])), float(np.mean([b[1] for b in bounds]))
            )
        return interval
