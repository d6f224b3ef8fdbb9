"""Agreement between raters: Cohen's kappa, Gwet's AC1, percent agreement,
Fleiss' kappa and Krippendorff's alpha.

Which one to use (see docs/statistics.md): two raters on a binary or
categorical scale -> Cohen's kappa *and* percent agreement and AC1 beside it
(kappa collapses when one category dominates, the "kappa paradox"); ordinal
scales -> quadratic-weighted kappa and ordinal alpha; three or more raters ->
Fleiss' kappa when every item has the same number of ratings, Krippendorff's
alpha otherwise (missing ratings are fine).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from judgekit.stats import _gwet, _tables
from judgekit.stats._multirater import fleiss_kappa, krippendorff_alpha
from judgekit.stats._result_kappa import GwetResult, KappaResult
from judgekit.stats._result_outcomes import ProportionResult
from judgekit.stats._validate import (
    IntArray,
    as_1d,
    as_float_with_missing,
    check_choice,
    check_same_length,
    encode,
)

__all__ = [
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "percent_agreement",
]

Weights = Literal["linear", "quadratic"] | None


def _paired_codes(
    a: Iterable[Any] | npt.ArrayLike,
    b: Iterable[Any] | npt.ArrayLike,
    labels: Iterable[Hashable] | None,
) -> tuple[IntArray, IntArray, np.ndarray, tuple[Hashable, ...]]:
    xa, xb = as_1d(a, "a"), as_1d(b, "b")
    check_same_length(("a", xa), ("b", xb))
    (ca, cb), categories = encode([("a", xa), ("b", xb)], labels)
    used = (ca >= 0) & (cb >= 0)
    return ca[used], cb[used], used, categories


def _undefined_reason(confusion: np.ndarray, categories: tuple[Hashable, ...]) -> str:
    rows = np.flatnonzero(confusion.sum(axis=1))
    cols = np.flatnonzero(confusion.sum(axis=0))
    if rows.size == 1 and cols.size == 1 and rows[0] == cols[0]:
        return (
            f"both raters used only the category {categories[rows[0]]!r}: "
            "chance agreement p_e = 1, so the statistic is undefined"
        )
    return "chance agreement p_e = 1, so the statistic is undefined"


def _table(
    a: Any, b: Any, labels: Iterable[Hashable] | None
) -> tuple[np.ndarray, IntArray, np.ndarray, tuple[Hashable, ...]]:
    ca, cb, used, categories = _paired_codes(a, b, labels)
    k = len(categories)
    cells = ca * k + cb
    confusion = np.bincount(cells, minlength=k * k).reshape(k, k) if k else np.zeros((0, 0), int)
    confusion.setflags(write=False)
    return confusion, cells, used, categories


_NO_PAIRS = "no item has a label from both raters (all pairs have a missing value)"
_NAN = float("nan")
_TwoRater = TypeVar("_TwoRater", KappaResult, GwetResult)


def _two_rater_result(
    cls: type[_TwoRater],
    table: tuple[np.ndarray, IntArray, np.ndarray, tuple[Hashable, ...]],
    value: float,
    p_observed: float,
    p_expected: float,
    weights: str | None,
    standard_error: float,
    reason: str | None,
) -> _TwoRater:
    """A two-rater result over ``table`` (as :func:`_table` returns it).

    Kappa and AC1 share one result layout; building both here keeps the field
    order in one place. ``n`` is the number of complete pairs.
    """
    confusion, cells, used, categories = table
    return cls(
        value,
        int(cells.size),
        p_observed,
        p_expected,
        confusion,
        categories,
        weights,
        standard_error,
        reason,
        cells,
        used,
    )


def _check_consecutive_scale(categories: tuple[Hashable, ...]) -> None:
    """Weights over the values seen are the scale's weights only if no level is missing.

    Without ``labels=`` the categories are the sorted values seen; a 1-5 scale whose 3
    and 4 were never used would then be weighted as if 2 and 5 were neighbours
    (quadratic kappa 0.478 instead of 0.530 on the issue's example).
    """
    numeric = all(
        isinstance(c, int | float | np.integer | np.floating) and not isinstance(c, bool)
        for c in categories
    )
    if not numeric:
        return
    values = np.asarray(categories, dtype=np.float64)
    consecutive = bool(np.all(values == np.round(values))) and bool(
        np.all(np.diff(values) == 1.0)
    )
    if not consecutive:
        raise ValueError(
            f"weighted kappa over the values seen {list(categories)!r} would change the "
            "scale's spacing (a level is unused or the values are not consecutive integers); "
            "pass labels= with the full scale in order"
        )


def cohen_kappa(
    a: Iterable[Any] | npt.ArrayLike,
    b: Iterable[Any] | npt.ArrayLike,
    *,
    weights: Weights = None,
    labels: Iterable[Hashable] | None = None,
) -> KappaResult:
    """Cohen's kappa (Cohen 1960), or weighted kappa (Cohen 1968), of two raters.

    kappa = (p_o - p_e) / (1 - p_e), with p_o the (weighted) observed agreement
    and p_e the agreement expected from the two raters' marginals. A pair with
    None/NaN on either side is dropped; ``n`` counts the pairs used. With
    ``weights`` the category order is ``labels`` if given (the declared scale,
    used or not), else the sorted values, which must then be consecutive integers
    when numeric (a gap would silently change the spacing: ValueError). The
    analytic standard error is Fleiss, Cohen & Everitt (1969).
    Undefined (NaN, with ``reason``) when both raters used one identical
    category (p_e = 1) or no pair is complete.
    """
    check_choice(weights, "weights", (None, "linear", "quadratic"))
    table = _table(a, b, labels)
    confusion, cells, _, categories = table
    if weights is not None and labels is None:
        _check_consecutive_scale(categories)
    n = int(cells.size)
    k = len(categories)
    w = _tables.agreement_weights(k, weights)
    if n == 0:
        return _two_rater_result(KappaResult, table, _NAN, _NAN, _NAN, weights, _NAN, _NO_PAIRS)
    kappa, p_o, p_e = _tables.cohen_from_tables(confusion[None].astype(np.float64), w)
    value = float(kappa[0])
    reason = None if np.isfinite(value) else _undefined_reason(confusion, categories)
    se = _tables.cohen_analytic_se(confusion.astype(np.float64), w)
    return _two_rater_result(
        KappaResult, table, value, float(p_o[0]), float(p_e[0]), weights, se, reason
    )


def gwet_ac1(
    a: Iterable[Any] | npt.ArrayLike,
    b: Iterable[Any] | npt.ArrayLike,
    *,
    labels: Iterable[Hashable] | None = None,
) -> GwetResult:
    """Gwet's AC1 (Gwet 2008) of two raters: kappa's form with a chance term that
    stays small when one category dominates.

    p_e = sum_k pi_k (1 - pi_k) / (K - 1), pi_k = mean of the two raters' shares
    of category k; K is the number of categories (``labels`` if given, else the
    categories seen). Undefined (NaN) with fewer than two categories. The
    standard error is Gwet's (2008) large-sample SE; the default interval is a
    Wilson-score interval built on it (``GwetResult.confidence_interval``).
    """
    table = _table(a, b, labels)
    confusion, cells, _, categories = table
    if cells.size == 0:
        return _two_rater_result(GwetResult, table, _NAN, _NAN, _NAN, None, _NAN, _NO_PAIRS)
    ac1, p_o, p_e = _tables.gwet_from_tables(confusion[None].astype(np.float64))
    value = float(ac1[0])
    reason = None
    if len(categories) < 2:
        reason = (
            f"only one category ({categories[0]!r}) on the scale: AC1 needs two or more; "
            "pass labels= to declare the full scale"
        )
    elif not np.isfinite(value):
        reason = "chance agreement p_e = 1, so the statistic is undefined"
    se = _gwet.gwet_analytic_se(confusion.astype(np.float64)) if reason is None else _NAN
    return _two_rater_result(
        GwetResult, table, value, float(p_o[0]), float(p_e[0]), None, se, reason
    )


def percent_agreement(
    a: Iterable[Any] | npt.ArrayLike,
    b: Iterable[Any] | npt.ArrayLike,
    *,
    tolerance: float = 0,
    labels: Iterable[Hashable] | None = None,
) -> ProportionResult:
    """Share of items on which the two raters agree, with a Wilson interval.

    ``tolerance`` > 0 counts numeric labels within that distance as agreeing
    (e.g. tolerance=1 gives "within one point" agreement on a 1-5 scale).
    Pairs with a missing value are dropped.
    """
    if tolerance < 0 or not np.isfinite(tolerance):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if tolerance > 0:
        if labels is not None:
            raise ValueError("labels cannot be combined with a numeric tolerance")
        xa, xb = as_float_with_missing(a, "a"), as_float_with_missing(b, "b")
        check_same_length(("a", xa), ("b", xb))
        used = ~(np.isnan(xa) | np.isnan(xb))
        outcomes = (np.abs(xa[used] - xb[used]) <= tolerance).astype(np.float64)
    else:
        ca, cb, used, _ = _paired_codes(a, b, labels)
        outcomes = (ca == cb).astype(np.float64)
    n = int(outcomes.size)
    successes = int(outcomes.sum())
    statistic = successes / n if n else float("nan")
    reason = None if n else _NO_PAIRS
    return ProportionResult(statistic, n, successes, reason, outcomes, used)
