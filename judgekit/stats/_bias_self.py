"""Self-preference: does a judge favour its own model family more than people do?

An LLM judge tends to rate text from its own model family higher than people
rate the same text (Panickssery, Bowman & Feng 2024, "LLM Evaluators Recognize
and Favor Their Own Generations", arXiv 2404.13076; Zheng et al. 2023 saw +10%
self win rate for GPT-4 and +25% for Claude-v1). The judge's own verdicts
alone cannot show it (its own family's text may simply be better), so both
figures are measured against the human reference on the *same* items:

- **pairwise**, on pairs where exactly one response is from the judge's family:
  the judge's win rate for that response (1 = picked it, 0.5 = tie, 0 = picked
  the other) minus the humans' win rate for it on the same pairs;
- **pointwise**: the share of own-family responses the judge rates above the
  human rating, minus the same share over other families' responses.

Both are differences of means of per-item values, so one paired (cluster)
bootstrap over items gives every interval and a two-sided bootstrap p-value of
"no difference" (Davison & Hinkley 1997, eq. 4.11). The resampled quantities
are column sums, so each resample is one multinomial draw over the distinct
item (or cluster) patterns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.stats._resample import (
    bootstrap_pvalue,
    patterns_of,
    percentile_interval,
    resampled_sums,
)
from judgekit.stats._validate import (
    RandomState,
    check_confidence_level,
    check_n_resamples,
    cluster_codes,
    rng_from,
)

FloatArray = npt.NDArray[np.float64]

#: Bootstrap replicates when none are asked for.
N_RESAMPLES = 2000


@dataclass(frozen=True)
class Figure:
    """One self-preference figure: value, percentile interval, n, p-value, reason if NaN."""

    statistic: float
    ci_low: float
    ci_high: float
    n: int
    pvalue: float | None = None
    reason: str | None = None


def _values(values: npt.ArrayLike, name: str, allowed: tuple[float, ...]) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one value per item")
    if arr.size and not np.all(np.isin(arr, allowed)):
        raise ValueError(f"{name} must hold only {', '.join(f'{a:g}' for a in allowed)}")
    return arr


def _figure(estimate: float, replicates: FloatArray, n: int, level: float,
            with_p: bool = False) -> Figure:
    if n == 0 or not math.isfinite(estimate):
        return Figure(math.nan, math.nan, math.nan, n, None, "no items on this side")
    interval = percentile_interval(replicates, level)
    return Figure(estimate, interval.low, interval.high, n,
                  bootstrap_pvalue(replicates) if with_p else None, interval.reason)


def _replicate_sums(contributions: FloatArray, clusters: Any, n_resamples: int,
                    random_state: RandomState) -> FloatArray:
    n = contributions.shape[0]
    codes = None if clusters is None else cluster_codes(clusters, n)
    patterns, frequencies = patterns_of(contributions, codes)
    return resampled_sums(patterns, frequencies, n_resamples, rng_from(random_state))


def self_preference_pairwise(
    judge_own: npt.ArrayLike,
    human_own: npt.ArrayLike,
    *,
    clusters: npt.ArrayLike | None = None,
    n_resamples: int = N_RESAMPLES,
    confidence_level: float = 0.95,
    random_state: RandomState = 0,
) -> dict[str, Figure]:
    """Judge vs human win rate of the judge family's response, on the same pairs.

    ``judge_own`` and ``human_own`` hold, per pair with exactly one own-family
    response, 1 (that response preferred), 0.5 (tie) or 0 (the other preferred).
    Returns ``judge_own_win_rate``, ``human_own_win_rate`` and ``self_preference``
    (their difference, with a p-value).
    """
    level = check_confidence_level(confidence_level)
    check_n_resamples(n_resamples)
    j = _values(judge_own, "judge_own", (0.0, 0.5, 1.0))
    h = _values(human_own, "human_own", (0.0, 0.5, 1.0))
    if j.size != h.size:
        raise ValueError(f"judge_own has {j.size} pairs but human_own has {h.size}")
    n = int(j.size)
    if n == 0:
        empty = Figure(math.nan, math.nan, math.nan, 0, None, "no pair has exactly one "
                       "response from the judge's family")
        return {"judge_own_win_rate": empty, "human_own_win_rate": empty,
                "self_preference": empty}
    sums = _replicate_sums(np.column_stack([j, h, np.ones(n)]), clusters, n_resamples,
                           random_state)
    judge_rate, human_rate = float(j.mean()), float(h.mean())
    return {
        "judge_own_win_rate": _figure(judge_rate, sums[:, 0] / sums[:, 2], n, level),
        "human_own_win_rate": _figure(human_rate, sums[:, 1] / sums[:, 2], n, level),
        "self_preference": _figure(judge_rate - human_rate,
                                   (sums[:, 0] - sums[:, 1]) / sums[:, 2], n, level, True),
    }


def self_preference_pointwise(
    above: npt.ArrayLike,
    own: npt.ArrayLike,
    *,
    clusters: npt.ArrayLike | None = None,
    n_resamples: int = N_RESAMPLES,
    confidence_level: float = 0.95,
    random_state: RandomState = 0,
) -> dict[str, Figure]:
    """Share rated above the human rating, own family vs other families.

    ``above`` is 1 where the judge's score exceeds the human reference score,
    ``own`` is 1 for a response from the judge's family. Returns
    ``own_rated_above_human``, ``other_rated_above_human`` and ``self_preference``
    (own minus other, with a p-value; NaN with a reason when a side is empty, and
    a resample with an empty side is left out of the interval).
    """
    level = check_confidence_level(confidence_level)
    check_n_resamples(n_resamples)
    a = _values(above, "above", (0.0, 1.0))
    o = _values(own, "own", (0.0, 1.0))
    if a.size != o.size:
        raise ValueError(f"above has {a.size} items but own has {o.size}")
    n_own, n_other = int(o.sum()), int(a.size - o.sum())
    if a.size == 0:
        sums = np.zeros((1, 4))
    else:
        sums = _replicate_sums(np.column_stack([a * o, o, a * (1 - o), 1 - o]), clusters,
                               n_resamples, random_state)
    with np.errstate(divide="ignore", invalid="ignore"):
        own_reps = sums[:, 0] / sums[:, 1]
        other_reps = sums[:, 2] / sums[:, 3]
    own_rate = float((a * o).sum() / n_own) if n_own else math.nan
    other_rate = float((a * (1 - o)).sum() / n_other) if n_other else math.nan
    gap = _figure(own_rate - other_rate, own_reps - other_reps, int(a.size), level, True)
    if not (n_own and n_other):
        side = "own-family" if not n_own else "other-family"
        gap = Figure(math.nan, math.nan, math.nan, int(a.size), None,
                     f"no {side} responses to compare with")
    return {
        "own_rated_above_human": _figure(own_rate, own_reps, n_own, level),
        "other_rated_above_human": _figure(other_rate, other_reps, n_other, level),
        "self_preference": gap,
    }


def self_preference_stratified(
    above: npt.ArrayLike,
    own: npt.ArrayLike,
    strata: npt.ArrayLike,
    *,
    clusters: npt.ArrayLike | None = None,
    n_resamples: int = N_RESAMPLES,
    confidence_level: float = 0.95,
    random_state: RandomState = 0,
) -> dict[str, Figure]:
    """Own minus other share rated above people, compared within strata of the human level.

    A response people already gave the top level cannot be rated above them, so when
    one family's responses sit at the top more often than the other's, the plain
    difference of shares measures the scale's ceiling, not the judge. Within each
    stratum (``strata``: the human reference level of each item) the two shares are
    compared; the differences are averaged with the own-family responses' weights
    (the other families' share is standardised to the own family's level mix).
    Strata without both sides take no part (``n_strata`` says how many did). One
    paired (cluster) bootstrap gives the interval and the p-value; a resample in
    which no stratum has both sides is left out. Returns ``self_preference``
    (the stratified difference), ``other_rated_above_human_same_levels`` (the other
    families' standardised share) and ``n_strata`` (as a figure whose statistic is
    the count, no interval).
    """
    level = check_confidence_level(confidence_level)
    check_n_resamples(n_resamples)
    a = _values(above, "above", (0.0, 1.0))
    o = _values(own, "own", (0.0, 1.0))
    names, codes = np.unique(np.asarray(strata, dtype=object).astype(str), return_inverse=True)
    if not a.size == o.size == codes.size:
        raise ValueError("above, own and strata must have one value per item")
    k = len(names)
    columns = []
    for s in range(k):
        inside = (codes == s).astype(float)
        columns += [a * o * inside, o * inside, a * (1 - o) * inside, (1 - o) * inside]
    contributions = np.column_stack(columns) if a.size else np.zeros((0, 4 * k))

    def combine(sums: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Stratified gap, standardised other share, strata used; per row of (B, 4k) sums."""
        s = sums.reshape(sums.shape[0], k, 4)
        usable = (s[:, :, 1] > 0) & (s[:, :, 3] > 0)
        weight = np.where(usable, s[:, :, 1], 0.0)
        total = weight.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            own_rate = np.where(usable, s[:, :, 0] / s[:, :, 1], 0.0)
            other_rate = np.where(usable, s[:, :, 2] / s[:, :, 3], 0.0)
            other_std = (weight * other_rate).sum(axis=1) / total
            gap = (weight * (own_rate - other_rate)).sum(axis=1) / total
        return gap, other_std, usable.sum(axis=1).astype(float)

    observed = contributions.sum(axis=0)[None, :]
    gap, other_std, used = combine(observed)
    n_used = int(used[0])
    if n_used == 0:
        reason = "no level of the human reference has responses from both sides"
        empty = Figure(math.nan, math.nan, math.nan, int(a.size), None, reason)
        return {"self_preference": empty, "other_rated_above_human_same_levels": empty,
                "n_strata": Figure(0.0, math.nan, math.nan, int(a.size), None, reason)}
    sums = _replicate_sums(contributions, clusters, n_resamples, random_state)
    rep_gap, rep_other, _ = combine(sums)
    return {
        "self_preference": _figure(float(gap[0]), rep_gap, int(a.size), level, True),
        "other_rated_above_human_same_levels": _figure(float(other_std[0]), rep_other,
                                                       int(a.size), level),
        "n_strata": Figure(float(n_used), math.nan, math.nan, int(a.size), None,
                           "a count of human levels, no interval"),
    }


__all__ = [
    "Figure",
    "self_preference_pairwise",
    "self_preference_pointwise",
    "self_preference_stratified",
]
