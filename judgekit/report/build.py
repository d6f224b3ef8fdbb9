"""Store -> statistics -> :class:`~judgekit.report.model.Report`.

This module only orchestrates: it picks the judgments and labels to compare
(:mod:`judgekit.report.loading`, :mod:`judgekit.report.pairing`), has each
section computed by its own module (manifest, agreement section, secondary
sections, weighting, bias probes, planning) and applies the verdict rule.
Rendering is separate, so all four formats show the same numbers.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from judgekit.progress import phase
from judgekit.report import bias_gate, probe_gates, probe_text_gate, sections
from judgekit.report._format import label_of
from judgekit.report.agreement import PRIMARY_BY_KIND
from judgekit.report.agreement_section import References, agreement_section, pairing_notes
from judgekit.report.alignment import alignment_section
from judgekit.report.bias_probes import imported_orders_hint, probe_results
from judgekit.report.ceiling import human_ceiling
from judgekit.report.ceiling_pairs import like_for_like_sentence, pairwise_kappas
from judgekit.report.estimate_section import estimate_section
from judgekit.report.interval_warnings import alpha_notes, interval_notes
from judgekit.report.levels import Levels, levels_section
from judgekit.report.loading import items_for, judge_selection, judgments_for, scatter
from judgekit.report.manifest import health, provenance
from judgekit.report.measures import check_reference, values_sentence
from judgekit.report.model import Agreement, Ceiling, Report, Stat
from judgekit.report.options import ReportOptions
from judgekit.report.pairing import (
    PROMPT_CLUSTER_NOTE,
    AnyItem,
    ItemKey,
    Pairing,
    cluster_ids,
    default_cluster_by,
    pair_up,
)
from judgekit.report.parity import GAP_KEY, parity_section
from judgekit.report.planning import planned_total
from judgekit.report.reference import human_reference, label_counts, reference_notes
from judgekit.report.scale_probes import check_required, with_paired_probes
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.report.stored_probes import bias_section
from judgekit.report.verdict import VerdictInputs, decide
from judgekit.report.weighting import verdict_statistic, weighted_section
from judgekit.store import Store
from judgekit.store.exports import snapshot
from judgekit.types import Rubric, Scale

#: At most this many points go into the score-vs-length plot (evenly subsampled).
MAX_SCATTER_POINTS = 2000
#: At most this many names of annotators the alternative annotator test skipped, per
#: reason (with their count): a crowd of 20,000 would otherwise fill the report with names.
SKIPPED_SHOWN = 20


def build_report(store: Store, rubric: Rubric, options: ReportOptions | None = None) -> Report:
    """Compute the whole calibration report for ``rubric`` from the store.

    Every read runs in one read transaction (:func:`~judgekit.store.exports.snapshot`):
    a judge writing meanwhile cannot make two counts of one report disagree.
    """
    with collector_paused(), snapshot(store):
        return _build(store, rubric, options or ReportOptions())


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, restored after it.

    A report over 100,000 items holds hundreds of thousands of small rows, dicts
    and tuples until it is done; every pass of the collector over the oldest
    generation walks all of them (about a tenth of the report's time at that
    size) and finds next to nothing: building a report makes almost no reference
    cycles (a few dozen objects at 100,000 items). Reference counting still frees
    everything as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _build(store: Store, rubric: Rubric, opts: ReportOptions) -> Report:
    scale = rubric.scale
    reference = check_reference(opts.reference, scale)
    phase("choosing the judge")
    selection = judge_selection(store, rubric, opts)
    notes: list[str] = []
    summary = store.judgment_summary(one_per_item=True, **selection.filters())
    if opts.judge_run is not None and summary.n and opts.judge_run not in summary.run_ids:
        notes.append(
            f"Run {opts.judge_run} wrote none of these judgments (its calls were answered from "
            f"the cache); they are its judge's, written by run(s) {', '.join(summary.run_ids)}."
        )
    phase("reading labels")
    human = human_reference(
        store, rubric, dataset=opts.dataset, include_unblinded=opts.include_unblinded,
        reference=reference,
    )
    # single annotators' labels: the human-human ceiling; with --annotator, the others'
    grouped = human.by_item
    if opts.annotator is not None:
        grouped = {k: others for k, v in grouped.items()
                   if (others := {a: x for a, x in v.items() if a != opts.annotator})}
        human = human.for_annotator(opts.annotator)
    notes.extend(reference_notes(human, scale))
    references: References = human.references()
    phase("reading judgments")
    items = items_for(store, human.keys)
    # full judgment rows only for the labeled items; counts for the rest come from SQL
    judgments, n_stale = judgments_for(store, selection, references)
    pairing = pair_up(judgments, references, scale, reference)
    notes.extend(pairing_notes(pairing, n_stale, references, scale, opts.annotator))

    cluster_by = default_cluster_by(opts.cluster_by, pairing.keys, items)
    if opts.cluster_by is None and cluster_by == "prompt":
        notes.append(PROMPT_CLUSTER_NOTE)

    def spec_for(keys: list[ItemKey]) -> IntervalSpec:
        ids = (
            None
            if cluster_by is None
            else np.asarray(cluster_ids(keys, items, cluster_by), dtype=object)
        )
        return IntervalSpec(opts.confidence_level, opts.n_resamples, opts.random_state, ids)

    spec = spec_for(pairing.keys)
    agreement: Agreement | None = None
    primary = opts.primary or PRIMARY_BY_KIND[scale.kind]
    primary_stat = Stat(math.nan, n=0, reason="no item has both an ok judgment and a human label")
    slices = weighted = None
    levels: Levels | None = None
    uniform_queue = True
    if pairing.keys:
        phase("agreement")
        agreement = agreement_section(
            pairing,
            references,
            scale,
            spec,
            primary,
            annotator=opts.annotator,
            n_resamples=opts.n_resamples,
            cluster_by=cluster_by,
        )
        primary_stat = agreement.stats[primary]
        notes.extend(
            interval_notes(
                agreement.stats,
                agreement.confusion.matrix,
                len(pairing.keys),
                None if spec.clusters is None else len(set(spec.clusters.tolist())),
                cluster_by,
                None if spec.clusters is None else np.unique(spec.clusters,
                                                             return_counts=True)[1],
            )
        )
        levels = levels_section(
            pairing, items, scale, spec, agreement.stats, group_by=opts.group_by,
            system_by=opts.system_by,
            values=values_sentence(reference, opts.annotator, pairing.n_scored),
        )
        phase("slices and weights")
        names = [_slice_of(items.get(k)) for k in pairing.keys]
        slices = sections.slice_figures(pairing, names, scale, spec, primary, opts.fdr_q)
        weighted, uniform_queue = weighted_section(
            store, rubric, pairing, spec, primary, opts.queue, opts.dataset
        )

    phase("human ceiling")
    cluster_map = None
    if cluster_by is not None:
        keys = sorted(grouped)
        cluster_map = dict(zip(keys, cluster_ids(keys, items, cluster_by), strict=True))
    ceiling = human_ceiling(grouped, scale, spec, cluster_map)
    if ceiling is not None:
        notes.extend(alpha_notes(ceiling.stats, "the annotators"))
    if ceiling is not None and pairing.keys:
        parity = parity_section(pairing.keys, pairing.judge, grouped, scale, spec,
                                opts.epsilon)
        if parity is not None:
            ceiling = replace(
                ceiling,
                stats={**ceiling.stats, GAP_KEY: parity.gap},
                parity=parity.sentence,
                alt_test=None if parity.alt_test is None
                else parity.alt_test.to_dict(skipped_limit=SKIPPED_SHOWN),
            )
    if ceiling is not None:
        ceiling = like_for_like(ceiling, grouped, pairing, scale, spec, cluster_map, primary,
                                opts.annotator)
    phase("failures, bias and scores")
    sensitivity = sections.failure_sensitivity(pairing, scale, spec_for, primary)
    datasets = (selection.dataset,) if selection.dataset else summary.datasets
    bias = bias_section(
        probe_results(store, rubric, selection, datasets, MAX_SCATTER_POINTS,
                      lambda: store.latest_labels(rubric.sha256, dataset=opts.dataset))
    )
    bias = with_paired_probes(bias, pairing, judgments, scale, spec, items, opts.judge_family,
                              opts.family_map)
    bias = imported_orders_hint(store, rubric, bias, datasets)
    check_required(bias, opts)
    points, total_points = scatter(store, rubric, selection, MAX_SCATTER_POINTS)
    phase("estimates")
    estimates = estimate_section(
        store,
        rubric,
        selection,
        pairing,
        items,
        cluster_by=cluster_by,
        queue=opts.queue,
        confidence_level=opts.confidence_level,
        by=opts.estimate_by,
    )

    def planner(half_width: float) -> int | None:
        return planned_total(pairing.judge, pairing.human, rubric, primary, opts, half_width)

    phase("verdict")
    verdict_stat, estimate, use_weights = verdict_statistic(
        primary, primary_stat, weighted, uniform_queue
    )
    verdict = decide(VerdictInputs(
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
        available=sum(store.count_items(d) for d in datasets) - verdict_stat.n,
    ))
    verdict = bias_gate.gate(verdict, bias, opts.max_position_conflict, opts.fdr_q)
    verdict = probe_text_gate.gate(
        verdict, bias, opts.max_injection_flip, opts.max_identical_decisive
    )
    verdict = probe_gates.gate(verdict, bias, opts)
    return Report(
        provenance=provenance(
            store,
            rubric,
            summary,
            human.n_labels,
            human.annotators,
            len(human.keys),
            notes,
            label_counts(human, scale),
            opts.include_unblinded,
        ),
        health=health(summary, len(pairing.failed), opts.confidence_level, n_stale),
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
        estimate=estimates,
        levels=levels,
        alignment=alignment_section(store, rubric, opts.dataset),
    )


def like_for_like(
    ceiling: Ceiling,
    grouped: Mapping[ItemKey, Mapping[str, str]],
    pairing: Pairing,
    scale: Scale,
    spec: IntervalSpec,
    cluster_map: Mapping[ItemKey, str] | None,
    primary: str,
    annotator: str | None,
) -> Ceiling:
    """The ceiling with the primary kappa between annotator pairs (and judge-annotator pairs)
    beside the multi-rater figures, and a sentence comparing like with like."""
    keys = sorted(k for k, by in grouped.items() if len(by) >= 2)
    unit = IntervalSpec(spec.confidence_level, spec.n_resamples, spec.random_state,
                        None if cluster_map is None
                        else np.asarray([cluster_map[k] for k in keys], dtype=object))
    judge = dict(zip(pairing.keys, pairing.judge, strict=True))
    pairs = pairwise_kappas(keys, grouped, judge, scale, unit, primary)
    sentence = like_for_like_sentence(pairs, primary, label_of(primary))
    others = (f"Computed on the annotators other than {annotator!r} (--annotator makes "
              f"{annotator!r} the reference)." if annotator is not None else None)
    reason = " ".join(x for x in (ceiling.reason, others) if x) or None
    parity = " ".join(x for x in (ceiling.parity, sentence) if x) or None
    return replace(ceiling, stats={**ceiling.stats, **pairs}, reason=reason, parity=parity)


def _slice_of(item: AnyItem | None) -> str:
    return item.slice if item is not None and item.slice else "(no slice)"


__all__ = ["MAX_SCATTER_POINTS", "ReportOptions", "build_report"]
