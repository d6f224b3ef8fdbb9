"""Store -> statistics -> :class:`~judgekit.report.model.Report`.

This is the only report module that reads the store. It picks the judgments and
labels to compare (see :mod:`judgekit.report.pairing`), computes every section
with :mod:`judgekit.stats`, and applies the verdict rule. Rendering is separate,
so all four formats show the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np

from judgekit import __version__, stats
from judgekit.errors import InputError
from judgekit.probe_variants import item_length
from judgekit.report import sections
from judgekit.report._format import num
from judgekit.report.agreement import (
    PRIMARY_BY_KIND,
    IntervalSpec,
    confusion_of,
    judge_vs_human,
    mean_difference,
    numeric_values,
)
from judgekit.report.model import (
    Agreement,
    Health,
    Provenance,
    Report,
    ScatterPoint,
    Stat,
    StatusRow,
    Weighted,
)
from judgekit.report.pairing import (
    ItemKey,
    cluster_ids,
    labels_by_item,
    pair_up,
    reference_rule,
    select_judgments,
)
from judgekit.report.verdict import decide
from judgekit.stats.bias import human_length_correlation, human_scores
from judgekit.store import (
    JudgmentSelection,
    JudgmentSummary,
    Store,
    judge_endpoint,
)
from judgekit.types import STATUSES, Item, Judgment, Rubric

#: At most this many points go into the score-vs-length plot (evenly subsampled).
MAX_SCATTER_POINTS = 2000


@dataclass(frozen=True)
class ReportOptions:
    """What to compare and how to decide (the ``judgekit report`` flags)."""

    dataset: str | None = None
    judge_run: str | None = None
    model: str | None = None
    annotator: str | None = None
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


def _items_for(store: Store, keys: Iterable[ItemKey]) -> dict[ItemKey, Item]:
    by_dataset: dict[str, list[str]] = {}
    for dataset, item_id in keys:
        by_dataset.setdefault(dataset, []).append(item_id)
    out: dict[ItemKey, Item] = {}
    for dataset, ids in by_dataset.items():
        out.update({(dataset, i): item for i, item in store.items_by_ids(dataset, ids).items()})
    return out


def _selection(store: Store, rubric: Rubric, opts: ReportOptions) -> JudgmentSelection:
    """The judgments the report calibrates: those of exactly one judge.

    ``--judge-run`` names the judge through one of its runs (its cached judgments
    count too); otherwise the judge must be the only one (after ``--model``) with
    plain judgments written by judge or import runs. Several judges are an error,
    never a silent choice: a gate must not flip because another model was tried.
    The rule lives in :meth:`judgekit.store.Store.judge_selection`, shared with
    ``judgekit compare``.
    """
    return store.judge_selection(
        rubric_hash=rubric.sha256,
        rubric_name=rubric.name,
        dataset=opts.dataset,
        run_id=opts.judge_run,
        model=opts.model,
        variant="",
    )


def _judgments_for(
    store: Store, selection: JudgmentSelection, keys: Iterable[ItemKey], items: dict[ItemKey, Item]
) -> tuple[dict[ItemKey, Judgment], int]:
    """The report's judgment for each of ``keys`` (full rows, only for these items).

    A judgment of an older version of its item (its ``item_hash`` is not the item's
    current content hash, e.g. after ``import --replace``) is left out. Returns the
    chosen judgments and the number of items left with only such stale judgments.
    """
    by_dataset: dict[str, list[str]] = {}
    for dataset, item_id in keys:
        if selection.dataset is None or dataset == selection.dataset:
            by_dataset.setdefault(dataset, []).append(item_id)
    filters = {k: v for k, v in selection.filters().items() if k not in ("rubric_hash", "dataset")}
    rows: list[Judgment] = []
    stale: set[ItemKey] = set()
    for dataset, ids in sorted(by_dataset.items()):
        found = store.judgments_for_items(selection.rubric_hash or "", dataset, ids, **filters)
        for item_rows in found.values():  # each item in order
            for j in item_rows:
                item = items.get((j.dataset, j.item_id))
                if item is not None and j.item_hash and j.item_hash != item.content_hash:
                    stale.add((j.dataset, j.item_id))
                else:
                    rows.append(j)
    chosen = select_judgments(rows)
    return chosen, len(stale - set(chosen))


def _interval_method(n_resamples: int, cluster_by: str | None, spec: IntervalSpec) -> str:
    if cluster_by is None or spec.clusters is None:
        return f"{n_resamples}-resample percentile bootstrap; Wilson for proportions"
    k = len(set(spec.clusters.tolist()))
    return f"{n_resamples}-resample cluster bootstrap by {cluster_by} ({k} clusters)"


def _slice_of(item: Item | None) -> str:
    return item.slice if item is not None and item.slice else "(no slice)"


def _health(
    summary: JudgmentSummary, failed_labeled: int, level: float, stale_labeled: int = 0
) -> Health:
    counts = summary.status_counts
    total = summary.n
    rows = []
    for status in STATUSES:
        k = counts.get(status, 0)
        if total:
            low, high = stats.wilson_interval(k, total, confidence_level=level)
            rows.append(StatusRow(status, k, Stat(k / total, low, high, total, "wilson")))
        else:
            rows.append(StatusRow(status, 0, Stat(math.nan, n=0, reason="no judgments")))
    return Health(total, tuple(rows), failed_labeled, stale_labeled)


def _label_scores(rubric: Rubric) -> dict[str, float]:
    """Numeric score of each label, for judgments without a finite ``score`` of their own."""
    scale = rubric.scale
    if scale.kind == "binary":
        return {label: 1.0 if label == "pass" else 0.0 for label in scale.labels}
    values = {label: scale.value_of(label) for label in scale.labels}
    return {label: float(v) for label, v in values.items() if v is not None}


def _scatter(
    store: Store, rubric: Rubric, selection: JudgmentSelection
) -> tuple[list[ScatterPoint], int]:
    """Score against response length for at most MAX_SCATTER_POINTS evenly spaced items."""
    if rubric.scale.kind not in ("ordinal", "binary"):
        return [], 0
    sample, total = store.score_sample(
        _label_scores(rubric),
        max_points=MAX_SCATTER_POINTS,
        one_per_item=True,
        **selection.filters(),
    )
    points = [
        ScatterPoint(p.response_length, p.score) for p in sample if p.response_length is not None
    ]
    return points, total


def _pick_queue(
    store: Store, rubric: Rubric, name: str | None, dataset: str | None = None
) -> tuple[dict[str, Any], dict[ItemKey, float], dict[ItemKey, str | None]] | None:
    """The queue to weight by: its metadata, inclusion probabilities and strata per item."""
    names = [name] if name else store.list_queues(rubric.sha256)
    for candidate in reversed(names):
        found = store.get_queue(candidate)
        if found is None:
            if name:
                raise InputError(f"no labeling queue named {name!r} in the store")
            continue
        meta, entries = found
        entries = [e for e in entries if dataset is None or e.dataset == dataset]
        probs = {(e.dataset, e.item_id): float(e.inclusion_prob) for e in entries}
        strata = {(e.dataset, e.item_id): e.stratum for e in entries}
        if name or len({round(p, 12) for p in probs.values()}) > 1:
            return meta, probs, strata
    return None


def _provenance(
    store: Store,
    rubric: Rubric,
    summary: JudgmentSummary,
    n_labels: int,
    annotators: set[str],
    labeled: int,
    notes: list[str],
) -> Provenance:
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
    )


def build_report(store: Store, rubric: Rubric, options: ReportOptions | None = None) -> Report:
    """Compute the whole calibration report for ``rubric`` from the store."""
    opts = options or ReportOptions()
    scale = rubric.scale
    selection = _selection(store, rubric, opts)
    notes: list[str] = []
    summary = store.judgment_summary(one_per_item=True, **selection.filters())
    if opts.judge_run is not None and summary.n and opts.judge_run not in summary.run_ids:
        notes.append(
            f"Run {opts.judge_run} wrote none of these judgments (its calls were answered from "
            f"the cache); they are its judge's, written by run(s) {', '.join(summary.run_ids)}."
        )
    labels = store.latest_labels(rubric.sha256, dataset=opts.dataset)
    grouped, off_scale = labels_by_item(labels, scale)
    if off_scale:
        notes.append(f"{off_scale} human label(s) are not on the rubric's scale and were ignored.")
    if opts.annotator is not None:
        references = {
            k: {opts.annotator: v[opts.annotator]}
            for k, v in grouped.items()
            if opts.annotator in v
        }
    else:
        references = grouped
    items = _items_for(store, grouped)
    # full judgment rows only for the labeled items; counts for the rest come from SQL
    judgments, n_stale = _judgments_for(store, selection, references, items)
    pairing = pair_up(judgments, references, scale)
    if pairing.no_judgment > n_stale:
        notes.append(
            f"{pairing.no_judgment - n_stale} labeled item(s) have no judgment in this selection."
        )
    if n_stale:
        notes.append(
            f"{n_stale} judgment(s) are of an older version of their item (its content changed "
            "after it was judged, e.g. by import --replace) and were left out of agreement; "
            "re-run judge."
        )
    if pairing.no_majority:
        notes.append(
            f"{pairing.no_majority} item(s) were left out: their annotators tie. Ties mark "
            "items humans find hard, so judge-human agreement on the rest is likely higher "
            "than on all items."
        )
    notes.extend(_reference_notes(pairing, references, scale, opts.annotator))

    cluster_by = opts.cluster_by
    if cluster_by is None and any(items.get(k) and items[k].cluster for k in pairing.keys):
        cluster_by = "cluster"

    def spec_for(keys: list[ItemKey]) -> IntervalSpec:
        ids = (
            None
            if cluster_by is None
            else np.asarray(cluster_ids(keys, items, cluster_by), dtype=object)
        )
        return IntervalSpec(opts.confidence_level, opts.n_resamples, opts.random_state, ids)

    spec = spec_for(pairing.keys)
    agreement = None
    primary = opts.primary or PRIMARY_BY_KIND[scale.kind]
    primary_stat = Stat(math.nan, n=0, reason="no item has both an ok judgment and a human label")
    slices = weighted = None
    uniform_queue = True
    if pairing.keys:
        figures = judge_vs_human(pairing.judge, pairing.human, scale, spec)
        if primary not in figures:
            raise InputError(
                f"--primary {primary!r} is not computed for a {scale.kind} scale; "
                f"choose one of: {', '.join(figures)}"
            )
        agreement = Agreement(
            scale.kind,
            primary,
            figures,
            confusion_of(pairing.judge, pairing.human, scale.labels),
            len(pairing.keys),
            reference_rule(opts.annotator, max(map(len, references.values())), scale),
            _interval_method(opts.n_resamples, cluster_by, spec),
            cluster_by,
            None if spec.clusters is None else len(set(spec.clusters.tolist())),
        )
        if scale.kind == "ordinal" and "mean_bias" in figures:
            medians = _median_values(pairing, references, scale)
            if medians is not None:
                figures["mean_bias"] = mean_difference(
                    numeric_values(scale, pairing.judge), medians, spec
                )
        primary_stat = figures[primary]
        names = [_slice_of(items.get(k)) for k in pairing.keys]
        slices = sections.slice_figures(pairing, names, scale, spec, primary, opts.fdr_q)
        queue = _pick_queue(store, rubric, opts.queue, opts.dataset)
        if queue is not None:
            meta, probs, strata = queue
            uniform_queue = len({round(p, 12) for p in probs.values()}) <= 1
            weighted = sections.weighted_estimates(
                pairing,
                probs,
                scale,
                spec,
                primary,
                str(meta.get("name")),
                str(meta.get("strategy")),
                strata=strata,
            )

    cluster_map = None
    if cluster_by is not None:
        keys = sorted(grouped)
        cluster_map = dict(zip(keys, cluster_ids(keys, items, cluster_by), strict=True))
    ceiling = sections.human_ceiling(grouped, scale, spec, cluster_map)
    sensitivity = sections.failure_sensitivity(pairing, scale, spec_for, primary)
    datasets = (selection.dataset,) if selection.dataset else summary.datasets
    bias = sections.bias_section(_probe_results(store, rubric, selection, datasets))
    points, total_points = _scatter(store, rubric, selection)

    def planner(half_width: float) -> int | None:
        return _planned_total(pairing.judge, pairing.human, rubric, primary, opts, half_width)

    verdict_stat, estimate, use_weights = _verdict_statistic(
        primary, primary_stat, weighted, uniform_queue
    )
    verdict = decide(
        primary,
        verdict_stat,
        threshold=opts.min_agreement,
        target_half_width=opts.half_width,
        planner=planner,
        slices=slices,
        slice_threshold=opts.min_slice_agreement,
        agreement=agreement,
        confidence_level=opts.confidence_level,
        estimate=estimate,
        weighted=use_weights,
    )
    annotators = {a for by in grouped.values() for a in by}
    return Report(
        provenance=_provenance(
            store,
            rubric,
            summary,
            sum(map(len, grouped.values())),
            annotators,
            len(grouped),
            notes,
        ),
        health=_health(summary, len(pairing.failed), opts.confidence_level, n_stale),
        agreement=agreement,
        ceiling=ceiling,
        slices=slices,
        weighted=weighted,
        failure_sensitivity=sensitivity,
        bias=bias,
        verdict=verdict,
        scatter=tuple(points),
        scatter_total=total_points,
        confidence_level=opts.confidence_level,
        n_resamples=opts.n_resamples,
    )


def _verdict_statistic(
    primary: str, unweighted: Stat, weighted: Weighted | None, uniform_queue: bool
) -> tuple[Stat, str | None, bool]:
    """The figure the verdict reads and, when it is not the plain primary, why.

    Labels drawn from a non-uniform queue over-represent some items, so the
    unweighted figure describes the labeled sample, not the dataset: the verdict
    then reads the inverse-probability-weighted (population) estimate.
    """
    if weighted is None or uniform_queue:
        return unweighted, None, False
    key = "percent_agreement" if primary in sections.AGREEMENT_SHARES else primary
    stat = weighted.stats.get(key)
    if stat is None:
        return (
            unweighted,
            f"Labels came from the non-uniform queue {weighted.queue!r}, but {primary} has no "
            "weighted version, so this verdict describes the labeled sample, not the dataset.",
            False,
        )
    return (
        stat,
        "Read from the population estimate: labels came from the non-uniform queue "
        f"{weighted.queue!r}, so each item is weighted by 1/its inclusion probability "
        f"(unweighted {num(unweighted.statistic)} on the labeled sample).",
        True,
    )


def _probe_results(
    store: Store, rubric: Rubric, selection: JudgmentSelection, datasets: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Stored probe results of the reported judge (model and endpoint) on its dataset(s).

    A length probe's human length correlation is recomputed from the current labels
    (the stored one is as of the probe run).
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
            row = {**row, "result": _current_human_length(store, rubric, run.dataset, row)}
        out.append(row)
    return out


def _current_human_length(
    store: Store, rubric: Rubric, dataset: str, row: dict[str, Any]
) -> dict[str, Any]:
    """A length probe's result with the human length correlation of today's labels.

    Same method as the probe: the mean human score per item against response
    length, over the probe's items (the first ``n_items`` of the dataset in import
    order, as ``--limit`` takes them) that have labels.
    """
    result = dict(row.get("result") or {})
    labels = store.latest_labels(rubric.sha256, dataset=dataset)
    scores = human_scores(rubric.scale, ((lab.item_id, lab.label) for lab in labels))
    ids = store.item_ids(dataset)
    n_items = result.get("n_items")
    if isinstance(n_items, int) and not isinstance(n_items, bool) and n_items >= 0:
        ids = ids[:n_items]
    items = store.items_by_ids(dataset, [i for i in ids if i in scores])
    lengths = {i: item_length(items[i]) for i in ids if i in items}
    fresh = human_length_correlation(scores, lengths, max_points=MAX_SCATTER_POINTS)
    stat = dict(fresh["human_length_correlation"])
    stat["note"] = "from the current human labels, computed for this report"
    result["human_length_correlation"] = stat
    result["human_points"] = fresh["human_points"]
    return result


def _reference_notes(
    pairing: Any,
    references: dict[ItemKey, dict[str, str]],
    scale: Any,
    annotator: str | None,
) -> list[str]:
    """What the reader must know when the reference pools several annotators."""
    if annotator is not None or not pairing.keys:
        return []
    pooled = sum(1 for key in pairing.keys if len(references[key]) >= 2)
    if not pooled:
        return []
    rule = "lower median" if scale.kind == "ordinal" else "majority label"
    return [
        f"On {pooled} of {len(pairing.keys)} compared items the human reference is the {rule} "
        "of several annotators. A pooled reference is less noisy than one annotator, so the "
        "judge figures are not directly comparable with the human-human ceiling, which "
        "compares single annotators; use --annotator for a like-for-like comparison."
    ]


def _median_values(
    pairing: Any, references: dict[ItemKey, dict[str, str]], scale: Any
) -> np.ndarray | None:
    """Per-item median of the annotators' numeric values, when it differs from the reference.

    With an even number of annotators split between two levels the on-scale reference is
    the lower one; the signed bias judge - human must use the true median (the midpoint),
    or it is pushed upward. None when no item is affected.
    """
    values = [
        float(np.median(numeric_values(scale, list(references[key].values()))))
        for key in pairing.keys
    ]
    reference = numeric_values(scale, pairing.human)
    medians = np.asarray(values, dtype=float)
    return None if np.allclose(medians, reference) else medians


def _planned_total(
    judge: list[str],
    human: list[str],
    rubric: Rubric,
    primary: str,
    opts: ReportOptions,
    half_width: float | None = None,
) -> int | None:
    """Total labels the planner asks for at ``half_width`` (default: the target), from the
    observed rates."""
    target = opts.half_width if half_width is None else half_width
    if not (math.isfinite(target) and target > 0):
        return None
    labels = list(rubric.scale.labels)
    if primary in ("cohen_kappa", "weighted_kappa"):
        if judge:
            weights: Literal["quadratic"] | None = (
                "quadratic" if primary == "weighted_kappa" else None
            )
            res = stats.cohen_kappa(judge, human, weights=weights, labels=labels)
            p_o, p_e = res.p_observed, res.p_expected
        else:
            p_e = 1.0 / len(labels)
            p_o = (opts.min_agreement + target) * (1 - p_e) + p_e
        if not (math.isfinite(p_o) and math.isfinite(p_e)) or p_e >= 1.0:
            return None
        if judge and p_o >= 1.0:
            # perfect observed agreement plans for nothing: use its Wilson lower bound instead
            p_o = stats.wilson_interval(len(judge), len(judge), opts.confidence_level)[0]
        return stats.kappa_sample_size(
            half_width=target,
            p_observed=min(p_o, 1.0),
            p_expected=p_e,
            confidence_level=opts.confidence_level,
        )
    p = (
        float(np.mean(np.asarray(judge, dtype=object) == np.asarray(human, dtype=object)))
        if judge
        else 0.5
    )
    return stats.proportion_sample_size(
        half_width=target, p=p, confidence_level=opts.confidence_level
    )


__all__ = ["ReportOptions", "build_report"]
