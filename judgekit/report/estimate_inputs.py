"""What an estimate reads: the labeled pairs and every judged item, with the labeling design.

The labeled items are the report's compared pairs (so an item's human reference
is the report's own); the judged population is every item with a usable verdict
by the report's judge, read without full rows. The design says how the labels
were drawn: a non-uniform queue gives each label the weight 1/inclusion
probability, and items sharing a cluster are marked for a cluster-robust variance.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from judgekit.report.measures import judge_numbers, level_values
from judgekit.report.pairing import AnyItem, ItemKey, Pairing, cluster_ids
from judgekit.report.weighting import pick_queue
from judgekit.store import JudgmentSelection, Store
from judgekit.types import Item, Rubric


@dataclass(frozen=True)
class EstimateInputs:
    """Aligned labels and verdicts: the labeled items and the whole judged population."""

    labeled: list[ItemKey]
    human: list[str]
    judge_labeled: list[str]
    judged: list[ItemKey]
    judge_all: list[str]
    weights: list[float] | None = None
    clusters: list[str] | None = None
    clusters_all: list[str] | None = None
    slices: list[str] = field(default_factory=list)
    slices_all: list[str] = field(default_factory=list)
    design: str = "simple random sample of the judged items"
    notes: tuple[str, ...] = ()
    #: numbers of the mean-score target (ordinal scales): the human reference number
    #: (``--reference``) and the judge's score, labeled and judged items; None otherwise
    human_values: list[float] | None = None
    judge_values_labeled: list[float] | None = None
    judge_values_all: list[float] | None = None
    #: ``--reference`` as applied
    reference: str = "majority"


def _slice_of(item: AnyItem | None) -> str:
    return item.slice if item is not None and item.slice else "(no slice)"


def _design_weights(
    keys: Sequence[ItemKey], probs: Mapping[ItemKey, float], strata: Mapping[ItemKey, str | None]
) -> list[float]:
    """1/pi per labeled item, scaled within each queue stratum to the stratum's full weight.

    Queue items not labeled (yet) are taken as missing at random within their
    stratum, as the report's weighted section does.
    """
    in_queue: dict[str, float] = {}
    for key, prob in probs.items():
        if prob > 0:
            name = str(strata.get(key))
            in_queue[name] = in_queue.get(name, 0.0) + 1.0 / prob
    labeled: dict[str, float] = {}
    for key in keys:
        name = str(strata.get(key))
        labeled[name] = labeled.get(name, 0.0) + 1.0 / probs[key]
    return [
        (1.0 / probs[k]) * in_queue[str(strata.get(k))] / labeled[str(strata.get(k))] for k in keys
    ]


def estimate_inputs(
    store: Store,
    rubric: Rubric,
    selection: JudgmentSelection,
    pairing: Pairing,
    items: Mapping[ItemKey, AnyItem],
    *,
    cluster_by: str | None,
    queue: str | None,
) -> EstimateInputs:
    """The labeled pairs of ``pairing`` and every ok verdict of the selected judge."""
    valid = rubric.scale.label_set
    # item fields only (slice, cluster, meta) for every judged item: no full rows or texts;
    # the labeled items' keys are reused, so the judged population holds no second copy
    own_key = {key: key for key in items}
    extra: dict[ItemKey, AnyItem] = {}  # judged items the report did not read
    notes: list[str] = []
    judged: list[ItemKey] = []
    judge_all: list[str] = []
    numbers = level_values(rubric.scale) if rubric.scale.kind == "ordinal" else {}
    number = judge_numbers(numbers) if numbers else None
    values_all: list[float] = []
    failed = stale = 0
    for row in store.judged_items(**selection.filters()):
        key = (row.dataset, row.item_id)
        if not row.current:
            stale += 1
            continue
        if row.status != "ok" or row.label is None or row.label not in valid:
            failed += 1
            continue
        known = own_key.get(key)
        if known is None:
            extra[key] = Item(row.item_id, "", slice=row.slice, cluster=row.cluster, meta=row.meta)
        else:
            key = known
        judged.append(key)
        judge_all.append(row.label)
        if number is not None:
            values_all.append(number(row.label, row.score))
    del own_key
    all_items: Mapping[ItemKey, AnyItem] = ChainMap(extra, dict(items)) if extra else items
    if failed:
        notes.append(
            f"{failed} judged item(s) have no usable verdict (failed calls) and are outside the "
            "judged population."
        )
    if stale:
        notes.append(f"{stale} item(s) were judged only on an older version and are left out.")
    if pairing.no_judgment:
        notes.append(
            f"{pairing.no_judgment} labeled item(s) have no judgment by this judge and are not"
            " used."
        )
    labeled, human, judge_lab = list(pairing.keys), list(pairing.human), list(pairing.judge)
    human_num, judge_num = list(pairing.human_values), list(pairing.judge_values)
    weights = None
    design = "simple random sample of the judged items"
    found = pick_queue(store, rubric, queue, selection.dataset)
    if found is not None:
        meta, probs, strata = found
        if len({round(p, 12) for p in probs.values()}) > 1 or queue:
            keep = [i for i, k in enumerate(labeled) if probs.get(k, 0.0) > 0]
            if len(keep) < len(labeled):
                notes.append(
                    f"{len(labeled) - len(keep)} labeled item(s) are not in queue "
                    f"{meta.get('name')!r} and are left out of the weighted estimates."
                )
            labeled = [labeled[i] for i in keep]
            human = [human[i] for i in keep]
            judge_lab = [judge_lab[i] for i in keep]
            if numbers:
                human_num = [human_num[i] for i in keep]
                judge_num = [judge_num[i] for i in keep]
            weights = _design_weights(labeled, probs, strata) if labeled else []
            design = (
                f"labels from queue {meta.get('name')!r} ({meta.get('strategy')}), weighted by "
                "1/inclusion probability"
            )
    clusters = clusters_all = None
    if cluster_by is None and any(all_items.get(k) and all_items[k].cluster for k in judged):
        cluster_by = "cluster"
    if cluster_by is not None and cluster_by != "item":
        clusters = cluster_ids(labeled, all_items, cluster_by)
        clusters_all = cluster_ids(judged, all_items, cluster_by)
        design += f"; cluster-robust variance by {cluster_by} ({len(set(clusters_all))} clusters)"
    return EstimateInputs(
        labeled,
        human,
        judge_lab,
        judged,
        judge_all,
        weights,
        clusters,
        clusters_all,
        [_slice_of(all_items.get(k)) for k in labeled],
        [_slice_of(all_items.get(k)) for k in judged],
        design,
        tuple(notes),
        human_num if numbers else None,
        judge_num if numbers else None,
        values_all if numbers else None,
        pairing.reference,
    )


__all__ = ["EstimateInputs", "estimate_inputs"]
