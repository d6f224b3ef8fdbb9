"""The stored probe results a report shows in its bias section.

Probes run separately (``judgekit probe``) and store their summaries; the report
shows only those of the judge it calibrates, on its dataset(s). A length probe's
human length correlation is recomputed here because labels keep arriving after
the probe ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgekit.judging.probe_variants import item_length
from judgekit.stats.bias import human_length_correlation, human_scores
from judgekit.store import JudgmentSelection, Store, judge_endpoint
from judgekit.types import Label, Rubric


def probe_results(
    store: Store,
    rubric: Rubric,
    selection: JudgmentSelection,
    datasets: tuple[str, ...],
    max_points: int,
    labels: Sequence[Label],
) -> list[dict[str, Any]]:
    """Stored probe results of the reported judge (model and endpoint) on its dataset(s).

    A length probe's human length correlation is recomputed from the current labels
    (the stored one is as of the probe run), with at most ``max_points`` plotted points.
    ``labels`` are the rubric's latest labels, covering at least ``datasets`` (the
    report passes those it already loaded).
    """
    if selection.model is None:
        return []
    runs: dict[str, Any] = {}
    out = []
    for row in store.probe_results(rubric.sha256):
        run_id = str(row.get("run_id", ""))
        if run_id not in runs:
            runs[run_id] = store.get_run(run_id)
        run = runs[run_id]
        if (
            run is None
            or run.model != selection.model
            or judge_endpoint(run.base_url) != selection.endpoint
            or run.dataset not in datasets
        ):
            continue
        if row.get("probe") == "length":
            result = _current_human_length(store, rubric, run.dataset, row, max_points, labels)
            row = {**row, "result": result}
        out.append(row)
    return out


def _current_human_length(
    store: Store,
    rubric: Rubric,
    dataset: str,
    row: dict[str, Any],
    max_points: int,
    labels: Sequence[Label],
) -> dict[str, Any]:
    """A length probe's result with the human length correlation of today's labels.

    Same method as the probe: the mean human score per item against response
    length, over the probe's items (the first ``n_items`` of the dataset in import
    order, as ``--limit`` takes them) that have labels.
    """
    result = dict(row.get("result") or {})
    scores = human_scores(
        rubric.scale, ((lab.item_id, lab.label) for lab in labels if lab.dataset == dataset)
    )
    ids = store.item_ids(dataset)
    n_items = result.get("n_items")
    if isinstance(n_items, int) and not isinstance(n_items, bool) and n_items >= 0:
        ids = ids[:n_items]
    items = store.items_by_ids(dataset, [i for i in ids if i in scores])
    lengths = {i: item_length(items[i]) for i in ids if i in items}
    fresh = human_length_correlation(scores, lengths, max_points=max_points)
    stat = dict(fresh["human_length_correlation"])
    stat["note"] = "from the current human labels, computed for this report"
    result["human_length_correlation"] = stat
    result["human_points"] = fresh["human_points"]
    return result


__all__ = ["probe_results"]
