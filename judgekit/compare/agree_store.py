"""The annotators' labels in the store as ratings for ``judgekit agree --rubric``, and how
their items cluster.

The same labels and rules as the report's human ceiling: blind labels only by
default, adjudications not a rater (:mod:`judgekit.report.reference`), and items
clustered by ``cluster``, else by a shared prompt, for resampling.
"""

from __future__ import annotations

from typing import Any

from judgekit.compare.agree import Level, Rating
from judgekit.compare.clustering import NO_CLUSTERS, Clustering, clustered_spec
from judgekit.errors import InputError
from judgekit.report.loading import items_for
from judgekit.report.pairing import PROMPT_CLUSTER_NOTE, ItemKey
from judgekit.report.reference import human_reference
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.store import Store
from judgekit.types import Rubric


def default_level(rubric: Rubric) -> Level:
    """The measurement level of a rubric's scale: ordinal for an ordinal scale, else nominal."""
    return "ordinal" if rubric.scale.kind == "ordinal" else "nominal"


def ratings_from_store(
    store: Store,
    rubric: Rubric,
    level: Level,
    *,
    dataset: str | None = None,
    include_unblinded: bool = False,
) -> list[Rating]:
    """The annotators' labels for ``rubric`` as ratings (the report's rules: blind only by
    default, adjudications not a rater); numeric levels use the scale's values."""
    human = human_reference(store, rubric, dataset=dataset, include_unblinded=include_unblinded)
    out = []
    for (data, item_id), by in sorted(human.by_item.items()):
        for rater, label in sorted(by.items()):
            value: Any = label
            if level != "nominal":
                number = rubric.scale.value_of(label)
                if number is None:
                    raise InputError(
                        f"--level {level} needs numeric labels; the {rubric.scale.kind} scale "
                        f"of {rubric.name!r} has none"
                    )
                value = float(number)
            key = item_id if dataset is not None else f"{data}/{item_id}"
            out.append(Rating(key, rater, value, f"store:{data}/{item_id}", (data, item_id)))
    if not out:
        raise InputError(f"no human labels for rubric {rubric.name!r} in {store.path}")
    return out


def store_clustering(
    store: Store, ratings: list[Rating], cluster_by: str | None, n_resamples: int
) -> tuple[dict[str, str] | None, Clustering | None, tuple[str, ...]]:
    """Cluster id per rated item of store ratings, by the report's rule.

    ``cluster_by`` as given (``item``: none), else the items' ``cluster``, else
    their prompt when two rated items share one: labels of answers to one prompt
    are not independent evidence of agreement, so intervals resample whole
    clusters, as the report's human ceiling does. Returns the ids by rating item
    id (None when no cluster holds two items), the clustering and a note.
    """
    keys: dict[str, ItemKey] = {}
    for r in ratings:
        if r.key is not None:
            keys.setdefault(r.item_id, r.key)
    if cluster_by == NO_CLUSTERS or not keys:
        return None, None, ()
    ordered = sorted(keys)
    item_keys = [keys[i] for i in ordered]
    items = items_for(store, item_keys)
    spec, clustering = clustered_spec(item_keys, items, cluster_by, IntervalSpec(
        n_resamples=n_resamples))
    if clustering is None or spec.clusters is None:
        return None, None, ()
    by_prompt = cluster_by is None and clustering.cluster_by == "prompt"
    notes = (PROMPT_CLUSTER_NOTE,) if by_prompt else ()
    return dict(zip(ordered, spec.clusters.tolist(), strict=True)), clustering, notes
