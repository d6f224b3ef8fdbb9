"""Which items resample together in a comparison: the report's clustering rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from judgekit.report.pairing import AnyItem, ItemKey, cluster_ids, default_cluster_by
from judgekit.report.stat_intervals import IntervalSpec

#: ``cluster_by`` value that turns clustering off (each item is its own unit).
NO_CLUSTERS = "item"


@dataclass(frozen=True)
class Clustering:
    """How a comparison's items were grouped for resampling (only when clusters are in use)."""

    cluster_by: str
    n_clusters: int
    n_items: int
    n_resamples: int

    @property
    def method(self) -> str:
        return (
            f"{self.n_resamples}-resample cluster bootstrap by {self.cluster_by} "
            f"({self.n_clusters} clusters of {self.n_items} items)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "interval_method": self.method,
            "cluster_by": self.cluster_by,
            "n_clusters": self.n_clusters,
        }


def clustered_spec(
    keys: list[ItemKey],
    items: Mapping[ItemKey, AnyItem],
    cluster_by: str | None,
    spec: IntervalSpec,
) -> tuple[IntervalSpec, Clustering | None]:
    """``spec`` with cluster ids per compared item, when some cluster holds >= 2 of them.

    The field is resolved as the report resolves it (``default_cluster_by``):
    ``cluster_by`` if given (``item`` means none), else ``cluster`` when any
    compared item has one, else ``prompt`` when two compared items share an input.
    An item without the field is its own cluster. Without a cluster of two or more
    items the spec is returned unchanged (item-level intervals, exact tests).
    """
    if cluster_by == NO_CLUSTERS or not keys:
        return spec, None
    cluster_by = default_cluster_by(cluster_by, keys, items)
    if cluster_by is None:
        return spec, None
    ids = np.asarray(cluster_ids(keys, items, cluster_by), dtype=object)
    n_clusters = len(set(ids.tolist()))
    if n_clusters == len(keys):
        return spec, None
    clustering = Clustering(cluster_by, n_clusters, len(keys), spec.n_resamples)
    return replace(spec, clusters=ids), clustering
