"""Batched numerics of prediction-powered inference and the Rogan-Gladen correction.

Every estimate here is a smooth function of a few means, so its variance is the
sum of squared per-unit *influence contributions* (the delta method). Writing each
estimator as "contributions per unit" gives one rule for every design:

- independent units: variance = sum of squared contributions;
- clustered units (items sharing a prompt): contributions are summed per cluster
  first and the cluster sums squared, times G/(G-1) (the usual small-sample factor
  of cluster-robust variances); a cluster holding labeled and unlabeled items
  joins both, so their covariance is counted;
- labels drawn with unequal inclusion probabilities: each labeled unit carries
  its weight 1/pi normalised to mean 1 (a Hajek ratio estimator, linearised).

All functions take arrays with a leading batch axis (one row per replication), so
the coverage benchmark runs thousands of replications as a few array operations
through exactly the code the public functions in :mod:`judgekit.stats.ppi` use.
Without weights and clusters the numbers are those of ``ppi_py`` (PPI++, arXiv
2311.01453): population standard deviations (ddof 0) and its power-tuning rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgekit.stats._validate import FloatArray, IntArray


@dataclass(frozen=True)
class Design:
    """How the units were drawn: weights of the labeled units and cluster codes of both sets.

    ``codes``/``codes_unlabeled`` are dense cluster ids (0..n_groups-1) shared by
    the two sets; None means every unit is its own cluster (independent units).
    ``weights`` is None for a uniform sample. ``strata`` (dense codes per labeled
    unit, 0..n_strata-1) says the labels were drawn stratum by stratum: the labeled
    contributions are then centred within their stratum, with the factor
    n_h/(n_h-1) (the stratified variance; ignored with clusters).
    """

    weights: FloatArray | None = None
    codes: IntArray | None = None
    codes_unlabeled: IntArray | None = None
    n_groups: int = 0
    strata: IntArray | None = None
    n_strata: int = 0

    @property
    def clustered(self) -> bool:
        return self.codes is not None


def _group_sum(values: FloatArray, codes: IntArray, n_groups: int) -> FloatArray:
    """Sum of ``values`` (R, m) per group code (R, m) or (m,) -> (R, n_groups)."""
    rows = values.shape[0]
    codes = np.broadcast_to(codes, values.shape)
    flat = (np.arange(rows)[:, None] * n_groups + codes).ravel()
    sums = np.bincount(flat, weights=values.ravel(), minlength=rows * n_groups)
    return sums.reshape(rows, n_groups).astype(np.float64)


def labeled_clusters(design: Design, rows: int) -> FloatArray:
    """Clusters holding at least one labeled unit, per row."""
    assert design.codes is not None
    codes = np.broadcast_to(design.codes, (rows, design.codes.shape[-1]))
    count = _group_sum(np.ones(codes.shape), codes, design.n_groups)
    return (count > 0).sum(axis=-1).astype(np.float64)


def _cluster_factor(design: Design, rows: int) -> FloatArray:
    """G/(G-1) per row, G = clusters with labeled units (NaN for one cluster).

    The labeled clusters set the precision of the correction term, which is most
    of the variance, so their number (not that of all clusters) sets the factor.
    """
    g = labeled_clusters(design, rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(g > 1, g / (g - 1.0), np.nan)


def _within_strata(labeled: FloatArray, design: Design) -> FloatArray:
    """Contributions centred within their stratum and scaled by sqrt(n_h / (n_h - 1))."""
    assert design.strata is not None
    k, rows, n = labeled.shape
    codes = np.broadcast_to(design.strata, (rows, n))
    counts = _group_sum(np.ones((rows, n)), codes, design.n_strata)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(counts > 1, np.sqrt(counts / (counts - 1.0)), 1.0)
    out = np.empty_like(labeled)
    for i in range(k):
        sums = _group_sum(labeled[i], codes, design.n_strata)
        means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        centred = labeled[i] - np.take_along_axis(means, codes, axis=1)
        out[i] = centred * np.take_along_axis(scale, codes, axis=1)
    return out


def normalised_weights(weights: FloatArray | None, shape: tuple[int, ...]) -> FloatArray:
    """Weights rescaled to mean 1 along the last axis (ones for a uniform sample)."""
    if weights is None:
        return np.ones(shape)
    w = np.broadcast_to(weights, shape).astype(np.float64)
    return w / w.mean(axis=-1, keepdims=True)


def _sum_squares(labeled: FloatArray, unlabeled: FloatArray | None, design: Design) -> FloatArray:
    """Cross products of contributions summed per cluster -> (k, k, R).

    ``labeled`` is a (k, R, n) stack; ``unlabeled`` a (k, R or 1, N) stack (one row
    when every replication shares the judged population).
    """
    k = labeled.shape[0]
    if not design.clustered:
        if design.strata is not None:
            labeled = _within_strata(labeled, design)
        out = np.einsum("irm,jrm->ijr", labeled, labeled)
        if unlabeled is not None:
            out = out + np.einsum("irm,jrm->ijr", unlabeled, unlabeled)
        return out
    assert design.codes is not None
    sums = np.stack([_group_sum(labeled[i], design.codes, design.n_groups) for i in range(k)])
    if unlabeled is not None:
        assert design.codes_unlabeled is not None
        sums = sums + np.stack(
            [_group_sum(unlabeled[i], design.codes_unlabeled, design.n_groups) for i in range(k)]
        )
    factor = _cluster_factor(design, labeled.shape[1])
    return factor * np.einsum("irg,jrg->ijr", sums, sums)


def mean_arrays(y: FloatArray, design: Design) -> tuple[FloatArray, FloatArray]:
    """Labels-only mean per row and its variance (weights and clusters as in the design)."""
    n = y.shape[-1]
    w = normalised_weights(design.weights, y.shape)
    y_bar = (w * y).mean(axis=-1)
    b = w * (y - y_bar[:, None]) / n
    return y_bar, _sum_squares(b[None], None, design)[0, 0]


def _tuned_lambda(
    y: FloatArray, f: FloatArray, fu: FloatArray, w: FloatArray, weighted: bool
) -> FloatArray:
    """lam = Cov(y, f) / ((1 + n/N) Var(f)), per row, clipped to [0, 1].

    Unweighted this is ``ppi_py``'s rule: Cov over the labeled units (ddof 0), Var
    over both sets (ddof 1). With weights the covariance is the weighted one and
    Var is taken over the judged population alone (the labeled units are not a
    representative sample of it).
    """
    n, big_n = y.shape[-1], fu.shape[-1]
    y_bar = (w * y).mean(axis=-1, keepdims=True)
    f_bar = (w * f).mean(axis=-1, keepdims=True)
    cov = (w * (y - y_bar) * (f - f_bar)).mean(axis=-1)
    if weighted:
        var = fu.var(axis=-1, ddof=1) if big_n > 1 else np.zeros(fu.shape[0])
    else:
        # Var of f over both sets (ddof 1) from sums, without concatenating them
        total = n + big_n
        s1 = f.sum(axis=-1) + fu.sum(axis=-1)
        s2 = (f * f).sum(axis=-1) + (fu * fu).sum(axis=-1)
        var = (s2 - s1 * s1 / total) / (total - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = cov / ((1.0 + n / big_n) * var)
    return np.clip(np.where(np.isfinite(raw), raw, 0.0), 0.0, 1.0)


@dataclass(frozen=True)
class PPIArrays:
    """Estimates per replication: PPI++ and the labels-only estimate from the same labels."""

    statistic: FloatArray
    variance: FloatArray
    lam: FloatArray
    classical: FloatArray
    classical_variance: FloatArray


def ppi_arrays(
    y: FloatArray,
    f: FloatArray,
    f_unlabeled: FloatArray,
    design: Design,
    lam: float | None = None,
) -> PPIArrays:
    """PPI++ mean per row: ``y``, ``f`` are (R, n); ``f_unlabeled`` is (R, N) or (N,).

    theta = lam * mean(f_unlabeled) + mean_w(y - lam * f). With ``lam`` None it is
    power-tuned by the PPI++ rule for a mean (see :func:`_tuned_lambda`), clipped
    to [0, 1]: 0 is the labels-only estimate, 1 plain PPI. Clusters change the
    variance, not lambda: tuning on a few noisy cluster sums would make a useless
    judge look useful.
    """
    rows, n = y.shape
    fu = np.atleast_2d(f_unlabeled)  # (R, N), or (1, N) shared by every row
    big_n = fu.shape[-1]
    w = normalised_weights(design.weights, y.shape)
    y_bar = (w * y).mean(axis=-1)
    f_bar = (w * f).mean(axis=-1)
    fu_bar = fu.mean(axis=-1)
    # contributions: labeled unit i adds (w_i (y_i - y_bar) - lam w_i (f_i - f_bar)) / n,
    # unlabeled unit j adds lam (f_j - fu_bar) / N
    b_lab = w * (y - y_bar[:, None]) / n
    a_lab = -w * (f - f_bar[:, None]) / n
    a_unl = (fu - fu_bar[:, None]) / big_n
    labeled = np.stack([a_lab, b_lab])
    unlabeled = np.stack([a_unl, np.zeros_like(a_unl)])
    ss = _sum_squares(labeled, unlabeled, design)
    saa, sab, sbb = ss[0, 0], ss[0, 1], ss[1, 1]
    if lam is not None:
        lam_arr = np.full(rows, float(lam))
    else:
        lam_arr = _tuned_lambda(y, f, fu, w, design.weights is not None)
    statistic = lam_arr * fu_bar + y_bar - lam_arr * f_bar
    variance = np.maximum(lam_arr**2 * saa + 2.0 * lam_arr * sab + sbb, 0.0)
    _, classical_variance = mean_arrays(y, design)
    return PPIArrays(statistic, variance, lam_arr, y_bar, classical_variance)


@dataclass(frozen=True)
class RoganGladenArrays:
    """Corrected rate per replication, with the pieces it is made of."""

    statistic: FloatArray
    variance: FloatArray
    apparent: FloatArray
    sensitivity: FloatArray
    specificity: FloatArray
    n_positive: FloatArray
    n_negative: FloatArray


def rogan_gladen_arrays(
    y: FloatArray, f: FloatArray, f_unlabeled: FloatArray, design: Design
) -> RoganGladenArrays:
    """theta = (p + Sp - 1) / (Se + Sp - 1) per row, 0/1 arrays as in :func:`ppi_arrays`.

    p is the judge's pass rate on ``f_unlabeled``; sensitivity Se = P(judge pass |
    human pass) and specificity Sp = P(judge fail | human fail) come from the
    labeled units (weighted when the design has weights). The variance is the
    delta method over all three, so it carries the uncertainty of Se and Sp:
    (Var p + theta^2 Var Se + (1 - theta)^2 Var Sp) / (Se + Sp - 1)^2 for independent
    units. Rows where a piece is undefined come back NaN.
    """
    n = y.shape[-1]
    fu = np.atleast_2d(f_unlabeled)
    big_n = fu.shape[-1]
    w = normalised_weights(design.weights, y.shape)
    p = fu.mean(axis=-1)
    pos, neg = (w * y).sum(axis=-1), (w * (1.0 - y)).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = (w * y * f).sum(axis=-1) / pos
        sp = (w * (1.0 - y) * (1.0 - f)).sum(axis=-1) / neg
        youden = se + sp - 1.0
        theta = (p + sp - 1.0) / youden
        # contributions of each unit to p, Se and Sp, combined by the chain rule
        c_p = (fu - p[:, None]) / big_n
        c_se = w * y * (f - se[:, None]) / pos[:, None]
        c_sp = w * (1.0 - y) * ((1.0 - f) - sp[:, None]) / neg[:, None]
        # every contribution carries 1 / youden: applied once to the sum of squares
        lab = -theta[:, None] * c_se + (1.0 - theta[:, None]) * c_sp
    lab = np.where(np.isfinite(lab), lab, 0.0)
    unl = np.where(np.isfinite(c_p), c_p, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = _sum_squares(lab[None], unl[None], design)[0, 0] / youden**2
    bad = ~np.isfinite(theta) | ~(youden > 0)
    variance = np.where(bad, np.nan, variance)
    n_pos = y.sum(axis=-1)
    return RoganGladenArrays(np.where(bad, np.nan, theta), variance, p, se, sp, n_pos, n - n_pos)


#: Weight of each pseudo-disagreement in :func:`discordance_floor` (Agresti & Min 2005 add
#: 0.5 to each cell of a paired 2x2 table for the same reason).
PSEUDO_DISAGREEMENT = 0.5


def discordance_floor(y: FloatArray, f: FloatArray, f_unlabeled: FloatArray,
                      lam: FloatArray) -> FloatArray:
    """A floor on PPI++'s variance for 0/1 labels and verdicts, per row.

    When the judge agrees with every label in the sample (a good judge, 50 labels,
    a pass rate near 1) the residuals Y - lam f are constant and the variance of
    their mean is estimated as 0, though disagreements occur in the population: the
    interval then misses from below (84% coverage at n = 50, a judge copying people
    95% of the time). The floor is the same variance with one half disagreement each
    way added to the labeled residuals (Y=1, f=0 gives 1; Y=0, f=1 gives -lam),
    without weights or clusters.
    """
    n = y.shape[-1]
    lam_col = lam[:, None]
    r = y - lam_col * f
    pseudo = np.concatenate([np.ones_like(lam_col), -lam_col], axis=1)
    values = np.concatenate([r, pseudo], axis=1)
    weights = np.concatenate([np.ones_like(r), np.full_like(pseudo, PSEUDO_DISAGREEMENT)],
                             axis=1)
    mean = (weights * values).sum(axis=1) / weights.sum(axis=1)
    spread = (weights * (values - mean[:, None]) ** 2).sum(axis=1) / weights.sum(axis=1)
    fu = np.atleast_2d(f_unlabeled)
    return np.asarray(lam**2 * fu.var(axis=-1) / fu.shape[-1] + spread / n, dtype=np.float64)


def youden_lower_bound(sensitivity: FloatArray, specificity: FloatArray, n_positive: FloatArray,
                       n_negative: FloatArray, z: float) -> FloatArray:
    """Lower bound of Se + Sp - 1 (Youden's J), per row: Newcombe's hybrid score interval
    (MOVER) of Se - (1 - Sp) from the Wilson intervals of Se on the human passes and of
    1 - Sp on the human fails. Rogan-Gladen divides by J: a bound at or below 0 means the
    judge is not shown to be better than chance, and the corrected rate can be anything."""
    se_low, _ = wilson_bounds_array(sensitivity, n_positive, z)
    _, fpr_high = wilson_bounds_array(1.0 - specificity, n_negative, z)
    youden = sensitivity + specificity - 1.0
    return np.asarray(youden - np.sqrt((sensitivity - se_low) ** 2
                                       + (fpr_high - (1.0 - specificity)) ** 2),
                      dtype=np.float64)


def ppi_wilson_n(classical: FloatArray, variance: FloatArray,
                 fallback: FloatArray | float) -> FloatArray:
    """PPI++'s effective sample size for a 0/1 target, the n of its Wilson interval.

    ybar (1 - ybar) / Var(PPI++): the labels the labels-only estimate would need for
    PPI++'s variance (``effective_n``). A Wald interval at a pass rate of 0.9-0.99
    lies above the truth far more often than below (the variance shrinks with the
    estimate near 1), as labels-only Wald does; Wilson's score interval at this n
    keeps both tails. Labels all alike (ybar 0 or 1) or a zero variance: ``fallback``
    (the labeled items' own effective size).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = classical * (1.0 - classical) / variance
    good = np.isfinite(n_eff) & (n_eff > 0)
    return np.asarray(np.where(good, n_eff, fallback), dtype=np.float64)


def wilson_bounds_array(p: FloatArray, n: FloatArray, z: float) -> tuple[FloatArray, FloatArray]:
    """Wilson score bounds for proportions ``p`` out of (effective) sizes ``n``, vectorised."""
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = 1.0 + z * z / n
        center = p + z * z / (2.0 * n)
        radius = z * np.sqrt(np.maximum(p * (1.0 - p) / n + z * z / (4.0 * n * n), 0.0))
        low = (center - radius) / denominator
        high = (center + radius) / denominator
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


__all__ = [
    "Design",
    "PPIArrays",
    "RoganGladenArrays",
    "difference_variance",
    "discordance_floor",
    "labeled_clusters",
    "mean_arrays",
    "normalised_weights",
    "ppi_arrays",
    "ppi_wilson_n",
    "rogan_gladen_arrays",
    "wilson_bounds_array",
    "youden_lower_bound",
]


def difference_variance(
    first: tuple[FloatArray, FloatArray, FloatArray, float],
    second: tuple[FloatArray, FloatArray, FloatArray, float],
    design: Design,
    n_first: int,
    n_unlabeled_first: int,
) -> float:
    """Cluster-robust variance of theta_A - theta_B from both sides' contributions.

    ``design`` holds the codes of A's then B's units (labeled, then unlabeled), so
    one prompt's items on both sides fall in one cluster and their covariance
    enters with the minus sign of the difference.
    """

    def contributions(
        y: FloatArray, f: FloatArray, fu: FloatArray, lam: float
    ) -> tuple[FloatArray, FloatArray]:
        n, big_n = y.size, fu.size
        lab = ((y - y.mean()) - lam * (f - f.mean())) / n
        unl = lam * (fu - fu.mean()) / big_n
        return lab, unl

    lab_a, unl_a = contributions(*first)
    lab_b, unl_b = contributions(*second)
    labeled = np.concatenate([lab_a, -lab_b])[None, None]
    unlabeled = np.concatenate([unl_a, -unl_b])[None, None]
    assert design.codes is not None and design.codes_unlabeled is not None
    assert design.codes.size == labeled.shape[-1] and n_first == lab_a.size
    assert design.codes_unlabeled.size == unlabeled.shape[-1] and n_unlabeled_first == unl_a.size
    return float(_sum_squares(labeled, unlabeled, design)[0, 0, 0])
