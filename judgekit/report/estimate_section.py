"""The estimate section: the humans' rate on every judged item, corrected for the judge's errors.

A judge is calibrated so it can be used on the items nobody labels. Averaging its
verdicts estimates the judge's own rate; this section puts beside it the
labels-only estimate, PPI++ (labels and verdicts together, valid whatever the
judge's quality) and, for binary scales, the Rogan-Gladen correction.

The labeled items are the report's compared pairs (so the human reference of an
item is the report's own); the judged population is every item with an ok
judgment by the report's judge. Design: labels from a non-uniform queue are
weighted by 1/inclusion probability; items sharing a cluster get a
cluster-robust variance; ``by`` gives stratified PPI++ per slice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgekit import stats
from judgekit.report.estimate_inputs import EstimateInputs, estimate_inputs
from judgekit.report.measures import estimate_reference
from judgekit.report.model import Stat
from judgekit.report.pairing import AnyItem, ItemKey, Pairing
from judgekit.store import JudgmentSelection, Store
from judgekit.types import Rubric, Scale

#: How each estimate is named in the report and its JSON.
METHOD_NAMES = {
    "judge_only": "judge only (the judge's own rate, not corrected)",
    "labels_only": "labels only",
    "ppi": "PPI++",
    "rogan_gladen": "Rogan-Gladen",
}


@dataclass(frozen=True)
class Target:
    """One quantity to estimate: its key, its name and the number each label stands for."""

    key: str
    name: str
    values: Mapping[str, float]
    bounds: tuple[float, float]
    binary: bool = False


def targets_for(scale: Scale) -> list[Target]:
    """Binary: pass rate; ordinal: mean score and share at or above each level; pairwise:
    win rate of A over B with ties as half. Categorical scales have no single target."""
    if scale.kind == "binary":
        return [Target("pass_rate", "pass rate", {"pass": 1.0, "fail": 0.0}, (0.0, 1.0), True)]
    if scale.kind == "pairwise":
        values = {"A": 1.0, "B": 0.0, "tie": 0.5}
        return [
            Target("win_rate_a", "win rate of A over B (a tie counts half)", values, (0.0, 1.0))
        ]
    if scale.kind == "ordinal":
        levels = {
            level.label: float(level.value) for level in scale.levels if level.value is not None
        }
        if not levels:
            return []
        out = [
            Target("mean_score", "mean score", levels, (min(levels.values()), max(levels.values())))
        ]
        for label, value in sorted(levels.items(), key=lambda kv: kv[1])[1:]:
            shares = {k: 1.0 if v >= value else 0.0 for k, v in levels.items()}
            out.append(
                Target(f"share_at_least_{label}", f"share at or above {label}", shares, (0.0, 1.0))
            )
        return out
    return []


@dataclass(frozen=True)
class TargetEstimate:
    """The four estimates of one target side by side."""

    key: str
    name: str
    stats: Mapping[str, Stat]
    lam: float
    effective_labels: float

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "name": self.name}
        for name in METHOD_NAMES:
            out[name] = self.stats[name].to_dict() if name in self.stats else None
        out["lambda"] = _finite(self.lam)
        out["effective_labels"] = _finite(self.effective_labels)
        return out


@dataclass(frozen=True)
class SliceEstimate:
    """PPI++ on one slice (its own lambda) and its share of the judged items."""

    name: str
    n_labeled: int
    n_judged: int
    ppi: Stat


@dataclass(frozen=True)
class EstimateSection:
    """Everything the renderers show about the estimate, plus the inputs for comparisons."""

    scale_kind: str
    n_labeled: int
    n_judged: int
    targets: tuple[TargetEstimate, ...]
    design: str
    notes: tuple[str, ...] = ()
    reason: str | None = None
    by: str | None = None
    slices: tuple[SliceEstimate, ...] = ()
    stratified: Stat | None = None
    inputs: EstimateInputs | None = field(default=None, compare=False, repr=False)
    #: how the human value of a labeled item was formed (``--reference``), in words
    reference: str = ""
    target_specs: tuple[Target, ...] = field(default=(), compare=False, repr=False)

    @property
    def headline(self) -> TargetEstimate | None:
        return self.targets[0] if self.targets else None

    def to_dict(self) -> dict[str, Any]:
        head = self.headline
        out: dict[str, Any] = {
            "scale_kind": self.scale_kind,
            "target": head.key if head else None,
            "n_labeled": self.n_labeled,
            "n_judged": self.n_judged,
            "design": self.design,
            "reference": self.reference,
        }
        for name in METHOD_NAMES:
            out[name] = head.stats[name].to_dict() if head and name in head.stats else None
        out["lambda"] = _finite(head.lam) if head else None
        out["effective_labels"] = _finite(head.effective_labels) if head else None
        out["targets"] = [t.to_dict() for t in self.targets]
        out["by"] = self.by
        out["slices"] = [
            {
                "name": s.name,
                "n_labeled": s.n_labeled,
                "n_judged": s.n_judged,
                "ppi": s.ppi.to_dict(),
            }
            for s in self.slices
        ]
        out["stratified"] = self.stratified.to_dict() if self.stratified else None
        out["notes"] = list(self.notes)
        if self.reason:
            out["reason"] = self.reason
        return out


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def to_stat(result: stats.EstimateResult, confidence_level: float, method: str) -> Stat:
    """A stats result as the report's :class:`Stat` (interval at the report's level)."""
    low, high = result.confidence_interval(confidence_level)
    return Stat(result.statistic, low, high, result.n, method, result.reason, result.note)


def target_arrays(
    target: Target, inputs: EstimateInputs
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human values, judge values on the labeled items, judge values on every judged item.

    The mean score uses the numbers of :mod:`judgekit.report.measures` (the human
    reference number under ``--reference``, the judge's own score); the other
    targets are shares of labels.
    """
    if (
        target.key == "mean_score"
        and inputs.human_values is not None
        and inputs.judge_values_labeled is not None
        and inputs.judge_values_all is not None
    ):
        return (
            np.asarray(inputs.human_values, dtype=np.float64),
            np.asarray(inputs.judge_values_labeled, dtype=np.float64),
            np.asarray(inputs.judge_values_all, dtype=np.float64),
        )
    return (
        np.array([target.values[x] for x in inputs.human], dtype=np.float64),
        np.array([target.values[x] for x in inputs.judge_labeled], dtype=np.float64),
        np.array([target.values[x] for x in inputs.judge_all], dtype=np.float64),
    )


def estimate_target(
    target: Target, inputs: EstimateInputs, confidence_level: float
) -> TargetEstimate:
    """Judge only, labels only, PPI++ and (binary) Rogan-Gladen for one target."""
    y, f, fu = target_arrays(target, inputs)
    design: dict[str, Any] = {"weights": inputs.weights}
    if inputs.clusters is not None:
        design.update(clusters=inputs.clusters, unlabeled_clusters=inputs.clusters_all)
    out: dict[str, Stat] = {}
    judge_only = stats.classical_mean(fu, bounds=target.bounds, method="judge only")
    out["judge_only"] = to_stat(judge_only, confidence_level, "judge only, not corrected")
    labels = stats.classical_mean(
        y,
        weights=inputs.weights,
        clusters=inputs.clusters,
        bounds=target.bounds,
    )
    out["labels_only"] = to_stat(labels, confidence_level, "labels only")
    ppi = stats.ppi_mean(y, f, fu, bounds=target.bounds, **design)
    out["ppi"] = to_stat(ppi, confidence_level, "PPI++")
    if target.binary:
        rg = stats.rogan_gladen(y, f, fu, **design)
        out["rogan_gladen"] = to_stat(rg, confidence_level, "Rogan-Gladen, delta method")
    return TargetEstimate(target.key, target.name, out, ppi.lam, ppi.effective_n)


def stratified_estimate(
    target: Target, inputs: EstimateInputs, confidence_level: float
) -> tuple[Stat, tuple[SliceEstimate, ...]]:
    """Stratified PPI++ by slice: one estimate per slice, the overall weighted by slice size."""
    y, f, fu = target_arrays(target, inputs)
    sizes: dict[str, int] = {}
    for name in inputs.slices_all:
        sizes[name] = sizes.get(name, 0) + 1
    result = stats.ppi_mean_stratified(
        y,
        f,
        fu,
        inputs.slices,
        inputs.slices_all,
        weights=inputs.weights,
        clusters=inputs.clusters,
        unlabeled_clusters=inputs.clusters_all,
        sizes=sizes,
        bounds=target.bounds,
    )
    labeled_counts: dict[str, int] = {}
    for name in inputs.slices:
        labeled_counts[name] = labeled_counts.get(name, 0) + 1
    rows = tuple(
        SliceEstimate(
            name,
            labeled_counts.get(name, 0),
            sizes.get(name, 0),
            to_stat(res, confidence_level, "PPI++"),
        )
        for name, res in sorted(result.strata.items())
    )
    return to_stat(result, confidence_level, "stratified PPI++, weighted by slice size"), rows


def estimate_section(
    store: Store,
    rubric: Rubric,
    selection: JudgmentSelection,
    pairing: Pairing,
    items: Mapping[ItemKey, AnyItem],
    *,
    cluster_by: str | None,
    queue: str | None,
    confidence_level: float,
    by: str | None = None,
) -> EstimateSection:
    """The section for the report (and ``judgekit estimate``)."""
    scale = rubric.scale
    targets = targets_for(scale)
    if not targets:
        return EstimateSection(
            scale.kind, 0, 0, (), "", reason=f"no single target on a {scale.kind} scale"
        )
    inputs = estimate_inputs(
        store, rubric, selection, pairing, items, cluster_by=cluster_by, queue=queue
    )
    reason = None
    if not inputs.judged:
        reason = "no judged items: run the judge first"
    elif not inputs.labeled:
        reason = "no labeled item has a verdict by this judge: label some judged items"
    estimates = tuple(estimate_target(t, inputs, confidence_level) for t in targets)
    stratified: Stat | None = None
    slices: tuple[SliceEstimate, ...] = ()
    if by is not None:
        stratified, slices = stratified_estimate(targets[0], inputs, confidence_level)
    return EstimateSection(
        scale.kind,
        len(inputs.labeled),
        len(inputs.judged),
        estimates,
        inputs.design,
        inputs.notes,
        reason,
        by,
        slices,
        stratified,
        inputs,
        estimate_reference(inputs.reference, inputs.human_values is not None),
        tuple(targets),
    )


@dataclass(frozen=True)
class EstimateComparison:
    """PPI++ of two candidates' headline target (same judge, same prompts) and its difference."""

    target: str
    datasets: tuple[str, str]
    first: Stat
    second: Stat
    difference: Stat
    n_clusters: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "datasets": list(self.datasets),
            "first": self.first.to_dict(),
            "second": self.second.to_dict(),
            "difference": self.difference.to_dict(),
            "n_clusters": self.n_clusters,
        }


def _prompt_ids(keys: Sequence[ItemKey], clusters: Sequence[str] | None) -> list[str]:
    """One id per prompt shared by both candidates: the item id, or the item's cluster."""
    if clusters is not None:
        return list(clusters)
    return [f"id:{item_id}" for _, item_id in keys]


def compare_sections(
    first: EstimateSection,
    second: EstimateSection,
    datasets: tuple[str, str],
    confidence_level: float,
) -> EstimateComparison:
    """theta_A - theta_B by PPI++, items with the same id (prompt) clustered across both."""
    a, b = first.inputs, second.inputs
    target = first.target_specs[0] if first.target_specs else None
    if target is None or a is None or b is None:
        raise ValueError("both sections need a target and their inputs")
    arrays = [target_arrays(target, inputs) for inputs in (a, b)]
    ids = (
        _prompt_ids(a.labeled, a.clusters),
        _prompt_ids(a.judged, a.clusters_all),
        _prompt_ids(b.labeled, b.clusters),
        _prompt_ids(b.judged, b.clusters_all),
    )
    result = stats.ppi_mean_difference(arrays[0], arrays[1], clusters=ids)
    diff = to_stat(result, confidence_level, "PPI++ difference, clustered by prompt")
    sides = [
        to_stat(r, confidence_level, "PPI++") if r is not None else diff
        for r in (result.first, result.second)
    ]
    return EstimateComparison(target.name, datasets, sides[0], sides[1], diff, result.n_clusters)


def undefined_section(scale_kind: str, reason: str) -> EstimateSection:
    """A section that says why there is no estimate."""
    return EstimateSection(scale_kind, 0, 0, (), "", reason=reason)


__all__ = [
    "METHOD_NAMES",
    "EstimateComparison",
    "EstimateSection",
    "SliceEstimate",
    "Target",
    "TargetEstimate",
    "compare_sections",
    "estimate_section",
    "estimate_target",
    "stratified_estimate",
    "target_arrays",
    "targets_for",
    "to_stat",
    "undefined_section",
]
