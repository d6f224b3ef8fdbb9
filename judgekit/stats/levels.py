"""Agreement above the item: within groups of items, and between systems.

The judge-evaluation literature reports a judge's agreement with people at
three levels (SummEval, Fabbri et al. 2021; G-Eval, Liu et al. 2023; Shen et
al. 2023). Item level is :mod:`judgekit.stats.correlation`. This module is the
other two:

- **Per group** ("summary level"): the correlation between judge and human
  scores *within* each group of items sharing a prompt (one source document,
  several systems' summaries), averaged over the groups where both sides vary.
  This is G-Eval's ``meta_eval_summeval.py``: groups where either side is
  constant are skipped, not counted as zero. The interval is a percentile bootstrap
  over groups (the per-group correlations are the units), widened for few groups as
  cluster intervals are everywhere in judgekit.
- **System level**: each system's mean judge score and mean human score over its
  items, then the rank correlation of the two lists (Kendall's tau-b, Spearman,
  Pearson) and the **pairwise system accuracy**: the share of system pairs the
  judge orders as people do. A pair scores 1 when both order it the same way (or
  both tie it), 0.5 when exactly one side ties, 0 when they disagree, so 12
  systems give a count out of 66 pairs with halves (Shen et al. 2023 report
  "58.5 of 66"). The target is each figure at the systems' *population* mean
  scores: the systems are fixed, the inputs they were tried on are the sample
  (Deutsch et al. 2021, "boot-inputs"). Intervals resample whole groups
  (documents) and project simultaneous intervals onto each figure: for the pairwise
  differences of means (the rank figures) or the centred means (Pearson);
  :mod:`judgekit.stats.system_intervals` says why a bootstrap of the figure itself
  does not cover.

Figures are NaN with a reason when undefined (too few groups or systems); a
bootstrap interval that never moves is refused, as everywhere in judgekit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.stats._interval import ConfidenceInterval, refused
from judgekit.stats._resample import (
    chunk_rows,
    cluster_pick_counts,
    percentile_interval,
    widen_for_few_clusters,
)
from judgekit.stats._validate import RandomState, rng_from
from judgekit.stats.correlation import _PAIRWISE_LIMIT, _kendall_batch, _rowwise_pearson
from judgekit.stats.system_intervals import system_intervals

FloatArray = npt.NDArray[np.float64]

#: Per-system means equal to this many decimals are ties (summation order must not break one).
TIE_DECIMALS = 9

#: Why a system-level interval is a single value (the figure is discrete and then known).
SETTLED_NOTE = (
    "every system pair's order is settled on both sides at the stated level, so the "
    "population figure is this value"
)

#: The correlations computed at each level, in the order they are shown.
CORRELATIONS = ("spearman", "kendall_tau", "pearson")


@dataclass(frozen=True)
class LevelFigure:
    """One figure above the item level: value, interval, units it rests on, and why not."""

    statistic: float
    ci_low: float
    ci_high: float
    n: int  # groups used (per group) or systems (system level)
    method: str
    reason: str | None = None  # why the statistic is NaN
    note: str | None = None  # why a defined statistic has no interval, or a single-value one

    def to_dict(self) -> dict[str, Any]:
        def finite(value: float) -> float | None:
            return float(value) if math.isfinite(value) else None

        out: dict[str, Any] = {
            "statistic": finite(self.statistic),
            "ci_low": finite(self.ci_low),
            "ci_high": finite(self.ci_high),
            "n": self.n,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.note:
            out["note"] = self.note
        return out


def _figure(
    estimate: float, interval: ConfidenceInterval, n: int, method: str, reason: str | None
) -> LevelFigure:
    if not math.isfinite(estimate):
        return LevelFigure(math.nan, math.nan, math.nan, n, "", reason or "undefined")
    note = f"no interval: {interval.reason}" if interval.reason else None
    return LevelFigure(estimate, interval[0], interval[1], n, method, None, note)


def _midranks(x: FloatArray) -> FloatArray:
    """Mid-ranks along the last axis of (rows, n), ties sharing their mean rank.

    Counted from pair comparisons (O(n**2) per row, in numpy) for the short rows of
    groups and systems, so the report needs no ``scipy.stats`` (a second to import).
    """
    if x.shape[-1] > _PAIRWISE_LIMIT:
        from scipy import stats as sps  # a long row: rare, and worth the import

        return np.asarray(sps.rankdata(x, axis=-1), dtype=np.float64)
    n = x.shape[-1]
    out = np.empty(x.shape, dtype=np.float64)
    step = max(1, 4_000_000 // max(n * n, 1))  # rows per chunk: a bounded (rows, n, n) array
    for start in range(0, x.shape[0], step):
        part = x[start : start + step]
        below = (part[:, None, :] < part[:, :, None]).sum(axis=-1)
        equal = (part[:, None, :] == part[:, :, None]).sum(axis=-1)
        out[start : start + step] = below + (equal + 1) / 2.0
    return out


def _correlate(name: str, x: FloatArray, y: FloatArray) -> FloatArray:
    """Row-wise correlation ``name`` of (rows, n) arrays; NaN for a constant row."""
    if name == "pearson":
        return _rowwise_pearson(x, y)
    if name == "spearman":
        return _rowwise_pearson(_midranks(x), _midranks(y))
    return _kendall_batch(x, y)


@dataclass(frozen=True)
class GroupLevel:
    """Per-group correlations averaged over the groups where both sides vary."""

    figures: dict[str, LevelFigure]
    n_groups: int  # groups of two or more items
    n_used: int  # of those, groups where judge and human both vary
    n_items: int  # items in the used groups
    per_group: dict[str, FloatArray] = field(default_factory=dict, repr=False)


def group_level(
    judge: npt.ArrayLike,
    human: npt.ArrayLike,
    groups: Sequence[Any],
    *,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    random_state: RandomState = 0,
) -> GroupLevel:
    """Mean over groups of the within-group Spearman, Kendall tau-b and Pearson.

    Groups of one item, and groups where the judge or the people give every item
    the same score, have no correlation and are skipped (as in G-Eval's
    evaluation script). The interval resamples the used groups with replacement.
    """
    x = np.asarray(judge, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(groups) != x.size:
        raise ValueError("judge, human and groups must be equally long 1-d sequences")
    _, codes = np.unique(np.asarray([str(g) for g in groups], dtype=object), return_inverse=True)
    order = np.argsort(codes, kind="stable")
    codes, x, y = codes[order], x[order], y[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    sizes = np.diff(np.r_[starts, codes.size])
    values: dict[str, list[float]] = {name: [] for name in CORRELATIONS}
    n_groups = int(np.count_nonzero(sizes >= 2))
    n_items = 0
    for size in np.unique(sizes[sizes >= 2]):
        first = starts[sizes == size]
        index = first[:, None] + np.arange(size)[None, :]
        gx, gy = x[index], y[index]
        varies = (gx.max(axis=1) > gx.min(axis=1)) & (gy.max(axis=1) > gy.min(axis=1))
        if not varies.any():
            continue
        gx, gy = gx[varies], gy[varies]
        n_items += int(gx.size)
        for name in CORRELATIONS:
            values[name].extend(_correlate(name, gx, gy).tolist())
    per_group = {name: np.asarray(v, dtype=np.float64) for name, v in values.items()}
    used = per_group["pearson"].size
    means = _resampled_means(per_group, used, n_resamples, rng_from(random_state))
    figures: dict[str, LevelFigure] = {}
    for name in CORRELATIONS:
        v = per_group[name]
        if used == 0:
            reason = (
                "no group of two or more items where both the judge and people vary"
                if n_groups
                else "no two items share a group"
            )
            figures[name] = LevelFigure(math.nan, math.nan, math.nan, 0, "", reason)
            continue
        estimate = float(v.mean())
        if means is None:
            interval = refused("one group only: nothing to resample")
        else:
            interval = widen_for_few_clusters(
                percentile_interval(means[name], confidence_level), estimate, used,
                confidence_level,
            )
        figures[name] = _figure(estimate, interval, used, "bootstrap over groups", None)
    return GroupLevel(figures, n_groups, used, n_items, per_group)


def _resampled_means(
    per_group: dict[str, FloatArray], used: int, n_resamples: int, rng: np.random.Generator
) -> dict[str, FloatArray] | None:
    """Mean of each correlation over ``n_resamples`` resamples of the used groups (one draw
    of groups shared by all three correlations); None with fewer than two groups."""
    if used < 2:
        return None
    out = {name: np.empty(n_resamples) for name in per_group}
    step = chunk_rows(n_resamples, used)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        picks = cluster_pick_counts(used, rows, rng).astype(np.float64)
        for name, values in per_group.items():
            out[name][start : start + rows] = picks @ values / used
    return out


def pairwise_accuracy(judge_means: FloatArray, human_means: FloatArray) -> FloatArray:
    """Share of system pairs ordered alike, per row of (rows, S) means (a tie on one side: 0.5)."""
    s = judge_means.shape[-1]
    upper = np.triu_indices(s, k=1)
    dj = np.sign(judge_means[..., :, None] - judge_means[..., None, :])[..., upper[0], upper[1]]
    dh = np.sign(human_means[..., :, None] - human_means[..., None, :])[..., upper[0], upper[1]]
    score = np.where(dj == dh, 1.0, np.where((dj == 0) | (dh == 0), 0.5, 0.0))
    out = score.mean(axis=-1)
    nan = np.isnan(judge_means).any(axis=-1) | np.isnan(human_means).any(axis=-1)
    return np.where(nan, np.nan, out)


@dataclass(frozen=True)
class SystemLevel:
    """Per-system means and how well their order matches people's."""

    systems: tuple[str, ...]
    n_items: tuple[int, ...]
    judge_means: tuple[float, ...]
    human_means: tuple[float, ...]
    figures: dict[str, LevelFigure]
    n_pairs: int
    n_groups: int
    #: System pairs whose order the groups settle on both sides (None: no interval made).
    n_settled: int | None = None
    #: System pairs tied on one side only: pairwise accuracy counts each half, where
    #: Kocmi et al. (2021) and Deutsch et al. (2023) count it 0 (docs/statistics.md).
    n_one_sided_ties: int = 0


def one_sided_ties(judge_means: Sequence[float], human_means: Sequence[float]) -> int:
    """How many system pairs tie on exactly one side (judge or people, not both); means
    equal to ``TIE_DECIMALS`` decimals tie, as in the figures."""
    j = np.round(np.asarray(judge_means, dtype=np.float64), TIE_DECIMALS)
    h = np.round(np.asarray(human_means, dtype=np.float64), TIE_DECIMALS)
    upper = np.triu_indices(j.size, k=1)
    tie_j = (j[:, None] == j[None, :])[upper]
    tie_h = (h[:, None] == h[None, :])[upper]
    return int(np.count_nonzero(tie_j != tie_h))


def system_level(
    judge: npt.ArrayLike,
    human: npt.ArrayLike,
    systems: Sequence[str],
    groups: Sequence[Any],
    *,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    random_state: RandomState = 0,
) -> SystemLevel:
    """Kendall, Spearman and Pearson of per-system means, and pairwise system accuracy.

    The target is each figure at the systems' population mean scores (docs/statistics.md).
    The intervals (:mod:`judgekit.stats.system_intervals`) project simultaneous intervals
    for the pairwise differences of means (Kendall, Spearman, accuracy) or for the centred
    means (Pearson), from resamples of whole ``groups`` (each group's items under every
    system together); a resample that leaves a system with no item is undefined and dropped.
    """
    x = np.asarray(judge, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(systems) != x.size or len(groups) != x.size:
        raise ValueError("judge, human, systems and groups must be equally long 1-d sequences")
    names, s_codes = np.unique(np.asarray(list(systems), dtype=object), return_inverse=True)
    _, g_codes = np.unique(np.asarray([str(g) for g in groups], dtype=object), return_inverse=True)
    n_sys, n_grp = len(names), int(g_codes.max()) + 1 if g_codes.size else 0
    cell = g_codes * n_sys + s_codes
    size = n_grp * n_sys
    sum_j = np.bincount(cell, weights=x, minlength=size).astype(np.float64).reshape(n_grp, n_sys)
    sum_h = np.bincount(cell, weights=y, minlength=size).astype(np.float64).reshape(n_grp, n_sys)
    count = np.bincount(cell, minlength=size).reshape(n_grp, n_sys).astype(np.float64)
    totals = count.sum(axis=0)
    mean_j = sum_j.sum(axis=0) / totals
    mean_h = sum_h.sum(axis=0) / totals
    observed = _system_figures(mean_j[None, :], mean_h[None, :])
    intervals, n_settled = system_intervals(
        (sum_j, sum_h, count), observed, n_resamples, confidence_level, rng_from(random_state)
    )
    figures: dict[str, LevelFigure] = {}
    for name in (*CORRELATIONS, "pairwise_accuracy"):
        need = 2 if name == "pairwise_accuracy" else 3
        if n_sys < need:
            figures[name] = LevelFigure(
                math.nan, math.nan, math.nan, n_sys, "",
                f"needs {need} or more systems with compared items (found {n_sys})",
            )
            continue
        estimate = float(observed[name][0])
        reason = None
        if not math.isfinite(estimate):
            reason = "the judge or people give every system the same mean score"
        method = ("simultaneous interval for the centred means over groups" if name == "pearson"
                  else "simultaneous pairwise intervals over groups")
        figure = _figure(estimate, intervals[name], n_sys, method, reason)
        if math.isfinite(figure.ci_low) and figure.ci_low == figure.ci_high:
            figure = replace(figure, note=SETTLED_NOTE)
        figures[name] = figure
    return SystemLevel(
        tuple(str(n) for n in names),
        tuple(int(c) for c in totals),
        tuple(float(v) for v in mean_j),
        tuple(float(v) for v in mean_h),
        figures,
        n_sys * (n_sys - 1) // 2,
        n_grp,
        n_settled,
        one_sided_ties(mean_j, mean_h),
    )


def _system_figures(mean_j: FloatArray, mean_h: FloatArray) -> dict[str, FloatArray]:
    """Every system-level figure for each row of (rows, S) per-system means (and the means)."""
    out: dict[str, FloatArray] = {"mean_j": mean_j, "mean_h": mean_h}
    bad: npt.NDArray[np.bool_] = np.asarray(
        np.isnan(mean_j).any(axis=1) | np.isnan(mean_h).any(axis=1), dtype=bool
    )
    safe_j = np.asarray(np.where(np.isnan(mean_j), 0.0, mean_j), dtype=np.float64)
    safe_h = np.asarray(np.where(np.isnan(mean_h), 0.0, mean_h), dtype=np.float64)
    # Two systems with the same mean (say 41/12 from sums in another order) must tie in the
    # orderings: the rank figures read the means rounded to TIE_DECIMALS.
    tie_j = np.asarray(np.round(safe_j, TIE_DECIMALS), dtype=np.float64)
    tie_h = np.asarray(np.round(safe_h, TIE_DECIMALS), dtype=np.float64)
    if mean_j.shape[1] >= 2:
        for name in CORRELATIONS:
            x, y = (safe_j, safe_h) if name == "pearson" else (tie_j, tie_h)
            with np.errstate(divide="ignore", invalid="ignore"):
                value = _correlate(name, x, y)
            out[name] = np.where(bad, np.nan, value)
        out["pairwise_accuracy"] = pairwise_accuracy(
            np.where(bad[:, None], np.nan, tie_j), np.where(bad[:, None], np.nan, tie_h)
        )
    else:
        nan = np.full(mean_j.shape[0], np.nan)
        out.update({name: nan for name in (*CORRELATIONS, "pairwise_accuracy")})
    return out


__all__ = [
    "CORRELATIONS",
    "GroupLevel",
    "LevelFigure",
    "SystemLevel",
    "group_level",
    "pairwise_accuracy",
    "system_level",
]
