"""Length effects: score vs length, padding shift, and P(prefer the longer answer).

Public through :mod:`judgekit.stats.bias`. A judge that rewards length that adds
no content inflates verbose models; these figures show how much.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.stats._bias_common import (
    NAN,
    PAIRWISE_VERDICTS,
    Estimate,
    Reportable,
    check_verdicts,
    labels_of,
    obj_array,
    paired_shift,
    proportion,
)
from judgekit.stats._validate import as_float_with_missing, check_same_length
from judgekit.stats.correlation import kendall_tau, spearman
from judgekit.stats.significance import binomial_test


def subsample_points(x: npt.ArrayLike, y: npt.ArrayLike, limit: int = 2000) -> list[list[float]]:
    """Up to ``limit`` ``[x, y]`` points, evenly spaced through the input (deterministic)."""
    fx, fy = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    keep = np.flatnonzero(~(np.isnan(fx) | np.isnan(fy)))
    if keep.size > limit:
        keep = keep[np.linspace(0, keep.size - 1, limit).round().astype(int)]
    return [[float(fx[i]), float(fy[i])] for i in keep]


@dataclass(frozen=True)
class LengthEffectResult:
    """Rank correlation of score with length; ``statistic`` is Spearman's rho.

    With items sharing a prompt (``groups`` given to :func:`length_effect`), ``clustered``
    holds each correlation's p-value that counts prompts rather than items
    (``CorrelationResult.cluster_pvalue``), and the intervals resample prompts too.
    """

    spearman: Reportable
    kendall: Reportable
    points: list[list[float]]
    clustered: ClusteredCorrelation | None = None

    @property
    def statistic(self) -> float:
        return float(getattr(self.spearman, "statistic"))  # noqa: B009

    @property
    def n(self) -> int:
        return int(getattr(self.spearman, "n"))  # noqa: B009

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        if self.clustered is None:
            return {
                "length_correlation": self.spearman.to_dict(confidence_level),
                "length_kendall": self.kendall.to_dict(confidence_level),
                "points": self.points,
            }
        c = self.clustered
        return {
            "length_correlation": c.stat_dict(self.spearman, confidence_level, c.spearman_p),
            "length_kendall": c.stat_dict(self.kendall, confidence_level, c.kendall_p),
            "points": self.points,
        }


@dataclass(frozen=True)
class ClusteredCorrelation:
    """The rank correlations' p-values by cluster: ``cluster_by`` names what a cluster is
    (``"prompt"``), ``n_clusters`` how many the used items fall into."""

    clusters: npt.NDArray[Any]
    cluster_by: str
    n_clusters: int
    spearman_p: float
    kendall_p: float

    def stat_dict(self, result: Any, confidence_level: float,
                  pvalue: float) -> dict[str, Any]:
        """``result``'s statistic object with its clustered interval, plus ``cluster_pvalue``
        (null when undefined, with ``cluster_pvalue_reason``), ``cluster_by`` and
        ``n_clusters``; ``pvalue`` stays the one that treats items as independent."""
        out = result.to_dict(confidence_level, clusters=self.clusters)
        out["cluster_pvalue"] = pvalue if np.isfinite(pvalue) else None
        if not np.isfinite(pvalue):
            out["cluster_pvalue_reason"] = result.cluster_pvalue_reason(self.clusters) or \
                "undefined on these clusters"
        out["cluster_by"] = self.cluster_by
        out["n_clusters"] = self.n_clusters
        return out


def length_effect(
    scores: Iterable[Any],
    lengths: Iterable[Any],
    *,
    max_points: int = 2000,
    groups: Iterable[Any] | None = None,
    cluster_by: str = "prompt",
) -> LengthEffectResult:
    """Spearman's rho and Kendall's tau-b of judge (or human) score against length.

    Lengths may be characters or tokens; for pairwise items pass len(A) - len(B)
    against the preference for A (1, 0.5 for a tie, 0). Missing scores are
    dropped. A positive value means longer answers score higher.

    ``groups`` (one id per item, say its prompt) matters when two used items share
    one: items of one prompt are not independent evidence, so each correlation then
    also gets the p-value that counts prompts (the delete-one-prompt jackknife, the
    test its clustered interval inverts) and its interval resamples prompts. Without
    such sharing nothing changes.
    """
    x = as_float_with_missing(lengths, "lengths")
    y = as_float_with_missing(scores, "scores")
    rho = spearman(x, y)
    tau = kendall_tau(x, y)
    points = subsample_points(x, y, max_points)
    clustered = None
    if groups is not None:
        ids = np.asarray([str(g) for g in groups], dtype=object)
        check_same_length(("scores", y), ("groups", ids))
        used = ids[~(np.isnan(x) | np.isnan(y))]
        n_clusters = len(set(used.tolist()))
        if 0 < n_clusters < used.size:
            clustered = ClusteredCorrelation(
                ids, cluster_by, n_clusters,
                float(getattr(rho, "cluster_pvalue")(ids)),  # noqa: B009
                float(getattr(tau, "cluster_pvalue")(ids)),  # noqa: B009
            )
    return LengthEffectResult(rho, tau, points, clustered)


@dataclass(frozen=True)
class PaddingEffectResult:
    """Score change when content-free filler is added; ``statistic`` is the mean shift."""

    shift: Estimate
    flip_rate: Estimate
    flipped: tuple[int, ...]

    @property
    def statistic(self) -> float:
        return self.shift.statistic

    @property
    def n(self) -> int:
        return self.shift.n

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        return {
            "padding_shift": self.shift.to_dict(confidence_level),
            "padding_flip_rate": self.flip_rate.to_dict(confidence_level),
        }


def padding_effect(base: Iterable[Any], padded: Iterable[Any]) -> PaddingEffectResult:
    """Mean of padded - base scores (paired bootstrap CI) and the share of changed verdicts.

    Scores are numbers per item (pass/fail as 1/0, ordinal values, or for a
    pairwise item the preference for the padded side: 1, 0.5 tie, 0); items
    with a missing score on either side are dropped. The p-value is the
    bootstrap p-value of "no shift".
    """
    b = as_float_with_missing(base, "base")
    p = as_float_with_missing(padded, "padded")
    check_same_length(("base", b), ("padded", p))
    used = ~(np.isnan(b) | np.isnan(p))
    n = int(used.sum())
    if n == 0:
        empty = Estimate(NAN, 0, None, "no item has a score with and without padding")
        return PaddingEffectResult(empty, empty, ())
    changed = used & (b != p)
    return PaddingEffectResult(
        shift=paired_shift(p, b),
        flip_rate=proportion(int(changed.sum()), n, what="items"),
        flipped=tuple(int(i) for i in np.flatnonzero(changed)),
    )


@dataclass(frozen=True)
class PreferLongerResult:
    """P(the longer answer is preferred | length gap > min_gap); ``statistic`` is that rate."""

    rate: Estimate
    longer: int
    n: int
    ties: int
    failed: int
    min_gap: int

    @property
    def statistic(self) -> float:
        return self.rate.statistic

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        out = self.rate.to_dict(confidence_level)
        return {**out, "ties": self.ties, "min_gap_chars": self.min_gap}


def prefer_longer_rate(
    verdicts: Iterable[Any],
    len_a: Iterable[Any],
    len_b: Iterable[Any],
    *,
    min_gap: int = 30,
) -> PreferLongerResult:
    """Share of decided pairs (|len_a - len_b| > min_gap) where the longer answer won.

    Ties and failed verdicts are excluded and counted; pairs with a missing length
    are left out. The p-value is the exact
    binomial test against 0.5; AlpacaEval reports 0.64 for humans and
    recommends a judge stay below 0.7.
    """
    if isinstance(min_gap, bool) or min_gap < 0:
        raise ValueError(f"min_gap must be a non-negative number of characters, got {min_gap!r}")
    values, _ = labels_of(verdicts, "verdicts")
    check_verdicts(values, "verdicts", PAIRWISE_VERDICTS)
    la = as_float_with_missing(len_a, "len_a")
    lb = as_float_with_missing(len_b, "len_b")
    check_same_length(("verdicts", obj_array(values)), ("len_a", la), ("len_b", lb))
    longer = decided = ties = failed = 0
    for v, a, b in zip(values, la.tolist(), lb.tolist(), strict=True):
        # a missing length has no gap: the pair is left out (NaN <= min_gap is False)
        if np.isnan(a) or np.isnan(b) or abs(a - b) <= min_gap:
            continue
        if v is None:
            failed += 1
        elif v == "tie":
            ties += 1
        else:
            decided += 1
            longer += int((v == "A") == (a > b))
    pvalue = float(binomial_test(longer, decided, 0.5).pvalue) if decided else None
    rate = proportion(longer, decided, pvalue=pvalue, what="decided pairs with a length gap")
    return PreferLongerResult(rate, longer, decided, ties, failed, int(min_gap))
