"""The header's figures: progress through the queue and agreement with the judge.

Apart from the session's queue and label rules because these are read-only
summaries of its state, and the agreement figure pulls in the statistics stack
(imported lazily, so the app still labels without it). A figure is never shown
without its interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from judgekit.types import Rubric

#: Labels needed on items the judge also labeled before agreement is shown.
MIN_AGREEMENT_N = 20


@dataclass(frozen=True)
class Progress:
    """Header figures: labeled/total, this session's rate and the time left at that rate."""

    labeled: int
    total: int
    session_labels: int
    rate_per_min: float | None
    eta_seconds: float | None


@dataclass(frozen=True)
class Agreement:
    """Running agreement of this annotator with the judge over overlapping items.

    ``percent`` comes with its 95% Wilson interval; ``kappa`` (None when undefined)
    with its 95% percentile bootstrap interval (2,000 resamples, seed 0), as in
    reports.
    """

    n: int
    percent: float
    percent_interval: tuple[float, float]
    kappa: float | None = None
    kappa_interval: tuple[float, float] | None = None


def _finite(interval: tuple[float, float]) -> tuple[float, float] | None:
    low, high = (float(v) for v in interval)
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


def agreement_of(humans: list[str], judges: list[str], rubric: Rubric) -> Agreement | None:
    """Percent agreement (Wilson interval) and Cohen's kappa (bootstrap interval).

    None without the statistics module: a figure is never shown without its interval.
    """
    try:  # imported here: the app still labels without the statistics stack
        from judgekit.stats import cohen_kappa, percent_agreement
    except ImportError:
        return None
    labels = rubric.scale.labels
    try:
        percent = percent_agreement(humans, judges, labels=labels)
        percent_interval = _finite(percent.confidence_interval(confidence_level=0.95))
    except ValueError:
        return None
    if percent_interval is None:
        return None
    weights: Literal["quadratic"] | None = "quadratic" if rubric.scale.kind == "ordinal" else None
    kappa: float | None = None
    kappa_interval: tuple[float, float] | None = None
    try:
        result = cohen_kappa(humans, judges, weights=weights, labels=labels)
        if math.isfinite(result.statistic):
            kappa_interval = _finite(result.confidence_interval(
                confidence_level=0.95, method="bootstrap", n_resamples=2000, random_state=0
            ))
            kappa = float(result.statistic) if kappa_interval is not None else None
    except ValueError:
        kappa, kappa_interval = None, None
    return Agreement(percent.n, float(percent.statistic), percent_interval, kappa, kappa_interval)
