"""Confidence sets for rank agreement between systems: projection of simultaneous sign intervals.

The population target of a system-level rank figure is its value at the systems' population
mean scores (the mean over infinitely many documents of the kind sampled, for these fixed
systems), judge against people. That value depends only on the *signs* of the pairwise
differences of population means, so it is a discontinuous function of the means: where two
systems are close, a small change of the means flips a pair. The estimate (the figure on the
sample means) is then biased towards 0 (noise swaps close systems), its bootstrap resamples are
biased further, and no bootstrap interval of the figure covers reliably near ties (the
bootstrap is inconsistent for such non-differentiable functions: Andrews 2000, *Econometrica*
68:399-405; Fang & Santos 2019, *Rev. Econ. Stud.* 86:377-412). benchmarks/levels_coverage.py
measured the basic bootstrap interval of Kendall's tau at 0.38-1.00, 0.82 on average over 72
designs (the percentile interval did worse, 0.45 where judge and people order 12 systems alike).

The interval here is the one used for inference on ranks (Mogstad, Romano, Shaikh & Wilhelm
2024, *Rev. Econ. Stud.* 91:476-518): simultaneous confidence intervals for every pairwise
difference of means on both sides (a max-|t| bootstrap over documents, with the step-down
refinement of Romano & Wolf 2005, *Econometrica* 73:1237-1282), then the range of the figure
over every sign pattern they allow. A pair whose interval excludes 0 keeps its observed sign;
any other pair may go either way. When every interval holds, which happens at least at the
stated level, the population figure lies in the range, so the coverage holds whatever the
gaps between systems; the price is width where many pairs are unresolved. The range ignores
transitivity (a conservative relaxation), and population means are taken as distinct (a tie
only moves a pair's contribution between its two extremes). Pearson, which depends on the
means themselves, gets the same treatment with a simultaneous ball for the centred means
(:func:`pearson_bounds`). docs/statistics.md gives the coverage measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgekit.stats._interval import (
    COLLAPSED_REASON,
    ConfidenceInterval,
    refused,
    too_many_undefined,
)
from judgekit.stats._resample import (
    chunk_rows,
    cluster_pick_counts,
    few_clusters_factor,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Rows of (resamples x pairs) handled at once, bounding memory for many systems.
_MAX_CELLS = 4_000_000


@dataclass(frozen=True)
class PairSigns:
    """Sign of each pairwise difference of population means that the data settle.

    ``judge`` and ``human`` hold, for each pair (i, k) of the upper triangle (i < k), the sign
    of mean[i] - mean[k] on that side: +1 or -1 where the simultaneous interval excludes 0,
    0 where the pair is unresolved (either order is possible).
    """

    judge: IntArray
    human: IntArray
    critical: float  # the last step's max-|t| critical value (before the few-groups factor)
    n_undefined: int  # resamples dropped because a system had no item in them
    n_varying: int  # pairs (both sides) whose difference moves between resamples


def _pair_index(n_sys: int) -> tuple[IntArray, IntArray]:
    first, second = np.triu_indices(n_sys, k=1)
    return first.astype(np.int64), second.astype(np.int64)


def _pair_sd(means: FloatArray, first: IntArray, second: IntArray) -> FloatArray:
    """Bootstrap standard deviation of each pairwise difference (from the covariance)."""
    cov = np.cov(means, rowvar=False, ddof=1)
    cov = np.atleast_2d(cov)
    var = cov[first, first] + cov[second, second] - 2.0 * cov[first, second]
    return np.sqrt(np.maximum(var, 0.0))


def _max_t(
    deviations: list[FloatArray], scales: list[FloatArray], active: list[npt.NDArray[np.bool_]],
    pairs: tuple[IntArray, IntArray],
) -> FloatArray:
    """Per resample, the largest |difference deviation| / sd over the active pairs of both sides."""
    first, second = pairs
    n_rows = deviations[0].shape[0]
    out = np.zeros(n_rows)
    for dev, scale, act in zip(deviations, scales, active, strict=True):
        if not act.any():
            continue
        a, b, s = first[act], second[act], scale[act]
        step = max(1, _MAX_CELLS // max(int(a.size), 1))
        for start in range(0, n_rows, step):
            part = dev[start : start + step]
            t = np.abs(part[:, a] - part[:, b]) / s
            out[start : start + step] = np.maximum(out[start : start + step], t.max(axis=1))
    return out


def simultaneous_signs(
    judge_means: FloatArray,
    human_means: FloatArray,
    judge_replicates: FloatArray,
    human_replicates: FloatArray,
    n_groups: int,
    confidence_level: float,
) -> PairSigns:
    """The pairs whose order (on each side) the data settle at the simultaneous level.

    ``*_means`` are the sample means (S,), ``*_replicates`` their bootstrap resamples over
    groups (B, S); resamples with a NaN (a system without items) are dropped. A pair is
    settled when |difference| > c * sd * f, with sd the bootstrap standard deviation of the
    difference, c the quantile of the largest standardised bootstrap deviation over the
    pairs not yet settled (re-computed until no further pair is settled: step-down), and
    f :func:`few_clusters_factor` (the plug-in variance is too small by (G - 1)/G and the
    reference distribution rests on G groups). A pair whose difference is the same in every
    resample is settled when that difference is not 0.
    """
    first, second = _pair_index(judge_means.size)
    keep = np.isfinite(judge_replicates).all(axis=1) & np.isfinite(human_replicates).all(axis=1)
    n_undefined = int(keep.size - np.count_nonzero(keep))
    rep_j, rep_h = judge_replicates[keep], human_replicates[keep]
    diffs = [judge_means[first] - judge_means[second], human_means[first] - human_means[second]]
    diffs = [np.round(d, 9) for d in diffs]  # sums of thirds in another order are still ties
    if rep_j.shape[0] < 2:
        zeros = np.zeros(first.size, dtype=np.int64)
        return PairSigns(zeros, zeros.copy(), math.nan, n_undefined, 0)
    sds = [_pair_sd(rep_j, first, second), _pair_sd(rep_h, first, second)]
    factor = few_clusters_factor(n_groups, confidence_level)
    if not math.isfinite(factor):
        factor = 1.0
    scales = [np.where(sd > 1e-12, sd, 1.0) for sd in sds]
    deviations = [rep_j - judge_means[None, :], rep_h - human_means[None, :]]
    z = [np.abs(d) / (s * factor) for d, s in zip(diffs, scales, strict=True)]
    settled = [(sd <= 1e-12) & (d != 0) for sd, d in zip(sds, diffs, strict=True)]
    active = [(sd > 1e-12) for sd in sds]
    critical = math.nan
    while any(a.any() for a in active):
        worst = _max_t(deviations, scales, active, (first, second))
        critical = float(np.quantile(worst, confidence_level, method="higher"))
        newly = [a & (zz > critical) for a, zz in zip(active, z, strict=True)]
        if not any(n.any() for n in newly):
            break
        settled = [s | n for s, n in zip(settled, newly, strict=True)]
        active = [a & ~n for a, n in zip(active, newly, strict=True)]
    signs = [np.where(s, np.sign(d), 0).astype(np.int64) for s, d in zip(settled, diffs,
                                                                          strict=True)]
    n_varying = int(sum(np.count_nonzero(a) for a in (sds[0] > 1e-12, sds[1] > 1e-12)))
    return PairSigns(signs[0], signs[1], critical, n_undefined, n_varying)


def kendall_bounds(signs: PairSigns) -> tuple[float, float]:
    """Range of Kendall's tau over the sign patterns allowed (distinct population means)."""
    both = (signs.judge != 0) & (signs.human != 0)
    fixed = float(np.sum(signs.judge[both] * signs.human[both]))
    free = float(np.count_nonzero(~both))
    pairs = float(signs.judge.size)
    return (fixed - free) / pairs, (fixed + free) / pairs


def accuracy_bounds(signs: PairSigns) -> tuple[float, float]:
    """Range of the pairwise system accuracy over the sign patterns allowed."""
    both = (signs.judge != 0) & (signs.human != 0)
    agree = float(np.count_nonzero(both & (signs.judge == signs.human)))
    free = float(np.count_nonzero(~both))
    pairs = float(signs.judge.size)
    return agree / pairs, (agree + free) / pairs


def _rank_ranges(signs: IntArray, n_sys: int) -> tuple[FloatArray, FloatArray]:
    """Lowest and highest rank (1 = smallest mean) each system can take given settled pairs."""
    first, second = _pair_index(n_sys)
    over = np.zeros(n_sys)  # systems settled below this one
    under = np.zeros(n_sys)  # systems settled above this one
    np.add.at(over, first, signs > 0)
    np.add.at(over, second, signs < 0)
    np.add.at(under, first, signs < 0)
    np.add.at(under, second, signs > 0)
    return 1.0 + over, float(n_sys) - under


def spearman_bounds(signs: PairSigns, n_sys: int) -> tuple[float, float]:
    """Range of Spearman's rho over the rank assignments the settled pairs allow.

    Each system's rank on each side lies between 1 + (systems settled below it) and
    S - (systems settled above it); rho = 1 - 6 sum d^2 / (S^3 - S) for distinct ranks,
    bounded with each system's smallest and largest possible |rank difference| (a
    relaxation: the ranks are not forced to be permutations, so the range is wide, never
    narrow).
    """
    low_j, high_j = _rank_ranges(signs.judge, n_sys)
    low_h, high_h = _rank_ranges(signs.human, n_sys)
    nearest = np.maximum(0.0, np.maximum(low_h - high_j, low_j - high_h))
    farthest = np.maximum(np.abs(high_j - low_h), np.abs(high_h - low_j))
    scale = 6.0 / (n_sys**3 - n_sys)
    low = max(-1.0, 1.0 - scale * float(np.sum(farthest**2)))
    high = min(1.0, 1.0 - scale * float(np.sum(nearest**2)))
    return low, high


def system_intervals(
    sums: tuple[FloatArray, FloatArray, FloatArray],
    observed: dict[str, FloatArray],
    n_resamples: int,
    confidence_level: float,
    rng: np.random.Generator,
) -> tuple[dict[str, ConfidenceInterval], int | None]:
    """The interval of every system-level figure from (groups, systems) sums and counts, and
    how many system pairs the groups settle on both sides (None when no interval is made)."""
    sum_j, sum_h, count = sums
    n_grp, n_sys = count.shape
    names = ("spearman", "kendall_tau", "pearson", "pairwise_accuracy")
    if n_grp < 2:
        return {name: refused("one group only: nothing to resample") for name in names}, None
    if n_sys < 2:
        return {name: refused("fewer than two systems") for name in names}, None
    rep_j, rep_h = resampled_means(sum_j, sum_h, count, n_resamples, rng)
    mean_j, mean_h = observed["mean_j"][0], observed["mean_h"][0]
    out: dict[str, ConfidenceInterval] = {}
    low, high = pearson_bounds(mean_j, mean_h, rep_j, rep_h, n_grp, confidence_level)
    out["pearson"] = ConfidenceInterval(low, high)
    signs = simultaneous_signs(mean_j, mean_h, rep_j, rep_h, n_grp, confidence_level)
    reason = too_many_undefined(signs.n_undefined, n_resamples)
    bounds = {
        "pearson": out["pearson"],
        "kendall_tau": kendall_bounds(signs),
        "spearman": spearman_bounds(signs, n_sys),
        "pairwise_accuracy": accuracy_bounds(signs),
    }
    if reason is None and signs.n_varying == 0:
        reason = COLLAPSED_REASON
    for name, (low, high) in bounds.items():
        out[name] = (
            refused(reason, signs.n_undefined) if reason
            else ConfidenceInterval(low, high, None, signs.n_undefined)
        )
    settled = int(np.count_nonzero((signs.judge != 0) & (signs.human != 0)))
    return out, None if reason else settled


def resampled_means(
    sum_j: FloatArray, sum_h: FloatArray, count: FloatArray, n_resamples: int,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray]:
    """Every system's judge and human mean in ``n_resamples`` resamples of whole groups
    (B, S), NaN where a resample holds no item of a system."""
    n_grp, n_sys = count.shape
    out_j, out_h = np.empty((n_resamples, n_sys)), np.empty((n_resamples, n_sys))
    step = chunk_rows(n_resamples, n_grp)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        picks = cluster_pick_counts(n_grp, rows, rng).astype(np.float64)
        counts = picks @ count
        with np.errstate(divide="ignore", invalid="ignore"):
            out_j[start : start + rows] = np.where(counts > 0, (picks @ sum_j) / counts, np.nan)
            out_h[start : start + rows] = np.where(counts > 0, (picks @ sum_h) / counts, np.nan)
    return out_j, out_h


def pearson_bounds(
    judge_means: FloatArray,
    human_means: FloatArray,
    judge_replicates: FloatArray,
    human_replicates: FloatArray,
    n_groups: int,
    confidence_level: float,
) -> tuple[float, float]:
    """Range of Pearson's r over a simultaneous ball around the centred sample means.

    Pearson's r is the cosine of the angle between the centred mean vectors a (judge) and
    b (people). Their sample values are the population ones plus noise, which pulls r
    towards 0 (Spearman 1904's attenuation): the BCa interval of r missed a population r near
    1 in nearly every pilot replication, and a bias-corrected bootstrap of a disattenuated r
    covered 0.57-0.93 where systems are close (benchmarks/levels_coverage.py).
    Here the bootstrap over groups gives a radius for each side, q_a = k * s_a, with s_a the
    root mean square of |a* - a_hat| and k the quantile of max(|a* - a_hat| / s_a,
    |b* - b_hat| / s_b) (times :func:`few_clusters_factor`), so both population vectors lie
    within their radius at the stated level. A vector within q of a_hat is within
    arcsin(q / |a_hat|) of its direction, so the population angle is the sample angle give or
    take the two deviations, and r lies between the cosines of its extremes. When a radius
    reaches the vector's length (the means' spread is within their noise), every angle is
    possible on that side and the range is [-1, 1].
    """
    keep = np.isfinite(judge_replicates).all(axis=1) & np.isfinite(human_replicates).all(axis=1)
    centred = [m - m.mean() for m in (judge_means, human_means)]
    lengths = [float(np.linalg.norm(c)) for c in centred]
    if keep.sum() < 2 or min(lengths) <= 0:
        return math.nan, math.nan
    distances = [
        np.linalg.norm(r[keep] - r[keep].mean(axis=1, keepdims=True) - c, axis=1)
        for r, c in zip((judge_replicates, human_replicates), centred, strict=True)
    ]
    scales = [float(np.sqrt(np.mean(d**2))) for d in distances]
    worst = np.max(
        [d / s if s > 0 else np.zeros_like(d) for d, s in zip(distances, scales, strict=True)],
        axis=0,
    )
    factor = few_clusters_factor(n_groups, confidence_level)
    k = float(np.quantile(worst, confidence_level, method="higher")) * (
        factor if math.isfinite(factor) else 1.0)
    turns = [math.asin(min(1.0, k * s / length)) if k * s < length else math.pi
             for s, length in zip(scales, lengths, strict=True)]
    cosine = float(np.dot(centred[0], centred[1]) / (lengths[0] * lengths[1]))
    angle = math.acos(max(-1.0, min(1.0, cosine)))
    low = math.cos(min(math.pi, angle + sum(turns)))
    high = math.cos(max(0.0, angle - sum(turns)))
    return low, high


#: Fewest groups at which benchmarks/levels_coverage.py measured the system-level intervals.
MIN_MEASURED_GROUPS = 20


def coverage_note(n_systems: int, n_groups: int) -> str | None:
    """What the reader must know about the system-level intervals' coverage, or None.

    None inside the measured range, where every cell covered at least 93%
    (docs/statistics.md); a sentence naming the design otherwise.
    """
    if n_systems >= 2 and 2 <= n_groups < MIN_MEASURED_GROUPS:
        return (
            f"System-level intervals rest on {n_groups} groups: their coverage was measured "
            f"from {MIN_MEASURED_GROUPS} groups on (docs/statistics.md), and with fewer they "
            "may cover less than stated."
        )
    return None


__all__ = [
    "MIN_MEASURED_GROUPS",
    "PairSigns",
    "accuracy_bounds",
    "coverage_note",
    "kendall_bounds",
    "pearson_bounds",
    "resampled_means",
    "simultaneous_signs",
    "spearman_bounds",
    "system_intervals",
]
