"""Self-consistency of a judge: how often K repeated calls on one item agree.

Part of :mod:`judgekit.stats.bias` (which re-exports it), kept apart because it
works on an items x K table of labels rather than on paired verdicts, and leans
on the multi-rater statistics (Fleiss' kappa, Krippendorff's alpha) with the
repeats standing in for raters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from judgekit.stats._bias_common import (
    NAN,
    Estimate,
    Reportable,
    mean_estimate,
    obj_array,
    proportion,
)
from judgekit.stats._validate import missing_mask
from judgekit.stats.agreement import fleiss_kappa, krippendorff_alpha

__all__ = ["RepetitionResult", "repetition_stability"]


@dataclass(frozen=True)
class RepetitionResult:
    """Stability of K repeated verdicts per item. ``statistic`` is the repetition stability."""

    n: int
    n_excluded: int
    samples: int
    stability: Estimate
    flip_rate: Estimate
    fleiss: Reportable | Estimate
    alpha: Reportable | Estimate
    label_counts: dict[str, int]
    unstable: tuple[int, ...]

    @property
    def statistic(self) -> float:
        return self.stability.statistic

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        return {
            "repetition_stability": self.stability.to_dict(confidence_level),
            "flip_rate": self.flip_rate.to_dict(confidence_level),
            "repeat_fleiss_kappa": self.fleiss.to_dict(confidence_level),
            "repeat_alpha": self.alpha.to_dict(confidence_level),
            "samples": self.samples,
            "label_counts": dict(self.label_counts),
            "n_excluded": self.n_excluded,
        }


def repetition_stability(
    samples: Sequence[Sequence[Any]],
    *,
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal",
    labels: Sequence[Any] | None = None,
) -> RepetitionResult:
    """Repetition stability, flip rate and chance-corrected agreement across K repeats.

    ``samples`` is items x K labels (None = a failed repeat). Items with fewer
    than two valid repeats are excluded (one verdict cannot flip). RS (Shi et
    al.) = mean over items of modal count / valid repeats; flip rate = share of
    items whose repeats were not all equal; Fleiss' kappa treats the repeats as
    raters on the items with all K valid; Krippendorff's alpha (``level``,
    ordered by ``labels`` when given) uses every valid repeat.
    """
    matrix = obj_array([list(row) for row in samples])
    if matrix.ndim != 2 or matrix.size == 0:
        raise ValueError("samples must be a non-empty items x K table of labels")
    k = matrix.shape[1]
    if k < 2:
        raise ValueError(f"samples needs at least 2 repeats per item, got {k}")
    missing = missing_mask(matrix.ravel()).reshape(matrix.shape)
    valid_counts = (~missing).sum(axis=1)
    keep = valid_counts >= 2
    stab: list[float] = []
    flips: list[int] = []
    tally: Counter[str] = Counter()
    rows: list[list[Any]] = matrix.tolist()
    masks = [[bool(m) for m in row] for row in missing]
    uses: list[bool] = keep.tolist()
    for row, miss, use in zip(rows, masks, uses, strict=True):
        present = [v for v, m in zip(row, miss, strict=True) if not m]
        tally.update(str(v) for v in present)
        if not use:
            continue
        modal = Counter(present).most_common(1)[0][1]
        stab.append(modal / len(present))
        flips.append(int(len(set(present)) > 1))
    n = int(keep.sum())
    unstable = tuple(int(i) for i, f in zip(np.flatnonzero(keep), flips, strict=True) if f)
    domain = list(labels) if labels is not None else None
    complete = matrix[~missing.any(axis=1)]
    fleiss: Reportable | Estimate
    if complete.shape[0] == 0:
        fleiss = Estimate(NAN, 0, None, "no item has all repeats valid")
    else:
        fleiss = fleiss_kappa(complete.tolist(), labels=domain)
    alpha: Reportable | Estimate
    if n == 0:
        alpha = Estimate(NAN, 0, None, "no item has two valid repeats")
    else:
        alpha = krippendorff_alpha(matrix[keep].T.tolist(), level=level, value_domain=domain)
    return RepetitionResult(
        n=n,
        n_excluded=int((~keep).sum()),
        samples=k,
        stability=mean_estimate(stab, what="items with two valid repeats"),
        flip_rate=proportion(sum(flips), n, what="items with two valid repeats"),
        fleiss=fleiss,
        alpha=alpha,
        label_counts=dict(sorted(tally.items())),
        unstable=unstable,
    )
