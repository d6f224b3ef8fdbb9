"""JSON rendering with a stable, documented schema (``docs/report-schema.md``).

Every statistic is ``{"statistic", "ci_low", "ci_high", "n"}`` (plus ``"reason"``
when undefined), NaN is written as ``null`` so the file is strict JSON, and the
top-level ``schema_version`` changes only when a field is removed or renamed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from judgekit.report.model import Report, Stat
from judgekit.report.verdict_lines import explanation_texts, reason_lines

SCHEMA_VERSION = "1"


def _stats(stats: Mapping[str, Stat]) -> dict[str, Any]:
    return {name: stat.to_dict() for name, stat in stats.items()}


def _num(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _jsonable(value: Any) -> Any:
    """Make probe details strict JSON (NaN/inf -> null, tuples -> lists)."""
    if isinstance(value, float):
        return value + 0.0 if math.isfinite(value) else None  # never -0.0
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Stat):
        return value.to_dict()
    return value


def report_to_dict(report: Report) -> dict[str, Any]:
    """The report as the documented JSON object."""
    prov = asdict(report.provenance)
    prov = {k: (list(v) if isinstance(v, tuple) else v) for k, v in prov.items()}
    prov["sampling"] = [dict(s) for s in report.provenance.sampling]
    health = report.health
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "provenance": _jsonable(prov),
        "status_counts": {row.status: row.count for row in health.rows},
        "status_rates": {row.status: row.rate.to_dict() for row in health.rows},
        "n_judgments": health.total,
        "failed_labeled_items": health.failed_labeled_items,
        "stale_labeled_items": health.stale_labeled_items,
        "confidence_level": report.confidence_level,
        "n_resamples": report.n_resamples,
    }
    agreement = report.agreement
    if agreement is None:
        out["agreement"] = None
    else:
        out["agreement"] = {
            "scale_kind": agreement.scale_kind,
            "primary": agreement.primary,
            "n_items": agreement.n_items,
            "reference": agreement.reference,
            "reference_rule": agreement.reference_rule,
            "judge_scored_items": agreement.n_scored,
            "interval_method": agreement.interval_method,
            "cluster_by": agreement.cluster_by,
            "n_clusters": agreement.n_clusters,
            "statistics": _stats(agreement.stats),
            "confusion_matrix": agreement.confusion.to_dict(),
        }
    ceiling = report.ceiling
    out["human_ceiling"] = (
        None
        if ceiling is None
        else {
            "n_items": ceiling.n_items,
            "n_annotators": ceiling.n_annotators,
            "statistics": _stats(ceiling.stats),
            "reason": ceiling.reason,
            "parity": ceiling.parity,
            "alt_test": None if ceiling.alt_test is None else dict(ceiling.alt_test),
        }
    )
    slices = report.slices
    out["slices"] = (
        None
        if slices is None
        else {
            "n_comparisons": slices.n_comparisons,
            "q": slices.q,
            "test": slices.test,
            "rows": [
                {
                    "slice": row.name,
                    "n": row.n,
                    "primary": row.primary.to_dict(),
                    "percent_agreement": row.percent_agreement.to_dict(),
                    "pvalue": _num(row.pvalue),
                    "adjusted_pvalue": _num(row.adjusted_pvalue),
                    "flagged": row.flagged,
                }
                for row in slices.rows
            ],
        }
    )
    weighted = report.weighted
    out["weighted"] = (
        None
        if weighted is None
        else {
            "queue": weighted.queue,
            "strategy": weighted.strategy,
            "n": weighted.n_weighted,
            "statistics": _stats(weighted.stats),
            "note": weighted.note,
        }
    )
    out["alignment"] = None if report.alignment is None else _jsonable(report.alignment.to_dict())
    out["estimate"] = None if report.estimate is None else report.estimate.to_dict()
    out["levels"] = None if report.levels is None else report.levels.to_dict()
    sens = report.failure_sensitivity
    out["failures_as_disagreements"] = (
        None
        if sens is None
        else {
            "n_failed": sens.n_failed,
            "rule": sens.rule,
            "statistics": _stats(sens.stats),
        }
    )
    out["bias"] = {
        **{name: stat.to_dict() for name, stat in report.bias.headline.items()},
        "probes": [
            {
                "probe": entry.probe,
                "run_id": entry.run_id,
                "statistics": _stats(entry.stats),
                "details": _jsonable(dict(entry.details)),
            }
            for entry in report.bias.probes
        ],
        "absent": dict(report.bias.absent),
    }
    verdict = report.verdict
    out["verdict"] = {
        "decision": verdict.decision,
        "exit_code": verdict.exit_code,
        "reason": verdict.reason,
        "primary": verdict.primary,
        "threshold": verdict.threshold,
        "statistic": verdict.statistic.to_dict(),
        "target_half_width": verdict.target_half_width,
        "labels_needed": verdict.labels_needed,
        "labels_available": verdict.labels_available,
        "slice_threshold": verdict.slice_threshold,
        "failing_slices": list(verdict.failing_slices),
        "weighted": verdict.weighted,
        "gates": [check.to_dict() for check in verdict.gates],
        "reasons": [line.to_dict() for line in reason_lines(verdict, report.confidence_level)],
        "explanations": explanation_texts(verdict),
    }
    # Convenience: the judge-vs-human statistics also at top level under their names.
    if agreement is not None:
        for name, stat in agreement.stats.items():
            out.setdefault(name, stat.to_dict())
    return out


def render_json(report: Report) -> str:
    """Strict JSON text (``allow_nan=False`` proves no NaN slipped through)."""
    return json.dumps(report_to_dict(report), indent=2, sort_keys=False, allow_nan=False) + "\n"
