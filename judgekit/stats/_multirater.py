"""Many-rater agreement: Fleiss' kappa and Krippendorff's alpha.

Public through :mod:`judgekit.stats.agreement`; kept apart so each module stays
readable in one sitting.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal

import krippendorff
import numpy as np
import numpy.typing as npt

from judgekit.stats import _tables
from judgekit.stats._result_multirater import AlphaResult, FleissKappaResult
from judgekit.stats._validate import IntArray, check_choice, check_labels, encode

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


def _as_matrix(data: Any, name: str, rows: str) -> np.ndarray:
    """A 2-D array from an ndarray or a list of equally long rows."""
    if isinstance(data, np.ndarray):
        matrix = data
    else:
        try:
            row_list = [list(row) for row in data]
        except TypeError as exc:
            raise ValueError(
                f"{name} must be two-dimensional ({rows} x ...): a list of rows, not a flat list"
            ) from exc
        lengths = {len(row) for row in row_list}
        if len(lengths) > 1:
            raise ValueError(
                f"{name} rows have different lengths {sorted(lengths)}; "
                "pad missing ratings with None"
                + (
                    " or use krippendorff_alpha, which allows a different number of ratings"
                    " per item"
                    if rows == "items"
                    else ""
                )
            )
        matrix = np.empty((len(row_list), lengths.pop() if lengths else 0), dtype=object)
        for i, row in enumerate(row_list):
            matrix[i, :] = row
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional ({rows} x ...), got shape {matrix.shape}")
    if matrix.size == 0:
        raise ValueError(f"{name} is empty")
    return matrix


def _count_table(codes: IntArray, n_categories: int, *, by: Literal["row", "column"]) -> np.ndarray:
    """Counts per row (or column) and category from a matrix of codes (-1 = missing)."""
    n_groups = codes.shape[0] if by == "row" else codes.shape[1]
    ids = np.arange(n_groups)[:, None] if by == "row" else np.arange(n_groups)[None, :]
    flat = (ids * n_categories + codes).ravel()
    return np.bincount(flat[codes.ravel() >= 0], minlength=n_groups * n_categories).reshape(
        n_groups, n_categories
    )


def _fleiss_counts(
    ratings: Any, counts: Any, labels: Iterable[Hashable] | None
) -> tuple[np.ndarray, tuple[Hashable, ...]]:
    if (ratings is None) == (counts is None):
        raise ValueError(
            "pass exactly one of ratings (items x raters) or counts= (items x categories)"
        )
    if ratings is not None:
        matrix = _as_matrix(ratings, "ratings", "items")
        (codes,), categories = encode([("ratings", matrix.ravel())], labels)
        table = _count_table(codes.reshape(matrix.shape), len(categories), by="row")
        return table, categories
    table = np.asarray(counts)
    if table.ndim != 2 or table.size == 0:
        raise ValueError(
            f"counts must be a non-empty items x categories table, got shape {table.shape}"
        )
    if table.dtype.kind not in "iuf" or not np.isfinite(table).all():
        raise ValueError("counts must contain finite numbers")
    if (table < 0).any() or (table != np.round(table)).any():
        raise ValueError("counts must be non-negative integers")
    categories = check_labels(labels) if labels is not None else tuple(range(table.shape[1]))
    if len(categories) != table.shape[1]:
        raise ValueError(
            f"labels has {len(categories)} entries but counts has {table.shape[1]} columns"
        )
    return table.astype(np.int64), categories


def fleiss_kappa(
    ratings: Sequence[Sequence[Any]] | npt.ArrayLike | None = None,
    *,
    counts: npt.ArrayLike | None = None,
    labels: Iterable[Hashable] | None = None,
) -> FleissKappaResult:
    """Fleiss' kappa (Fleiss 1971) for items each rated by the same number m of raters.

    kappa = (P-bar - P_e) / (1 - P_e), P-bar = mean over items of the share of
    agreeing rater pairs, P_e = sum_j p_j**2 from the pooled category shares.
    ``ratings`` is items x raters (None/NaN missing, but every item must end up
    with the same number of ratings); ``counts`` is an items x categories table.
    Undefined (NaN) when every rating is in one category (P_e = 1).
    """
    table, categories = _fleiss_counts(ratings, counts, labels)
    per_item = table.sum(axis=1)
    if per_item.min() != per_item.max():
        raise ValueError(
            f"items have different numbers of ratings ({int(per_item.min())} to "
            f"{int(per_item.max())}); Fleiss' kappa needs the same number per item: "
            "use krippendorff_alpha, which handles missing and unequal ratings"
        )
    m = int(per_item[0])
    if m < 2:
        raise ValueError(f"every item needs at least 2 ratings for Fleiss' kappa, got {m}")
    float_table = table.astype(np.float64)
    sums = _tables.fleiss_contributions(float_table).sum(axis=0)[None, :]
    kappa, p_bar, p_e = _tables.fleiss_from_sums(sums, m)
    value = float(kappa[0])
    reason = None
    if not np.isfinite(value):
        used = [categories[j] for j in np.flatnonzero(table.sum(axis=0))]
        reason = (
            f"every rating is {used[0]!r}: chance agreement P_e = 1, so kappa is undefined"
            if len(used) == 1
            else "chance agreement P_e = 1, so kappa is undefined"
        )
    proportions = tuple((table.sum(axis=0) / table.sum()).tolist())
    float_table.setflags(write=False)
    return FleissKappaResult(
        value,
        int(table.shape[0]),
        m,
        float(p_bar[0]),
        float(p_e[0]),
        categories,
        proportions,
        reason,
        float_table,
    )


def _alpha_domain(
    data: np.ndarray, level: str, value_domain: Iterable[Hashable] | None
) -> tuple[IntArray, tuple[Hashable, ...], np.ndarray]:
    (codes,), categories = encode([("data", data.ravel())], value_domain)
    numeric = all(
        isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in categories
    )
    if level in ("interval", "ratio"):
        if not numeric:
            raise ValueError(f"level={level!r} needs numeric values; got {categories[:5]!r}")
        numeric_domain = np.asarray(categories, dtype=np.float64)
        if value_domain is not None and np.any(np.diff(numeric_domain) <= 0):
            raise ValueError("value_domain must be in increasing order for interval/ratio data")
        if level == "ratio" and (numeric_domain < 0).any():
            raise ValueError("level='ratio' needs non-negative values")
    else:
        if level == "ordinal" and value_domain is None and not numeric:
            raise ValueError(
                "ordinal data with non-numeric labels needs value_domain= giving their order"
            )
        numeric_domain = np.arange(len(categories), dtype=np.float64)
    return codes.reshape(data.shape), categories, numeric_domain


def _counts_domain(
    value_counts: npt.ArrayLike, level: str, value_domain: Iterable[Hashable] | None
) -> tuple[np.ndarray, tuple[Hashable, ...], np.ndarray]:
    """A units x values count table, checked, with its values and their numbers."""
    counts = np.array(value_counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] == 0:
        raise ValueError(f"value_counts must be units x values, got shape {counts.shape}")
    if not np.all(np.isfinite(counts)) or (counts < 0).any() or np.any(counts != np.round(counts)):
        raise ValueError("value_counts must hold whole numbers >= 0")
    k = counts.shape[1]
    categories = tuple(range(k)) if value_domain is None else check_labels(value_domain)
    if len(categories) != k:
        raise ValueError(f"value_domain has {len(categories)} values for {k} columns")
    numeric_domain = np.arange(k, dtype=np.float64)
    if level in ("interval", "ratio"):
        if not all(isinstance(v, int | float | np.number) and not isinstance(v, bool)
                   for v in categories):
            raise ValueError(f"level={level!r} needs numeric values; got {categories[:5]!r}")
        numeric_domain = np.asarray(categories, dtype=np.float64)
        if np.any(np.diff(numeric_domain) <= 0):
            raise ValueError("value_domain must be in increasing order for interval/ratio data")
        if level == "ratio" and (numeric_domain < 0).any():
            raise ValueError("level='ratio' needs non-negative values")
    return counts, categories, numeric_domain


def krippendorff_alpha(
    data: Sequence[Sequence[Any]] | npt.ArrayLike | None = None,
    *,
    value_counts: npt.ArrayLike | None = None,
    level: Level = "nominal",
    value_domain: Iterable[Hashable] | None = None,
) -> AlphaResult:
    """Krippendorff's alpha (Krippendorff 2011) for any number of raters, with missing values.

    alpha = 1 - D_o / D_e (observed over expected disagreement, from the
    coincidence matrix). ``data`` is raters x units, None/NaN = missing; units
    with fewer than two values are not pairable and are dropped (``n`` counts
    the pairable units). ``value_domain`` fixes the values and, for ordinal
    labels that are not numbers, their order. The value is computed by the
    ``krippendorff`` package.

    ``value_counts`` (instead of ``data``) is the units x values table of how many
    raters gave each value to each unit, in ``value_domain``'s order (default: the
    values 0..K-1): all alpha depends on, since the coincidence matrix is built from
    it. A crowd of 20,000 raters over 5,000 units is a 5,000 x K table this way,
    not a 100-million-cell raters x units matrix that is almost all missing.
    """
    check_choice(level, "level", LEVELS)
    if (data is None) == (value_counts is None):
        raise ValueError("give data (raters x units) or value_counts (units x values), not both")
    if value_counts is not None:
        counts, categories, numeric_domain = _counts_domain(value_counts, level, value_domain)
        return _alpha_of_counts(counts, categories, numeric_domain, level)
    matrix = _as_matrix(data, "data", "raters")
    codes, categories, numeric_domain = _alpha_domain(matrix, level, value_domain)
    # units x values table (transpose: rows of `data` are raters)
    value_counts = _count_table(codes, len(categories), by="column").astype(np.float64)
    return _alpha_of_counts(value_counts, categories, numeric_domain, level)


def _alpha_of_counts(
    value_counts: np.ndarray, categories: tuple[Hashable, ...], numeric_domain: np.ndarray,
    level: Level,
) -> AlphaResult:
    """Alpha from the units x values table, by the ``krippendorff`` package."""
    used = value_counts.sum(axis=1) >= 2
    n_units = int(used.sum())
    pairable = value_counts[used]
    n_values = int(pairable.sum())
    nan = float("nan")
    reason = None
    value = d_o = d_e = nan
    if n_units == 0:
        reason = "no unit has two or more values, so nothing is pairable"
    elif np.count_nonzero(pairable.sum(axis=0)) < 2:
        only = categories[int(np.flatnonzero(pairable.sum(axis=0))[0])]
        reason = f"every pairable value is {only!r}: expected disagreement is 0, alpha is undefined"
    else:
        value = float(
            krippendorff.alpha(
                value_counts=pairable,
                value_domain=numeric_domain,
                level_of_measurement=level,
            )
        )
        # D_o and D_e from the summed coincidences: o = sum_u (n_u n_u' - diag n_u) / (m_u - 1)
        scaled = pairable / (pairable.sum(axis=1) - 1.0)[:, None]
        coincidences = scaled.T @ pairable - np.diag(scaled.sum(axis=0))
        _, d_o_arr, d_e_arr = _tables.alpha_from_sums(
            coincidences.reshape(1, -1), level, numeric_domain
        )
        d_o, d_e = float(d_o_arr[0]), float(d_e_arr[0])
    value_counts.setflags(write=False)
    return AlphaResult(
        value,
        n_units,
        n_values,
        level,
        categories,
        d_o,
        d_e,
        reason,
        value_counts,
        numeric_domain,
        used,
    )
