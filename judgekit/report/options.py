"""The options of one report, in a module of their own.

Every part of the report build reads them (selection, weighting, planning), so
they live below all of those parts rather than in :mod:`judgekit.report.build`,
which imports the parts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportOptions:
    """What to compare and how to decide (the ``judgekit report`` flags)."""

    dataset: str | None = None
    judge_run: str | None = None
    model: str | None = None
    annotator: str | None = None
    include_unblinded: bool = False  # pool labels given with the judge shown
    cluster_by: str | None = None
    queue: str | None = None
    primary: str | None = None
    min_agreement: float = 0.6
    min_slice_agreement: float | None = None
    half_width: float = 0.1
    confidence_level: float = 0.95
    n_resamples: int = 1000
    random_state: int = 0
    fdr_q: float = 0.05
    estimate_by: str | None = None  # "slice": stratified PPI++ in the estimate section
    #: FAIL when the position probe's conflict rate has its lower bound above this.
    max_position_conflict: float = 0.3
    #: FAIL when the injection probe's worst flip rate has its lower bound above this.
    max_injection_flip: float = 0.1
    #: FAIL when the identical-pairs probe's decisive share (or, without a tie, its slot
    #: imbalance) has its lower bound above this.
    max_identical_decisive: float = 0.5


__all__ = ["ReportOptions"]
