"""The stored probe results a report shows in its bias section.

Probes run separately (``judgekit probe``) and store their summaries; the report
shows only those of the judge it calibrates, on its dataset(s). A length probe's
human length correlation is recomputed here because labels keep arriving after
the probe ran.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from judgekit.judging.probe_variants import item_length
from judgekit.report.model import Bias
from judgekit.stats.bias import human_length_correlation, human_scores
from judgekit.store import JudgmentSelection, Store, judge_endpoint
from judgekit.types import Label, Rubric


def probe_results(
    store: Store,
    rubric: Rubric,
    selection: JudgmentSelection,
    datasets: tuple[str, ...],
    max_points: int,
    labels: Callable[[], Sequence[Label]],
) -> list[dict[str, Any]]:
    """Stored probe results of the reported judge (model and endpoint) on its dataset(s).

    With no judge selected (no judge or import run, only probe runs), the probes of the
    one judge that ran them are shown; with probes of several judges, none.

    A length probe's human length correlation is recomputed from the current labels
    (the stored one is as of the probe run), with at most ``max_points`` plotted points.
    ``labels`` reads the rubric's latest labels, covering at least ``datasets``; it is
    called only when a length probe needs them (most reports have none).
    """
    runs: dict[str, Any] = {}
    rows = []
    for row in store.probe_results(rubric.sha256):
        run_id = str(row.get("run_id", ""))
        if run_id not in runs:
            runs[run_id] = store.get_run(run_id)
        if runs[run_id] is not None:
            rows.append((row, runs[run_id]))
    model, endpoint = selection.model, selection.endpoint
    if model is None:
        # no judge or import run selected (e.g. only `probe` was run): the probes still
        # describe a judge when they all come from one, so show them rather than nothing
        wanted = selection.dataset
        judges = {
            (run.model, judge_endpoint(run.base_url))
            for _, run in rows
            if wanted is None or run.dataset == wanted
        }
        if len(judges) != 1:
            return []
        model, endpoint = next(iter(judges))
        datasets = tuple(
            {run.dataset for _, run in rows if wanted is None or run.dataset == wanted}
        )
    loaded: Sequence[Label] | None = None
    out = []
    for row, run in rows:
        if (
            run.model != model
            or judge_endpoint(run.base_url) != endpoint
            or run.dataset not in datasets
        ):
            continue
        if row.get("probe") == "length":
            if loaded is None:
                loaded = labels()
            result = _current_human_length(store, rubric, run.dataset, row, max_points, loaded)
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
    # items of one prompt (or one `cluster`) are not independent evidence: the p-value
    # (and interval) count prompts when labelled items share one, as the slope's do
    by_cluster = any(item.cluster is not None for item in items.values())
    groups = {i: group for i, item in items.items()
              if (group := item.source_group) is not None}
    fresh = human_length_correlation(scores, lengths, max_points=max_points, groups=groups,
                                     cluster_by="cluster or prompt" if by_cluster
                                     else "prompt")
    stat = dict(fresh["human_length_correlation"])
    stat["note"] = "from the current human labels, computed for this report"
    result["human_length_correlation"] = stat
    result["human_points"] = fresh["human_points"]
    return result


def imported_orders_hint(store: Store, rubric: Rubric, bias: Bias,
                         datasets: Sequence[str]) -> Bias:
    """``bias`` with a line saying how to use verdicts imported in both orders, if unused.

    ``judgments import`` stores a BA verdict as the swapped variant, but only
    ``probe position --imported`` turns them into the position probe the report and
    its gate read; until then the report says so instead of "no position probe".
    """
    from judgekit.judging.probe_imported import imported_judges

    if rubric.scale.kind != "pairwise" or any(e.probe == "position" for e in bias.probes):
        return bias
    for dataset in datasets:
        judges = imported_judges(store, rubric, dataset)
        if judges:
            judge = f" --judge {judges[0]}" if len(judges) > 1 else ""
            hint = (f"verdicts imported in both orders are stored for dataset {dataset!r} "
                    f"({', '.join(judges)}) but not yet used: run `judgekit probe position "
                    f"--imported --dataset {dataset}{judge} --rubric {rubric.name}`")
            return replace(bias, absent={**bias.absent, "position": hint})
    return bias


__all__ = ["imported_orders_hint", "probe_results"]
