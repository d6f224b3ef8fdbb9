"""One figure of a report: its value, n and interval, and why it is undefined or unusual.

Every number of a report travels as a :class:`Stat` carrying its n and interval, because a
figure without them invites a decision the data cannot support. Kept apart from the
report model (:mod:`judgekit.report.model`, which re-exports these names) so that model
stays readable in one sitting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


def _finite_or_none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value + 0.0 if math.isfinite(value) else None  # + 0.0 turns -0.0 into 0.0


@dataclass(frozen=True)
class ClusteredP:
    """A p-value that counts clusters (prompts) rather than items, and what a cluster is.

    Items of one prompt are not independent evidence; a test that treats them as
    independent is too often significant (benchmarks/correlation_pvalues.py). NaN when
    the clustered test is undefined (fewer than two clusters, a sample in perfect order).
    """

    pvalue: float
    by: str  # what a cluster is: "prompt", "cluster", ...
    n_clusters: int
    reason: str | None = None  # why ``pvalue`` is NaN

    def label(self) -> str:
        """``clustered by prompt, 12 clusters`` (and why it is undefined, when it is): how
        every format names the p-value."""
        why = f": {self.reason}" if self.reason and not math.isfinite(self.pvalue) else ""
        return f"clustered by {self.by}, {self.n_clusters} clusters{why}"


@dataclass(frozen=True)
class Stat:
    """One figure with its n and confidence interval (NaN bounds when undefined).

    ``method`` says how the interval was made ("bootstrap", "cluster bootstrap",
    "wilson", ...); ``reason`` says why a value is NaN; ``note`` says why a defined
    value's interval is not the one the method would normally give (a fallback).
    ``pvalue`` is the p-value of the test that goes with the figure, when there is
    one (stored probe statistics); None otherwise. ``cluster_p`` is the same test
    counting clusters, present when items share a cluster (rank correlations with
    length); every format then shows it instead of ``pvalue`` (:attr:`shown_pvalue`).
    """

    statistic: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    n: int = 0
    method: str = ""
    reason: str | None = None
    note: str | None = None
    pvalue: float | None = None
    cluster_p: ClusteredP | None = None

    @property
    def shown_pvalue(self) -> float | None:
        """The p-value the report shows and adjusts: by cluster when there is one."""
        return self.pvalue if self.cluster_p is None else self.cluster_p.pvalue

    @property
    def defined(self) -> bool:
        return math.isfinite(self.statistic)

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2.0

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape: NaN becomes null, a reason is added when undefined.

        ``pvalue`` is added when the figure has one (null when its test is undefined), and
        ``cluster_pvalue`` (null when undefined), ``cluster_by`` and ``n_clusters`` when it
        has a p-value by cluster.
        """
        out: dict[str, Any] = {
            "statistic": _finite_or_none(self.statistic),
            "ci_low": _finite_or_none(self.ci_low),
            "ci_high": _finite_or_none(self.ci_high),
            "n": int(self.n),
        }
        if self.reason:
            out["reason"] = self.reason
        if self.note:
            out["note"] = self.note
        if self.pvalue is not None:
            out["pvalue"] = _finite_or_none(self.pvalue)
        if self.cluster_p is not None:
            out["cluster_pvalue"] = _finite_or_none(self.cluster_p.pvalue)
            if self.cluster_p.reason and not math.isfinite(self.cluster_p.pvalue):
                out["cluster_pvalue_reason"] = self.cluster_p.reason
            out["cluster_by"] = self.cluster_p.by
            out["n_clusters"] = self.cluster_p.n_clusters
        return out


def undefined(reason: str, n: int = 0) -> Stat:
    """A NaN statistic that says why it is undefined."""
    return Stat(math.nan, math.nan, math.nan, n, "", reason)


__all__ = ["ClusteredP", "Stat", "undefined"]
