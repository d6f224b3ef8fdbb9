"""The header's figures: progress through the queue and agreement with the judge.

Apart from the session's queue and label rules because these are read-only
summaries of its state, and the agreement figure pulls in the statistics stack and
the report's interval code (imported lazily, so the app still labels without it).
A figure is never shown without its interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgekit.types import Rubric

if TYPE_CHECKING:
    from judgekit.report.model import Stat

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

    Each figure comes with the interval ``judgekit report`` gives it at its
    defaults (95%, 1,000 resamples, seed 0): percent agreement with its Wilson
    interval; ``kappa`` (None when undefined) is the report's primary statistic
    (Cohen's kappa; quadratic-weighted on an ordinal scale) with the report's
    interval (BCa bootstrap for weighted kappa), named in ``kappa_method``.
    """

    n: int
    percent: float
    percent_interval: tuple[float, float]
    kappa: float | None = None
    kappa_interval: tuple[float, float] | None = None
    kappa_method: str = ""


def _interval(stat: Stat) -> tuple[float, float] | None:
    low, high = float(stat.ci_low), float(stat.ci_high)
    defined = stat.defined and math.isfinite(low) and math.isfinite(high)
    return (low, high) if defined else None


def agreement_of(humans: list[str], judges: list[str], rubric: Rubric) -> Agreement | None:
    """Percent agreement and the report's primary kappa, each computed and given its
    interval by the report's own code (:func:`judgekit.report.agreement.primary_only`), so
    the header and ``judgekit report`` show the same interval for the same labels.

    Item-level intervals: the header does not know the items' clusters, so on a store
    whose items share clusters the report's (cluster bootstrap) interval is wider.
    None without the statistics stack: a figure is never shown without its interval.
    """
    try:  # imported here: the app still labels without the statistics stack
        from judgekit.report.agreement import PRIMARY_BY_KIND, primary_only
        from judgekit.report.options import ReportOptions
        from judgekit.report.stat_intervals import IntervalSpec
    except ImportError:
        return None
    defaults = ReportOptions()
    spec = IntervalSpec(defaults.confidence_level, defaults.n_resamples, defaults.random_state)
    scale = rubric.scale
    try:  # judge first, human second: the report's order
        percent = primary_only(judges, humans, scale, spec, "percent_agreement")
        kappa = primary_only(judges, humans, scale, spec, PRIMARY_BY_KIND[scale.kind])
    except ValueError:
        return None
    percent_interval = _interval(percent)
    if percent_interval is None:
        return None
    kappa_interval = _interval(kappa)
    if kappa_interval is None:
        return Agreement(percent.n, percent.statistic, percent_interval)
    return Agreement(percent.n, percent.statistic, percent_interval, kappa.statistic,
                     kappa_interval, kappa.method)
