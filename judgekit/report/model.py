"""The calibration report as plain data, built once and rendered four ways.

Every renderer (text, Markdown, HTML, JSON) reads the same :class:`Report`, so a
figure cannot differ between formats. Every number travels as a :class:`Stat`
carrying its n and interval, because a figure without them invites a decision
the data cannot support (:mod:`judgekit.report.stat`; ``Stat``, ``ClusteredP`` and
``undefined`` are importable from here too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from judgekit.report.stat import ClusteredP as ClusteredP  # re-exported: the model's names
from judgekit.report.stat import Stat as Stat
from judgekit.report.stat import undefined as undefined

if TYPE_CHECKING:
    from judgekit.report.alignment import Alignment
    from judgekit.report.estimate_section import EstimateSection
    from judgekit.report.levels import Levels

Decision = Literal["PASS", "FAIL", "INSUFFICIENT DATA"]

#: Exit code of ``judgekit report`` per decision, so the report can gate a pipeline.
EXIT_CODES: dict[str, int] = {"PASS": 0, "FAIL": 1, "INSUFFICIENT DATA": 3}


@dataclass(frozen=True)
class Provenance:
    """Where every number came from: judge, endpoint, sampling, rubric, data, dates."""

    rubric_name: str
    rubric_version: str
    rubric_sha256: str
    datasets: tuple[str, ...]
    judge_models_requested: tuple[str, ...]
    judge_models_returned: tuple[str, ...]
    endpoints: tuple[str, ...]
    sampling: tuple[Mapping[str, Any], ...]
    run_ids: tuple[str, ...]
    judgekit_versions: tuple[str, ...]
    report_judgekit_version: str
    first_judgment_at: str | None
    last_judgment_at: str | None
    generated_at: str
    n_judgments: int
    n_labels: int
    n_annotators: int
    n_labeled_items: int
    imported: bool = False
    notes: tuple[str, ...] = ()
    #: labels left out of / counted beside the reference: unblinded_labels,
    #: adjudicated_items, no_majority_items, flagged_items (judgekit.report.reference)
    label_counts: Mapping[str, int] = field(default_factory=dict)
    unblinded_included: bool = False  # --include-unblinded: those labels are pooled in


@dataclass(frozen=True)
class StatusRow:
    """Count and rate (Wilson interval) of one judgment status."""

    status: str
    count: int
    rate: Stat


@dataclass(frozen=True)
class Health:
    """How often the judge answered at all; failures are reported here, never scored."""

    total: int
    rows: tuple[StatusRow, ...]
    failed_labeled_items: int  # labeled items whose judgment failed (excluded from agreement)
    stale_labeled_items: int = 0  # labeled items judged only on an older version of their content

    def count(self, status: str) -> int:
        for row in self.rows:
            if row.status == status:
                return row.count
        return 0


@dataclass(frozen=True)
class Confusion:
    """Judge (rows) by human (columns) counts over the compared items."""

    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "judge_by_human": [list(r) for r in self.matrix]}


@dataclass(frozen=True)
class Agreement:
    """Judge-versus-human figures chosen by the scale kind, plus the confusion matrix."""

    scale_kind: str
    primary: str
    stats: Mapping[str, Stat]
    confusion: Confusion
    n_items: int
    reference: str  # how the human reference per item was formed
    interval_method: str
    cluster_by: str | None = None
    n_clusters: int | None = None
    #: ``--reference`` as applied (majority, median, mean)
    reference_rule: str = "majority"
    #: compared items whose judge score (not its label) feeds the numeric figures
    n_scored: int = 0

    @property
    def primary_stat(self) -> Stat:
        return self.stats[self.primary]


@dataclass(frozen=True)
class Ceiling:
    """Human-human agreement on items two or more annotators labeled: the judge's ceiling."""

    n_items: int
    n_annotators: int
    stats: Mapping[str, Stat]
    reason: str | None = None
    #: One sentence: does the judge agree with people as well as they agree with each other?
    parity: str | None = None
    #: The alternative annotator test (``AltTestResult.to_dict()``), with 3+ annotators.
    alt_test: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class SliceRow:
    """One slice's figures and its test against the rest of the data."""

    name: str
    n: int
    primary: Stat
    percent_agreement: Stat
    pvalue: float
    adjusted_pvalue: float
    flagged: bool


@dataclass(frozen=True)
class Slices:
    """Per-slice figures; slices worse than the rest after Benjamini-Hochberg are flagged."""

    rows: tuple[SliceRow, ...]
    n_comparisons: int
    q: float
    test: str


@dataclass(frozen=True)
class Weighted:
    """Population estimates re-weighted by inverse inclusion probability."""

    queue: str
    strategy: str
    n_weighted: int
    stats: Mapping[str, Stat]
    note: str


@dataclass(frozen=True)
class FailureSensitivity:
    """How the figures would move if every failed judgment counted as a disagreement."""

    n_failed: int
    rule: str
    stats: Mapping[str, Stat]


@dataclass(frozen=True)
class ProbeEntry:
    """One stored probe result: its name, run, statistics and any plot data."""

    probe: str
    run_id: str
    stats: Mapping[str, Stat]
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Bias:
    """Bias section: headline probe statistics plus every stored probe result."""

    headline: Mapping[str, Stat]
    probes: tuple[ProbeEntry, ...]
    #: probes the report computes itself that could not be computed: name -> one-line reason
    absent: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ScatterPoint:
    """Judge score against response length, for the score-vs-length plot."""

    length: int
    score: float


@dataclass(frozen=True)
class GateCheck:
    """One bias gate of the verdict: its option and threshold, the figure it read, the outcome.

    ``bound`` is which end of the figure's interval the gate reads ("lower": FAIL when
    it is above the threshold; "upper": FAIL when it is below). ``statistic`` is None
    and ``reason`` says why when the probe could not be computed.
    """

    name: str
    option: str
    threshold: float
    bound: Literal["lower", "upper"]
    statistic: Stat | None
    tripped: bool
    reason: str | None = None
    #: the gate's name in words when it depends on the probe (the position gate on a
    #: pointwise rubric reads reversed levels, not swapped responses); not in the JSON
    label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "option": self.option,
            "threshold": self.threshold,
            "bound": self.bound,
            "statistic": None if self.statistic is None else self.statistic.to_dict(),
            "tripped": self.tripped,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Explanation:
    """One reason beside the agreement rule: a tripped gate or a warning, in full.

    ``name`` is the gate's name (``GateCheck.name``) for a ``fail``, or the probe
    statistic's key for a ``warning``; ``line`` is the warning's one-line form (a
    failure's line is made from its :class:`GateCheck`).
    """

    name: str
    kind: Literal["fail", "warning"]
    text: str
    line: str = ""


@dataclass(frozen=True)
class VerdictResult:
    """The decision, its one-sentence reason, and what more data would settle it."""

    decision: Decision
    reason: str
    primary: str
    threshold: float
    statistic: Stat
    target_half_width: float
    labels_needed: int | None = None  # more labels needed (INSUFFICIENT DATA only)
    slice_threshold: float | None = None
    failing_slices: tuple[str, ...] = ()
    weighted: bool = False  # read from the inverse-probability-weighted (population) estimate
    gates: tuple[GateCheck, ...] = ()  # the bias gates checked, in order
    #: what the agreement rule alone decided, and why (None: ``decision`` and ``reason``)
    agreement_decision: Decision | None = None
    agreement_reason: str | None = None
    #: tripped gates and warnings, in the order they were found (judgekit.report.verdict_lines)
    explanations: tuple[Explanation, ...] = ()
    #: items of the dataset(s) not yet compared: the most labels that could still be added
    labels_available: int | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.decision]

    @property
    def agreement_outcome(self) -> Decision:
        """The decision of the agreement rule before any gate."""
        return self.agreement_decision or self.decision

    @property
    def agreement_text(self) -> str:
        """The agreement rule's own sentence, without what the gates added."""
        return self.agreement_reason if self.agreement_reason is not None else self.reason


@dataclass(frozen=True)
class Report:
    """Everything a renderer needs; built by :func:`judgekit.report.build.build_report`."""

    provenance: Provenance
    health: Health
    agreement: Agreement | None
    ceiling: Ceiling | None
    slices: Slices | None
    weighted: Weighted | None
    failure_sensitivity: FailureSensitivity | None
    bias: Bias
    verdict: VerdictResult
    scatter: Sequence[ScatterPoint] = ()
    scatter_total: int = 0
    confidence_level: float = 0.95
    n_resamples: int = 1000
    estimate: EstimateSection | None = None
    #: agreement per item, per group and per system (judgekit.report.levels)
    levels: Levels | None = None
    #: ``judgekit align`` on this rubric or its parent (judgekit.report.alignment)
    alignment: Alignment | None = None

    def to_frame(self, backend: str = "pandas") -> Any:
        """Every figure as a DataFrame row (section, name, statistic, ci_low, ci_high, n...)."""
        from judgekit.report.notebook import report_frame

        return report_frame(self, backend)

    def _repr_html_(self) -> str:
        """The HTML report in a notebook, its CSS scoped so the notebook keeps its style."""
        from judgekit.report.notebook import report_html_fragment

        return report_html_fragment(self)
