"""Frozen result objects in scipy's style: the conventions every result shares.

A result carries the number (``statistic``), the units actually used (``n``),
a ``reason`` when the number is undefined (NaN), and what is needed to build a
confidence interval on demand: intervals are computed when asked for, at the
level asked for, so a report can choose 90% or 99% without recomputing the
statistic. ``to_dict`` gives the JSON schema reports use.

This module holds what the result families share: :class:`ResultMixin`
(``to_dict``), the argument checks, :func:`used_clusters` and :class:`_SumsResult`,
the base of every statistic that is a function of per-unit contribution sums (its
percentile, BCa and cluster bootstraps). The families are in their own modules:
two-rater kappa and AC1 in :mod:`judgekit.stats._result_kappa`, Fleiss' kappa
and Krippendorff's alpha in :mod:`judgekit.stats._result_multirater`,
correlations in :mod:`judgekit.stats._result_correlation`, accuracy, paired
comparisons and tests in :mod:`judgekit.stats._result_outcomes`.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from judgekit.stats import _resample
from judgekit.stats._interval import ConfidenceInterval
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
