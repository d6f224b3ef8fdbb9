"""Result objects for accuracy, paired comparisons, tests and correlations.

Same conventions as :mod:`judgekit.stats._result` (frozen, ``statistic``,
``n``, ``confidence_interval``, ``to_dict``); split off so each module stays
readable in one sitting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from judgekit.stats import _resample
from judgekit.stats._result import (
    BOOTSTRAP_METHODS,
    NAN_INTERVAL,
    Interval,
    ResultMixin,
    _check_bootstrap_args,
    _SumsResult,
    used_clusters,
)
from judgekit.stats._validate import (
    BoolArray,
    FloatArray,
    IntArray,
    RandomState,
    check_choice,
    check_confidence_level,
    rng_from,
)


def _ratio_of_sums(sums: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return sums[:, 0] / sums[:, 1]


@dataclass(frozen=True)
class ProportionResult(_SumsResult):
    """A proportion of items (e.g. percent agreement) with its Wilson interval."""

    statistic: float
    n: int
    successes: int
    reason: str | None
    _outcomes: FloatArray = field(compare=False, repr=False)
    _used: BoolArray = field(compare=False, repr=False)

    def _contributions(self) -> tuple[FloatArray, BoolArray]:
        return np.column_stack([self._outcomes, np.ones_like(self._outcomes)]), self._used

    def _statistic_of_sums(self, sums: FloatArray) -> FloatArray:
        return _ratio_of_sums(sums)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["wilson", "bootstrap", "bca"] = "wilson",
        n_resamples: int = 2000,
        random_state: RandomState = None,
        clusters: Any = None,
    ) -> Interval:
        """Wilson score interval, or a (cluster) bootstrap when items are not independent."""
        level = _check_bootstrap_args(
            confidence_level, method, n_resamples, ("wilson", *BOOTSTRAP_METHODS)
        )
        if self.n == 0:
            return NAN_INTERVAL
        if method == "wilson":
            if clusters is not None:
                raise ValueError(
                    "clusters needs method='bootstrap' (Wilson assumes independent items)"
                )
            return _resample.wilson_bounds(self.successes, self.n, level)
        return self._bootstrap(level, method, n_resamples, random_state, clusters)


@dataclass(frozen=True)
class McNemarResult(_SumsResult):
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

    def _contributions(self) -> tuple[FloatArray, BoolArray]:
        diffs = self._differences
        return np.column_stack([diffs, np.ones_like(diffs)]), self._used

    def _statistic_of_sums(self, sums: FloatArray) -> FloatArray:
        return _ratio_of_sums(sums)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["newcombe", "bootstrap", "bca"] = "newcombe",
        n_resamples: int = 2000,
        random_state: RandomState = None,
        clusters: Any = None,
    ) -> Interval:
        """Newcombe (1998, method 10) score interval for the paired difference, or a bootstrap."""
        level = _check_bootstrap_args(
            confidence_level, method, n_resamples, ("newcombe", *BOOTSTRAP_METHODS)
        )
        if self.n == 0:
            return NAN_INTERVAL
        if method == "newcombe":
            if clusters is not None:
                raise ValueError("clusters needs method='bootstrap'")
            return newcombe_paired_interval(
                self.both_correct, self.b, self.c, self.both_wrong, level
            )
        return self._bootstrap(level, method, n_resamples, random_state, clusters)


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
    share of replicates on the far side of zero (Efron & Tibshirani 1993, 16.4).
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
        random_state: RandomState = None,
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
        return _resample.percentile_interval(replicates.astype(np.float64), level)


BatchStatistic = Callable[[FloatArray, FloatArray], FloatArray]
#: The statistic of B weighted resamples from their pattern counts, shape (B, T) -> (B,).
WeightedStatistic = Callable[[FloatArray], FloatArray]
#: Builds a :data:`WeightedStatistic` for the distinct pairs (x (T,), y (T,)), or None
#: when there are too many of them for the weighted form to pay off.
WeightedFactory = Callable[[FloatArray, FloatArray], WeightedStatistic | None]


@dataclass(frozen=True)
class CorrelationResult(ResultMixin):
    """A rank correlation with its p-value; ``method`` is ``"spearman"`` or ``"kendall_tau_b"``."""

    statistic: float
    n: int
    pvalue: float
    method: str
    reason: str | None
    _x: FloatArray = field(compare=False, repr=False)
    _y: FloatArray = field(compare=False, repr=False)
    _used: BoolArray = field(compare=False, repr=False)
    _batch: BatchStatistic = field(compare=False, repr=False)
    _weighted: WeightedFactory = field(compare=False, repr=False)
    _fisher_variance: Callable[[int], float] = field(compare=False, repr=False)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["bootstrap", "bca", "fisher"] = "bootstrap",
        n_resamples: int = 2000,
        random_state: RandomState = None,
        clusters: Any = None,
    ) -> Interval:
        """Percentile (or BCa) bootstrap over pairs (clusters when given), or Fisher z.

        Fisher z uses variance 1.06/(n-3) for Spearman and 0.437/(n-4) for
        Kendall (Fieller, Hartley & Pearson 1957).
        """
        level = _check_bootstrap_args(
            confidence_level, method, n_resamples, (*BOOTSTRAP_METHODS, "fisher")
        )
        if not math.isfinite(self.statistic):
            return NAN_INTERVAL
        if method == "fisher":
            variance = self._fisher_variance(self.n)
            if not math.isfinite(variance) or variance <= 0 or abs(self.statistic) >= 1:
                return NAN_INTERVAL
            half = _resample.z_critical(level) * math.sqrt(variance)
            center = math.atanh(self.statistic)
            return math.tanh(center - half), math.tanh(center + half)
        rng = rng_from(random_state)
        codes = None if clusters is None else used_clusters(clusters, self._used)
        pairs = np.column_stack([self._x, self._y])
        distinct, unit_pattern = np.unique(pairs, axis=0, return_inverse=True)
        unit_pattern = unit_pattern.reshape(-1)
        weighted = self._weighted(distinct[:, 0], distinct[:, 1])
        if weighted is None:
            replicates = self._replicates(n_resamples, rng, codes)
        else:
            replicates = self._weighted_replicates(weighted, unit_pattern, n_resamples, rng, codes)
        if method == "bca":
            if weighted is None:
                sets = _resample.jackknife_index_sets(codes, self.n)
                jackknife = np.array(
                    [self._batch(self._x[s][None, :], self._y[s][None, :])[0] for s in sets]
                )
            else:
                jackknife = _weighted_jackknife(weighted, unit_pattern, codes)
            return _resample.bca_interval(replicates, self.statistic, jackknife, None, level)
        return _resample.percentile_interval(replicates, level)

    def _weighted_replicates(
        self,
        weighted: WeightedStatistic,
        unit_pattern: IntArray,
        n_resamples: int,
        rng: np.random.Generator,
        codes: IntArray | None,
    ) -> FloatArray:
        """Replicates from pattern counts; the same resamples as :meth:`_replicates`."""
        n_patterns = int(unit_pattern.max()) + 1
        out = np.empty(n_resamples)
        step = max(1, min(n_resamples, 2_000_000 // max(self.n, 1)))
        n_clusters = 0 if codes is None else int(codes.max()) + 1
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            if codes is None:
                idx = rng.integers(0, self.n, size=(rows, self.n))
                counts = _resample.row_bincount(unit_pattern[idx], n_patterns)
            else:
                # each item appears as often as its cluster was picked
                per_cluster = _resample.cluster_pick_counts(n_clusters, rows, rng)
                counts = _resample.row_bincount(
                    np.broadcast_to(unit_pattern, (rows, self.n)),
                    n_patterns,
                    weights=per_cluster[:, codes].astype(np.float64),
                )
            out[start : start + rows] = weighted(counts)
        return out

    def _replicates(
        self, n_resamples: int, rng: np.random.Generator, codes: IntArray | None
    ) -> FloatArray:
        """Replicates from the resampled arrays themselves (many distinct pairs)."""
        if codes is None:
            out = np.empty(n_resamples)
            step = max(1, min(n_resamples, 2_000_000 // max(self.n, 1)))
            for start in range(0, n_resamples, step):
                rows = min(step, n_resamples - start)
                idx = rng.integers(0, self.n, size=(rows, self.n))
                out[start : start + rows] = self._batch(self._x[idx], self._y[idx])
            return out
        values = []
        for flat, lengths in _resample.cluster_resample_indices(codes, n_resamples, rng):
            for idx in np.split(flat, np.cumsum(lengths)[:-1]):
                values.append(self._batch(self._x[idx][None, :], self._y[idx][None, :])[0])
        return np.asarray(values, dtype=np.float64)


def _weighted_jackknife(
    weighted: WeightedStatistic, unit_pattern: IntArray, codes: IntArray | None
) -> FloatArray:
    """Leave-one-unit-out estimates (items, or whole clusters) from pattern counts.

    Without clusters, leaving out any item of one pattern gives the same
    estimate, so there is one row per pattern, spread back to the items.
    """
    n_patterns = int(unit_pattern.max()) + 1
    frequencies = np.bincount(unit_pattern, minlength=n_patterns).astype(np.float64)
    n_units = n_patterns if codes is None else int(codes.max()) + 1
    values = np.empty(n_units)
    step = _resample.chunk_rows(n_units, n_patterns)
    for first in range(0, n_units, step):
        rows = min(step, n_units - first)
        removed = np.zeros((rows, n_patterns))
        if codes is None:
            removed[np.arange(rows), np.arange(first, first + rows)] = 1.0
        else:
            mine = (codes >= first) & (codes < first + rows)
            np.add.at(removed, (codes[mine] - first, unit_pattern[mine]), 1.0)
        values[first : first + rows] = weighted(frequencies[None, :] - removed)
    jackknife: FloatArray = values[unit_pattern] if codes is None else values
    return jackknife
