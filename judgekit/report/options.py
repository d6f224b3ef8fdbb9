"""The options of one report, in a module of their own.

Every part of the report build reads them (selection, weighting, planning), so
they live below all of those parts rather than in :mod:`judgekit.report.build`,
which imports the parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ReportOptions:
    """What to compare and how to decide (the ``judgekit report`` flags)."""

    dataset: str | None = None
    judge_run: str | None = None
    model: str | None = None
    annotator: str | None = None
    include_unblinded: bool = False  # pool labels given with the judge shown
    #: ``--reference``: majority, median or mean (None: lower median for ordinal scales,
    #: majority otherwise); see :mod:`judgekit.report.measures`
    reference: str | None = None
    #: ``--group-by``: the field whose groups the per-group correlation averages over
    #: (default: the prompt); see :mod:`judgekit.report.levels`
    group_by: str | None = None
    #: ``--system-by``: the field naming the candidate system of each item (default: model)
    system_by: str | None = None
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
    #: FAIL when the injection probe's worst net move (toward - away) has its lower bound
    #: above this.
    max_injection_flip: float = 0.1
    #: FAIL when the identical-pairs probe's decisive share (or, without a tie, its slot
    #: imbalance) has its lower bound above this.
    max_identical_decisive: float = 0.5
    #: The judge's model family for the self-preference probe (default: from its model name).
    judge_family: str | None = None
    #: ``--family-map FILE``: model name -> family, overriding the name rule for the judge and
    #: the responses (see :mod:`judgekit.families`)
    family_map: Mapping[str, str] | None = None
    #: FAIL when self-preference (judge minus human own-family win rate) has its lower bound
    #: above this.
    max_self_preference: float = 0.1
    #: FAIL when the scale-use variance ratio (judge / human) has its upper bound below this.
    min_variance_ratio: float = 0.5
    #: FAIL when the expected calibration error of the judge's confidence has its lower
    #: bound above this.
    max_ece: float = 0.15
    #: The alternative annotator test's cost-benefit margin (as ``agree --epsilon``).
    epsilon: float = 0.2
    #: Probes asked for explicitly (probe -> the option that asked): one that cannot be
    #: computed is an input error instead of a line in the report.
    required: Mapping[str, str] = field(default_factory=dict)


__all__ = ["ReportOptions"]
