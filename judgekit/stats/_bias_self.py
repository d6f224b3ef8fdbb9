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
bootstrap over items gives every interval. The p-value of "no difference" is a
randomization test, exact at small n, where a bootstrap p is floored at 2/(B+1)
and far too small (five pairs, four favouring the judge: bootstrap 0.002, exact
0.125):

- pairwise: the sign-flip test of the per-pair differences judge - human (under
  "no self-preference" the judge's and the people's verdicts on a pair are
  exchangeable, so each difference is as likely negated); with clusters the
  cluster sums are flipped. All 2^m sign vectors when m <= 16 units differ,
  else 20,000 seeded random ones (p = (1 + hits) / (1 + draws), still valid);
- pointwise: the permutation test of the own/other split, which for 0/1
  values without clusters is Fisher's exact test (scipy); with clusters, the
  own/other labels are permuted between clusters when each cluster is all one
  side, and otherwise the bootstrap p is kept only from ``MIN_BOOTSTRAP_P_UNITS``
  clusters on (below, the p-value is refused with the reason).

The resampled quantities are column sums, so each resample is one multinomial
draw over the distinct item (or cluster) patterns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
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
#: Up to this many non-zero units the sign-flip test enumerates every sign vector.
EXACT_FLIPS = 16
#: Random sign vectors or permutations beyond that.
RANDOM_DRAWS = 20_000
#: Fewest clusters for a bootstrap p-value (its floor 2/(B+1) and its small-sample
#: optimism make it meaningless below).
MIN_BOOTSTRAP_P_UNITS = 20


@dataclass(frozen=True)
class Figure:
    """One self-preference figure: value, percentile interval, n, p-value, reason if NaN.

    ``p_reason`` says why a difference has no p-value (too few clusters for one).
    """

    statistic: float
    ci_low: float
    ci_high: float
    n: int
    pvalue: float | None = None
    reason: str | None = None
    p_reason: str | None = None


def _units(values: FloatArray, clusters: Any) -> FloatArray:
    """Per-cluster sums of ``values`` (the values themselves without clusters)."""
    if clusters is None:
        return values
    codes = cluster_codes(clusters, values.shape[0])
    return np.asarray(np.bincount(codes, weights=values), dtype=np.float64)


def sign_flip_pvalue(differences: FloatArray, clusters: Any = None,
                     random_state: RandomState = 0) -> float:
    """Two-sided randomization p of "mean difference 0": each unit's sum negated at will."""
    units = _units(differences, clusters)
    units = units[np.abs(units) > 1e-12]
    m = units.size
    if m == 0:
        return 1.0
    observed = abs(float(units.sum())) - 1e-9
    if m <= EXACT_FLIPS:
        signs = 1 - 2 * ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1)
        return float(np.mean(np.abs(signs @ units) >= observed))
    rng = rng_from(random_state)
    signs = rng.choice([-1.0, 1.0], size=(RANDOM_DRAWS, m))
    hits = int((np.abs(signs @ units) >= observed).sum())
    return (1 + hits) / (1 + RANDOM_DRAWS)


def _split_pvalue(above: FloatArray, own: FloatArray, clusters: Any, bootstrap_p: float,
                  random_state: RandomState) -> tuple[float | None, str | None]:
    """Two-sided p of "own and other are rated above people equally often"."""
    from scipy import stats  # a second to import: only where it is used

    if clusters is None:
        table = [[int((above * own).sum()), int(((1 - above) * own).sum())],
                 [int((above * (1 - own)).sum()), int(((1 - above) * (1 - own)).sum())]]
        return float(stats.fisher_exact(table).pvalue), None
    codes = cluster_codes(clusters, above.shape[0])
    size = np.bincount(codes).astype(float)
    own_c = np.bincount(codes, weights=own)
    above_c = np.bincount(codes, weights=above)
    if np.all((own_c == 0) | (own_c == size)):  # every cluster is all one side
        side = own_c > 0
        rng = rng_from(random_state)

        def gap(flags: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
            n_own, n_other = flags @ size, (~flags) @ size
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.asarray(flags @ above_c / n_own - (~flags) @ above_c / n_other)

        observed = abs(float(gap(side[None, :])[0])) - 1e-9
        draws = np.array([rng.permutation(side) for _ in range(RANDOM_DRAWS)])
        hits = int(np.nansum(np.abs(gap(draws)) >= observed))
        return (1 + hits) / (1 + RANDOM_DRAWS), None
    if size.size < MIN_BOOTSTRAP_P_UNITS:
        return None, (f"{size.size} clusters mix own and other responses: a bootstrap "
                      f"p-value needs at least {MIN_BOOTSTRAP_P_UNITS}")
    return bootstrap_p, None


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
    gap = _figure(judge_rate - human_rate, (sums[:, 0] - sums[:, 1]) / sums[:, 2], n, level)
    return {
        "judge_own_win_rate": _figure(judge_rate, sums[:, 0] / sums[:, 2], n, level),
        "human_own_win_rate": _figure(human_rate, sums[:, 1] / sums[:, 2], n, level),
        "self_preference": replace(gap, pvalue=sign_flip_pvalue(j - h, clusters, random_state)),
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
    if n_own and n_other and gap.pvalue is not None:
        p, why = _split_pvalue(a, o, clusters, gap.pvalue, random_state)
        gap = replace(gap, pvalue=p, p_reason=why)
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
    figure = _figure(float(gap[0]), rep_gap, int(a.size), level, True)
    pvalue, p_reason = _stratified_pvalue(a, o, codes, k, clusters, figure.pvalue, random_state)
    return {
        "self_preference": replace(figure, pvalue=pvalue, p_reason=p_reason),
        "other_rated_above_human_same_levels": _figure(float(other_std[0]), rep_other,
                                                       int(a.size), level),
        "n_strata": Figure(float(n_used), math.nan, math.nan, int(a.size), None,
                           "a count of human levels, no interval"),
    }


#: Items permuted per chunk of draws in the stratified permutation test (bounds memory).
_PERMUTATION_CHUNK = 500
#: Draws of the stratified permutation test.
STRATIFIED_DRAWS = 4_000


def _stratified_pvalue(above: FloatArray, own: FloatArray, codes: npt.NDArray[np.intp], k: int,
                       clusters: Any, bootstrap_p: float | None,
                       random_state: RandomState) -> tuple[float | None, str | None]:
    """Two-sided p of "within each human level, own and other are rated above people alike".

    Without clusters the own/other flags are permuted within each level (the
    conditional test the stratified difference calls for, by Monte Carlo): at five
    items it cannot reach the bootstrap's floor of 2/(B+1), so a handful of pairs
    never FAILs a gate on a test that is not significant. With clusters the flags
    are not exchangeable item by item; the cluster bootstrap's p is used where
    there are enough clusters for one, otherwise there is no p-value and the reason says so.
    """
    if clusters is not None:
        n_units = int(np.unique(cluster_codes(clusters, above.shape[0])).size)
        if n_units < MIN_BOOTSTRAP_P_UNITS:
            return None, (f"{n_units} clusters: a bootstrap p-value needs at least "
                          f"{MIN_BOOTSTRAP_P_UNITS}")
        return bootstrap_p, None
    onehot = np.zeros((above.size, k))
    onehot[np.arange(above.size), codes] = 1.0
    n_own = own @ onehot
    n_other = (1 - own) @ onehot
    total_above = above @ onehot
    usable = (n_own > 0) & (n_other > 0)
    weight = np.where(usable, n_own, 0.0)

    def gaps(own_above: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            diff = np.where(usable, own_above / n_own
                            - (total_above - own_above) / n_other, 0.0)
        return np.asarray((diff * weight).sum(axis=-1) / weight.sum())

    observed = abs(float(gaps((above * own) @ onehot))) - 1e-9
    rng = rng_from(random_state)
    members = [np.flatnonzero(codes == s) for s in range(k)]
    hits = 0
    for start in range(0, STRATIFIED_DRAWS, _PERMUTATION_CHUNK):
        draws = min(_PERMUTATION_CHUNK, STRATIFIED_DRAWS - start)
        flags = np.repeat(own[None, :], draws, axis=0)
        for idx in members:
            if idx.size > 1:
                flags[:, idx] = rng.permuted(flags[:, idx], axis=1)
        hits += int((np.abs(gaps((flags * above) @ onehot)) >= observed).sum())
    return (1 + hits) / (1 + STRATIFIED_DRAWS), None


__all__ = [
    "Figure",
    "self_preference_pairwise",
    "self_preference_pointwise",
    "self_preference_stratified",
    "sign_flip_pvalue",
]
