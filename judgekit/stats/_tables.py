"""Agreement statistics as vectorised functions of summary tables.

Each function takes a stack of tables (one per bootstrap replicate, or a stack
of one for the point estimate) and returns one value per table, with NaN where
the statistic is undefined. Keeping the point estimate and the bootstrap on the
same code path means the interval is always around the number reported.
"""

from __future__ import annotations

import numpy as np

from judgekit.stats._validate import FloatArray

#: |1 - p_e| below this counts as p_e = 1 (chance agreement is total).
EPS = 1e-12


def agreement_weights(n_categories: int, weights: str | None) -> FloatArray:
    """Agreement weights w_ij in [0, 1] with 1 on the diagonal.

    ``None`` = identity (nominal), ``"linear"`` = 1 - |i-j|/(K-1),
    ``"quadratic"`` = 1 - (i-j)**2/(K-1)**2 (Cohen 1968; Fleiss & Cohen 1973).
    """
    if weights is None or n_categories < 2:
        return np.eye(n_categories)
    i, j = np.indices((n_categories, n_categories))
    distance = np.abs(i - j) / (n_categories - 1)
    return 1.0 - (distance if weights == "linear" else distance**2)


def _agreement_ratio(p_observed: FloatArray, p_expected: FloatArray) -> FloatArray:
    denominator = 1.0 - p_expected
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (p_observed - p_expected) / denominator
    return np.where(np.abs(denominator) <= EPS, np.nan, value)


def cohen_from_tables(
    tables: FloatArray, w: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(kappa, p_o, p_e) for tables of shape (B, K, K): rows = rater a, columns = rater b."""
    n = tables.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = tables / n[:, None, None]
    rows = p.sum(axis=2)
    cols = p.sum(axis=1)
    p_o = np.einsum("bij,ij->b", p, w)
    p_e = np.einsum("bi,ij,bj->b", rows, w, cols)
    return _agreement_ratio(p_o, p_e), p_o, p_e


def gwet_from_tables(tables: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(AC1, p_o, p_e) for tables of shape (B, K, K) (Gwet 2008, eq. 13-14)."""
    n_categories = tables.shape[1]
    n = tables.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = tables / n[:, None, None]
    p_o = np.trace(p, axis1=1, axis2=2)
    pi = (p.sum(axis=2) + p.sum(axis=1)) / 2.0
    if n_categories < 2:
        return np.full(n.shape, np.nan), p_o, np.full(n.shape, np.nan)
    p_e = np.sum(pi * (1.0 - pi), axis=1) / (n_categories - 1)
    return _agreement_ratio(p_o, p_e), p_o, p_e


def cohen_analytic_se(table: FloatArray, w: FloatArray) -> float:
    """Large-sample SE of (weighted) kappa, Fleiss, Cohen & Everitt (1969), eq. 13."""
    n = table.sum()
    p = table / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_o = float(np.sum(w * p))
    p_e = float(rows @ w @ cols)
    if abs(1.0 - p_e) <= EPS:
        return float("nan")
    kappa = (p_o - p_e) / (1.0 - p_e)
    w_row = w @ cols  # mean weight of row category i against rater b's margin
    w_col = rows @ w  # mean weight of column category j against rater a's margin
    term = p * (w - (w_row[:, None] + w_col[None, :]) * (1.0 - kappa)) ** 2
    variance = (term.sum() - (kappa - p_e * (1.0 - kappa)) ** 2) / (n * (1.0 - p_e) ** 2)
    return float(np.sqrt(max(variance, 0.0)))


def fleiss_contributions(counts: FloatArray) -> FloatArray:
    """Per-item rows [n_i1..n_iK, sum_j n_ij (n_ij - 1)] whose sums determine Fleiss' kappa."""
    pairs = np.sum(counts * (counts - 1.0), axis=1)
    return np.column_stack([counts, pairs])


def fleiss_from_sums(sums: FloatArray, n_raters: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(kappa, P-bar, P-bar_e) from summed Fleiss contributions, shape (B, K+1) (Fleiss 1971)."""
    category_totals = sums[:, :-1]
    total_ratings = category_totals.sum(axis=1)
    n_items = total_ratings / n_raters
    with np.errstate(divide="ignore", invalid="ignore"):
        p_j = category_totals / total_ratings[:, None]
        p_bar = sums[:, -1] / (n_items * n_raters * (n_raters - 1))
    p_e = np.sum(p_j**2, axis=1)
    return _agreement_ratio(p_bar, p_e), p_bar, p_e


def coincidence_contributions(value_counts: FloatArray) -> FloatArray:
    """Per-unit coincidence matrices (Krippendorff 2011), flattened: shape (U, V*V).

    Units with fewer than two values are not pairable and contribute zeros.
    """
    m = value_counts.sum(axis=1)
    outer = value_counts[:, :, None] * value_counts[:, None, :]
    idx = np.arange(value_counts.shape[1])
    outer[:, idx, idx] -= value_counts
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = outer / (m - 1.0)[:, None, None]
    scaled[m < 2] = 0.0
    return scaled.reshape(value_counts.shape[0], -1)


def alpha_distances(level: str, domain: FloatArray, n_v: FloatArray) -> FloatArray:
    """Squared distances delta^2 between values, shape (B, V, V) (Krippendorff 2011, sec. 4).

    ``n_v`` (shape (B, V)) are the pairable value totals; only the ordinal metric
    uses them.
    """
    n_values = domain.size
    if level == "nominal":
        d = 1.0 - np.eye(n_values)
        return np.broadcast_to(d, (n_v.shape[0], n_values, n_values))
    if level == "ordinal":
        cumulative = np.concatenate([np.zeros((n_v.shape[0], 1)), np.cumsum(n_v, axis=1)], axis=1)
        i, j = np.indices((n_values, n_values))
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        between = cumulative[:, hi + 1] - cumulative[:, lo]
        return (between - (n_v[:, lo] + n_v[:, hi]) / 2.0) ** 2
    a, b = domain[:, None], domain[None, :]
    if level == "interval":
        d = (a - b) ** 2
    else:  # ratio
        total = a + b
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.where(total != 0, ((a - b) / total) ** 2, 0.0)
    return np.broadcast_to(d, (n_v.shape[0], n_values, n_values))


def alpha_from_sums(
    sums: FloatArray, level: str, domain: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(alpha, D_o, D_e) from summed coincidence matrices, shape (B, V*V)."""
    n_values = domain.size
    o = sums.reshape(-1, n_values, n_values)
    n_v = o.sum(axis=1)
    n = n_v.sum(axis=1)
    d = alpha_distances(level, domain, n_v)
    idx = np.arange(n_values)
    expected = n_v[:, :, None] * n_v[:, None, :]
    expected[:, idx, idx] -= n_v
    with np.errstate(divide="ignore", invalid="ignore"):
        d_o = np.sum(o * d, axis=(1, 2)) / n
        d_e = np.sum(expected * d, axis=(1, 2)) / (n * (n - 1.0))
        alpha = 1.0 - d_o / d_e
    one_value = np.count_nonzero(n_v > 0, axis=1) < 2
    alpha = np.where(one_value | (n < 2) | ~(d_e > 0), np.nan, alpha)
    return alpha, d_o, d_e
