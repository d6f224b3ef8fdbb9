"""The asymptotic standard error of Kendall's tau-b that holds with ties.

Short rating scales tie most pairs, and Fisher's z with variance 0.437/(n - 4)
(derived for continuous bivariate-normal data) then covers about 87% at a
nominal 95% on a 5-point scale. The delta-method variance of Brown & Benedetti
(1977), as given for the ASE of tau-b in Agresti (2010, *Analysis of Ordinal
Categorical Data*, sec. 7.1) and SAS PROC FREQ, is computed from the
contingency table of the two variables and is right with any pattern of ties:

    tau_b = (P - Q) / w,  w = sqrt(w_r w_c),  w_r = n^2 - sum n_i.^2,  w_c = n^2 - sum n_.j^2
    psi_ij = 2 w d_ij + tau_b v_ij,  d_ij = A_ij - D_ij,  v_ij = n_i. w_c + n_.j w_r
    ASE^2 = sum_ij n_ij (psi_ij - psi_bar)^2 / w^4

with A_ij (D_ij) the number of observations concordant (discordant) with one in
cell (i, j). ``psi`` is each observation's influence on tau_b, so with clusters
the influences are summed per cluster (a cluster-robust variance, with the
G/(G - 1) small-sample factor, as CR1 in regression).
"""

from __future__ import annotations

import numpy as np

from judgekit.stats._validate import FloatArray, IntArray

#: Largest contingency table (distinct x times distinct y) the ASE is computed on.
MAX_TABLE_CELLS = 4_000_000


def table_fits(x: FloatArray, y: FloatArray) -> bool:
    """Whether the x-by-y table is small enough for the ASE (``MAX_TABLE_CELLS``)."""
    return np.unique(x).size * np.unique(y).size <= MAX_TABLE_CELLS


def influence(x: FloatArray, y: FloatArray) -> tuple[float, FloatArray, float] | None:
    """(tau_b, each observation's influence psi, w), or None when the table is too large.

    ``sum((psi - mean(psi))**2) / w**4`` is the squared ASE of tau_b.
    """
    xs, row = np.unique(x, return_inverse=True)
    ys, col = np.unique(y, return_inverse=True)
    n_rows, n_cols = xs.size, ys.size
    if n_rows * n_cols > MAX_TABLE_CELLS:
        return None
    row, col = row.reshape(-1), col.reshape(-1)
    table = np.bincount(row * n_cols + col, minlength=n_rows * n_cols).reshape(n_rows, n_cols)
    tau, d, rows, cols, w = _table_terms(table.astype(np.float64))
    w_r = float(x.size) ** 2 - float(np.sum(rows**2))
    w_c = float(x.size) ** 2 - float(np.sum(cols**2))
    psi_cells = 2.0 * w * d + tau * (rows[:, None] * w_c + cols[None, :] * w_r)
    return tau, psi_cells[row, col], w


def _table_terms(table: FloatArray) -> tuple[float, FloatArray, FloatArray, FloatArray, float]:
    """(tau_b, d, row totals, column totals, w) of a table of counts or weights.

    d[i, j] is the weight concordant minus discordant with cell (i, j).
    """
    n_rows, n_cols = table.shape
    n = float(table.sum())
    # s[a, b] = weight in rows < a and columns < b
    s = np.zeros((n_rows + 1, n_cols + 1))
    s[1:, 1:] = table.cumsum(axis=0).cumsum(axis=1)
    i = np.arange(n_rows)[:, None]
    j = np.arange(n_cols)[None, :]
    upper_left = s[i, j]
    lower_right = n - s[i + 1, n_cols] - s[n_rows, j + 1] + s[i + 1, j + 1]
    upper_right = s[i, n_cols] - s[i, j + 1]
    lower_left = s[n_rows, j] - s[i + 1, j]
    d = upper_left + lower_right - upper_right - lower_left
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    w = float(np.sqrt((n * n - float(np.sum(rows**2))) * (n * n - float(np.sum(cols**2)))))
    return float(np.sum(table * d) / w), d, rows, cols, w


def tau_b_of_table(table: FloatArray) -> float:
    """Kendall's tau-b of a table of counts or (population) weights, rows and columns ordered."""
    return _table_terms(np.asarray(table, dtype=np.float64))[0]


def standard_error(psi: FloatArray, w: float, codes: IntArray | None) -> tuple[float, int]:
    """(ASE of tau_b, number of independent units): items, or clusters when given."""
    centred = psi - psi.mean()
    if codes is None:
        return float(np.sqrt(np.sum(centred**2)) / w**2), int(psi.size)
    per_cluster = np.bincount(codes, weights=centred)
    g = int(per_cluster.size)
    if g < 2:
        return float("nan"), g
    return float(np.sqrt(g / (g - 1) * np.sum(per_cluster**2)) / w**2), g


__all__ = ["MAX_TABLE_CELLS", "influence", "standard_error", "table_fits", "tau_b_of_table"]
