"""Frozen result objects in scipy's style, with their confidence intervals.

A result carries the number (``statistic``), the units actually used (``n``),
a ``reason`` when the number is undefined (NaN), and what is needed to build a
confidence interval on demand: intervals are computed when asked for, at the
level asked for, so a report can choose 90% or 99% without recomputing the
statistic. ``to_dict`` gives the JSON schema reports use.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from judgekit.stats import _gwet, _resample, _tables
from judgekit.stats._interval import ConfidenceInterval, refused
from judgekit.stats._validate import (
    BoolArray,
    FloatArray,
    IntArray,
    RandomState,
    check_choice,
    check_confidence_level,
    check_n_resamples,
    cluster_codes,
    rng_from,
)

#: What ``confidence_interval`` returns: a (low, high) pair, in practice a
#: :class:`~judgekit.stats._interval.ConfidenceInterval` carrying a refusal reason.
Interval = tuple[float, float]
NAN_INTERVAL: Interval = ConfidenceInterval(
    float("nan"), float("nan"), "the statistic is undefined"
)
BOOTSTRAP_METHODS = ("bootstrap", "bca")


def _json_number(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def used_clusters(clusters: Any, used: BoolArray) -> IntArray:
    """Cluster ids for the used units; ``clusters`` may cover all input units or only used ones."""
    n_input, n_used = used.size, int(used.sum())
    length = len(clusters)
    if length == n_input:
        codes = cluster_codes(clusters, n_input)[used]
    elif length == n_used:
        codes = cluster_codes(clusters, n_used)
    else:
        raise ValueError(
            f"clusters has length {length}; expected {n_input} (one per input item)"
            f" or {n_used} (one per item used)"
        )
    _, dense = np.unique(codes, return_inverse=True)
    return dense.astype(np.int64)


class ResultMixin:
    """Shared behaviour: ``to_dict`` over ``confidence_interval``."""

    def confidence_interval(self, confidence_level: float = 0.95) -> Interval:
        raise NotImplementedError

    def to_dict(self, confidence_level: float = 0.95, **ci_kwargs: Any) -> dict[str, Any]:
        """``{"statistic", "ci_low", "ci_high", "n"}``, + ``"pvalue"``, + ``"reason"`` if undefined,
        + ``"note"`` when the statistic is defined but its interval was refused (why).

        JSON-ready: NaN becomes None. Bootstrap intervals default to
        ``random_state=0`` here so a regenerated report shows the same numbers.
        """
        parameters = inspect.signature(self.confidence_interval).parameters
        if "random_state" in parameters:
            ci_kwargs.setdefault("random_state", 0)
        interval = self.confidence_interval(confidence_level=confidence_level, **ci_kwargs)
        low, high = interval
        out: dict[str, Any] = {
            "statistic": _json_number(getattr(self, "statistic")),  # noqa: B009
            "ci_low": _json_number(low),
            "ci_high": _json_number(high),
            "n": int(getattr(self, "n")),  # noqa: B009
        }
        if hasattr(self, "pvalue"):
            out["pvalue"] = _json_number(getattr(self, "pvalue"))  # noqa: B009
        reason = getattr(self, "reason", None)
        if reason is not None:
            out["reason"] = reason
        elif getattr(interval, "reason", None):
            out["note"] = getattr(interval, "reason")  # noqa: B009 (why there is no interval)
        return out


def _check_bootstrap_args(
    confidence_level: float, method: str, n_resamples: int, allowed: tuple[str, ...]
) -> float:
    check_choice(method, "method", allowed)
    check_n_resamples(n_resamples)
    return check_confidence_level(confidence_level)


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


@dataclass(frozen=True)
class _SumsResult(ResultMixin):
    """Base for statistics that are functions of per-unit contribution sums."""

    def _contributions(self) -> tuple[FloatArray, BoolArray]:
        raise NotImplementedError

    def _statistic_of_sums(self, sums: FloatArray) -> FloatArray:
        raise NotImplementedError

    def _bootstrap(
        self,
        level: float,
        method: str,
        n_resamples: int,
        random_state: RandomState,
        clusters: Any,
    ) -> Interval:
        contributions, used = self._contributions()
        codes = None if clusters is None else used_clusters(clusters, used)
        return _resample.interval_from_sums(
            self._statistic_of_sums,
            contributions,
            estimate=float(getattr(self, "statistic")),  # noqa: B009
            confidence_level=level,
            n_resamples=n_resamples,
            rng=rng_from(random_state),
            clusters=codes,
            method=method,
            value_range=self._value_range,
        )

    #: The values the statistic can take (a widened cluster interval is clipped to them).
    _value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)

    #: The closed-form interval a subclass offers besides the bootstrap (None: bootstrap only).
    _closed_form_method: ClassVar[str | None] = None
    #: Why the closed form refuses clusters: it assumes independent items.
    _closed_form_clusters_error: ClassVar[str] = "clusters needs method='bootstrap'"

    def _closed_form(self, level: float) -> Interval:
        raise NotImplementedError

    def _closed_form_or_bootstrap(
        self,
        confidence_level: float,
        method: str,
        n_resamples: int,
        random_state: RandomState,
        clusters: Any,
    ) -> Interval:
        """The subclass's closed-form interval, or a (cluster) bootstrap.

        One rule for every result with both: the arguments are checked first, an
        empty sample has a NaN interval, and clusters need the bootstrap.
        """
        closed = self._closed_form_method
        assert closed is not None, "set _closed_form_method to offer a closed form"
        level = _check_bootstrap_args(
            confidence_level, method, n_resamples, (closed, *BOOTSTRAP_METHODS)
        )
        if int(getattr(self, "n")) == 0:  # noqa: B009
            return NAN_INTERVAL
        if method == closed:
            if clusters is not None:
                raise ValueError(self._closed_form_clusters_error)
            return self._closed_form(level)
        return self._bootstrap(level, method, n_resamples, random_state, clusters)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["bootstrap", "bca"] = "bootstrap",
        n_resamples: int = 2000,
        random_state: RandomState = 0,
        clusters: Any = None,
    ) -> Interval:
        """Percentile (or BCa) bootstrap over units, or over clusters of units when given.

        At a perfect sample (no observed disagreement) every resample is perfect too,
        so a boundary-aware bound replaces the bootstrap (see ``_perfect_bound``).
        """
        level = _check_bootstrap_args(confidence_level, method, n_resamples, BOOTSTRAP_METHODS)
        if not math.isfinite(float(getattr(self, "statistic"))):  # noqa: B009
            return NAN_INTERVAL
        if self._is_perfect():
            _, used = self._contributions()
            units = (
                int(used.sum()) if clusters is None else len(set(used_clusters(clusters, used)))
            )
            low = _resample.wilson_bounds(units, units, level)[0]
            return ConfidenceInterval(max(-1.0, self._perfect_bound(low)), 1.0)
        return self._bootstrap(level, method, n_resamples, random_state, clusters)

    def _is_perfect(self) -> bool:
        """No observed disagreement at all (then the bootstrap cannot move the estimate)."""
        return False

    def _perfect_bound(self, agreement_low: float) -> float:
        """Lower bound on the statistic when the agreeing share is at least ``agreement_low``."""
        raise NotImplementedError


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
        rows, frequencies = np.unique(self._value_counts[self._used], axis=0, return_counts=True)
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
