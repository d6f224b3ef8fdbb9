"""The cases a bootstrap interval cannot describe: constant raters and perfect agreement.

A percentile bootstrap collapses to a point when every resample gives the same
value. That happens for three different reasons, and each calls for a different
verdict, so the verdict rule asks this module which one it is looking at:

- the **judge is constant** (one verdict for every item) while the humans used
  two or more classes: kappa is exactly 0 in every resample. The width of the
  interval is not the problem; the judge cannot discriminate. The evidence is its
  hit rate on the items humans put in another class (0 of m), with a Wilson bound.
- the **humans are constant**: chance-corrected agreement cannot be measured on
  this sample at all, whatever the judge does; more labels of the other class(es)
  are what is missing.
- **perfect agreement**: every resample gives 1, which says nothing about how
  much lower the true value could be. A Wilson lower bound on agreement, carried
  through the statistic's chance correction, stands in for the missing interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from judgekit import stats
from judgekit.report._format import num
from judgekit.report.model import Agreement, Confusion, Stat
from judgekit.stats._resample import z_critical

#: Primary statistics that are plain shares of agreeing items (no chance correction).
PROPORTIONS = frozenset(
    {"percent_agreement", "exact_agreement", "agreement_with_ties", "agreement_without_ties"}
)


@dataclass(frozen=True)
class ConstantJudge:
    """The judge gave ``label`` on all ``n`` items; ``miss`` is its hit rate on the rest."""

    label: str
    n: int
    miss: Stat  # judge's agreement on the items humans put in another class: 0 of m
    rate_name: str  # "TNR", "TPR", or a description for non-binary scales

    def evidence(self) -> str:
        """``TNR 0.000 [0.000, 0.242], n=12`` for the reason sentence."""
        m = self.miss
        return (
            f"{self.rate_name} {num(m.statistic)} [{num(m.ci_low)}, {num(m.ci_high)}], n={m.n}"
        )


def _used(counts: np.ndarray, labels: tuple[str, ...]) -> list[str]:
    return [label for label, c in zip(labels, counts.tolist(), strict=True) if c > 0]


def _matrix(confusion: Confusion) -> np.ndarray:
    return np.asarray(confusion.matrix, dtype=float).reshape(
        len(confusion.labels), len(confusion.labels)
    )


def constant_judge(agreement: Agreement, confidence_level: float) -> ConstantJudge | None:
    """The judge's single verdict, when it used one and the humans used two or more."""
    conf = agreement.confusion
    m = _matrix(conf)
    judge_used = _used(m.sum(axis=1), conf.labels)
    human_used = _used(m.sum(axis=0), conf.labels)
    if len(judge_used) != 1 or len(human_used) < 2:
        return None
    label = judge_used[0]
    n = int(m.sum())
    if set(conf.labels) == {"pass", "fail"}:
        # the report's own TNR/TPR figure, so the reason quotes what the table shows
        key, rate_name = ("tnr", "TNR") if label == "pass" else ("tpr", "TPR")
        miss = agreement.stats.get(key)
        if miss is not None and miss.defined:
            return ConstantJudge(label, n, miss, rate_name)
    others = n - int(m[:, conf.labels.index(label)].sum())
    low, high = stats.wilson_interval(0, others, confidence_level=confidence_level)
    miss = Stat(0.0, low, high, others, "wilson")
    return ConstantJudge(label, n, miss, "agreement on the items humans labeled otherwise")


def constant_human(confusion: Confusion) -> str | None:
    """The single human label when the reference used only one class."""
    used = _used(_matrix(confusion).sum(axis=0), confusion.labels)
    return used[0] if len(used) == 1 else None


def is_perfect(confusion: Confusion) -> bool:
    """Judge and human agree on every compared item."""
    m = _matrix(confusion)
    return m.sum() > 0 and float(np.trace(m)) == float(m.sum())


def chance_agreement(confusion: Confusion, *, quadratic: bool = False) -> float:
    """Kappa's p_e from the confusion margins (quadratic weights for weighted kappa)."""
    m = _matrix(confusion)
    total = m.sum()
    rows, cols = m.sum(axis=1) / total, m.sum(axis=0) / total
    k = len(confusion.labels)
    if quadratic and k > 1:
        i, j = np.indices((k, k))
        weights = 1.0 - (i - j) ** 2 / (k - 1) ** 2
    else:
        weights = np.eye(k)
    return float(rows @ weights @ cols)


@dataclass(frozen=True)
class PerfectBound:
    """What perfect agreement on ``units`` independent units supports at the given level."""

    units: int
    agreement_low: float  # Wilson lower bound on the share of agreeing units
    statistic_low: float  # that bound carried through the statistic's chance correction
    units_needed: int | None  # units for the bound to reach the threshold (None: never)


def perfect_bound(
    primary: str, confusion: Confusion, units: int, threshold: float, confidence_level: float
) -> PerfectBound:
    """Lower bound on the primary statistic implied by n/n agreeing units.

    Observed agreement p_o is at least the Wilson lower bound L of units/units, and
    kappa = (p_o - p_e) / (1 - p_e) grows with p_o, so (L - p_e) / (1 - p_e) bounds it
    from below (weighted p_o is never below exact agreement, so the bound holds for
    weighted kappa too). Plain agreement shares are bounded by L itself. For other
    chance-corrected figures (alpha, AC1) kappa's bound serves as a conservative proxy.
    """
    low = stats.wilson_interval(units, units, confidence_level=confidence_level)[0]
    if primary in PROPORTIONS:
        p_e = 0.0
    else:
        p_e = chance_agreement(confusion, quadratic=primary == "weighted_kappa")
    bound = (low - p_e) / (1.0 - p_e) if p_e < 1.0 else math.nan
    needed_share = threshold * (1.0 - p_e) + p_e  # agreement bound the threshold asks for
    needed: int | None = None
    if 0.0 <= needed_share < 1.0:
        z = z_critical(confidence_level)
        # n / (n + z^2) >= L  <=>  n >= z^2 L / (1 - L)
        needed = max(units, math.ceil(z * z * needed_share / (1.0 - needed_share)))
    return PerfectBound(units, low, bound, needed)
