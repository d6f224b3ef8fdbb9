"""The Rogan-Gladen correction: a binary judge's rate corrected by its measured error rates.

If a judge passes a truly passing item with probability Se (sensitivity) and
fails a truly failing one with probability Sp (specificity), its pass rate p
relates to the true rate theta by p = theta Se + (1 - theta)(1 - Sp), so
theta = (p + Sp - 1) / (Se + Sp - 1) (Rogan & Gladen 1978). Se and Sp are
measured on the labeled items, so their uncertainty belongs in the interval:
the delta method here carries all three.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from judgekit.stats import _ppi_core as core
from judgekit.stats._resample import z_critical
from judgekit.stats.ppi import ONE_CLUSTER, EstimateResult, design_of, estimate_inputs, is_binary


@dataclass(frozen=True)
class RoganGladenResult(EstimateResult):
    """Rogan-Gladen corrected rate, with the judge's apparent rate, sensitivity and specificity."""

    apparent_rate: float = math.nan
    sensitivity: float = math.nan
    specificity: float = math.nan


def rogan_gladen(
    labels: Any,
    judge_on_labeled: Any,
    judge_on_unlabeled: Any,
    *,
    weights: Any = None,
    clusters: Any = None,
    unlabeled_clusters: Any = None,
    strata: Any = None,
) -> RoganGladenResult:
    """Rogan-Gladen (1978) rate: the judge's rate corrected by its sensitivity and specificity.

    theta = (p + Sp - 1) / (Se + Sp - 1), p = judge pass rate on
    ``judge_on_unlabeled``, Se and Sp measured against ``labels`` (0/1). The
    interval is the delta method over p, Se and Sp together (see
    :func:`judgekit.stats._ppi_core.rogan_gladen_arrays`), clipped to [0, 1], and the
    estimate is truncated to [0, 1] too. NaN when the labels hold no pass or no fail,
    or the judge is not shown to be better than chance: the 95% interval of
    Se + Sp - 1 (:func:`judgekit.stats._ppi_core.youden_lower_bound`) reaches 0.
    """
    y, f, fu = estimate_inputs(labels, judge_on_labeled, judge_on_unlabeled)
    n, big_n = y.size, fu.size
    for name, arr in (("labels", y), ("judge_on_labeled", f), ("judge_on_unlabeled", fu)):
        if not is_binary(arr):
            raise ValueError(f"{name} must be 0/1 for the Rogan-Gladen correction")

    def undefined(
        reason: str, pieces: tuple[float, float, float] | None = None
    ) -> RoganGladenResult:
        p, se, sp = pieces or (math.nan, math.nan, math.nan)
        return RoganGladenResult(
            math.nan,
            math.nan,
            n,
            big_n,
            "rogan-gladen",
            reason=reason,
            apparent_rate=p,
            sensitivity=se,
            specificity=sp,
        )

    if n == 0:
        return undefined("no labeled items: sensitivity and specificity need human labels")
    if big_n == 0:
        return undefined("no judged items to correct")
    design, n_clusters, df = design_of(n, big_n, weights, clusters, unlabeled_clusters, strata)
    out = core.rogan_gladen_arrays(y[None], f[None], fu, design)
    se, sp, p = float(out.sensitivity[0]), float(out.specificity[0]), float(out.apparent[0])
    pieces = (p, se, sp)
    if out.n_positive[0] == 0 or out.n_negative[0] == 0:
        which = "pass" if out.n_positive[0] == 0 else "fail"
        return undefined(
            f"no human {which} label: {'sensitivity' if which == 'pass' else 'specificity'}"
            " is undefined",
            pieces,
        )
    if not se + sp > 1.0:
        return undefined(
            f"the judge is no better than chance (sensitivity {se:.3f} + specificity {sp:.3f}"
            " <= 1)",
            pieces,
        )
    floor = float(core.youden_lower_bound(out.sensitivity, out.specificity, out.n_positive,
                                          out.n_negative, z_critical(0.95))[0])
    if not floor > 0.0:
        return undefined(
            f"the judge is not shown to be better than chance: sensitivity + specificity - 1 "
            f"= {se + sp - 1:.3f}, whose 95% interval reaches {floor:.3f} <= 0 (the correction "
            "divides by it, so the corrected rate could be anything)",
            pieces,
        )
    variance = float(out.variance[0])
    if not math.isfinite(variance):
        return undefined(ONE_CLUSTER, pieces)
    note = None
    if se in (0.0, 1.0) or sp in (0.0, 1.0):
        note = "sensitivity or specificity was observed as 0 or 1: the interval may be too narrow"
    # truncated as the interval is: a rate outside [0, 1] ("2.5 [0, 1]") says nothing
    theta = min(max(float(out.statistic[0]), 0.0), 1.0)
    return RoganGladenResult(
        theta,
        math.sqrt(variance),
        n,
        big_n,
        "rogan-gladen",
        n_clusters=n_clusters,
        df=df,
        note=note,
        bounds=(0.0, 1.0),
        apparent_rate=p,
        sensitivity=se,
        specificity=sp,
    )


__all__ = ["RoganGladenResult", "rogan_gladen"]
