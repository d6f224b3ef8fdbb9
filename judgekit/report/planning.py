"""How many labels the verdict's planner asks for, from the rates observed so far.

The verdict module decides; this module only sizes the sample, with the same
statistic the verdict reads (kappa or a proportion) and the same standard error
the analysis uses (Fleiss-Cohen-Everitt on the observed table), so "N more
labels" is planned for the figure the gate actually tests.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from judgekit import stats
from judgekit.report.options import ReportOptions
from judgekit.types import Rubric


def planned_total(
    judge: list[str],
    human: list[str],
    rubric: Rubric,
    primary: str,
    opts: ReportOptions,
    half_width: float | None = None,
) -> int | None:
    """Total labels the planner asks for at ``half_width`` (default: the target), from the
    observed rates."""
    target = opts.half_width if half_width is None else half_width
    if not (math.isfinite(target) and target > 0):
        return None
    labels = list(rubric.scale.labels)
    try:
        return _planned(judge, human, labels, primary, opts, target)
    except ValueError:
        return None  # the inputs plan for a zero-width interval: no number to give


def _planned(
    judge: list[str],
    human: list[str],
    labels: list[str],
    primary: str,
    opts: ReportOptions,
    target: float,
) -> int:
    """The planner's total, from the observed confusion table when it has disagreement.

    Kappa is planned with the analysis SE on the table observed so far; a table with
    no disagreement would plan for nothing, so perfect agreement is planned at its
    Wilson lower bound instead (on the binary table with the observed chance agreement).
    """
    if primary in ("cohen_kappa", "weighted_kappa"):
        weights: Literal["quadratic"] | None = (
            "quadratic" if primary == "weighted_kappa" else None
        )
        if judge:
            res = stats.cohen_kappa(judge, human, weights=weights, labels=labels)
            p_o, p_e = res.p_observed, res.p_expected
            if p_o < 1.0:
                return stats.kappa_sample_size(
                    half_width=target,
                    table=res.confusion,
                    weights=weights,
                    confidence_level=opts.confidence_level,
                )
            # perfect observed agreement plans for nothing: use its Wilson lower bound
            p_o = stats.wilson_interval(len(judge), len(judge), opts.confidence_level)[0]
        else:
            p_e = 1.0 / len(labels)
            p_o = (opts.min_agreement + target) * (1 - p_e) + p_e
        return stats.kappa_sample_size(
            half_width=target,
            p_observed=min(p_o, 1.0),
            p_expected=p_e,
            confidence_level=opts.confidence_level,
        )
    p = (
        float(np.mean(np.asarray(judge, dtype=object) == np.asarray(human, dtype=object)))
        if judge
        else 0.5
    )
    if p in (0.0, 1.0):
        n = max(len(judge), 1)
        bound = stats.wilson_interval(int(p * n), n, opts.confidence_level)
        p = bound[0] if p == 1.0 else bound[1]
    return stats.proportion_sample_size(
        half_width=target, p=p, confidence_level=opts.confidence_level
    )


__all__ = ["planned_total"]
