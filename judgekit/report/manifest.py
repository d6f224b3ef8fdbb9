"""The report's opening sections: provenance (what was compared) and judgment health.

Both are read from the store's SQL summary of *all* the judge's judgments, not
only the labeled ones, so the counts describe the whole run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime

from judgekit import __version__, stats
from judgekit.report.model import Health, Provenance, Stat, StatusRow
from judgekit.store import JudgmentSummary, Store
from judgekit.types import STATUSES, Rubric

#: Why every rate of an empty health table is undefined (a store with only probe runs).
NO_JUDGMENTS_REASON = (
    "no judgments of a judge or import run in this selection; probe runs are not the judge "
    "(run `judgekit judge`, or name a probe run with --judge-run)"
)


def health(
    summary: JudgmentSummary, failed_labeled: int, level: float, stale_labeled: int = 0
) -> Health:
    """Count and rate (Wilson interval) of every judgment status.

    With no judgments every rate is NaN, with :data:`NO_JUDGMENTS_REASON` as its reason.
    """
    counts = summary.status_counts
    total = summary.n
    rows = []
    for status in STATUSES:
        k = counts.get(status, 0)
        if total:
            low, high = stats.wilson_interval(k, total, confidence_level=level)
            rows.append(StatusRow(status, k, Stat(k / total, low, high, total, "wilson")))
        else:
            rows.append(StatusRow(status, 0, Stat(math.nan, n=0, reason=NO_JUDGMENTS_REASON)))
    return Health(total, tuple(rows), failed_labeled, stale_labeled)


def provenance(
    store: Store,
    rubric: Rubric,
    summary: JudgmentSummary,
    n_labels: int,
    annotators: set[str],
    labeled: int,
    notes: list[str],
    label_counts: Mapping[str, int] | None = None,
    unblinded_included: bool = False,
) -> Provenance:
    """Which rubric, judge, runs and labels the report compared, and when."""
    runs = [r for r in (store.get_run(rid) for rid in summary.run_ids) if r is not None]
    return Provenance(
        rubric_name=rubric.name,
        rubric_version=rubric.version,
        rubric_sha256=rubric.sha256,
        datasets=summary.datasets,
        judge_models_requested=summary.models_requested,
        judge_models_returned=tuple(m for m in summary.models_returned if m),
        endpoints=summary.endpoints,
        sampling=summary.sampling,
        run_ids=summary.run_ids,
        judgekit_versions=tuple(
            sorted(
                {r.judgekit_version for r in runs if r.judgekit_version}
                | {v for v in summary.judgekit_versions if v}
            )
        ),
        report_judgekit_version=__version__,
        first_judgment_at=summary.first_created_at,
        last_judgment_at=summary.last_created_at,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        n_judgments=summary.n,
        n_labels=n_labels,
        n_annotators=len(annotators),
        n_labeled_items=labeled,
        imported=summary.imported,
        notes=tuple(notes),
        label_counts=dict(label_counts or {}),
        unblinded_included=unblinded_included,
    )


__all__ = ["NO_JUDGMENTS_REASON", "health", "provenance"]
